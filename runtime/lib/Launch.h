//===- Launch.h - what every kernel launcher shares -------------*- C++ -*-===//
//
// The forward and the backward launchers validate the same kind of arguments,
// pass tensors to kernels the same way and load modules the same way; this is
// that common part, so both report the same errors for the same mistakes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_LAUNCH_H
#define KILN_RUNTIME_LIB_LAUNCH_H

#include "kiln/LaunchPlan.h"
#include "kiln/Runtime.h"

#include <array>

#include <string>
#include <vector>

namespace kiln::detail {

/// "[2, 128, 8, 64]".
std::string shapeString(const std::vector<int64_t> &v);

/// dtype, rank, shape `want`, non-negative strides, dimensions below 2^31 and
/// a non-null pointer, in that order. `what` names the tensor in messages.
Status checkTensor(const char *what, const TensorRef &t, DType dtype,
                   const std::vector<int64_t> &want);

/// A unit innermost stride (or a last dimension of one element), an
/// `alignBytes`-aligned base pointer and every other stride a multiple of
/// the chunk: the element size for every tensor, 16 bytes for those whose
/// rows kernels copy in chunks (cp.async, TMA).
Status checkAligned(const char *what, const TensorRef &t, int64_t alignBytes);

/// `t.data` is device memory of the current context.
Status checkOnDevice(const char *what, const TensorRef &t);

/// What cuTensorMapEncodeTiled takes for a tensor-map argument: the whole
/// tensor, its dimensions in the map's order (innermost first), strides in
/// bytes of every one but the innermost, and the box (the plan's, then 1).
struct TensorMapLayout {
  int dataType = 0; ///< CUtensorMapDataType
  unsigned rank = 0;
  void *address = nullptr;
  unsigned long long dims[5] = {}, strides[4] = {};
  unsigned box[5] = {};
  int swizzle = 0; ///< CUtensorMapSwizzle
};

/// Checks `t` against what the copy engine needs (unit innermost stride,
/// 16-byte aligned base and byte strides below 2^40, dimensions up to 2^32)
/// and fills `layout` for the tensor map `arg` of kernel `kernel`. Touches no
/// device.
Status tensorMapLayout(const std::string &kernel, const KernelArg &arg,
                       const TensorRef &t, TensorMapLayout &layout);

/// The argument list of one launch. A tensor is passed as the kernel's
/// Tensor<T, R> by value: an 8-byte pointer, then R sizes, then R strides,
/// all 64-bit.
class KernelParams {
public:
  /// Packs the first `rank` sizes and strides of `t` (zeros past its rank).
  void addTensor(const TensorRef &t, size_t rank);
  /// Packs a 64-bit integer (a problem scalar).
  void addInt64(int64_t value);
  /// Packs `size` raw bytes (an encoded tensor map, passed by value).
  void addBytes(const void *bytes, size_t size);
  /// cuLaunchKernel's kernelParams; valid until the next add.
  void **pointers();

private:
  char *append(size_t size);
  std::vector<char> bytes_;
  std::vector<size_t> offsets_;
  std::vector<void *> pointers_;
};

/// A program's compiled kernels on the device: one module per compile unit
/// (CompileUnits.h) and each kernel's function, in the plan's order. The
/// caller owns the modules (unloadModule).
struct LoadedProgram {
  void *context = nullptr; ///< the context the modules were loaded in
  std::vector<void *> modules;
  std::vector<void *> functions; ///< one per spec kernel
  int64_t maxShared = 0; ///< the device's opt-in maximum per block
  /// Its multiprocessor count, and each kernel's CTAs per multiprocessor.
  DeviceSymbols device;
  double compileMs = 0, loadMs = 0;
  bool cacheHit = false; ///< every unit came from the cache
};

/// Initialises device `ordinal`, checks that the spec's arch is its arch,
/// compiles the program's units concurrently (or finds their cubins in the
/// cache), loads them and fetches each kernel, checking its shared memory
/// against the device's limit and raising its maximum dynamic shared memory
/// to that size. On failure nothing stays loaded.
Status loadProgram(const ProgramSpec &spec, int ordinal,
                   LoadedProgram &loaded);

/// Makes `context` current on the calling thread for the scope's lifetime
/// when another context, or none, is: a kernel may be launched from a thread
/// that never made its context current (PyTorch runs backward on its own
/// autograd threads), and a module's functions launch only in the context
/// that loaded it.
class ScopedContext {
public:
  explicit ScopedContext(void *context);
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;
  const Status &status() const { return status_; }

private:
  bool pushed_ = false;
  Status status_;
};

/// Unloads a module from loadProgram; null is ignored.
void unloadModule(void *module);

/// cuLaunchKernel on `stream`; a failure reads "cuLaunchKernel of '<kernel>'
/// failed: <driver>". With `overlapPrior` (a kernel that waits for the
/// previous grids itself, KernelLaunch::overlapsPrior), cuLaunchKernelEx with
/// programmatic stream serialization where the driver has it.
Status launch(void *function, int64_t gridX, int64_t gridY, int64_t gridZ,
              int64_t numThreads, int64_t sharedBytes, void *stream,
              KernelParams &params, const std::string &kernel,
              bool overlapPrior = false);

/// ceil(n / block).
inline int64_t ceilDiv(int64_t n, int64_t block) {
  return (n + block - 1) / block;
}

} // namespace kiln::detail

#endif // KILN_RUNTIME_LIB_LAUNCH_H
