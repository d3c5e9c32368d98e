//===- Runtime.h - Kiln's CUDA runtime (no MLIR) ----------------*- C++ -*-===//
//
// Compiles emitted CUDA C++ with NVRTC, caches cubins in memory and on disk,
// loads them with the CUDA driver and launches them after validating every
// argument. NVRTC and the driver are loaded with dlopen, so programs link
// and start on machines without either and get a clear error instead.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// Kiln's version, part of every cache key.
const char *runtimeVersion();

/// An error message, empty on success.
class Status {
public:
  Status() = default;
  static Status error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return message_.empty(); }
  const std::string &message() const { return message_; }

private:
  std::string message_;
};

enum class DType { BF16, F16, F32, F64, I32, I64 };
const char *dtypeName(DType dtype);
size_t dtypeBytes(DType dtype);

/// A device array: sizes and strides in elements.
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::BF16;
  std::vector<int64_t> sizes, strides;
};

/// A captured tensor's declaration: dims name problem symbols (batch, heads,
/// kv_heads, seq_q, seq_kv) or give a size ("16").
struct CaptureSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::string> dims;
};

/// Everything the runtime needs of a compiled variant.
struct ForwardKernelSpec {
  std::string variant;    ///< the attn.attention's name
  std::string kernelName; ///< the __global__ function
  std::string source;     ///< CUDA C++ including "kiln/kiln.cuh"
  std::string arch;       ///< sm_80 or sm_90a
  int64_t numThreads = 128, sharedBytes = 0, blockM = 64;
  int64_t headDimQK = 64, headDimV = 64, gqaGroup = 1;
  DType dtype = DType::BF16;
  std::vector<CaptureSpec> captures;
};

/// Compiles `source` (which may include the device library) to a cubin for
/// `arch` with NVRTC. Needs no GPU. `log` receives NVRTC's log.
Status compileToCubin(const std::string &source, const std::string &arch,
                      const std::string &nameForErrors, std::string &cubin,
                      std::string &log);

/// The architecture Kiln compiles for on device `ordinal` (sm_80 for
/// compute capability 8.x, sm_90a for 9.0) or an error naming the device.
Status deviceArch(int ordinal, std::string &arch, std::string &name);

/// A kernel loaded on the current device, ready to launch.
class ForwardKernel {
public:
  /// Compiles (or finds in the cache) and loads `spec` on device `ordinal`.
  static Status load(const ForwardKernelSpec &spec, int ordinal,
                     std::unique_ptr<ForwardKernel> &kernel);
  ~ForwardKernel();

  /// out = attention(q, k, v) and natural-log lse, for q [B, Lq, H, Dqk],
  /// k [B, Lk, H/G, Dqk], v [B, Lk, H/G, Dv], out [B, Lq, H, Dv],
  /// lse [B, H, Lq] f32, any strides with unit innermost stride and
  /// 16-byte aligned rows for q, k, v. `stream` is a CUstream (null: the
  /// default stream). Validates everything before launching.
  Status forward(const TensorRef &q, const TensorRef &k, const TensorRef &v,
                 const TensorRef &out, const TensorRef &lse,
                 const std::vector<TensorRef> &captures, void *stream) const;

  const ForwardKernelSpec &spec() const { return spec_; }
  double compileMs() const { return compileMs_; }
  double loadMs() const { return loadMs_; }
  bool cacheHit() const { return cacheHit_; }

private:
  ForwardKernel() = default;
  ForwardKernelSpec spec_;
  void *module_ = nullptr, *function_ = nullptr;
  int64_t maxShared_ = 0;
  double compileMs_ = 0, loadMs_ = 0;
  bool cacheHit_ = false;
};

/// Minimal device memory helpers for drivers and tests.
namespace cuda {
Status init(int ordinal);
Status malloc(void **ptr, size_t bytes);
Status free(void *ptr);
Status copyToDevice(void *dst, const void *src, size_t bytes);
Status copyToHost(void *dst, const void *src, size_t bytes);
Status synchronize();
Status memoryInfo(size_t &freeBytes, size_t &totalBytes);
/// Times `fn` with CUDA events on the default stream; returns ms.
Status timeMs(const std::function<Status()> &fn, int repeats, double &ms);
} // namespace cuda

} // namespace kiln

#endif // KILN_RUNTIME_H
