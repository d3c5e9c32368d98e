// kiln/types.cuh - scalar types, tensor arguments and descriptors.
//
// NVRTC-safe: no standard or CUDA headers (NVRTC parses nothing but the
// kernel and these files). bf16/f16 are plain 16-bit storage types converted
// with PTX.
#pragma once
#include "kiln/desc.cuh"

namespace kiln {

struct bf16 {
  unsigned short bits;
};
struct f16 {
  unsigned short bits;
};

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(bf16 x) {
  return __int_as_float(static_cast<int>(x.bits) << 16);
}
__device__ __forceinline__ float to_float(f16 x) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
  return f;
}
// Round to nearest even, as the CPU reference and tensor-core inputs do.
__device__ __forceinline__ bf16 to_bf16(float x) {
  bf16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.bits) : "f"(x));
  return r;
}
__device__ __forceinline__ f16 to_f16(float x) {
  f16 r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(x));
  return r;
}

/// float -> T for fill values and stores of a converted tile.
template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <> __device__ __forceinline__ bf16 from_float<bf16>(float x) {
  return to_bf16(x);
}
template <> __device__ __forceinline__ f16 from_float<f16>(float x) {
  return to_f16(x);
}

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }
__device__ __forceinline__ float pos_inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float nan_f32() { return __int_as_float(0x7fc00000); }

/// exp2 on the SFU (ex2.approx, max rel. error 2^-22): the softmax's only
/// transcendental, called BLOCK_M * BLOCK_N times per KV step.
__device__ __forceinline__ float exp2_fast(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// tanh on the SFU (tanh.approx.f32, max abs. error about 2^-10.7): what the
/// fast-math schedule prints for math.tanh (softcap's score_mod), instead of
/// tanhf's dozens of instructions.
__device__ __forceinline__ float tanh_fast(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// e^x as 2^(x log2 e) on the SFU: math.exp under fast math.
__device__ __forceinline__ float exp_fast(float x) {
  return exp2_fast(x * 1.4426950408889634f);
}

// Integer division rounding toward -inf / +inf (arith.floordivsi/ceildivsi).
__device__ __forceinline__ int floordiv(int a, int b) {
  int q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ int ceildiv(int a, int b) {
  int q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}
__device__ __forceinline__ int imax(int a, int b) { return a > b ? a : b; }
// arith.maximumf / minimumf: NaN in, NaN out (fmaxf would drop it).
__device__ __forceinline__ float maximumf(float a, float b) {
  return (a != a || b != b) ? nan_f32() : fmaxf(a, b);
}
__device__ __forceinline__ float minimumf(float a, float b) {
  return (a != a || b != b) ? nan_f32() : fminf(a, b);
}
__device__ __forceinline__ int imin(int a, int b) { return a < b ? a : b; }

/// A kernel argument: a strided N-d array in global memory (sizes and
/// strides in elements), passed by value.
template <typename T, int R> struct Tensor {
  T *ptr;
  long long size[R];
  long long stride[R];
};

/// The rows of one sequence and head of a paged KV cache (a tile.view with
/// pages): row r lives in page pages[r / PAGE] of a pool [P, PAGE, H, cols]
/// (`ptr` is the pool at the head), at row r % PAGE; `rows` is the
/// sequence's length (clamped to the table's capacity by the emitted view).
/// Copies find rows through locate as they do a Desc's. A table entry
/// outside the pool [0, num_pages) reads as a missing page (zeros), never
/// memory outside the pool.
template <typename T, int PAGE> struct PagedDesc {
  T *ptr;
  const int *pages; ///< the sequence's row of the block table
  int rows, cols;
  long long row_stride, col_stride, page_stride, pages_stride;
  int num_pages;
  /// Row r's page, or -1 past the sequence or for an entry outside the pool.
  __device__ __forceinline__ int page(int r) const {
    if (r < 0 || r >= rows)
      return -1;
    int p = pages[(r / PAGE) * pages_stride];
    return p >= 0 && p < num_pages ? p : -1;
  }
  /// Whether row r exists (in the sequence, on a page of the pool), and
  /// then its offset from `ptr`: one table read.
  __device__ __forceinline__ bool locate(int r, long long &offset) const {
    int p = page(r);
    offset = p * page_stride + (r % PAGE) * row_stride;
    return p >= 0;
  }
};

__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
__device__ __forceinline__ int warp_id() { return threadIdx.x >> 5; }

} // namespace kiln
