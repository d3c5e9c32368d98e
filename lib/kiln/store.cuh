// kiln/store.cuh - register tiles -> memory: global stores and atomic adds
// (dropping what is outside), and shared-memory stores.
#pragma once
#include "kiln/chunks.cuh"
#include "kiln/layout.cuh"

namespace kiln {

/// Whether a store of a tile with `cols` columns from column col0 may write
/// each thread's two adjacent columns as one (32 bits for 16-bit elements,
/// 64 for 32-bit ones): unit column stride, every column of the tile inside
/// the view, and every pair's address aligned to the pair. The outputs'
/// usual layout passes; any other falls back to one element per store.
template <typename T, int G>
__device__ __forceinline__ bool pairs_fit(const Desc<T, G> &d, int col0,
                                          int cols) {
  return d.col_stride == 1 && col0 >= 0 && (col0 & 1) == 0 &&
         col0 + cols <= d.cols && (d.row_stride & 1) == 0 &&
         (G == 1 || (d.group_stride & 1) == 0) &&
         reinterpret_cast<unsigned long long>(d.ptr) % (2 * sizeof(T)) == 0;
}

/// Element types whose adjacent pairs store as one: bf16 and f16 (through
/// their bits) and 32-bit ones; any other goes one element per store.
template <typename T> struct Pairable {
  static constexpr bool value = sizeof(T) == 4;
};
template <> struct Pairable<bf16> { static constexpr bool value = true; };
template <> struct Pairable<f16> { static constexpr bool value = true; };

/// p[0] = a, p[1] = b in one store; p is aligned to the pair.
template <typename T>
__device__ __forceinline__ void store_pair(T *p, const T &a, const T &b) {
  if constexpr (sizeof(T) == 2) {
    *reinterpret_cast<unsigned *>(p) = pack_pair(a, b);
  } else {
    static_assert(sizeof(T) == 4, "pairs of 16- or 32-bit elements");
    struct alignas(8) Pair {
      T first, second;
    };
    *reinterpret_cast<Pair *>(p) = Pair{a, b};
  }
}

/// Writes this thread's elements of a tile at (row0, col0), dropping what
/// is outside the view. Elements e and e + 1 (e even) are adjacent columns
/// of one row, so where the columns are contiguous and aligned they go as
/// one store with one row check: the epilogue's output tile otherwise costs
/// a 16-bit store and four bounds checks per element, about a quarter of a
/// short forward kernel's samples (docs/performance.md).
template <typename T, int M, int N, int W, int CG, int G>
__device__ __forceinline__ void store_pairs(const Desc<T, G> &d, int row0,
                                            int col0,
                                            const Frag<T, M, N, W, CG> &f) {
  using F = Frag<T, M, N, W, CG>;
  if constexpr (Pairable<T>::value) {
    if (pairs_fit(d, col0, N)) {
#pragma unroll
      for (int e = 0; e < F::kSize; e += 2) {
        int r = row0 + F::row(e);
        if (r >= 0 && r < d.rows)
          store_pair(d.ptr + d.row_offset(r) + col0 + F::col(e), f.x[e],
                     f.x[e + 1]);
      }
      return;
    }
  }
#pragma unroll
  for (int e = 0; e < F::kSize; ++e) {
    int r = row0 + F::row(e), c = col0 + F::col(e);
    if (r >= 0 && r < d.rows && c >= 0 && c < d.cols)
      d.ptr[d.row_offset(r) + c * d.col_stride] = f.x[e];
  }
}

/// d[row0 .., col0 ..] = f, dropping what is outside the view: bf16 and f16
/// tiles whose rows' columns are contiguous, inside and 16-byte aligned by
/// 16-byte chunks (kiln/chunks.cuh), any other by pairs or elements
/// (store_pairs). Collective over the tile's warps where chunks fit (quad
/// shuffles).
template <typename T, int M, int N, int W, int CG, int G>
__device__ __forceinline__ void store(const Desc<T, G> &d, int row0, int col0,
                                      const Frag<T, M, N, W, CG> &f) {
  if (!try_store_chunks(d, row0, col0, f))
    store_pairs(d, row0, col0, f);
}

/// The same, writing only the elements whose mask is set.
template <typename T, int M, int N, int W, int CG, int G>
__device__ __forceinline__ void store(const Desc<T, G> &d, int row0, int col0,
                                      const Frag<T, M, N, W, CG> &f,
                                      const Frag<bool, M, N, W, CG> &mask) {
  using F = Frag<T, M, N, W, CG>;
#pragma unroll
  for (int e = 0; e < F::kSize; ++e) {
    int r = row0 + F::row(e), c = col0 + F::col(e);
    if (mask.x[e] && r >= 0 && r < d.rows && c >= 0 && c < d.cols)
      d.ptr[d.row_offset(r) + c * d.col_stride] = f.x[e];
  }
}

/// One lane per quad writes each row value (they are replicated).
template <typename T, int M, int W, int G>
__device__ __forceinline__ void store(const Desc<T, G> &d, int row0,
                                      const RowFrag<T, M, W> &f) {
  if ((lane_id() & 3) != 0)
    return;
#pragma unroll
  for (int s = 0; s < RowFrag<T, M, W>::kSize; ++s) {
    int r = row0 + RowFrag<T, M, W>::row(s);
    if (r >= 0 && r < d.rows)
      d.ptr[d.row_offset(r)] = f.x[s];
  }
}

/// The same, writing only the rows whose mask is set.
template <typename T, int M, int W, int G>
__device__ __forceinline__ void store(const Desc<T, G> &d, int row0,
                                      const RowFrag<T, M, W> &f,
                                      const RowFrag<bool, M, W> &mask) {
  if ((lane_id() & 3) != 0)
    return;
#pragma unroll
  for (int s = 0; s < RowFrag<T, M, W>::kSize; ++s) {
    int r = row0 + RowFrag<T, M, W>::row(s);
    if (mask.x[s] && r >= 0 && r < d.rows)
      d.ptr[d.row_offset(r)] = f.x[s];
  }
}

/// *p += v, one fp32 reduction in L2 (atomicAdd without its return value
/// compiles to red.global.add).
__device__ __forceinline__ void red_add(float *p, float v) { atomicAdd(p, v); }

/// Where tile.scatter_add's sums go: f32 reductions into `base[at]`, whose
/// order (and so rounding) varies from run to run...
struct FloatSink {
  float *base;
  __device__ __forceinline__ void add(long long at, float v) const {
    red_add(base + at, v);
  }
};

/// ...or (fixed_point) three i64 reductions into entry `base[at]`, words
/// `part_stride` apart, whose sums are the same in any order: round(v 2^16),
/// the rest in units of 2^-40, and a count of values out of range (not
/// finite, or |v| >= 2^46). tile.scatter_add's description defines them;
/// the CPU lowering computes the same.
struct FixedPointSink {
  long long *base;
  long long part_stride;
  __device__ __forceinline__ void add(long long at, float v) const {
    unsigned long long *p = reinterpret_cast<unsigned long long *>(base + at);
    const double wide = v;
    if (!(fabs(wide) < 0x1p46)) { // NaN too
      atomicAdd(p + 2 * part_stride, 1ull);
      return;
    }
    const double scaled = wide * 0x1p16;
    const double high = rint(scaled);
    const long long hi = __double2ll_rn(high);
    const long long lo = __double2ll_rn((scaled - high) * 0x1p24);
    if (hi != 0)
      atomicAdd(p, static_cast<unsigned long long>(hi));
    if (lo != 0)
      atomicAdd(p + part_stride, static_cast<unsigned long long>(lo));
  }
};

/// tile.scatter_add of a register tile whose every element goes to entry
/// `at` (the index tiles are splats: a capture read at a uniform index,
/// ALiBi's slope): the thread's elements, then the warp's 32 threads summed
/// (in a fixed order), one reduction per warp.
template <typename Sink, typename F>
__device__ __forceinline__ void scatter_add_uniform(const Sink &sink,
                                                    long long at, const F &f) {
  float sum = 0.0f;
#pragma unroll
  for (int e = 0; e < F::kSize; ++e)
    sum += f.x[e];
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane_id() == 0)
    sink.add(at, sum);
}

/// tile.scatter_add of a register tile: element e of `f` added at entry
/// `offset(e)`. Consecutive elements of a thread at one address are
/// summed before their one reduction (far from the diagonal a bucketed
/// relative-position bias maps a whole row to one entry), and a warp whose
/// elements all go to one address sums across its lanes first.
template <typename Sink, typename F, typename Offset>
__device__ __forceinline__ void scatter_add(const Sink &sink, const F &f,
                                            Offset offset) {
  long long at = offset(0);
  // A tile that goes to one address in every lane of the warp (a bucketed
  // bias far from the diagonal) is summed across the warp first: one
  // reduction per warp instead of one per thread on a contended entry.
  bool one = true;
#pragma unroll
  for (int e = 1; e < F::kSize; ++e)
    one &= offset(e) == at;
  long long first = __shfl_sync(0xffffffffu, at, 0);
  if (__all_sync(0xffffffffu, one && at == first)) {
    scatter_add_uniform(sink, at, f);
    return;
  }
  float sum = f.x[0];
#pragma unroll
  for (int e = 1; e < F::kSize; ++e) {
    long long next = offset(e);
    if (next != at) {
      sink.add(at, sum);
      at = next;
      sum = 0.0f;
    }
    sum += f.x[e];
  }
  sink.add(at, sum);
}

/// d += f with fp32 reductions in L2 (red.global.add; no return value, so
/// no round trip): the atomic backward schedule's dQ accumulation. The
/// order in which CTAs add is not fixed, so the sum's rounding varies.
template <int M, int N, int W, int CG>
__device__ __forceinline__ void atomic_add(const Desc<float> &d, int row0,
                                           int col0,
                                           const Frag<float, M, N, W, CG> &f) {
  using F = Frag<float, M, N, W, CG>;
#if __CUDA_ARCH__ >= 900
  // Where the tile lies inside the columns, dense and 8-byte aligned (the
  // dQ accumulator), every lane's column pair is one 8-byte reduction with
  // no per-pair test; only rows are checked. (Per-pair tests and their
  // scalar fallbacks were a third of the 128-key atomic kernel's
  // instructions around the adds.)
  if (d.col_stride == 1 && col0 >= 0 && col0 + N <= d.cols &&
      ((col0 | d.row_stride) & 1) == 0 &&
      (reinterpret_cast<unsigned long long>(d.ptr) & 7) == 0) {
    // Slot e0 + half * 2 of each m16 tile starts a thread row.
#pragma unroll
    for (int s = 0; s < F::kSize / (F::kNT * 2); ++s) {
      int e0 = (s / 2) * F::kNT * 4 + (s % 2) * 2;
      int r = row0 + F::row(e0);
      if (r < 0 || r >= d.rows)
        continue;
      float *rowPtr = d.ptr + r * d.row_stride + col0;
#pragma unroll
      for (int nt = 0; nt < F::kNT; ++nt) {
        int e = e0 + nt * 4;
        asm volatile(
            "red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(rowPtr + F::col(e)),
            "f"(f.x[e]), "f"(f.x[e + 1])
            : "memory");
      }
    }
    return;
  }
#endif
  // Row by row: one row pointer per thread row and column offsets that are
  // constants plus the lane's, so few addresses stay live across the loop
  // this runs in (per-element 64-bit addresses spill next to the backward's
  // accumulators).
#pragma unroll
  for (int e0 = 0; e0 < F::kSize; e0 += F::kNT * 4) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      int r = row0 + F::row(e0 + half * 2);
      if (r < 0 || r >= d.rows)
        continue;
      float *rowPtr = d.ptr + r * d.row_stride;
#pragma unroll
      for (int nt = 0; nt < F::kNT; ++nt) {
#if __CUDA_ARCH__ >= 900
        // The lane's two adjacent columns in one 8-byte reduction (sm_90):
        // half the L2 requests of the accumulation.
        {
          int e = e0 + nt * 4 + half * 2;
          int c = col0 + F::col(e);
          float *p = rowPtr + c;
          if (d.col_stride == 1 && c >= 0 && c + 1 < d.cols &&
              (reinterpret_cast<unsigned long long>(p) & 7) == 0) {
            asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p),
                         "f"(f.x[e]), "f"(f.x[e + 1])
                         : "memory");
            continue;
          }
        }
#endif
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          int e = e0 + nt * 4 + half * 2 + j;
          int c = col0 + F::col(e);
          if (c >= 0 && c < d.cols)
            asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(
                             rowPtr + c * d.col_stride),
                         "f"(f.x[e])
                         : "memory");
        }
      }
    }
  }
}

/// Writes this thread's elements of a tile into a shared tile of the same
/// shape (a SmemTile or a SwizzledTile), two adjacent columns per store:
/// 32-bit stores of 16-bit pairs (the transposed products' P and dS), 64-bit
/// stores of f32 pairs (the bulk reductions' staging, unpadded so that its
/// rows are one run for the copy engine: a half-warp's four rows then share
/// banks, a 4-way conflict). The eight rows a warp writes at once start four
/// banks apart with 16-bit rows padded by 16 bytes, and in distinct 16-byte
/// chunks of a swizzle atom.
template <typename Tile, typename T, int M, int N, int W, int CG>
__device__ __forceinline__ void store_shared(Tile s,
                                             const Frag<T, M, N, W, CG> &f) {
  static_assert(Tile::kRows == M && Tile::kCols == N,
                "the shared tile has the register tile's shape");
  using F = Frag<T, M, N, W, CG>;
  char *base = reinterpret_cast<char *>(s.ptr);
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int e = 0; e < F::kSize; e += 2)
      *reinterpret_cast<float2 *>(base + Tile::offset(F::row(e), F::col(e))) =
          make_float2(f.x[e], f.x[e + 1]);
  } else {
    static_assert(sizeof(T) == 2, "shared round trips carry bf16 or f16");
#pragma unroll
    for (int e = 0; e < F::kSize; e += 2) {
      unsigned pair = static_cast<unsigned>(f.x[e].bits) |
                      (static_cast<unsigned>(f.x[e + 1].bits) << 16);
      *reinterpret_cast<unsigned *>(base +
                                    Tile::offset(F::row(e), F::col(e))) = pair;
    }
  }
}

} // namespace kiln
