// kiln/reduce.cuh - row reductions, and row and column broadcasts of
// register tiles.
#pragma once
#include "kiln/layout.cuh"

namespace kiln {

/// Row max / sum of an mma-layout tile: each lane reduces its own columns,
/// then the four lanes of a quad (which hold one row's columns) exchange.
template <bool MAX, int M, int N, int W>
__device__ __forceinline__ RowFrag<float, M, W>
reduce_rows(const Frag<float, M, N, W> &f) {
  using F = Frag<float, M, N, W>;
  RowFrag<float, M, W> r;
#pragma unroll
  for (int s = 0; s < RowFrag<float, M, W>::kSize; ++s)
    r.x[s] = MAX ? neg_inf() : 0.0f;
#pragma unroll
  for (int e = 0; e < F::kSize; ++e) {
    int s = F::row_slot(e);
    r.x[s] = MAX ? fmaxf(r.x[s], f.x[e]) : r.x[s] + f.x[e];
  }
#pragma unroll
  for (int s = 0; s < RowFrag<float, M, W>::kSize; ++s) {
#pragma unroll
    for (int offset = 1; offset < 4; offset <<= 1) {
      float other = __shfl_xor_sync(0xffffffffu, r.x[s], offset);
      r.x[s] = MAX ? fmaxf(r.x[s], other) : r.x[s] + other;
    }
  }
  return r;
}

/// Every per-row value of a RowFrag combined into one float, the same in
/// every thread of the CTA: the lanes of a quad hold the same rows, so a
/// warp combines across its eight quads, then the warps through shared
/// memory. Every thread of the CTA must call it (it synchronises).
template <bool MAX, int M, int W>
__device__ __forceinline__ float reduce_all(const RowFrag<float, M, W> &r) {
  __shared__ float partial[W];
  float v = MAX ? neg_inf() : 0.0f;
#pragma unroll
  for (int s = 0; s < RowFrag<float, M, W>::kSize; ++s)
    v = MAX ? fmaxf(v, r.x[s]) : v + r.x[s];
#pragma unroll
  for (int offset = 4; offset < 32; offset <<= 1) {
    float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = MAX ? fmaxf(v, other) : v + other;
  }
  __syncthreads(); // the previous call's readers are done with `partial`
  if (lane_id() == 0)
    partial[warp_id()] = v;
  __syncthreads();
  float all = partial[0];
#pragma unroll
  for (int w = 1; w < W; ++w)
    all = MAX ? fmaxf(all, partial[w]) : all + partial[w];
  return all;
}

/// Repeats per-row values across the columns of an mma-layout tile.
template <typename F, typename T, int M, int W>
__device__ __forceinline__ F broadcast_rows(const RowFrag<T, M, W> &r) {
  F f;
#pragma unroll
  for (int e = 0; e < F::kSize; ++e)
    f.x[e] = r.x[F::row_slot(e)];
  return f;
}

/// x times each row's factor (x * broadcast_rows(r)); a warp whose rows'
/// factors are all exactly 1 skips the multiplications, which gives the
/// same values. The vote keeps the branch uniform, so the warp either
/// issues every multiplication or none (tgpu.scale_rows).
template <typename F, typename T, int M, int W>
__device__ __forceinline__ F scale_rows(const F &x,
                                        const RowFrag<T, M, W> &r) {
  // Whole rows per warp: each warp's m16 tiles are the factors' rows.
  static_assert(F::kMT * 2 == RowFrag<T, M, W>::kSize,
                "scale_rows takes a tile whose warps hold whole rows");
  bool differs = false;
#pragma unroll
  for (int s = 0; s < RowFrag<T, M, W>::kSize; ++s)
    differs |= r.x[s] != T(1);
  F y = x;
  if (__any_sync(0xffffffffu, differs)) {
#pragma unroll
    for (int e = 0; e < F::kSize; ++e)
      y.x[e] = x.x[e] * r.x[F::row_slot(e)];
  }
  return y;
}

/// Repeats per-column values down the rows of an mma-layout tile.
template <typename F, typename T, int N, int W>
__device__ __forceinline__ F broadcast_cols(const ColFrag<T, N, W> &c) {
  static_assert(F::kNT == ColFrag<T, N, W>::kNT, "one value per column");
  F f;
#pragma unroll
  for (int e = 0; e < F::kSize; ++e)
    f.x[e] = c.x[ColFrag<T, N, W>::slot_of(e)];
  return f;
}
} // namespace kiln
