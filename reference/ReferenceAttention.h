//===- ReferenceAttention.h - float64 attention reference -------*- C++ -*-===//
//
// The naive O(N^2) attention every Kiln kernel is checked against: scores,
// mods, mask and softmax in float64, one query row at a time (so memory stays
// O(N) even for long sequences). It knows nothing of MLIR; variants plug in
// as callbacks.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_REFERENCE_REFERENCEATTENTION_H
#define KILN_REFERENCE_REFERENCEATTENTION_H

#include <cstdint>
#include <functional>
#include <string>

namespace kiln::ref {

/// Sizes of one attention problem. Q is [batch, seqQ, heads, headDimQK],
/// K is [batch, seqKV, kvHeads, headDimQK], V is [batch, seqKV, kvHeads,
/// headDimV], O is [batch, seqQ, heads, headDimV], LSE is [batch, heads, seqQ];
/// all contiguous. Query head h reads KV head h / (heads / kvHeads).
struct ProblemShape {
  int64_t batch = 1, heads = 1, kvHeads = 1, seqQ = 1, seqKV = 1;
  int64_t headDimQK = 64, headDimV = 64;
};

enum class CausalAlignment { None, TopLeft, BottomRight };

/// score_mod: the new score given the scaled score and its position.
using ScoreMod = std::function<double(double score, int64_t b, int64_t h,
                                      int64_t q, int64_t kv)>;
/// mask_mod: true keeps the key.
using MaskMod =
    std::function<bool(int64_t b, int64_t h, int64_t q, int64_t kv)>;
/// Dropout: the factor of attention weight P[q, kv], 0 (dropped) or
/// 1 / (1 - p) (kept).
using DropoutMod =
    std::function<double(int64_t b, int64_t h, int64_t q, int64_t kv)>;

struct AttentionSpec {
  double scale = 0.125;
  CausalAlignment causal = CausalAlignment::None;
  ScoreMod scoreMod; ///< empty: identity
  MaskMod maskMod;   ///< empty: keep everything
  DropoutMod dropout; ///< empty: no dropout
};

/// Returns an empty string when `shape` is a valid problem, else what is
/// wrong with it.
std::string validateShape(const ProblemShape &shape);

/// out = dropout(softmax(mask(score_mod(scale * Q K^T)))) V and the
/// natural-log log-sum-exp per row (of the softmax before dropout). A row with
/// no visible key gets out = 0 and lse = -inf. `shape` must be valid. Rows run
/// on several threads: the mods must be safe to call concurrently.
void attentionForward(const ProblemShape &shape, const AttentionSpec &spec,
                      const double *q, const double *k, const double *v,
                      double *out, double *lse);

/// Gradients of L = sum(dout ∘ out) with respect to q, k and v (same
/// layouts as the inputs; dk and dv summed over the query heads of each KV
/// head). The softmax is recomputed in float64; a score_mod's derivative is
/// taken by central differences (step 1e-6 relative), accurate to ~1e-9,
/// far below the 1e-2 the kernels are held to.
void attentionBackward(const ProblemShape &shape, const AttentionSpec &spec,
                       const double *q, const double *k, const double *v,
                       const double *dout, double *dq, double *dk, double *dv);

} // namespace kiln::ref

#endif // KILN_REFERENCE_REFERENCEATTENTION_H
