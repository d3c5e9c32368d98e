// kiln/load.cuh - global memory -> register tiles, filling what is outside.
//
// For tiles that never meet a tensor core (row statistics, the backward
// preprocess's O and dO): plain loads straight into the mma layout, so no
// shared memory or barrier is involved.
#pragma once
#include "kiln/layout.cuh"

namespace kiln {

template <typename T, int M, int N, int W>
__device__ __forceinline__ void load(Frag<T, M, N, W> &f, const Desc<T> &d,
                                     int row0, int col0, float fill) {
  using F = Frag<T, M, N, W>;
  const T outside = from_float<T>(fill);
#pragma unroll
  for (int e = 0; e < F::kSize; ++e) {
    int r = row0 + F::row(e), c = col0 + F::col(e);
    bool inside = r >= 0 && r < d.rows && c >= 0 && c < d.cols;
    f.x[e] = inside ? d.ptr[r * d.row_stride + c * d.col_stride] : outside;
  }
}

template <typename T, int M, int W>
__device__ __forceinline__ void load(RowFrag<T, M, W> &f, const Desc<T> &d,
                                     int row0, float fill) {
  using R = RowFrag<T, M, W>;
  const T outside = from_float<T>(fill);
#pragma unroll
  for (int s = 0; s < R::kSize; ++s) {
    int r = row0 + R::row(s);
    f.x[s] = r >= 0 && r < d.rows ? d.ptr[r * d.row_stride] : outside;
  }
}

} // namespace kiln
