//===- DeviceChunksTest.cpp - kiln/chunks.cuh on the host -----------------===//
//
// lib/kiln/chunks.cuh and the 16-bit kiln::load compiled on the host
// (DeviceShim's types: 32 threads per warp, shuffles at a barrier): the
// quad transpose, a 64 x 128 bf16 tile of four warps loaded and stored by
// 16-byte chunks through windows where they fit (aligned, rows partly
// outside, packed rows) and by the pairs or elements where they do not (an
// unaligned row stride, columns cut short, an unaligned first column).
// Every element must be the array's inside the window and the fill outside
// it; a store must leave every element outside the window as it was.
//
//===----------------------------------------------------------------------===//

#include "kiln/chunks.cuh"
#include "kiln/load.cuh"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace {

using Tile = kiln::Frag<kiln::bf16, 64, 128, 4>;
constexpr unsigned short kFillBits = 0xC0F0; // bf16 -7.5
constexpr float kFill = -7.5f;

/// Runs fn(lane) on the 32 threads of each warp of a tile of `warps`, one
/// warp at a time with its own shuffle barrier; returns the shuffles made.
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

/// A host array of distinct 16-bit patterns, with slack before and after.
struct Array {
  std::vector<kiln::bf16> data;
  explicit Array(size_t n) : data(n + 16) { reset(); }
  void reset() {
    for (size_t i = 0; i < data.size(); ++i)
      data[i].bits = static_cast<unsigned short>((i * 7919) % 65521 + 1);
  }
  /// A 16-byte aligned base plus `shift` elements.
  kiln::bf16 *base(int shift) {
    auto *p = data.data();
    while (reinterpret_cast<uintptr_t>(p) % 16)
      ++p;
    return p + shift;
  }
};

struct Window {
  std::string name;
  int shift; // elements past a 16-byte boundary
  int rows, cols;
  long long rowStride;
  int row0, col0;
  bool chunks; // whether the chunks path is expected
};

const std::vector<Window> kWindows = {
    {"aligned, whole tile inside", 0, 300, 128, 136, 64, 0, true},
    {"aligned, rows partly outside", 0, 90, 128, 136, 40, 0, true},
    {"aligned, rows before the window", 0, 300, 128, 136, -10, 0, true},
    {"aligned, a later chunk column", 0, 300, 136, 136, 0, 8, true},
    {"row stride off 16 bytes", 0, 300, 128, 132, 0, 0, false},
    {"columns cut short", 0, 300, 100, 136, 0, 0, false},
    {"first column off 16 bytes", 0, 300, 136, 136, 0, 2, false},
    {"base off 16 bytes", 2, 300, 128, 136, 0, 0, false},
};

unsigned short expectedBits(const kiln::Desc<kiln::bf16> &d, int r, int c) {
  if (r < 0 || r >= d.rows || c < 0 || c >= d.cols)
    return kFillBits;
  return d.ptr[d.row_offset(r) + c].bits;
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

TEST(DeviceChunks, LoadsReadTheWindowInsideAndTheFillOutside) {
  Array a(310 * 136);
  for (const Window &w : kWindows) {
    kiln::Desc<kiln::bf16> d{a.base(w.shift), w.rows, w.cols,
                             w.rowStride,     1,      0};
    std::vector<Tile> tiles(32 * Tile::kWarps);
    int shuffles = runWarps(Tile::kWarps, [&](int t) {
      kiln::load(tiles[t], d, w.row0, w.col0, kFill);
    });
    int bad = 0;
    for (int t = 0; t < 32 * Tile::kWarps; ++t)
      for (int e = 0; e < Tile::kSize; ++e)
        bad += tiles[t].x[e].bits !=
               expectedBits(d, w.row0 + Tile::row_of(e, t / 32, t % 32),
                            w.col0 + Tile::col_of(e, t / 32, t % 32));
    EXPECT_EQ(bad, 0) << w.name;
    // Two shuffles per word exchange, two exchanges per 4-word chunk.
    EXPECT_EQ(shuffles, w.chunks ? 32 * Tile::kWarps * Tile::kSize / 2 : 0)
        << w.name;
  }
}

TEST(DeviceChunks, PackedRowsLoadTheirHeads) {
  // Rows r of a group of 4: row r / 4 of the array, head r % 4.
  Array a(20 * 4 * 136);
  kiln::Desc<kiln::bf16, 4> d{a.base(0), 70, 128, 4 * 136, 1, 136};
  std::vector<Tile> tiles(32 * Tile::kWarps);
  int shuffles = runWarps(Tile::kWarps,
                          [&](int t) { kiln::load(tiles[t], d, 0, 0, kFill); });
  int bad = 0;
  for (int t = 0; t < 32 * Tile::kWarps; ++t)
    for (int e = 0; e < Tile::kSize; ++e) {
      int r = Tile::row_of(e, t / 32, t % 32),
          c = Tile::col_of(e, t / 32, t % 32);
      unsigned short want =
          r < d.rows ? d.ptr[d.row_offset(r) + c].bits : kFillBits;
      bad += tiles[t].x[e].bits != want;
    }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(shuffles, 0);
}

TEST(DeviceChunks, StoresWriteTheWindowAndNothingElse) {
  Array a(310 * 136);
  for (const Window &w : kWindows) {
    if (!w.chunks)
      continue; // store_chunks is only called where chunks_fit
    a.reset();
    const std::vector<kiln::bf16> before = a.data;
    kiln::Desc<kiln::bf16> d{a.base(w.shift), w.rows, w.cols,
                             w.rowStride,     1,      0};
    // Element (r, c) of the tile holds a pattern of its own.
    auto pattern = [](int r, int c) {
      return static_cast<unsigned short>(0x8000 | (r * 131 + c));
    };
    runWarps(Tile::kWarps, [&](int t) {
      Tile f;
      for (int e = 0; e < Tile::kSize; ++e)
        f.x[e].bits = pattern(Tile::row(e), Tile::col(e));
      ASSERT_TRUE(kiln::chunks_fit<Tile>(d, w.col0));
      kiln::store_chunks(d, w.row0, w.col0, f);
    });
    int bad = 0;
    const kiln::bf16 *origin = a.data.data();
    for (size_t i = 0; i < a.data.size(); ++i) {
      long long off = (a.data.data() + i) - d.ptr;
      long long r = off >= 0 ? off / w.rowStride : -1;
      long long c = off >= 0 ? off % w.rowStride : -1;
      bool inTile = r >= 0 && r < d.rows && r - w.row0 >= 0 &&
                    r - w.row0 < Tile::kRows && c >= w.col0 &&
                    c < w.col0 + Tile::kCols && c < d.cols;
      unsigned short want =
          inTile ? pattern(int(r - w.row0), int(c - w.col0)) : before[i].bits;
      bad += origin[i].bits != want;
    }
    EXPECT_EQ(bad, 0) << w.name;
  }
}

} // namespace
