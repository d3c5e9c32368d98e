//===- Kiln.h - Kiln's C++ JIT API ------------------------------*- C++ -*-===//
//
//   #include "kiln/Kiln.h"
//   kiln::Variant variant;
//   kiln::loadVariantFile("examples/causal_softcap.mlir", variant);
//   std::unique_ptr<kiln::ForwardKernel> kernel;
//   kiln::compile(variant, {}, kernel);    // MLIR -> CUDA -> NVRTC, cached
//   kernel->forward(q, k, v, out, lse, {}, stream);
//   std::unique_ptr<kiln::BackwardKernel> grads;
//   kiln::compileBackward(variant, {}, kiln::BackwardSchedule::TwoKernel,
//                         grads);
//   grads->backward(q, k, v, out, dout, lse, dq, dk, dv, {}, stream);
//
//   std::unique_ptr<kiln::HostProgram> host;   // the CPU backend, no GPU
//   kiln::HostProgram::compile(variant, {}, host);
//   host->run(kiln::HostProgram::Kind::Forward, {{"q", q}, ...}, {});
//
// The declarations need no MLIR; the definitions live in the compiler
// (link KilnDriver). Runtime-only programs use kiln/Runtime.h alone with
// specs written by `kiln compile`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_KILN_H
#define KILN_KILN_H

#include "kiln/Runtime.h"

namespace kiln {

/// An attention variant as MLIR text (one or more attn.attention ops).
struct Variant {
  std::string mlir;
  std::string name; ///< which attn.attention; empty: the only one
};

Status loadVariantFile(const std::string &path, Variant &variant);

/// Overrides of the variant, as `kiln run`'s flags: `headDim` sets
/// qk_head_dim, and v_head_dim too when the variant's two are equal and
/// `headDimV` is 0; `headDimV` sets v_head_dim.
struct CompileOptions {
  int device = 0;
  std::string arch;     ///< empty: the device's (sm_80 / sm_90a)
  int64_t headDim = 0;  ///< 0: the variant's
  int64_t headDimV = 0; ///< 0: the variant's (or headDim, as above)
  std::string dtype;    ///< "", "bf16" or "fp16"
  int64_t pageSize = 0; ///< > 0: K and V in a paged KV cache (page_size)
  double dropoutP = 0;  ///< > 0: the variant's dropout_p (tensor dropout_rng)
  int dropoutBits = 0;  ///< > 0: the variant's dropout_bits (16 or 8)
  /// A packed batch of sequences of different lengths: tensors cu_seqlens_q
  /// and cu_seqlens_kv, Q/K/V/out [T, H, D], lse [H, T_q] (the variant's
  /// varlen).
  bool varlen = false;
  /// > 0: block-sparse in blocks of [0] queries x [1] keys (the variant's
  /// block_sparse): tensors kv_num_blocks, kv_indices, full_kv_num_blocks,
  /// full_kv_indices (i32, FlexAttention's BlockMask).
  int64_t blockSparse[2] = {0, 0};
  /// With blockSparse: the forward program builds the lists from the mask
  /// instead (tensors q and k for their shapes, the lists as outputs; the
  /// backward's transposed ones too) and there is no backward.
  bool buildBlockMask = false;
  /// Backward: also the gradients of the float captures the score_mod reads
  /// (tensors grad_<capture>, f32, added to: pass zeros).
  bool captureGradients = false;
  /// Backward: capture gradients the same bit for bit in every run (implies
  /// captureGradients): fixed-point sums in a workspace, then one kernel
  /// per capture writes grad_<capture> (pass zeros).
  bool deterministicCaptureGradients = false;
};

/// Lowers `variant` to a CUDA kernel spec for `options.arch` (required when
/// no device is to be asked). Needs no GPU.
Status compileSpec(const Variant &variant, const CompileOptions &options,
                   ProgramSpec &spec);

/// compileSpec for the device's arch, then compile (or fetch from the cache)
/// and load on the device.
Status compile(const Variant &variant, const CompileOptions &options,
               std::unique_ptr<ForwardKernel> &kernel);

/// The backward pass's schedules (docs/pipeline.md): two kernels (dQ;
/// dK and dV) with no atomics, bit-identical across runs, 12 N^2 d FLOPs;
/// or one dK/dV kernel adding dQ atomically in f32, 10 N^2 d FLOPs; or
/// Auto, the faster of the two for the variant's head dims on the arch
/// (the atomic one at D = 64 and 128 on sm_90a; two kernels where the capture
/// gradients are to be deterministic); or Deterministic, the faster schedule
/// with the same bits in every run (the atomic one with its dQ adds in a
/// fixed order at D >= 128 on sm_90a where Auto takes it, but for GQA and
/// block-sparse lists; two kernels elsewhere).
enum class BackwardSchedule { TwoKernel, AtomicDQ, Auto, Deterministic };

/// Lowers the backward kernels of `variant` for `options.arch` (required).
/// Needs no GPU.
Status compileBackwardSpec(const Variant &variant,
                           const CompileOptions &options,
                           BackwardSchedule schedule, ProgramSpec &spec);

/// compileBackwardSpec for the device's arch, then compile (or fetch from the
/// cache) and load on the device.
Status compileBackward(const Variant &variant, const CompileOptions &options,
                       BackwardSchedule schedule,
                       std::unique_ptr<BackwardKernel> &kernel);

/// A variant JIT-compiled for the host by the CPU backend: the same forward
/// and backward launch plans as the GPU's (the tile program lowered to LLVM
/// instead of CUDA), run on host memory with the same argument checks.
/// Needs no GPU. Runs on one object are serialized.
class HostProgram {
public:
  enum class Kind { Forward, Backward };

  /// Lowers and JIT-compiles `variant` (options.device and arch unused),
  /// the backward with the two-kernel schedule.
  static Status compile(const Variant &variant, const CompileOptions &options,
                        std::unique_ptr<HostProgram> &program);
  ~HostProgram();

  /// The plan of the forward or the backward program: its tensors by name
  /// (q, k, v, out, lse; and dout, dq, dk, dv), captures and kernels.
  const ProgramSpec &plan(Kind kind) const;

  /// Validates `tensors` (host memory) and `captures` against the plan, as
  /// Program::run does, and runs its kernels in order. `overrides` sets
  /// derived symbols (kv_splits).
  Status run(Kind kind, const std::vector<NamedTensor> &tensors,
             const std::vector<TensorRef> &captures,
             const SymbolValues &overrides = {}) const;

private:
  HostProgram();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace kiln

#endif // KILN_KILN_H
