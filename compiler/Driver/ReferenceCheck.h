//===- ReferenceCheck.h - kiln run's comparison with float64 ----*- C++ -*-===//
//
// The host buffers of a run and their comparison with the float64
// reference, which evaluates the variant's own score_mod / mask_mod regions
// through the interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_REFERENCECHECK_H
#define KILN_COMPILER_DRIVER_REFERENCECHECK_H

#include "compiler/Driver/BlockMask.h"
#include "compiler/Driver/HostBuffer.h"
#include "compiler/Driver/ModInterpreter.h"
#include "compiler/Driver/PackedBatch.h"
#include "dialects/Attn/IR/AttnDialect.h"
#include "reference/ReferenceAttention.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::driver {

/// kiln run's exit codes.
constexpr int kMismatch = 1;
constexpr int kBadInput = 2;
constexpr int kInternalError = 3;

struct Problem {
  int64_t batch, heads, kvHeads, seqQ, seqKV, dqk, dv, pad;
  ElementKind io;
  int64_t pageSize = 0; ///< > 0: K and V in a paged KV cache
  /// Varlen (--seqlens): each sequence's query and key counts (batch of
  /// them, seqQ / seqKV their maxima); empty otherwise.
  std::vector<int64_t> lensQ, lensKV;
  /// Block-sparse: the lists at random with this density (--block-density);
  /// 0: the variant's own mask's.
  double blockDensity = 0;
  /// --build-block-mask: the builder program runs instead of attention.
  bool buildBlockMask = false;
  bool varlen() const { return !lensQ.empty(); }
  /// The (query, key) pairs per head: B * Lq * Lk, or varlen the sum over
  /// the sequences of theirs (FLOP counts).
  double pairs() const {
    if (!varlen())
      return double(batch) * double(seqQ) * double(seqKV);
    double sum = 0;
    for (size_t b = 0; b < lensQ.size(); ++b)
      sum += double(lensQ[b]) * double(lensKV[b]);
    return sum;
  }
};

/// A paged KV cache holding the rows of the dense K and V: pools [pages,
/// page size, kv heads, D] in shuffled page order, each sequence's block
/// table row and its key count (ragged, at most seqKV); the pool rows past
/// a sequence's length and the spare page hold NaN, which a kernel reading
/// them would spread.
struct PagedKV {
  HostBuffer kPool, vPool, table, lens;
};

/// Q, K, V in, O and LSE out, as the kernels see them. Paged, the kernels
/// read `paged` and the reference the dense `k` and `v`.
struct Inputs {
  HostBuffer q, k, v, o, lse;
  std::optional<PagedKV> paged;
  /// Varlen: what the kernels read and write; the dense buffers hold the
  /// reference's problem (and the unpacked results).
  std::optional<PackedBatch> packed;
  /// Dropout's generator state (seed, offset), i64 [2], for variants with
  /// dropout_p; forward and backward read the same one.
  std::optional<HostBuffer> dropoutRng;
  /// Block-sparse variants: the lists of KV blocks the forward visits.
  std::optional<BlockMaskLists> blockMask;
  /// --build-block-mask: the generated builder's outputs (poisoned), which
  /// the forward program then fills instead of attention.
  std::optional<BlockMaskLists> builtLists;

  /// The forward program's tensors by name.
  std::map<std::string, HostBuffer *> forwardTensors() {
    if (builtLists) {
      std::map<std::string, HostBuffer *> named{{"q", &q}, {"k", &k}};
      addBlockLists(named, *builtLists, /*backward=*/true);
      return named;
    }
    std::map<std::string, HostBuffer *> named{
        {"q", &q}, {"k", &k}, {"v", &v}, {"out", &o}, {"lse", &lse}};
    if (paged) {
      named["k"] = &paged->kPool;
      named["v"] = &paged->vPool;
      named["block_table"] = &paged->table;
      named["kv_lens"] = &paged->lens;
    }
    if (packed) {
      named["q"] = &packed->q;
      named["out"] = &packed->o;
      named["lse"] = &packed->lse;
      named["cu_seqlens_q"] = &packed->cuQ;
      // Paged too (chunked prefill): K and V stay the cache's pools.
      if (!paged) {
        named["k"] = &packed->k;
        named["v"] = &packed->v;
        named["cu_seqlens_kv"] = &packed->cuKV;
      }
    }
    if (dropoutRng)
      named["dropout_rng"] = &*dropoutRng;
    if (blockMask)
      addBlockLists(named, *blockMask, /*backward=*/false);
    return named;
  }
  /// A block-sparse run's lists by name: the forward takes the kv_ ones,
  /// the backward the q_ ones too.
  static void addBlockLists(std::map<std::string, HostBuffer *> &named,
                            BlockMaskLists &lists, bool backward) {
    named["kv_num_blocks"] = &lists.kvNum;
    named["kv_indices"] = &lists.kvIdx;
    named["full_kv_num_blocks"] = &lists.fullNum;
    named["full_kv_indices"] = &lists.fullIdx;
    if (!backward)
      return;
    named["q_num_blocks"] = &lists.qNum;
    named["q_indices"] = &lists.qIdx;
    named["full_q_num_blocks"] = &lists.fullQNum;
    named["full_q_indices"] = &lists.fullQIdx;
  }
};

/// Backward buffers: a random dO and the gradients (input type). Scratch
/// (D, the atomic schedule's f32 dQ sum) is the plan's workspace.
struct Gradients {
  HostBuffer dO, dq, dk, dv;
  /// --capture-gradients: "grad_<capture>" (f32, the capture's shape,
  /// zeroed: the backward adds to it) for each capture the backward
  /// program differentiates.
  struct CaptureGradient {
    unsigned capture;
    std::string tensor;
    HostBuffer grad;
  };
  std::vector<CaptureGradient> captureGrads;
  /// The backward program's tensor names: a block-sparse run passes the
  /// lists it takes (the atomic schedule has no dQ kernel, so no kv_ ones).
  std::vector<std::string> planTensors;

  /// The backward program's tensors by name.
  std::map<std::string, HostBuffer *> tensors(Inputs &in);
};

/// The reference's view of a variant: scale, causality and the mods as
/// callbacks into the float64 interpreter of the variant's own regions.
struct ReferenceVariant {
  ref::AttentionSpec spec;
  std::unique_ptr<ModInterpreter> scoreMod, maskMod;
};

/// Fills `out` from the spec (dropout's mask from `dropoutRng`, the run's
/// (seed, offset), when the spec has dropout_p); 0 or an exit code after a
/// message on `err`.
int makeReferenceVariant(attn::AttentionOp refSpec,
                         const std::vector<const HostBuffer *> &captureViews,
                         const HostBuffer *dropoutRng, ReferenceVariant &out,
                         llvm::raw_ostream &err);

/// Compares O and LSE with the reference; prints the errors and PASS/FAIL.
/// Returns 0 or kMismatch (or kBadInput when the mods cannot be evaluated).
int checkAgainstReference(const Problem &p, attn::AttentionOp refSpec,
                          Inputs &in, std::vector<HostBuffer> &captures,
                          double tolerance, llvm::raw_ostream &out,
                          llvm::raw_ostream &err);

/// Compares dQ, dK, dV with the float64 reference gradients.
int checkBackward(const Problem &p, attn::AttentionOp refSpec, Inputs &in,
                  std::vector<HostBuffer> &captures, Gradients &g,
                  double tolerance, llvm::raw_ostream &out,
                  llvm::raw_ostream &err);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_REFERENCECHECK_H
