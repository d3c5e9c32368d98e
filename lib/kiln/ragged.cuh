// kiln/ragged.cuh - packed batches of sequences of different lengths
// (FlashAttention's varlen layout): a sequence's rows, and which sequence
// and block a program owns.
//
// `offsets` is cu_seqlens: [S + 1] of i32, sequence s the rows offsets[s] ..
// offsets[s + 1] - 1 of a packed dimension. The compiler's CPU lowering of
// tile.view ... ragged and tile.ragged_block computes the same.
#pragma once
#include "kiln/types.cuh"

namespace kiln {

/// Sequence s's first row and row count in a dimension of `extent` rows:
/// both offsets clamped into [0, extent], the end to at least the start, so
/// that offsets outside the array reach no memory outside it.
__device__ __forceinline__ void ragged_rows(const Tensor<int, 1> &offsets,
                                            long long s, long long extent,
                                            long long &start, long long &rows) {
  long long first = offsets.ptr[s * offsets.stride[0]];
  long long last = offsets.ptr[(s + 1) * offsets.stride[0]];
  start = first < 0 ? 0 : (first > extent ? extent : first);
  long long end = last < start ? start : (last > extent ? extent : last);
  rows = end - start;
}

/// The sequence and its block that program `index` owns when the blocks of
/// BLOCK rows of every sequence are numbered one after another; past the
/// last block, the last sequence and a block at or past its end. Negative
/// lengths count as empty. A whole, converged warp calls it: its lanes
/// count 32 sequences' blocks at once, a prefix sum across the lanes, and
/// the scan stops at the first 32 whose blocks pass `index`.
template <int BLOCK>
__device__ __forceinline__ void ragged_block(const Tensor<int, 1> &offsets,
                                             int index, int &sequence,
                                             int &block) {
  const int lane = threadIdx.x % 32;
  const int sequences = static_cast<int>(offsets.size[0]) - 1;
  int before = 0; // blocks of the sequences before this chunk
  sequence = 0;
  block = index;
  for (int base = 0; base < sequences; base += 32) {
    int s = base + lane;
    int blocks = 0;
    if (s < sequences) {
      // 64-bit: offsets far apart (bad input) must not overflow.
      long long rows =
          static_cast<long long>(offsets.ptr[(s + 1) * offsets.stride[0]]) -
          offsets.ptr[s * offsets.stride[0]];
      blocks = rows > 0 ? static_cast<int>((rows + BLOCK - 1) / BLOCK) : 0;
    }
    int inclusive = blocks;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      int other = __shfl_up_sync(0xffffffffu, inclusive, d);
      if (lane >= d)
        inclusive += other;
    }
    int first = before + inclusive - blocks; // this lane's first block
    unsigned reached =
        __ballot_sync(0xffffffffu, s < sequences && first <= index);
    if (reached) {
      int last = 31 - __clz(static_cast<int>(reached));
      sequence = base + last;
      block = index - __shfl_sync(0xffffffffu, first, last);
    }
    before += __shfl_sync(0xffffffffu, inclusive, 31);
    if (before > index)
      break;
  }
}

} // namespace kiln
