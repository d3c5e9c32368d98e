// kiln/store.cuh - register tiles -> global memory, dropping what is outside.
#pragma once
#include "kiln/layout.cuh"

namespace kiln {

template <typename T, int M, int N, int W>
__device__ __forceinline__ void store(const Desc<T> &d, int row0, int col0,
                                      const Frag<T, M, N, W> &f) {
  using F = Frag<T, M, N, W>;
#pragma unroll
  for (int e = 0; e < F::kSize; ++e) {
    int r = row0 + F::row(e), c = col0 + F::col(e);
    if (r >= 0 && r < d.rows && c >= 0 && c < d.cols)
      d.ptr[r * d.row_stride + c * d.col_stride] = f.x[e];
  }
}

/// One lane per quad writes each row value (they are replicated).
template <typename T, int M, int W>
__device__ __forceinline__ void store(const Desc<T> &d, int row0,
                                      const RowFrag<T, M, W> &f) {
  if ((lane_id() & 3) != 0)
    return;
#pragma unroll
  for (int s = 0; s < RowFrag<T, M, W>::kSize; ++s) {
    int r = row0 + RowFrag<T, M, W>::row(s);
    if (r >= 0 && r < d.rows)
      d.ptr[r * d.row_stride] = f.x[s];
  }
}

} // namespace kiln
