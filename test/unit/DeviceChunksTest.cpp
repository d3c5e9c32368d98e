//===- DeviceChunksTest.cpp - kiln/chunks.cuh on the host -----------------===//
//
// lib/kiln/chunks.cuh and the 16-bit kiln::load compiled on the host
// (DeviceShim's types: 32 threads per warp, shuffles at a barrier): the
// quad transpose word by word, then bf16 tiles of the shapes the compiler
// emits and of others (two m16 tiles per warp, two and four column groups,
// 12 warps, 12 fragments a row) loaded and stored through windows where the
// 16-byte chunks fit — aligned, rows partly outside or before, a later chunk
// column, packed rows (a GQA group's heads) with negative first rows — and
// where they do not: a row stride, first column, base or group stride off
// 16 bytes, columns cut short, fragments not in fours, a 16-bit integer
// tile. Where chunks fit, every loaded element must be the array's inside
// the window and the fill outside it, and a store must write exactly the
// tile's elements inside the window; where they do not, try_load_chunks and
// try_store_chunks must decline and touch nothing, and kiln::load read the
// same elements by pairs.
//
//===----------------------------------------------------------------------===//

#include "kiln/chunks.cuh"
#include "kiln/load.cuh"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace {

using kiln::bf16;
constexpr unsigned short kFillBits = 0xC0F0; // bf16 -7.5
constexpr float kFill = -7.5f;

/// Runs fn(thread) on the 32 threads of each of `warps` warps, one warp at
/// a time with its own shuffle barrier; returns the shuffles made.
template <typename Fn> int runWarps(int warps, Fn fn) {
  int shuffles = 0;
  for (int w = 0; w < warps; ++w) {
    device_shim::Warp warp;
    device_shim::warp = &warp;
    std::vector<std::thread> lanes;
    for (int l = 0; l < 32; ++l)
      lanes.emplace_back([&, l] {
        threadIdx.x = 32 * w + l;
        fn(32 * w + l);
      });
    for (std::thread &t : lanes)
      t.join();
    for (int l = 0; l < 32; ++l)
      shuffles += warp.shuffles[l];
  }
  threadIdx.x = 0;
  return shuffles;
}

/// A host array of distinct 16-bit patterns, its view starting `shift`
/// elements past a 16-byte boundary.
struct Array {
  std::vector<bf16> data;
  int shift;
  Array(size_t n, int shift) : data(n + 16), shift(shift) { reset(); }
  void reset() {
    for (size_t i = 0; i < data.size(); ++i)
      data[i].bits = static_cast<unsigned short>((i * 7919) % 65521 + 1);
  }
  bf16 *base() {
    bf16 *p = data.data();
    while (reinterpret_cast<uintptr_t>(p) % 16)
      ++p;
    return p + shift;
  }
};

struct Window {
  std::string name;
  int rows, cols;
  long long rowStride, groupStride;
  int row0, col0;
  int shift;
  bool chunks; // whether chunks are expected to fit
};

/// The tile element (r, c)'s own pattern, for stores.
unsigned short pattern(int r, int c) {
  return static_cast<unsigned short>(0x8000 | ((r * 131 + c) & 0x7FFF));
}

/// Loads and stores an F tile through `w` (packed by G) and returns the
/// number of wrong elements; `shuffles` is what the load made.
template <typename F, int G> int mismatches(const Window &w, int &shuffles) {
  kiln::Desc<bf16, G> shape{nullptr,     w.rows, w.cols,
                            w.rowStride, 1,      w.groupStride};
  Array a(shape.row_offset(w.rows - 1) + w.cols + 8, w.shift);
  kiln::Desc<bf16, G> d{a.base(),    w.rows, w.cols,
                        w.rowStride, 1,      w.groupStride};
  auto inside = [&](int r, int c) {
    return r >= 0 && r < d.rows && c >= 0 && c < d.cols;
  };
  int bad = 0;

  // Loads: by chunks where they fit, else kiln::load's pairs (which the
  // chunks must then leave alone).
  std::vector<F> tiles(32 * F::kWarps);
  std::vector<int> took(32 * F::kWarps);
  shuffles = runWarps(F::kWarps, [&](int t) {
    took[t] = kiln::try_load_chunks(tiles[t], d, w.row0, w.col0, kFill);
    if (!took[t])
      kiln::load(tiles[t], d, w.row0, w.col0, kFill);
  });
  for (int t = 0; t < 32 * F::kWarps; ++t) {
    bad += took[t] != w.chunks;
    for (int e = 0; e < F::kSize; ++e) {
      int r = w.row0 + F::row_of(e, t / 32, t % 32);
      int c = w.col0 + F::col_of(e, t / 32, t % 32);
      unsigned short want =
          inside(r, c) ? d.ptr[d.row_offset(r) + c].bits : kFillBits;
      bad += tiles[t].x[e].bits != want;
    }
  }

  // Stores: exactly the tile's elements inside the window where chunks
  // fit, nothing where they do not.
  a.reset();
  std::vector<unsigned short> want(a.data.size());
  for (size_t i = 0; i < a.data.size(); ++i)
    want[i] = a.data[i].bits;
  if (w.chunks)
    for (int r = 0; r < F::kRows; ++r)
      for (int c = 0; c < F::kCols; ++c)
        if (inside(w.row0 + r, w.col0 + c))
          want[d.ptr + d.row_offset(w.row0 + r) + w.col0 + c - a.data.data()] =
              pattern(r, c);
  runWarps(F::kWarps, [&](int t) {
    F f;
    for (int e = 0; e < F::kSize; ++e)
      f.x[e].bits = pattern(F::row(e), F::col(e));
    bad += kiln::try_store_chunks(d, w.row0, w.col0, f) != w.chunks;
  });
  for (size_t i = 0; i < a.data.size(); ++i)
    bad += a.data[i].bits != want[i];
  return bad;
}

/// Every window through an F tile, packed by G.
template <typename F, int G = 1> void expectWindows(std::vector<Window> ws) {
  for (const Window &w : ws) {
    int shuffles = 0;
    EXPECT_EQ((mismatches<F, G>(w, shuffles)), 0)
        << w.name << " (" << F::kRows << " x " << F::kCols << ", " << F::kWarps
        << " warps, " << F::kCols / F::kGroupCols
        << " column groups, packed by " << G << ")";
    // Four shuffles per chunk of 8 elements: half an element's worth each.
    EXPECT_EQ(shuffles, w.chunks ? 32 * F::kWarps * F::kSize / 2 : 0) << w.name;
  }
}

TEST(DeviceChunks, QuadTransposeSwapsWordsAcrossEachQuad) {
  std::vector<unsigned> out(32 * 4);
  int shuffles = runWarps(1, [&](int t) {
    unsigned v[4];
    for (int i = 0; i < 4; ++i)
      v[i] = 4 * t + i;
    kiln::quad_transpose(v);
    for (int i = 0; i < 4; ++i)
      out[4 * t + i] = v[i];
  });
  for (int t = 0; t < 32; ++t)
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(out[4 * t + i], 4u * ((t & ~3) + i) + (t & 3))
          << "lane " << t << " word " << i;
  EXPECT_EQ(shuffles, 32 * 4);
}

TEST(DeviceChunks, TheBackwardsTilesMoveByChunksWhereTheyFit) {
  // The preprocess's 64 x 128 tile at D = 128 (one m16 tile per warp).
  expectWindows<kiln::Frag<bf16, 64, 128, 4>>({
      {"aligned, whole tile inside", 300, 128, 136, 0, 64, 0, 0, true},
      {"rows partly outside", 90, 128, 136, 0, 40, 0, 0, true},
      {"rows before the window", 300, 128, 136, 0, -10, 0, 0, true},
      {"a later chunk column", 300, 136, 136, 0, 0, 8, 0, true},
      {"row stride off 16 bytes", 300, 128, 132, 0, 0, 0, 0, false},
      {"columns cut short", 300, 100, 136, 0, 0, 0, 0, false},
      {"first column off 16 bytes", 300, 136, 136, 0, 0, 2, 0, false},
      {"base off 16 bytes", 300, 128, 136, 0, 0, 0, 2, false},
  });
  // D = 64's 128 x 64 (two m16 tiles per warp).
  expectWindows<kiln::Frag<bf16, 128, 64, 4>>({
      {"two m16 tiles, inside", 300, 128, 136, 0, 64, 8, 0, true},
      {"two m16 tiles, rows before", 100, 128, 136, 0, -40, 0, 0, true},
      {"two m16 tiles, rows after", 100, 64, 64, 0, 30, 0, 0, true},
  });
  // 12 fragments a row (D = 96), and 12 warps.
  expectWindows<kiln::Frag<bf16, 64, 96, 4>>({
      {"12 fragments a row", 300, 96, 104, 0, 5, 0, 0, true},
  });
  expectWindows<kiln::Frag<bf16, 192, 128, 12>>({
      {"12 warps", 300, 128, 128, 0, -7, 0, 0, true},
  });
}

TEST(DeviceChunks, ColumnGroupsMoveByChunks) {
  expectWindows<kiln::Frag<bf16, 64, 128, 8, 2>>({
      {"two groups", 300, 128, 136, 0, 64, 0, 0, true},
      {"two groups, a later chunk column", 300, 136, 136, 0, 10, 8, 0, true},
      {"two groups, rows partly outside", 50, 128, 136, 0, -5, 0, 0, true},
  });
  expectWindows<kiln::Frag<bf16, 128, 128, 8, 2>>({
      {"two groups of two m16 tiles", 77, 256, 264, 0, -9, 128, 0, true},
  });
  expectWindows<kiln::Frag<bf16, 64, 256, 16, 4>>({
      {"four groups", 100, 256, 256, 0, 0, 0, 0, true},
  });
  // Two fragments a group's row: not in fours.
  expectWindows<kiln::Frag<bf16, 64, 64, 8, 4>>({
      {"two fragments a group's row", 100, 64, 64, 0, 0, 0, 0, false},
  });
}

TEST(DeviceChunks, PackedRowsMoveByChunks) {
  // Row r of a group of G: row r / G of the array, head r % G.
  expectWindows<kiln::Frag<bf16, 128, 64, 4>, 4>({
      {"4 heads, rows before", 70, 128, 4 * 136, 136, -6, 0, 0, true},
  });
  expectWindows<kiln::Frag<bf16, 64, 128, 8, 2>, 3>({
      {"3 heads, two groups", 100, 128, 3 * 136, 136, -2, 0, 0, true},
  });
  expectWindows<kiln::Frag<bf16, 64, 128, 8, 2>, 4>({
      {"group stride off 16 bytes", 100, 128, 4 * 136, 132, 0, 0, 0, false},
  });
}

TEST(DeviceChunks, OnlyBf16AndF16TilesMoveByChunks) {
  // A 16-bit integer tile has no .bits to move: it takes the pairs.
  static_assert(!kiln::Chunked<short>::value);
  static_assert(kiln::Chunked<bf16>::value && kiln::Chunked<kiln::f16>::value);
  std::vector<short> a(64 * 64 + 8);
  short *base = a.data();
  while (reinterpret_cast<uintptr_t>(base) % 16)
    ++base;
  kiln::Desc<short> d{base, 64, 64, 64, 1, 0};
  kiln::Frag<short, 64, 64, 4> f{};
  EXPECT_FALSE(kiln::try_store_chunks(d, 0, 0, f));
}

} // namespace
