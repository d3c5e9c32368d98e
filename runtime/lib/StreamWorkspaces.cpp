//===- StreamWorkspaces.cpp - device scratch memory per stream ------------===//

#include "StreamWorkspaces.h"

#include "CudaApi.h"

namespace kiln::detail {

namespace {

/// CU_STREAM_PER_THREAD: the handle of each thread's own default stream.
constexpr uintptr_t kStreamPerThread = 0x2;

/// Growth rounds up to this, so a slowly growing problem (longer sequences
/// step by step) does not synchronize and reallocate on every call.
constexpr size_t kGranularity = size_t{2} << 20;

} // namespace

StreamWorkspaces::~StreamWorkspaces() {
  const api::Driver *d = nullptr;
  if (!api::driver(d).ok())
    return;
  for (auto &[key, buffer] : buffers_)
    if (buffer.ptr)
      d->cuMemFree(reinterpret_cast<api::CUdeviceptr>(buffer.ptr));
}

Status StreamWorkspaces::acquire(void *stream, size_t bytes, void *&buffer) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  Key key{stream, reinterpret_cast<uintptr_t>(stream) == kStreamPerThread
                      ? std::this_thread::get_id()
                      : std::thread::id()};
  Buffer &b = buffers_[key];
  if (b.bytes < bytes) {
    if (b.ptr) {
      // Kernels of earlier calls on this stream may still use the buffer.
      if (Status s = api::check(d->cuStreamSynchronize(stream),
                                "cuStreamSynchronize (growing the workspace)");
          !s.ok())
        return s;
      d->cuMemFree(reinterpret_cast<api::CUdeviceptr>(b.ptr));
      b = Buffer();
    }
    size_t rounded = (bytes + kGranularity - 1) / kGranularity * kGranularity;
    api::CUdeviceptr p = 0;
    if (Status s = api::check(d->cuMemAlloc(&p, rounded),
                              ("cuMemAlloc of a " + std::to_string(rounded) +
                               "-byte backward workspace")
                                  .c_str());
        !s.ok())
      return s;
    b.ptr = reinterpret_cast<void *>(p);
    b.bytes = rounded;
  }
  buffer = b.ptr;
  lastBytes_ = bytes;
  return Status();
}

size_t StreamWorkspaces::lastBytes() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return lastBytes_;
}

} // namespace kiln::detail
