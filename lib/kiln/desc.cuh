// kiln/desc.cuh - a window of a global array, as loads and stores see it.
// (No other kiln header: the unit tests compile it on the host too.)
#pragma once

namespace kiln {

/// A 1-D or 2-D window of a global array (tile.view); loads and stores
/// through it check `rows` / `cols`. With G > 1 (a packed view) row r is
/// row r / G of the array's rows and position r % G of the packed
/// dimension (`group_stride` apart): a GQA group's query heads as
/// neighbouring rows.
template <typename T, int G = 1> struct Desc {
  T *ptr;
  int rows, cols;
  long long row_stride, col_stride;
  long long group_stride;
  __device__ __forceinline__ long long row_offset(int r) const {
    if constexpr (G == 1)
      return r * row_stride;
    else
      return (r / G) * row_stride + (r % G) * group_stride;
  }
  /// Whether row r exists, and then its offset from `ptr` (copies
  /// zero-fill the others).
  __device__ __forceinline__ bool locate(int r, long long &offset) const {
    offset = row_offset(r);
    return r >= 0 && r < rows;
  }
};

} // namespace kiln
