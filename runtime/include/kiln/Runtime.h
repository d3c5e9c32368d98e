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
  void *context_ = nullptr; ///< made current around launches (other threads)
  void *module_ = nullptr, *function_ = nullptr;
  int64_t maxShared_ = 0;
  double compileMs_ = 0, loadMs_ = 0;
  bool cacheHit_ = false;
};

/// One __global__ function of a multi-kernel program.
struct KernelEntry {
  std::string name;
  int64_t numThreads = 128, sharedBytes = 0;
};

/// The backward kernels of a variant, all in one CUDA source.
struct BackwardKernelSpec {
  std::string variant, source, arch;
  /// false: two kernels, dQ and dK/dV, no atomics (deterministic);
  /// true: one dK/dV kernel accumulating dQ with fp32 atomics into a
  /// workspace, then a convert kernel writes dq.
  bool atomicDQ = false;
  int64_t blockM = 64, blockN = 64;
  int64_t headDimQK = 64, headDimV = 64, gqaGroup = 1;
  DType dtype = DType::BF16;
  std::vector<CaptureSpec> captures;
  /// dq: two-kernel only; convert: atomicDQ only (the other may be empty).
  KernelEntry preprocess, dq, dkdv, convert;
};

namespace detail {
class StreamWorkspaces;
} // namespace detail

/// The backward kernels of a variant, loaded on the current device.
///
/// Workspace: backward() needs device scratch memory (D = rowsum(dO * O),
/// and for atomicDQ the fp32 dQ accumulator). The object keeps one buffer
/// per stream handle (per handle and thread for CU_STREAM_PER_THREAD),
/// allocated with cuMemAlloc on first use and grown (never
/// shrunk) when a call needs more; all are freed by the destructor. Work on
/// one stream runs in order, so calls on one stream can share a buffer, and
/// calls on different streams never share one: concurrent backward() calls
/// on one object are safe, from any threads, on any streams (they are
/// serialized on the host while they enqueue, which takes microseconds).
/// Growing a stream's buffer first synchronizes that stream. The memory stays
/// allocated until the object is destroyed; destroy it only after its work
/// has finished, and do not reuse a destroyed stream's handle for new work
/// while the old stream's backward work may still run.
class BackwardKernel {
public:
  /// Compiles (or finds in the cache) `spec.source` and loads it on device
  /// `ordinal`: one module, the functions of the spec's schedule.
  static Status load(const BackwardKernelSpec &spec, int ordinal,
                     std::unique_ptr<BackwardKernel> &kernel);
  ~BackwardKernel();

  /// dq, dk, dv = gradients of out = attention(q, k, v) given dout and the
  /// forward's natural-log lse. Shapes as for forward: q [B, Lq, H, Dqk],
  /// k [B, Lk, H/G, Dqk], v [B, Lk, H/G, Dv], out and dout [B, Lq, H, Dv],
  /// lse [B, H, Lq] f32, dq like q, dk like k, dv like v, all in the spec's
  /// dtype except lse. q, k, v and dout need unit innermost stride and
  /// 16-byte aligned rows.
  /// Validates everything, then enqueues the kernels on `stream` (a
  /// CUstream; null: the default stream) without synchronizing.
  Status backward(const TensorRef &q, const TensorRef &k, const TensorRef &v,
                  const TensorRef &out, const TensorRef &dout,
                  const TensorRef &lse, const TensorRef &dq,
                  const TensorRef &dk, const TensorRef &dv,
                  const std::vector<TensorRef> &captures, void *stream) const;

  const BackwardKernelSpec &spec() const { return spec_; }
  double compileMs() const { return compileMs_; }
  double loadMs() const { return loadMs_; }
  bool cacheHit() const { return cacheHit_; }
  /// Bytes of device workspace the last backward() call used (D and, for
  /// atomicDQ, the fp32 dQ accumulator); 0 before the first call.
  size_t workspaceBytes() const;

private:
  BackwardKernel();
  BackwardKernelSpec spec_;
  void *context_ = nullptr; ///< made current around launches (other threads)
  void *module_ = nullptr;
  void *preprocess_ = nullptr, *dq_ = nullptr, *dkdv_ = nullptr,
       *convert_ = nullptr;
  double compileMs_ = 0, loadMs_ = 0;
  bool cacheHit_ = false;
  std::unique_ptr<detail::StreamWorkspaces> workspaces_;
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
