// kiln/layout.cuh - register tiles in the mma.m16n8 accumulator layout.
#pragma once
#include "kiln/types.cuh"

namespace kiln {

/// An M x N tile spread over W warps: warp w owns rows [w*M/W, (w+1)*M/W) as
/// kMT m16 tiles, each split in kNT n8 fragments of 4 values per lane:
/// (r, c), (r, c+1), (r+8, c), (r+8, c+1) with r = lane/4, c = 2*(lane%4).
template <typename T, int M, int N, int W> struct Frag {
  static_assert(M % (16 * W) == 0, "rows must split into m16 tiles per warp");
  static_assert(N % 8 == 0, "columns must split into n8 fragments");
  static constexpr int kMT = M / (16 * W);
  static constexpr int kNT = N / 8;
  static constexpr int kSize = kMT * kNT * 4;
  T x[kSize];

  /// Row and column of element e of this thread.
  __device__ __forceinline__ static int row(int e) {
    int mt = e / (kNT * 4);
    return warp_id() * 16 * kMT + mt * 16 + lane_id() / 4 + ((e & 3) >> 1) * 8;
  }
  __device__ __forceinline__ static int col(int e) {
    int nt = (e / 4) % kNT;
    return nt * 8 + 2 * (lane_id() & 3) + (e & 1);
  }
  /// The slot of row(e) in the matching RowFrag.
  __device__ __forceinline__ static int row_slot(int e) {
    return (e / (kNT * 4)) * 2 + ((e & 3) >> 1);
  }
};

/// Per-row values of an M-row Frag: slot s is row (s/2)*16 + lane/4 + (s%2)*8
/// of this warp's rows (the same in the four lanes of a quad).
template <typename T, int M, int W> struct RowFrag {
  static constexpr int kMT = M / (16 * W);
  static constexpr int kSize = kMT * 2;
  T x[kSize];

  __device__ __forceinline__ static int row(int s) {
    return warp_id() * 16 * kMT + (s / 2) * 16 + lane_id() / 4 + (s & 1) * 8;
  }
};

/// A rows x cols tile in shared memory with a row pitch of PITCH elements.
template <typename T, int ROWS, int COLS, int PITCH> struct SmemTile {
  T *ptr;
};

} // namespace kiln
