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

#include "kiln/LaunchPlan.h"
#include "kiln/Program.h"
#include "kiln/Types.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// The options compileToCubin passes to NVRTC for `arch` (part of every
/// cubin's cache key).
std::vector<std::string> nvrtcOptions(const std::string &arch);

/// Compiles `source` (which may include the device library) to a cubin for
/// `arch` with NVRTC. Needs no GPU. `log` receives NVRTC's log.
Status compileToCubin(const std::string &source, const std::string &arch,
                      const std::string &nameForErrors, std::string &cubin,
                      std::string &log);

/// The architecture Kiln compiles for on device `ordinal` (sm_80 for
/// compute capability 8.x, sm_90a for 9.0) or an error naming the device.
Status deviceArch(int ordinal, std::string &arch, std::string &name);

/// A variant's forward (a program of kind "forward") on the current device:
/// a view of its Program that names the tensors.
class ForwardKernel {
public:
  /// Compiles (or finds in the cache) and loads `spec`, which must be a
  /// forward program, on device `ordinal`.
  static Status load(const ProgramSpec &spec, int ordinal,
                     std::unique_ptr<ForwardKernel> &kernel);

  /// out = attention(q, k, v) and natural-log lse, for q [B, Lq, H, Dqk],
  /// k [B, Lk, H/G, Dqk], v [B, Lk, H/G, Dv], out [B, Lq, H, Dv],
  /// lse [B, H, Lq] f32, any strides with unit innermost stride and
  /// 16-byte aligned rows for q, k, v. `stream` is a CUstream (null: the
  /// default stream). Validates everything before launching.
  Status forward(const TensorRef &q, const TensorRef &k, const TensorRef &v,
                 const TensorRef &out, const TensorRef &lse,
                 const std::vector<TensorRef> &captures, void *stream) const;

  const ProgramSpec &spec() const { return program_->spec(); }
  const Program &program() const { return *program_; }
  double compileMs() const { return program_->compileMs(); }
  double loadMs() const { return program_->loadMs(); }
  bool cacheHit() const { return program_->cacheHit(); }

private:
  std::unique_ptr<Program> program_;
};

/// A variant's backward (a program of kind "backward": a preprocess
/// D = rowsum(dO * O), then dQ and dK/dV kernels, or a dK/dV kernel adding dQ
/// atomically and a convert kernel, as its plan says) on the current device.
/// Workspaces as for Program.
class BackwardKernel {
public:
  static Status load(const ProgramSpec &spec, int ordinal,
                     std::unique_ptr<BackwardKernel> &kernel);

  /// dq, dk, dv = gradients of out = attention(q, k, v) given dout and the
  /// forward's natural-log lse. Shapes as for forward: q [B, Lq, H, Dqk],
  /// k [B, Lk, H/G, Dqk], v [B, Lk, H/G, Dv], out and dout [B, Lq, H, Dv],
  /// lse [B, H, Lq] f32, dq like q, dk like k, dv like v, all in the spec's
  /// dtype except lse. Validates everything, then enqueues the kernels on
  /// `stream` (a CUstream; null: the default stream) without synchronizing.
  Status backward(const TensorRef &q, const TensorRef &k, const TensorRef &v,
                  const TensorRef &out, const TensorRef &dout,
                  const TensorRef &lse, const TensorRef &dq,
                  const TensorRef &dk, const TensorRef &dv,
                  const std::vector<TensorRef> &captures, void *stream) const;

  const ProgramSpec &spec() const { return program_->spec(); }
  const Program &program() const { return *program_; }
  double compileMs() const { return program_->compileMs(); }
  double loadMs() const { return program_->loadMs(); }
  bool cacheHit() const { return program_->cacheHit(); }
  /// Bytes of device workspace the last backward() call used.
  size_t workspaceBytes() const { return program_->workspaceBytes(); }

private:
  std::unique_ptr<Program> program_;
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
