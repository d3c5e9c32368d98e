// kiln/load.cuh - global (or shared) memory -> register tiles, filling what is
// outside.
//
// For tiles that never meet a tensor core (row statistics, the backward
// preprocess's O and dO): plain loads straight into the mma layout, so no
// shared memory or barrier is involved; 16-bit rows by 16-byte chunks where
// they fit (kiln/chunks.cuh). Descs view global memory (tile.view of a kernel
// argument).
#pragma once
#include "kiln/chunks.cuh"
#include "kiln/layout.cuh"

namespace kiln {

/// A thread's elements come in pairs of adjacent columns (e even, e + 1, the
/// first at an even column when col0 is even). Where that holds for every
/// pair of the tile — contiguous columns, even col0, cols and row strides,
/// and a base aligned to a pair — a pair is inside or outside whole, and each
/// is one predicated load of twice the width: half the load instructions,
/// which lets ptxas keep more of a tile's loads in flight before their first
/// use (the by-rows split-KV combine kernel read its partials in batches of
/// ~8 scalar loads, one memory latency each), and one test per pair instead
/// of a branch between a wide and two narrow loads (less code for NVVM and
/// ptxas: the backward's preprocess kernel unrolled 64 such branches).
/// Otherwise, one checked load per element.
template <typename T, int M, int N, int W, int CG, int G>
__device__ __forceinline__ void load_pairs(Frag<T, M, N, W, CG> &f,
                                           const Desc<T, G> &d, int row0,
                                           int col0, float fill) {
  using F = Frag<T, M, N, W, CG>;
  const T outside = from_float<T>(fill);
  struct alignas(2 * sizeof(T)) Pair {
    T first, second;
  };
  const bool pairs =
      d.col_stride == 1 && col0 % 2 == 0 && d.cols % 2 == 0 &&
      d.row_stride % 2 == 0 && (G == 1 || d.group_stride % 2 == 0) &&
      reinterpret_cast<unsigned long long>(d.ptr) % sizeof(Pair) == 0;
  if (pairs) {
#pragma unroll
    for (int e = 0; e < F::kSize; e += 2) {
      int r = row0 + F::row(e), c = col0 + F::col(e);
      // (c even and cols even: c < cols puts c + 1 inside too.)
      bool inside = r >= 0 && r < d.rows && c >= 0 && c < d.cols;
      Pair pair{outside, outside};
      if (inside)
        pair = *reinterpret_cast<const Pair *>(d.ptr + d.row_offset(r) + c);
      f.x[e] = pair.first;
      f.x[e + 1] = pair.second;
    }
    return;
  }
#pragma unroll
  for (int e = 0; e < F::kSize; ++e) {
    int r = row0 + F::row(e), c = col0 + F::col(e);
    bool inside = r >= 0 && r < d.rows && c >= 0 && c < d.cols;
    // (Offsets, not pointers, until an element is known to be inside.)
    f.x[e] =
        inside
            ? d.ptr[d.row_offset(r) + static_cast<long long>(c) * d.col_stride]
            : outside;
  }
}

/// f = d[row0 .., col0 ..], `fill` outside the view: bf16 and f16 tiles
/// whose rows' columns are contiguous, inside and 16-byte aligned by 16-byte
/// chunks (kiln/chunks.cuh), any other by pairs or elements (load_pairs).
/// Collective over the tile's warps where chunks fit (quad shuffles).
template <typename T, int M, int N, int W, int CG, int G>
__device__ __forceinline__ void load(Frag<T, M, N, W, CG> &f,
                                     const Desc<T, G> &d, int row0, int col0,
                                     float fill) {
  if (!try_load_chunks(f, d, row0, col0, fill))
    load_pairs(f, d, row0, col0, fill);
}

/// The same, reading only the elements whose mask is set (the others read
/// `fill` and touch no memory).
template <typename T, int M, int N, int W, int CG, int G>
__device__ __forceinline__ void
load(Frag<T, M, N, W, CG> &f, const Desc<T, G> &d, int row0, int col0,
     float fill, const Frag<bool, M, N, W, CG> &mask) {
  using F = Frag<T, M, N, W, CG>;
  const T outside = from_float<T>(fill);
#pragma unroll
  for (int e = 0; e < F::kSize; ++e) {
    int r = row0 + F::row(e), c = col0 + F::col(e);
    bool inside = mask.x[e] && r >= 0 && r < d.rows && c >= 0 && c < d.cols;
    f.x[e] = inside ? d.ptr[d.row_offset(r) + c * d.col_stride] : outside;
  }
}

template <typename T, int M, int W, int G>
__device__ __forceinline__ void load(RowFrag<T, M, W> &f, const Desc<T, G> &d,
                                     int row0, float fill) {
  using R = RowFrag<T, M, W>;
  const T outside = from_float<T>(fill);
#pragma unroll
  for (int s = 0; s < R::kSize; ++s) {
    int r = row0 + R::row(s);
    f.x[s] = r >= 0 && r < d.rows ? d.ptr[d.row_offset(r)] : outside;
  }
}

/// Per-column values (the backward's per-query LSE and D across Sᵀ). A
/// thread's columns come in adjacent pairs: where the whole tile lies
/// inside a contiguous, 8-byte aligned 32-bit array (every block but the
/// last), one 64-bit load per pair and no bounds checks. That takes a
/// quarter of the instructions out of the dK/dV kernel's loop (its time on
/// the H100 did not move: the loads' latency, not their count, showed).
template <typename T, int N, int W>
__device__ __forceinline__ void load(ColFrag<T, N, W> &f, const Desc<T> &d,
                                     int col0, float fill) {
  using C = ColFrag<T, N, W>;
  const T *base = d.ptr + col0 * d.row_stride;
  if constexpr (sizeof(T) == 4) {
    bool whole = d.row_stride == 1 && col0 >= 0 && col0 + N <= d.rows &&
                 reinterpret_cast<unsigned long long>(base) % 8 == 0;
    struct alignas(8) Pair {
      T first, second;
    };
    if (whole) {
#pragma unroll
      for (int s = 0; s < C::kSize; s += 2) {
        Pair pair = *reinterpret_cast<const Pair *>(base + C::col(s));
        f.x[s] = pair.first;
        f.x[s + 1] = pair.second;
      }
      return;
    }
  }
  const T outside = from_float<T>(fill);
#pragma unroll
  for (int s = 0; s < C::kSize; ++s) {
    int c = col0 + C::col(s);
    f.x[s] = c >= 0 && c < d.rows ? d.ptr[c * d.row_stride] : outside;
  }
}
/// A shared vector's elements into a thread's rows (tgpu.load_shared): those
/// at or past `count` read `fill` (a descriptor's end, as load fills past
/// it).
template <typename T, int M, int W>
__device__ __forceinline__ void load_shared(RowFrag<T, M, W> &f,
                                            const SmemVector<T, M> &src,
                                            int count, float fill) {
  using R = RowFrag<T, M, W>;
  const T outside = from_float<T>(fill);
#pragma unroll
  for (int s = 0; s < R::kSize; ++s)
    f.x[s] = R::row(s) < count ? src.ptr[R::row(s)] : outside;
}

/// The same into a thread's columns: adjacent pairs, one 8-byte read each,
/// then the fill where the vector is cut short.
template <typename T, int N, int W>
__device__ __forceinline__ void load_shared(ColFrag<T, N, W> &f,
                                            const SmemVector<T, N> &src,
                                            int count, float fill) {
  using C = ColFrag<T, N, W>;
  static_assert(sizeof(T) == 4, "pairs of 32-bit values");
  struct alignas(8) Pair {
    T first, second;
  };
#pragma unroll
  for (int s = 0; s < C::kSize; s += 2) {
    Pair pair = *reinterpret_cast<const Pair *>(src.ptr + C::col(s));
    f.x[s] = pair.first;
    f.x[s + 1] = pair.second;
  }
  if (count < N) {
    const T outside = from_float<T>(fill);
#pragma unroll
    for (int s = 0; s < C::kSize; ++s)
      if (C::col(s) >= count)
        f.x[s] = outside;
  }
}

} // namespace kiln
