// kiln/layout.cuh - register tiles in the mma.m16n8 accumulator layout.
#pragma once
#include "kiln/types.cuh"

namespace kiln {

/// An M x N tile spread over W warps: warp w owns rows [w*M/W, (w+1)*M/W) as
/// kMT m16 tiles, each split in kNT n8 fragments of 4 values per lane:
/// (r, c), (r, c+1), (r+8, c), (r+8, c+1) with r = lane/4, c = 2*(lane%4).
/// With G column groups (#tgpu.mma col_groups) the warps split into G groups
/// of W / G consecutive warps; group g holds columns [g*N/G, (g+1)*N/G) of
/// every row, its warps splitting the rows as above.
template <typename T, int M, int N, int W, int G = 1> struct Frag {
  static_assert(W % G == 0, "column groups of whole warps");
  static constexpr int kRows = M, kCols = N, kWarps = W;
  static constexpr int kGroupWarps = W / G;
  static_assert(M % (16 * kGroupWarps) == 0,
                "rows must split into m16 tiles per warp");
  static_assert(N % (8 * G) == 0, "columns must split into n8 fragments");
  static constexpr int kGroupCols = N / G;
  static constexpr int kMT = M / (16 * kGroupWarps);
  static constexpr int kNT = kGroupCols / 8;
  static constexpr int kSize = kMT * kNT * 4;
  T x[kSize];

  /// This warp's column group, and its place among the group's warps.
  __device__ __forceinline__ static int group() {
    return G == 1 ? 0 : warp_id() / kGroupWarps;
  }
  __device__ __forceinline__ static int group_warp() {
    return G == 1 ? warp_id() : warp_id() % kGroupWarps;
  }
  /// Row and column of element e of the tile's thread (warp, lane): a
  /// producer drawing on a consumer's behalf (kiln::draw_keep_bits).
  __device__ __forceinline__ static int row_of(int e, int warp, int lane) {
    int mt = e / (kNT * 4);
    int gw = G == 1 ? warp : warp % kGroupWarps;
    return gw * 16 * kMT + mt * 16 + lane / 4 + ((e & 3) >> 1) * 8;
  }
  __device__ __forceinline__ static int col_of(int e, int warp, int lane) {
    int nt = (e / 4) % kNT;
    int g = G == 1 ? 0 : warp / kGroupWarps;
    return g * kGroupCols + nt * 8 + 2 * (lane & 3) + (e & 1);
  }
  /// Row and column of element e of this thread.
  __device__ __forceinline__ static int row(int e) {
    return row_of(e, warp_id(), lane_id());
  }
  __device__ __forceinline__ static int col(int e) {
    return col_of(e, warp_id(), lane_id());
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

/// Per-column values of an N-column Frag: slot s is column (s/2)*8 +
/// 2*(lane%4) + s%2 (the same in the eight quads of a warp and in every
/// warp).
template <typename T, int N, int W> struct ColFrag {
  static_assert(N % 8 == 0, "columns must split into n8 fragments");
  static constexpr int kNT = N / 8;
  static constexpr int kSize = kNT * 2;
  T x[kSize];

  __device__ __forceinline__ static int col(int s) {
    return (s / 2) * 8 + 2 * (lane_id() & 3) + (s & 1);
  }
  /// The slot of column col(e) of a Frag with N columns.
  __device__ __forceinline__ static int slot_of(int e) {
    return ((e / 4) % kNT) * 2 + (e & 1);
  }
};

/// A vector of N elements in shared memory (16-byte aligned): a ring slot of
/// per-query values the producer copies (tgpu.bulk_load).
template <typename T, int N> struct SmemVector { T *ptr; };

/// A rows x cols tile in shared memory with a row pitch of PITCH elements
/// (padded rows: ldmatrix's eight row addresses hit distinct banks).
template <typename T, int ROWS, int COLS, int PITCH> struct SmemTile {
  using Element = T;
  static constexpr int kRows = ROWS, kCols = COLS;
  T *ptr;
  /// Byte offset of element (r, c) from `ptr`.
  __device__ __forceinline__ static constexpr int offset(int r, int c) {
    return (r * PITCH + c) * static_cast<int>(sizeof(T));
  }
};

/// A rows x cols tile in shared memory in wgmma's / TMA's swizzled layout
/// (#tgpu.swizzle): column blocks of SWIZZLE bytes, every row of a block
/// SWIZZLE bytes after the previous one, and the 16-byte chunk index of
/// each offset XORed with its bits [7, 7 + log2(SWIZZLE / 16)). `ptr` is
/// 1024-byte aligned, so the offset's bits are the address's.
template <typename T, int ROWS, int COLS, int SWIZZLE> struct SwizzledTile {
  static_assert(SWIZZLE == 32 || SWIZZLE == 64 || SWIZZLE == 128,
                "wgmma swizzles 32, 64 or 128 bytes");
  static_assert(ROWS % 8 == 0 && (COLS * sizeof(T)) % SWIZZLE == 0,
                "whole swizzle atoms: 8 rows, whole swizzle columns");
  using Element = T;
  static constexpr int kRows = ROWS, kCols = COLS;
  T *ptr;
  __device__ __forceinline__ static int offset(int r, int c) {
    int b = c * static_cast<int>(sizeof(T));
    int o = (b / SWIZZLE) * ROWS * SWIZZLE + r * SWIZZLE + b % SWIZZLE;
    return o ^ (((o >> 7) & (SWIZZLE / 16 - 1)) << 4);
  }
};

} // namespace kiln
