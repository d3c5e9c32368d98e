// kiln/tma.cuh - Hopper's tensor memory accelerator: tensor-map copies into
// shared memory completed on mbarriers (sm_90a).
//
// A kernel receives each tensor map as a `const __grid_constant__
// kiln::TensorMap` parameter (the runtime encodes it per launch from the
// launch plan's tensor_map argument); one thread issues the copy, and the
// threads that read the tile wait on the mbarrier's phase.
#pragma once
#include "kiln/copy.cuh"
#include "kiln/layout.cuh"

namespace kiln {

/// The driver's CUtensorMap: 128 opaque bytes, passed by value.
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

/// Initialises the mbarrier at `bar` (8 bytes of shared memory) for
/// `arrivals` arrivals per phase, and makes it visible to the copy engine.
__device__ __forceinline__ void mbarrier_init(unsigned long long *bar,
                                              unsigned arrivals) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(arrivals));
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

/// Arrives once at `bar` and expects `bytes` more of asynchronous copies in
/// the current phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(
    unsigned long long *bar, unsigned bytes) {
#if __CUDA_ARCH__ >= 900
  asm volatile(
      "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(
          smem_addr(bar)),
      "r"(bytes)
      : "memory");
#endif
}

/// Expects `bytes` more of asynchronous copies in the current phase of
/// `bar` without arriving: the phase cannot complete before the arrival
/// that follows (the same thread's mbarrier_arrive_expect_tx).
__device__ __forceinline__ void mbarrier_expect_tx(unsigned long long *bar,
                                                   unsigned bytes) {
#if __CUDA_ARCH__ >= 900
  asm volatile(
      "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(
          smem_addr(bar)),
      "r"(bytes)
      : "memory");
#endif
}

/// Waits until the phase with parity `phase` of `bar` has completed.
__device__ __forceinline__ void mbarrier_wait(unsigned long long *bar,
                                              unsigned phase) {
#if __CUDA_ARCH__ >= 900
  unsigned done = 0;
  while (!done)
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n"
                 "}\n"
                 : "=r"(done)
                 : "r"(smem_addr(bar)), "r"(phase)
                 : "memory");
#endif
}

/// Copies the box of `map` at element coordinates (c0 innermost .. c3) into
/// `dst` (shared memory, 128-byte aligned; 1024 for 128-byte swizzles),
/// completing `bytes` of the phase of `bar`. Coordinates past the tensor read
/// zeros. One thread issues it.
__device__ __forceinline__ void tma_load_4d(void *dst, const TensorMap &map,
                                            unsigned long long *bar, int c0,
                                            int c1, int c2, int c3) {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::"
               "complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(
                   smem_addr(dst)),
               "l"(reinterpret_cast<unsigned long long>(&map)),
               "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
#endif
}

/// tma_load_4d for a 3-D map (a packed varlen batch's [T, H, D]).
__device__ __forceinline__ void tma_load_3d(void *dst, const TensorMap &map,
                                            unsigned long long *bar, int c0,
                                            int c1, int c2) {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::"
               "complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
                   smem_addr(dst)),
               "l"(reinterpret_cast<unsigned long long>(&map)),
               "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
#endif
}

/// Copies elements offset .. offset + N - 1 of the vector `src` (those
/// before its end) into `dst` (shared memory, 16-byte aligned), completing
/// on `bar` without arriving: one bulk copy where the run is contiguous,
/// 16-byte aligned and whole 16-byte chunks (a per-query workspace padded
/// to whole blocks), else this thread's own loads and stores, which the
/// arrival that follows publishes (release). Slots past the end keep what
/// they held; the reader fills them. One thread calls it, before the copy
/// that arrives on `bar`.
template <typename T, int N>
__device__ __forceinline__ void bulk_load_vector(const SmemVector<T, N> &dst,
                                                 const Desc<T> &src, int offset,
                                                 unsigned long long *bar) {
#if __CUDA_ARCH__ >= 900
  int left = src.rows - offset;
  int n = left < 0 ? 0 : left < N ? left : N;
  if (n == 0)
    return;
  const T *from = src.ptr + static_cast<long long>(offset) * src.row_stride;
  unsigned bytes = static_cast<unsigned>(n * sizeof(T));
  if (src.row_stride == 1 && bytes % 16 == 0 &&
      reinterpret_cast<unsigned long long>(from) % 16 == 0) {
    mbarrier_expect_tx(bar, bytes);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
                 "bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_addr(dst.ptr)),
                 "l"(reinterpret_cast<unsigned long long>(from)), "r"(bytes),
                 "r"(smem_addr(bar))
                 : "memory");
    return;
  }
#pragma unroll 1
  for (int i = 0; i < n; ++i)
    dst.ptr[i] = from[i * src.row_stride];
  // Later phases fill the slot by the copy engine (the async proxy).
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

/// Arrives once at `bar` (release: this thread's earlier reads of the slot
/// the barrier guards are done).
__device__ __forceinline__ void mbarrier_arrive(unsigned long long *bar) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(
                   smem_addr(bar))
               : "memory");
#endif
}

/// Loads the tile at element coordinates (c0 = column, c1 = row, c2, c3)
/// of `map` into `dst`, one box per swizzle column block (a box is at most
/// one swizzle span wide), all completing on `bar`, which this thread
/// arrives at expecting the tile's bytes. One thread calls it.
template <typename T, int ROWS, int COLS, int SWIZZLE>
__device__ __forceinline__ void
tma_load_tile(const SwizzledTile<T, ROWS, COLS, SWIZZLE> &dst,
              const TensorMap &map, unsigned long long *bar, int c0, int c1,
              int c2, int c3) {
  constexpr int kBlockCols = SWIZZLE / static_cast<int>(sizeof(T));
  mbarrier_arrive_expect_tx(bar, ROWS * COLS * sizeof(T));
#pragma unroll
  for (int b = 0; b < COLS / kBlockCols; ++b)
    tma_load_4d(reinterpret_cast<char *>(dst.ptr) + b * ROWS * SWIZZLE, map,
                bar, c0 + b * kBlockCols, c1, c2, c3);
}

/// tma_load_tile through a 3-D map.
template <typename T, int ROWS, int COLS, int SWIZZLE>
__device__ __forceinline__ void
tma_load_tile(const SwizzledTile<T, ROWS, COLS, SWIZZLE> &dst,
              const TensorMap &map, unsigned long long *bar, int c0, int c1,
              int c2) {
  constexpr int kBlockCols = SWIZZLE / static_cast<int>(sizeof(T));
  mbarrier_arrive_expect_tx(bar, ROWS * COLS * sizeof(T));
#pragma unroll
  for (int b = 0; b < COLS / kBlockCols; ++b)
    tma_load_3d(reinterpret_cast<char *>(dst.ptr) + b * ROWS * SWIZZLE, map,
                bar, c0 + b * kBlockCols, c1, c2);
}

/// Loads rows row0 .. row0 + ROWS - 1 of a paged descriptor's sequence (at
/// head `head`, columns from c0) into `dst`, from the pool `map` describes
/// ([P, PAGE, H, D] as (column, row in page, head, page)), one box of
/// min(PAGE, ROWS) rows per page, each from the page the block table names.
/// A box at or past the sequence's length, or whose table entry lies
/// outside the pool, reads page -1: TMA writes zeros (past the length it
/// looks up no table entry). row0 is a multiple of the box, so no box
/// crosses a page. All complete on `bar`. A whole warp calls it: lane 0
/// expects the tile's bytes, then the lanes look their boxes' pages up and
/// issue them side by side (small pages make many boxes: 16 for 16-key pages
/// of a 128 x 128 bf16 tile, which one thread would issue one after another,
/// each after its table read).
template <typename T, int ROWS, int COLS, int SWIZZLE, int PAGE>
__device__ __forceinline__ void
tma_load_paged_tile(const SwizzledTile<T, ROWS, COLS, SWIZZLE> &dst,
                    const TensorMap &map, unsigned long long *bar,
                    const PagedDesc<T, PAGE> &src, int c0, int row0,
                    int head) {
  constexpr int kBox = PAGE < ROWS ? PAGE : ROWS;
  constexpr int kBlockCols = SWIZZLE / static_cast<int>(sizeof(T));
  constexpr int kColBlocks = COLS / kBlockCols;
  constexpr int kBoxes = (ROWS / kBox) * kColBlocks;
  if (lane_id() == 0)
    mbarrier_arrive_expect_tx(bar, ROWS * COLS * sizeof(T));
  __syncwarp();
  for (int i = lane_id(); i < kBoxes; i += 32) {
    int p = i / kColBlocks, b = i % kColBlocks;
    int r = row0 + p * kBox;
    tma_load_4d(reinterpret_cast<char *>(dst.ptr) + b * ROWS * SWIZZLE +
                    p * kBox * SWIZZLE,
                map, bar, c0 + b * kBlockCols, r % PAGE, head, src.page(r));
  }
}
/// Changes this warpgroup's register budget (sm_90a; every thread of the
/// warpgroup runs it). The kernel needs a register cap at entry
/// (__launch_bounds__(threads, 1)) for the compiler to honour it.
template <int REGS> __device__ __forceinline__ void setmaxnreg_inc() {
#if __CUDA_ARCH__ >= 900
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
#endif
}
template <int REGS> __device__ __forceinline__ void setmaxnreg_dec() {
#if __CUDA_ARCH__ >= 900
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
#endif
}

/// A barrier of `THREADS` threads (whole warps) on hardware barrier `ID`
/// (1 to 15; 0 is __syncthreads's).
template <int ID, int THREADS> __device__ __forceinline__ void named_barrier() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(ID), "n"(THREADS) : "memory");
}

/// Ping-pong of consumer warpgroups (tgpu.warpgroup_turn): warpgroup w of
/// N waits on named barrier FIRST + w and passes to FIRST + (w + 1) % N;
/// each barrier counts the 128 threads that wait and the 128 that arrive.
template <int FIRST, int N> __device__ __forceinline__ void turn_wait() {
  asm volatile("bar.sync %0, 256;\n" ::"r"(FIRST + warp_id() / 4) : "memory");
}
template <int FIRST, int N> __device__ __forceinline__ void turn_pass() {
  asm volatile("bar.arrive %0, 256;\n" ::"r"(FIRST + (warp_id() / 4 + 1) % N)
               : "memory");
}
template <int FIRST, int N> __device__ __forceinline__ void turn_start() {
  if (warp_id() / 4 == N - 1)
    asm volatile("bar.arrive %0, 256;\n" ::"n"(FIRST) : "memory");
}
template <int FIRST, int N> __device__ __forceinline__ void turn_end() {
  if (warp_id() / 4 == 0)
    asm volatile("bar.sync %0, 256;\n" ::"n"(FIRST) : "memory");
}

} // namespace kiln
