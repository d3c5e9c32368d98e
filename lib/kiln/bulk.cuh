//===- bulk.cuh - register tiles into global memory by the copy engine ----===//
//
// The atomic backward's dQ shares: a warp's rows staged in shared memory and
// added into L2 by one cp.reduce.async.bulk .add.f32 (whole lines, instead
// of an 8-byte red.global per lane and element pair: 1.3-1.8x the reduction
// throughput into L2 on an H100, bench/probe_dq_reduce.cu), or, for a warp
// holding a strided block, by TMA tensor reductions through a tensor map.
// The forward's output tiles: a warp's block staged the same way and stored
// by TMA tensor copies.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BULK_CUH
#define KILN_BULK_CUH

#include "kiln/layout.cuh"
#include "kiln/store.cuh"
#include "kiln/tma.cuh"
#include "kiln/wgmma.cuh"

namespace kiln {

/// Waits until every bulk group (copies and reductions) this thread
/// committed but the `PENDING` most recent has read its shared-memory
/// source (a bulk group is per thread).
template <int PENDING = 0> __device__ __forceinline__ void bulk_wait_read() {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(PENDING) : "memory");
#endif
}

/// Runs `write` (this warp's shared-memory writes for the copy engine to
/// read): first waits until the warp's earlier bulk copies and reductions
/// (issued by its lanes) have read the buffer, then fences the writes for
/// the async proxy.
template <typename Write>
__device__ __forceinline__ void stage_for_bulk_with(Write write) {
  bulk_wait_read();
  __syncwarp();
  write();
  fence_async_shared();
  __syncwarp();
}

/// Writes this warp's elements of `f` into `s` (same-shaped) for the copy
/// engine to read (stage_for_bulk_with).
template <typename Tile, typename T, int M, int N, int W, int G>
__device__ __forceinline__ void stage_for_bulk(Tile s,
                                               const Frag<T, M, N, W, G> &f) {
  stage_for_bulk_with([&] { store_shared(s, f); });
}

#if __CUDA_ARCH__ >= 900
// dst[i] += src[i] for `bytes` / 4 floats, shared to global, by one bulk
// reduction in this thread's bulk group (16-byte aligned, whole chunks);
// the size an immediate where it is known.
#define KILN_BULK_ADD_F32(BYTES_CONSTRAINT, BYTES)                             \
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add."       \
               "f32 [%0], [%1], %2;\n" ::"l"(dst),                             \
               "r"(smem_addr(src)), BYTES_CONSTRAINT(BYTES)                    \
               : "memory")
__device__ __forceinline__ void bulk_add_f32(float *dst, const void *src,
                                             unsigned bytes) {
  KILN_BULK_ADD_F32("r", bytes);
}
template <unsigned BYTES>
__device__ __forceinline__ void bulk_add_f32(float *dst, const void *src) {
  KILN_BULK_ADD_F32("n", BYTES);
}
#undef KILN_BULK_ADD_F32
#endif

/// Closes this thread's bulk group of the copies and reductions issued
/// since the last one (what bulk_wait and the staging's read wait count).
__device__ __forceinline__ void bulk_commit() {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

/// d[row0 + r, col0 + c] += f[r, c] through `s`, a shared f32 tile of f's
/// shape (unpadded): each warp writes the rows it holds (a block of
/// 16 * kMT rows) into its rows of `s` and adds them with one bulk
/// reduction where d's rows are one contiguous run as wide as the tile
/// (the head-major dQ accumulator), else one per row (the copy engine takes
/// addresses from uniform registers, so those go one lane at a time), or by
/// red.global from `s` where rows are not 16-byte-aligned runs. Rows outside
/// [0, d.rows) are skipped. No CTA barrier: a warp's rows are its own, and its
/// lanes wait for their previous reductions to have read them before
/// writing. Asynchronous: the sums land after bulk_wait.
template <typename Tile, int M, int N, int W>
__device__ __forceinline__ void bulk_reduce_add(const Desc<float> &d, int row0,
                                                int col0, Tile s,
                                                const Frag<float, M, N, W> &f) {
  using F = Frag<float, M, N, W>;
  static_assert(Tile::kRows == M && Tile::kCols == N &&
                    Tile::offset(1, 0) == N * 4,
                "an unpadded shared tile of the register tile's shape");
  constexpr int kBytes = N * 4;
  static_assert(kBytes % 16 == 0, "whole 16-byte chunks per row");
  constexpr int kWarpRows = 16 * F::kMT;
  stage_for_bulk(s, f);
  // This warp's rows inside [0, d.rows): from `first` on, `rows` of them.
  int first = warp_id() * kWarpRows, end = first + kWarpRows;
  if (row0 + first < 0)
    first = -row0;
  if (row0 + end > d.rows)
    end = d.rows - row0;
  int rows = end - first, top = row0 + first;
  if (rows <= 0)
    return;
  const char *base = reinterpret_cast<const char *>(s.ptr) + first * kBytes;
#if __CUDA_ARCH__ >= 900
  float *dst0 = d.ptr + d.row_offset(top);
  if (d.col_stride == 1 && col0 == 0 && d.cols == N && d.row_stride == N &&
      (reinterpret_cast<unsigned long long>(dst0) & 15) == 0) {
    if (lane_id() == 0) {
      bulk_add_f32(dst0, base, rows * kBytes);
      bulk_commit();
    }
    return;
  }
#endif
  for (int r = lane_id(); r < rows; r += 32) {
    float *dst = d.ptr + d.row_offset(top + r) + col0 * d.col_stride;
    const float *src = reinterpret_cast<const float *>(base + r * kBytes);
#if __CUDA_ARCH__ >= 900
    if (d.col_stride == 1 && col0 >= 0 && col0 + N <= d.cols &&
        (reinterpret_cast<unsigned long long>(dst) & 15) == 0) {
      bulk_add_f32<kBytes>(dst, src);
      continue;
    }
#endif
#pragma unroll 1
    for (int c = 0; c < N; ++c)
      if (col0 + c >= 0 && col0 + c < d.cols)
        atomicAdd(dst + c * d.col_stride, src[c]);
  }
  bulk_commit();
}

/// Writes the swizzled box at `src` (shared memory) into the tensor of `map`
/// at element coordinates c (innermost first; R of them) with one TMA tensor
/// copy: added (cp.reduce.async.bulk.tensor .add) where ADD, else stored
/// (cp.async.bulk.tensor). Elements outside the tensor are skipped. One
/// thread issues it; asynchronous (its bulk group).
template <bool ADD, int R>
__device__ __forceinline__ void tma_out_box(const TensorMap &map,
                                            const void *src,
                                            const int (&c)[R]) {
  static_assert(R >= 2 && R <= 5, "TMA maps have 2 to 5 dimensions here");
#if __CUDA_ARCH__ >= 900
  unsigned long long m = reinterpret_cast<unsigned long long>(&map);
  unsigned s = smem_addr(src);
  // The instruction by operation and rank; the operands the same for all.
#define KILN_TMA_OUT(OP, COORDS, ...)                                          \
  asm volatile(OP " [%0, {" COORDS "}], [%1];\n" ::"l"(m), "r"(s), __VA_ARGS__  \
               : "memory")
#define KILN_TMA_ADD(D) "cp.reduce.async.bulk.tensor." D                       \
  "d.global.shared::cta.add.tile.bulk_group"
#define KILN_TMA_STORE(D) "cp.async.bulk.tensor." D                            \
  "d.global.shared::cta.tile.bulk_group"
  if constexpr (R == 2) {
    if constexpr (ADD)
      KILN_TMA_OUT(KILN_TMA_ADD("2"), "%2, %3", "r"(c[0]), "r"(c[1]));
    else
      KILN_TMA_OUT(KILN_TMA_STORE("2"), "%2, %3", "r"(c[0]), "r"(c[1]));
  } else if constexpr (R == 3) {
    if constexpr (ADD)
      KILN_TMA_OUT(KILN_TMA_ADD("3"), "%2, %3, %4", "r"(c[0]), "r"(c[1]),
                   "r"(c[2]));
    else
      KILN_TMA_OUT(KILN_TMA_STORE("3"), "%2, %3, %4", "r"(c[0]), "r"(c[1]),
                   "r"(c[2]));
  } else if constexpr (R == 4) {
    if constexpr (ADD)
      KILN_TMA_OUT(KILN_TMA_ADD("4"), "%2, %3, %4, %5", "r"(c[0]), "r"(c[1]),
                   "r"(c[2]), "r"(c[3]));
    else
      KILN_TMA_OUT(KILN_TMA_STORE("4"), "%2, %3, %4, %5", "r"(c[0]),
                   "r"(c[1]), "r"(c[2]), "r"(c[3]));
  } else {
    if constexpr (ADD)
      KILN_TMA_OUT(KILN_TMA_ADD("5"), "%2, %3, %4, %5, %6", "r"(c[0]),
                   "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]));
    else
      KILN_TMA_OUT(KILN_TMA_STORE("5"), "%2, %3, %4, %5, %6", "r"(c[0]),
                   "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]));
  }
#undef KILN_TMA_STORE
#undef KILN_TMA_ADD
#undef KILN_TMA_OUT
#endif
}

/// Each warp writes the elements of `f` it holds (16 * kMT rows of its
/// column group's columns) into `s`, a swizzled shared tile of f's shape and
/// type, and its lane 0 writes each swizzle span of them into the tensor of
/// `map` at (col0 + c, row0 + r, outer...) with one TMA tensor copy
/// (tma_out_box; the map's box: a span of columns by a warp's rows). No CTA
/// barrier: a warp's block of `s` is its own, and lane 0 waits until its
/// previous copies have read it before the warp writes. Asynchronous: the
/// values land after bulk_wait.
template <bool ADD, typename T, int ROWS, int COLS, int SWIZZLE, int M, int N,
          int W, int G, typename... Outer>
__device__ __forceinline__ void
tma_out(const TensorMap &map, SwizzledTile<T, ROWS, COLS, SWIZZLE> s,
        const Frag<T, M, N, W, G> &f, int col0, int row0, Outer... outer) {
  using F = Frag<T, M, N, W, G>;
  static_assert(ROWS == M && COLS == N,
                "a shared tile of the register tile's shape");
  constexpr int kSpanCols = SWIZZLE / static_cast<int>(sizeof(T));
  static_assert(F::kGroupCols % kSpanCols == 0,
                "a column group's row is whole swizzle spans");
  constexpr int kWarpRows = 16 * F::kMT;
  stage_for_bulk(s, f);
  if (lane_id() == 0) {
    int r = F::group_warp() * kWarpRows;
    const char *base = reinterpret_cast<const char *>(s.ptr);
#pragma unroll
    for (int b = 0; b < F::kGroupCols / kSpanCols; ++b) {
      int c = F::group() * F::kGroupCols + b * kSpanCols;
      const int coords[] = {col0 + c, row0 + r, static_cast<int>(outer)...};
      tma_out_box<ADD>(map, base + decltype(s)::offset(r, c), coords);
    }
    bulk_commit();
  }
  // The warp reconverges before what follows (warpgroup-wide .aligned
  // waits among it).
  __syncwarp();
}

/// The tensor of `map` at (col0 + c, row0 + r, outer...) += f[r, c] through
/// `s`, a swizzled shared f32 tile of f's shape: each warp writes the
/// elements it holds (16 * kMT rows of its column group's columns) into `s`
/// and its lane 0 adds each swizzle span of them with one tensor reduction
/// (the map's box: a span of columns by a warp's rows). In column groups a
/// warp's block is strided in the tensor (not one run for a plain bulk
/// reduction); the swizzle also spreads the fragment stores over the banks.
/// No CTA barrier: a warp's block of `s` is its own, and lane 0 waits until
/// its previous reductions have read it before the warp writes.
/// Asynchronous: the sums land after bulk_wait.
template <typename T, int ROWS, int COLS, int SWIZZLE, int M, int N, int W,
          int G, typename... Outer>
__device__ __forceinline__ void
tma_reduce_add(const TensorMap &map, SwizzledTile<T, ROWS, COLS, SWIZZLE> s,
               const Frag<T, M, N, W, G> &f, int col0, int row0,
               Outer... outer) {
  static_assert(sizeof(T) == 4, "f32 sums");
  tma_out<true>(map, s, f, col0, row0, outer...);
}

/// The tensor of `map` at (col0 + c, row0 + r, outer...) = f[r, c] through
/// `s`, a swizzled shared tile of f's shape and 16-bit type: each warp
/// writes the elements it holds into its rows of `s` (staging waits until
/// the warp's previous stores have read them) and its lane 0 stores each
/// swizzle span of them with one tensor copy (the map's box: a span of
/// columns by a warp's rows). Rows and columns outside the tensor are not
/// written. Asynchronous: the values land after bulk_wait.
template <typename T, int ROWS, int COLS, int SWIZZLE, int M, int N, int W,
          int G, typename... Outer>
__device__ __forceinline__ void
tma_store(const TensorMap &map, SwizzledTile<T, ROWS, COLS, SWIZZLE> s,
          const Frag<T, M, N, W, G> &f, int col0, int row0, Outer... outer) {
  static_assert(sizeof(T) == 2, "16-bit output tiles");
  tma_out<false>(map, s, f, col0, row0, outer...);
}

/// Waits until this thread's bulk reductions and tensor stores are complete
/// in global memory.
__device__ __forceinline__ void bulk_wait() {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}

} // namespace kiln

#endif // KILN_BULK_CUH
