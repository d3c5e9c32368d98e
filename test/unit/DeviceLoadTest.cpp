//===- DeviceLoadTest.cpp - kiln::load of a register tile, on the host ----===//
//
// lib/kiln/load.cuh compiled on the host (DeviceShim's types): every thread
// of a 64 x 128 f32 tile of four warps loads through windows of a host
// array — aligned and contiguous (one load per pair of columns), an odd
// row stride, odd columns, an odd first column, a base off the pair's
// alignment, rows and columns partly outside, a column stride, and packed
// rows (a GQA group's heads as neighbouring rows) — and each element must be
// the array's where it lies inside the window and the fill elsewhere.
//
//===----------------------------------------------------------------------===//

#include "kiln/load.cuh"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using Tile = kiln::Frag<float, 64, 128, 4>;
constexpr float kFill = -7.5f;

/// The element a window shows at (r, c), or the fill outside it.
template <int G> float expected(const kiln::Desc<float, G> &d, int r, int c) {
  if (r < 0 || r >= d.rows || c < 0 || c >= d.cols)
    return kFill;
  return d.ptr[d.row_offset(r) + static_cast<long long>(c) * d.col_stride];
}

/// Elements of every thread's tile at (row0, col0) that differ from
/// `expected`.
template <int G>
int mismatches(const kiln::Desc<float, G> &d, int row0, int col0) {
  int bad = 0;
  for (unsigned t = 0; t < 32 * Tile::kWarps; ++t) {
    threadIdx.x = t;
    Tile f;
    kiln::load(f, d, row0, col0, kFill);
    for (int e = 0; e < Tile::kSize; ++e)
      if (f.x[e] != expected(d, row0 + Tile::row(e), col0 + Tile::col(e)))
        ++bad;
  }
  threadIdx.x = 0;
  return bad;
}

struct Array {
  std::vector<float> data;
  explicit Array(size_t n) : data(n + 2) {
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = float(i % 100003) * 0.25f + 1.0f;
  }
  /// An 8-byte aligned base (the vector's storage), or one float past it.
  float *base(bool aligned) { return data.data() + (aligned ? 0 : 1); }
};

} // namespace

TEST(DeviceLoad, EveryWindowReadsTheArrayInsideAndTheFillOutside) {
  Array a(300 * 160);
  struct Case {
    std::string name;
    bool aligned;
    int rows, cols;
    long long rowStride, colStride;
    int row0, col0;
  };
  const std::vector<Case> cases = {
      {"aligned, whole tile inside", true, 300, 128, 160, 1, 64, 0},
      {"aligned, partial rows and columns", true, 90, 100, 160, 1, 64, 0},
      {"aligned, rows before the window", true, 300, 128, 160, 1, -10, 0},
      {"odd row stride", true, 300, 128, 159, 1, 0, 0},
      {"odd columns", true, 300, 97, 160, 1, 0, 0},
      {"odd first column", true, 300, 128, 160, 1, 0, 1},
      {"base off the pair's alignment", false, 300, 128, 160, 1, 0, 0},
      {"column stride", true, 150, 128, 1, 300, 0, 0},
  };
  for (const Case &c : cases) {
    kiln::Desc<float> d{a.base(c.aligned), c.rows,      c.cols,
                        c.rowStride,       c.colStride, 0};
    EXPECT_EQ(mismatches(d, c.row0, c.col0), 0) << c.name;
  }
}

TEST(DeviceLoad, PackedRowsReadTheirHeads) {
  // Rows r of a group of 4: row r / 4 of the array, head r % 4.
  Array a(64 * 4 * 136);
  for (long long group : {136ll, 135ll}) {
    kiln::Desc<float, 4> d{a.data.data(), 70, 128, 4 * 136, 1, group};
    EXPECT_EQ(mismatches(d, 0, 0), 0) << "group stride " << group;
  }
}
