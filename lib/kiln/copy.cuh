// kiln/copy.cuh - global -> shared copies with cp.async, and their waits.
#pragma once
#include "kiln/layout.cuh"

namespace kiln {

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Starts copying the ROWS x COLS tile at (row0, col0) of `src` into `dst`,
/// 16 bytes per cp.async, spread over THREADS threads. Rows past src.rows are
/// zero-filled by the copy (src-size 0), so the tile needs no later masking
/// to be finite. Needs unit column stride and 16-byte aligned rows (the
/// launcher checks both).
/// `Tile` is a SmemTile or a SwizzledTile: each places element (r, c) at
/// its own offset. `Src` is a Desc or a PagedDesc of the tile's elements
/// (rows found by its locate; a paged row past the sequence is never looked
/// up in the block table).
template <int THREADS, typename Tile, typename Src>
__device__ __forceinline__ void copy_async(Tile dst, const Src &src, int row0,
                                           int col0) {
  using T = typename Tile::Element;
  constexpr int kChunk = 16 / sizeof(T);
  static_assert(Tile::kCols % kChunk == 0, "rows must be whole 16-byte chunks");
  constexpr int kChunksPerRow = Tile::kCols / kChunk;
  constexpr int kChunks = Tile::kRows * kChunksPerRow;
#pragma unroll
  for (int c = threadIdx.x; c < kChunks; c += THREADS) {
    int r = c / kChunksPerRow;
    int cc = (c % kChunksPerRow) * kChunk;
    int gr = row0 + r;
    long long offset;
    bool inside = src.locate(gr, offset);
    const T *g = inside ? src.ptr + offset + (col0 + cc) : src.ptr;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                     smem_addr(dst.ptr) + Tile::offset(r, cc)),
                 "l"(g), "r"(inside ? 16 : 0));
  }
  asm volatile("cp.async.commit_group;\n" ::);
}

/// Zeroes rows `first` .. Tile::kRows - 1 of `dst`, 16 bytes per store,
/// spread over THREADS threads (threads 0 .. THREADS - 1 call it).
template <int THREADS, typename Tile>
__device__ __forceinline__ void zero_rows_from(Tile dst, int first) {
  using T = typename Tile::Element;
  constexpr int kChunk = 16 / sizeof(T);
  constexpr int kChunksPerRow = Tile::kCols / kChunk;
  constexpr int kChunks = Tile::kRows * kChunksPerRow;
  int start = (first > 0 ? first : 0) * kChunksPerRow;
  for (int c = start + static_cast<int>(threadIdx.x); c < kChunks;
       c += THREADS) {
    int r = c / kChunksPerRow;
    int cc = (c % kChunksPerRow) * kChunk;
    *reinterpret_cast<uint4 *>(reinterpret_cast<char *>(dst.ptr) +
                               Tile::offset(r, cc)) = make_uint4(0, 0, 0, 0);
  }
}

/// Waits until at most N of this thread's copy groups are still in flight.
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

} // namespace kiln
