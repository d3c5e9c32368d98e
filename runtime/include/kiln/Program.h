//===- Program.h - load and launch any compiled program ---------*- C++ -*-===//
//
// The one launcher of the runtime: a ProgramSpec (LaunchPlan.h) compiled,
// loaded, and run on tensors given by name. Forward, backward and every later
// program (split-KV decoding, block-mask builders) go through it;
// ForwardKernel and BackwardKernel are views that name their tensors.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PROGRAM_H
#define KILN_PROGRAM_H

#include "kiln/LaunchPlan.h"

#include <functional>
#include <memory>

namespace kiln {

namespace detail {
class StreamWorkspaces;
class RunShapes;
struct RunShape;
} // namespace detail

/// Device memory for a run's workspaces from the caller: `bytes` (> 0),
/// 256-byte aligned, usable by work on the run's stream until its kernels
/// have finished (a stream-ordered allocator such as PyTorch's caching
/// allocator); null on failure.
using WorkspaceAllocator = std::function<void *(size_t bytes)>;

/// A compiled program loaded on one device.
///
/// Workspaces: run() allocates the plan's workspaces from one device buffer
/// per stream handle (per handle and thread for CU_STREAM_PER_THREAD), made
/// on first use and grown (never shrunk) when a call needs more, all freed by
/// the destructor. Work on one stream runs in order, so calls on one stream
/// share a buffer, and calls on different streams never do: concurrent run()
/// calls on one object are safe from any threads on any streams (they are
/// serialized on the host while they enqueue). Growing a stream's buffer
/// first synchronizes that stream. Destroy the object only after its work has
/// finished, and do not reuse a destroyed stream's handle for new work while
/// the old stream's work may still run.
class Program {
public:
  /// Verifies the plan, compiles `spec.source` one kernel at a time, the
  /// kernels concurrently (CompileUnits.h; or finds their cubins in the
  /// cache), and loads them on device `ordinal`.
  static Status load(const ProgramSpec &spec, int ordinal,
                     std::unique_ptr<Program> &program);
  ~Program();

  /// Validates every tensor (name, dtype, shape against the plan with its
  /// symbols bound, strides, alignment, device), the captures against their
  /// declarations and the plan's constraints, then enqueues the kernels on
  /// `stream` (a CUstream; null: the default stream) without synchronizing.
  /// `overrides` sets derived symbols of the plan instead of their
  /// expressions (`kv_splits`: the number of KV splits; benchmarks, tests).
  /// Kernels whose `when` evaluates below 1 are not launched. The
  /// shape-only part (symbols, checks, grids, workspace layout) is kept
  /// for the last 16 shapes and reused; the pointers are checked every
  /// run ($KILN_RUN_SHAPE_CACHE=0 turns the reuse off).
  ///
  /// With `allocate`, the workspaces come from it instead of the object's
  /// per-stream buffers: nothing is allocated or synchronized here, so a run
  /// can be captured in a CUDA graph on any stream (the caller's allocator
  /// must be capture-safe, as PyTorch's is).
  Status run(const std::vector<NamedTensor> &tensors,
             const std::vector<TensorRef> &captures, void *stream,
             const SymbolValues &overrides = {},
             const WorkspaceAllocator &allocate = nullptr) const;

  const ProgramSpec &spec() const { return spec_; }
  double compileMs() const { return compileMs_; }
  double loadMs() const { return loadMs_; }
  bool cacheHit() const { return cacheHit_; }
  /// Bytes of workspace the last run() used; 0 before the first.
  size_t workspaceBytes() const;

private:
  Program();
  /// bindRun and the rest of a run's shape-only work (RunShapes.h).
  Status bindShape(const std::vector<NamedTensor> &tensors,
                   const std::vector<TensorRef> &captures,
                   const SymbolValues &overrides,
                   std::shared_ptr<const detail::RunShape> &shape) const;
  ProgramSpec spec_;
  void *context_ = nullptr; ///< made current around launches (other threads)
  std::vector<void *> modules_; ///< one per compile unit (CompileUnits.h)
  std::vector<void *> functions_; ///< one per spec_.kernels entry
  DeviceSymbols device_; ///< num_sms and each kernel's CTAs per SM
  double compileMs_ = 0, loadMs_ = 0;
  bool cacheHit_ = false;
  std::unique_ptr<detail::StreamWorkspaces> workspaces_;
  /// The shape-only work of recent runs, by shape (RunShapes.h).
  std::unique_ptr<detail::RunShapes> shapes_;
};

} // namespace kiln

#endif // KILN_PROGRAM_H
