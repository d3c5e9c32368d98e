//===- core_order.cuh - f32 accumulators in mma core-block order ----------===//
//
// The atomic backward's dQ accumulator is written by one kernel's bulk
// reductions and read by the next kernel's loads, and by nothing else, so
// its layout is free. Row-major, a warp's share in column groups (16 rows
// of its group's columns) is a strided block: staging it takes 8-byte
// shared stores at swizzled addresses computed per element, and adding it
// a tensor map and one TMA reduction per 128-byte span. In core order each
// 16-row band of the array keeps its bytes but orders them by the mma
// fragments' 16 x 8 core blocks, left to right, each block as 32 lanes of
// 4 floats (lane l: rows l/4 and l/4 + 8 of the band, columns 2(l%4) and
// 2(l%4) + 1 of the block: a Frag's elements 4k .. 4k + 3). A thread's
// share of a core block is then one 16-byte chunk, a warp's 32 chunks 512
// contiguous bytes, and a warp's 16 rows of a column group one contiguous
// run: 16-byte stores with no bank conflicts or address arithmetic, one
// bulk reduction per band, and coalesced 16-byte loads for any mma reader.
//
// The array is dense (a workspace: rows of `cols` floats, one after the
// other), its rows a whole number of bands, and tiles start on core-block
// boundaries (rows a multiple of 16, columns of 8): tgpu-bulk-reductions
// chooses core order only then.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_ORDER_CUH
#define KILN_CORE_ORDER_CUH

#include "kiln/bulk.cuh"
#include "kiln/layout.cuh"

namespace kiln {

/// Float offset of this lane's chunk of the core block at (band, col) from
/// the start of a core-ordered array of `cols` columns: band `band` (rows
/// 16 band ..), columns col .. col + 7.
__device__ __forceinline__ long long core_chunk(int band, int col, int cols) {
  return (static_cast<long long>(band) * cols + col) * 16 + lane_id() * 4;
}

/// f = d[row0 .., col0 ..] from a core-ordered array: one 16-byte load per
/// core block; bands not wholly inside [0, d.rows) read `fill`.
template <int M, int N, int W, int G>
__device__ __forceinline__ void core_load(Frag<float, M, N, W, G> &f,
                                          const Desc<float> &d, int row0,
                                          int col0, float fill) {
  using F = Frag<float, M, N, W, G>;
#pragma unroll
  for (int k = 0; k < F::kSize / 4; ++k) {
    int mt = k / F::kNT, nt = k % F::kNT;
    int top = row0 + (F::group_warp() * F::kMT + mt) * 16;
    int col = col0 + F::group() * F::kGroupCols + nt * 8;
    float4 v = make_float4(fill, fill, fill, fill);
    if (top >= 0 && top + 16 <= d.rows && col >= 0 && col + 8 <= d.cols)
      v = *reinterpret_cast<const float4 *>(d.ptr +
                                            core_chunk(top / 16, col, d.cols));
    f.x[4 * k] = v.x;
    f.x[4 * k + 1] = v.y;
    f.x[4 * k + 2] = v.z;
    f.x[4 * k + 3] = v.w;
  }
}

/// Writes this warp's elements of `f` into `s`, an unswizzled shared f32
/// tile of f's shape, in core order (one 16-byte store per core block),
/// once the warp's earlier bulk reductions have read its part of `s` (at
/// once where it issued none). No fence: the writers fence before the copy
/// engine reads, in core_flush (the same warp adds its part) or before they
/// hand the tile to the producer's core_add_staged.
template <typename Tile, int M, int N, int W, int G>
__device__ __forceinline__ void core_stage(Tile s,
                                           const Frag<float, M, N, W, G> &f) {
  using F = Frag<float, M, N, W, G>;
  static_assert(Tile::kRows == M && Tile::kCols == N &&
                    Tile::offset(1, 0) == N * 4,
                "an unpadded shared tile of the register tile's shape");
  float *base = reinterpret_cast<float *>(s.ptr);
  bulk_wait_read();
  __syncwarp();
#pragma unroll
  for (int k = 0; k < F::kSize / 4; ++k) {
    int mt = k / F::kNT, nt = k % F::kNT;
    int band = F::group_warp() * F::kMT + mt;
    int col = F::group() * F::kGroupCols + nt * 8;
    *reinterpret_cast<float4 *>(base + core_chunk(band, col, N)) =
        make_float4(f.x[4 * k], f.x[4 * k + 1], f.x[4 * k + 2], f.x[4 * k + 3]);
  }
}

/// Adds the BYTES of shared `src` to the run of the core-ordered array `d`
/// that starts at the band of 16 rows from `top`, column `col` (a band's
/// columns are one contiguous run): one bulk reduction on sm_90, atomics
/// elsewhere. Run by one thread.
template <unsigned BYTES>
__device__ __forceinline__ void core_add_run(const Desc<float> &d, int top,
                                             int col, const float *src) {
  float *dst = d.ptr + (static_cast<long long>(top / 16) * d.cols + col) * 16;
#if __CUDA_ARCH__ >= 900
  bulk_add_f32<BYTES>(dst, src);
#else
  for (unsigned i = 0; i < BYTES / 4; ++i)
    atomicAdd(dst + i, src[i]);
#endif
}

/// d[row0 + r, col0 + c] += s[r, c] for this warp's part of `s`, which a
/// core_stage of an F tile wrote: the warp fences its writes for the async
/// proxy and its lane 0 adds each of its bands with one bulk reduction
/// (bands not wholly inside [0, d.rows) are skipped). Asynchronous: the
/// sums land after bulk_wait.
template <typename F, typename Tile>
__device__ __forceinline__ void core_flush(const Desc<float> &d, int row0,
                                           int col0, Tile s) {
  static_assert(Tile::kRows == F::kRows && Tile::kCols == F::kCols,
                "the staged tile's shape");
  const float *base = reinterpret_cast<const float *>(s.ptr);
  fence_async_shared();
  __syncwarp();
  if (lane_id() == 0) {
    constexpr unsigned kRunBytes = F::kGroupCols * 16 * 4;
    int col = F::group() * F::kGroupCols;
#pragma unroll
    for (int mt = 0; mt < F::kMT; ++mt) {
      int band = F::group_warp() * F::kMT + mt, top = row0 + band * 16;
      if (top < 0 || top + 16 > d.rows || col0 + col < 0 ||
          col0 + col + F::kGroupCols > d.cols)
        continue;
      // core_chunk at lane 0: the band's run of this group's columns.
      core_add_run<kRunBytes>(d, top, col0 + col,
                              base + (band * Tile::kCols + col) * 16);
    }
    bulk_commit();
  }
  // The warp reconverges before what follows (warpgroup-wide .aligned waits
  // among it).
  __syncwarp();
}

/// d[row0 + r, col0 + c] += s[r, c] for the whole of `s`, an unswizzled
/// shared f32 tile that core_stage calls filled in core order (and their
/// threads fenced),
/// run by one thread (the producer warp's lane 0, once the consumers'
/// barrier says the tile is staged): one bulk reduction per 16-row band, a
/// contiguous run in both `s` and the array; bands not wholly inside
/// [0, d.rows) are skipped. Commits the reductions as one bulk group.
template <typename Tile>
__device__ __forceinline__ void core_add_staged(const Desc<float> &d, int row0,
                                                int col0, Tile s) {
  constexpr unsigned kBandBytes = Tile::kCols * 16 * 4;
  static_assert(Tile::kRows % 16 == 0 && Tile::kCols % 8 == 0 &&
                    Tile::offset(1, 0) == Tile::kCols * 4,
                "an unpadded shared tile of whole core blocks");
  const float *base = reinterpret_cast<const float *>(s.ptr);
  if (col0 >= 0 && col0 + Tile::kCols <= d.cols) {
#pragma unroll
    for (int band = 0; band < Tile::kRows / 16; ++band) {
      int top = row0 + band * 16;
      if (top < 0 || top + 16 > d.rows)
        continue;
      core_add_run<kBandBytes>(d, top, col0, base + band * Tile::kCols * 16);
    }
  }
  bulk_commit();
}

/// d[row0 + r, col0 + c] += f[r, c] in a core-ordered array through `s`, an
/// unswizzled shared f32 tile of f's shape holding f in core order: each
/// warp waits until its earlier bulk reductions have read its part of `s`,
/// writes its chunks, fences them for the async proxy, and its lane 0 adds
/// each of its bands with one bulk reduction (core_stage, then core_flush).
/// No CTA barrier: a warp's part of `s` is its own. Asynchronous: the sums
/// land after bulk_wait.
template <typename Tile, int M, int N, int W, int G>
__device__ __forceinline__ void
core_reduce_add(const Desc<float> &d, int row0, int col0, Tile s,
                const Frag<float, M, N, W, G> &f) {
  core_stage(s, f);
  core_flush<Frag<float, M, N, W, G>>(d, row0, col0, s);
}

} // namespace kiln

#endif // KILN_CORE_ORDER_CUH
