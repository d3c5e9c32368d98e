//===- StreamWorkspaces.h - device scratch memory per stream ----*- C++ -*-===//
//
// The backward needs device scratch memory between its kernels. Keeping one
// buffer per stream (rather than one per launcher object) lets concurrent
// calls on different streams run without racing on it, while calls on one
// stream, which the stream runs in order, reuse the same buffer.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_STREAMWORKSPACES_H
#define KILN_RUNTIME_LIB_STREAMWORKSPACES_H

#include "kiln/Runtime.h"

#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace kiln::detail {

class StreamWorkspaces {
public:
  StreamWorkspaces() = default;
  StreamWorkspaces(const StreamWorkspaces &) = delete;
  StreamWorkspaces &operator=(const StreamWorkspaces &) = delete;
  /// Frees every buffer; their work must have finished.
  ~StreamWorkspaces();

  /// Hold this from acquire() until every kernel that uses the buffer is
  /// enqueued: a concurrent call that grows the buffer synchronizes the
  /// stream before freeing it, which only protects work already enqueued.
  std::unique_lock<std::mutex> lock() {
    return std::unique_lock<std::mutex>(mutex_);
  }

  /// A buffer of at least `bytes` (256-byte aligned) for work on `stream`,
  /// allocated or grown as needed; records `bytes` as the last call's use.
  /// The caller holds lock().
  Status acquire(void *stream, size_t bytes, void *&buffer);

  /// Records a call that needed no workspace. The caller holds lock().
  void noteUnused() { lastBytes_ = 0; }

  /// The `bytes` of the last call (acquire or noteUnused); 0 before the
  /// first.
  size_t lastBytes() const;

private:
  struct Buffer {
    void *ptr = nullptr;
    size_t bytes = 0;
  };
  // The stream handle, and for the per-thread default stream (one handle,
  // a different stream on each thread) the calling thread.
  using Key = std::pair<void *, std::thread::id>;
  mutable std::mutex mutex_;
  std::map<Key, Buffer> buffers_;
  size_t lastBytes_ = 0;
};

} // namespace kiln::detail

#endif // KILN_RUNTIME_LIB_STREAMWORKSPACES_H
