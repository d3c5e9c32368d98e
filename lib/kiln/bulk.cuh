//===- bulk.cuh - f32 tiles added into global memory by the copy engine ---===//
//
// The atomic backward's dQ shares: a warp's rows staged in shared memory and
// added into L2 by one cp.reduce.async.bulk .add.f32 (whole lines, instead
// of an 8-byte red.global per lane and element pair: 1.3-1.8x the reduction
// throughput into L2 on an H100, bench/probe_dq_reduce.cu).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BULK_CUH
#define KILN_BULK_CUH

#include "kiln/layout.cuh"
#include "kiln/store.cuh"
#include "kiln/wgmma.cuh"

namespace kiln {

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
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
#endif
  __syncwarp();
  store_shared(s, f);
  fence_async_shared();
  __syncwarp();
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
      unsigned smem = static_cast<unsigned>(__cvta_generic_to_shared(base));
      asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add."
                   "f32 [%0], [%1], %2;\n" ::"l"(dst0),
                   "r"(smem), "r"(rows * kBytes)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
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
      unsigned smem = static_cast<unsigned>(__cvta_generic_to_shared(src));
      asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add."
                   "f32 [%0], [%1], %2;\n" ::"l"(dst),
                   "r"(smem), "n"(kBytes)
                   : "memory");
      continue;
    }
#endif
#pragma unroll 1
    for (int c = 0; c < N; ++c)
      if (col0 + c >= 0 && col0 + c < d.cols)
        atomicAdd(dst + c * d.col_stride, src[c]);
  }
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

/// Waits until this thread's bulk reductions are complete in global memory.
__device__ __forceinline__ void bulk_wait() {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}

} // namespace kiln

#endif // KILN_BULK_CUH
