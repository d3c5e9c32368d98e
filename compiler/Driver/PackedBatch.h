//===- PackedBatch.h - kiln run's varlen batches ------------------*- C++
//-*-===//
//
// `kiln run --seqlens` packs the first L_b rows of each batch b of the dense
// inputs into FlashAttention's varlen layout ([T, H, D], cu_seqlens) for the
// kernels, and unpacks their results into the dense buffers, rows past a
// sequence set to what the reference gives a row that sees no key (O = 0,
// LSE = -inf, zero gradients), so that the float64 reference of the dense
// problem, with every row and key past its sequence masked, checks them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_PACKEDBATCH_H
#define KILN_COMPILER_DRIVER_PACKEDBATCH_H

#include "compiler/Driver/HostBuffer.h"

#include <cstdint>
#include <vector>

namespace kiln::driver {

struct Problem;
struct Inputs;
struct Gradients;

/// A packed batch: per-sequence lengths, cu_seqlens (i32 [B + 1]) and the
/// kernels' tensors. Q, K, V, O, dO, dQ, dK, dV [T, H, D]; LSE [H, T_q].
struct PackedBatch {
  std::vector<int64_t> lensQ, lensKV;
  HostBuffer cuQ, cuKV;
  HostBuffer q, k, v, o, lse;
  HostBuffer dO, dq, dk, dv;
};

/// Packs `in`'s q, k, v for `p` (p.lensQ / p.lensKV); o, lse poisoned.
PackedBatch packBatch(const Problem &p, const Inputs &in);
/// Packs dO; dq, dk, dv poisoned.
void packGradients(const Problem &p, const Gradients &g, PackedBatch &packed);
/// O and LSE back into `in.o` / `in.lse` (rows past a sequence: 0, -inf).
void unpackOutputs(const Problem &p, const PackedBatch &packed, Inputs &in);
/// dQ, dK, dV back into `g` (rows past a sequence: 0).
void unpackGradients(const Problem &p, const PackedBatch &packed, Gradients &g);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_PACKEDBATCH_H
