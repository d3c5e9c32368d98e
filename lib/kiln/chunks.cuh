// kiln/chunks.cuh - a Frag's 16-bit rows moved as 16-byte chunks.
//
// In a Frag of 16-bit elements the four lanes of a quad hold a row's columns
// in 4-byte pairs: lane q has columns 8n + 2q, 8n + 2q + 1 of every n8
// fragment n. A 16-byte chunk of the row (one fragment's 8 columns) is thus
// spread over the quad, a word per lane. Loading (or storing) four fragments'
// chunks, one per lane, and exchanging words within the quad (a 4 x 4
// transpose: two shuffles per 8 bytes) moves the same bytes in a quarter of
// the memory instructions, each lane reading or writing 16 contiguous bytes,
// for bf16 and f16 tiles (Chunked); the shuffles make a tile's load or store
// collective over its warps. The memory-bound kernels that read or write user tensors in the mma layout
// without a tensor core in between (the backward's preprocess reading O and
// dO, its dQ conversion writing dQ) were held by their 4-byte accesses
// (docs/performance.md).
#pragma once
#include "kiln/layout.cuh"

namespace kiln {

/// v[i] of lane q of each quad becomes lane i's v[q] (a transpose of the
/// quad's 4 x 4 words): one exchange with lane q ^ 1 and one with q ^ 2, each
/// swapping the two words whose index differs from the lane in that bit.
__device__ __forceinline__ void quad_transpose(unsigned (&v)[4]) {
  const int q = lane_id() & 3;
  {
    const bool odd = q & 1;
    unsigned a = odd ? v[0] : v[1], b = odd ? v[2] : v[3];
    a = __shfl_xor_sync(0xffffffffu, a, 1);
    b = __shfl_xor_sync(0xffffffffu, b, 1);
    // (Selects, not v[odd ? 0 : 1]: an index the compiler cannot resolve
    // puts v in local memory.)
    v[0] = odd ? a : v[0];
    v[1] = odd ? v[1] : a;
    v[2] = odd ? b : v[2];
    v[3] = odd ? v[3] : b;
  }
  {
    const bool high = q & 2;
    unsigned a = high ? v[0] : v[2], b = high ? v[1] : v[3];
    a = __shfl_xor_sync(0xffffffffu, a, 2);
    b = __shfl_xor_sync(0xffffffffu, b, 2);
    v[0] = high ? a : v[0];
    v[1] = high ? b : v[1];
    v[2] = high ? v[2] : a;
    v[3] = high ? v[3] : b;
  }
}

/// The element types whose tiles move by chunks: the 16-bit floats, whose
/// bits pack_pair and unpack_pair move as they are.
template <typename T> struct Chunked { static constexpr bool value = false; };
template <> struct Chunked<bf16> { static constexpr bool value = true; };
template <> struct Chunked<f16> { static constexpr bool value = true; };

/// Whether an F tile at column col0 of `d` moves by chunks: bf16 or f16
/// elements, fragments in fours per column group, and every row's columns
/// of the tile contiguous, inside the view (col0 >= 0 too) and 16-byte
/// aligned, with packed rows' group stride a multiple of 16 bytes. The
/// condition is the same for every thread of a tile (it reads no thread
/// index), as the quads' shuffles need.
template <typename F, typename T, int G>
__device__ __forceinline__ bool chunks_fit(const Desc<T, G> &d, int col0) {
  if constexpr (!Chunked<T>::value || F::kNT % 4 != 0) {
    return false;
  } else {
    return d.col_stride == 1 && col0 >= 0 && col0 + F::kCols <= d.cols &&
           (d.row_stride * sizeof(T)) % 16 == 0 &&
           (G == 1 || (d.group_stride * sizeof(T)) % 16 == 0) &&
           reinterpret_cast<unsigned long long>(d.ptr + col0) % 16 == 0;
  }
}

/// Elements e and e + 1 of a 16-bit Frag as one word, and back.
template <typename T>
__device__ __forceinline__ unsigned pack_pair(const T &a, const T &b) {
  return static_cast<unsigned>(a.bits) | (static_cast<unsigned>(b.bits) << 16);
}
template <typename T>
__device__ __forceinline__ void unpack_pair(unsigned w, T &a, T &b) {
  a.bits = static_cast<unsigned short>(w & 0xFFFFu);
  b.bits = static_cast<unsigned short>(w >> 16);
}

/// p[0 .. 16 bytes) = v as one 16-byte store to global memory (a Desc's
/// array: tile.view of a kernel argument). Inline PTX because NVVM split a
/// uint4 store whose words came from shuffles into four, aligned or not.
template <typename T>
__device__ __forceinline__ void store_chunk(T *p, const unsigned (&v)[4]) {
#ifdef __CUDA_ARCH__
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v[0]),
               "r"(v[1]), "r"(v[2]), "r"(v[3])
               : "memory");
#else
  *reinterpret_cast<uint4 *>(p) = make_uint4(v[0], v[1], v[2], v[3]);
#endif
}

/// Where an F tile's chunks lie: for each of a thread's rows (m16 tile mt,
/// its upper or lower 8 rows) and each group j of four fragments, the
/// quad's lane q moves fragment 4j + q's chunk of that row, which starts at
/// column chunk_col(j) of the tile.
template <typename F> struct Chunks {
  __device__ __forceinline__ static int chunk_col(int j) {
    return F::group() * F::kGroupCols + 8 * (4 * j + (lane_id() & 3));
  }
  /// The Frag element of fragment 4j + i's pair in (mt, half).
  __device__ __forceinline__ static int element(int mt, int half, int j,
                                                int i) {
    return ((mt * F::kNT) + 4 * j + i) * 4 + 2 * half;
  }
};

/// f = d[row0 .., col0 ..] where chunks_fit: one 16-byte load per lane and
/// four fragments of a row, rows outside [0, d.rows) reading `fill`.
template <typename F, typename T, int G>
__device__ __forceinline__ void load_chunks(F &f, const Desc<T, G> &d, int row0,
                                            int col0, T fill) {
  const unsigned outside = pack_pair(fill, fill);
#pragma unroll
  for (int mt = 0; mt < F::kMT; ++mt) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = row0 + F::row(Chunks<F>::element(mt, half, 0, 0));
      const bool inside = r >= 0 && r < d.rows;
#pragma unroll
      for (int j = 0; j < F::kNT / 4; ++j) {
        unsigned v[4] = {outside, outside, outside, outside};
        if (inside) {
          uint4 u = *reinterpret_cast<const uint4 *>(
              d.ptr + d.row_offset(r) + col0 + Chunks<F>::chunk_col(j));
          v[0] = u.x;
          v[1] = u.y;
          v[2] = u.z;
          v[3] = u.w;
        }
        quad_transpose(v);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int e = Chunks<F>::element(mt, half, j, i);
          unpack_pair(v[i], f.x[e], f.x[e + 1]);
        }
      }
    }
  }
}

/// d[row0 .., col0 ..] = f where chunks_fit: one 16-byte store per lane and
/// four fragments of a row, rows outside [0, d.rows) dropped.
template <typename F, typename T, int G>
__device__ __forceinline__ void store_chunks(const Desc<T, G> &d, int row0,
                                             int col0, const F &f) {
#pragma unroll
  for (int mt = 0; mt < F::kMT; ++mt) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = row0 + F::row(Chunks<F>::element(mt, half, 0, 0));
#pragma unroll
      for (int j = 0; j < F::kNT / 4; ++j) {
        unsigned v[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int e = Chunks<F>::element(mt, half, j, i);
          v[i] = pack_pair(f.x[e], f.x[e + 1]);
        }
        quad_transpose(v);
        if (r >= 0 && r < d.rows)
          store_chunk(d.ptr + d.row_offset(r) + col0 + Chunks<F>::chunk_col(j),
                      v);
      }
    }
  }
}

/// f = d[row0 .., col0 ..] by chunks (load_chunks) where chunks_fit; false,
/// touching nothing, where not. Every thread of F's warps must call it
/// together: the chunks' quads exchange words by shuffles.
template <typename F, typename T, int G>
__device__ __forceinline__ bool
try_load_chunks(F &f, const Desc<T, G> &d, int row0, int col0, float fill) {
  if constexpr (Chunked<T>::value) {
    if (chunks_fit<F>(d, col0)) {
      load_chunks(f, d, row0, col0, from_float<T>(fill));
      return true;
    }
  }
  return false;
}

/// d[row0 .., col0 ..] = f by chunks (store_chunks) where chunks_fit; false,
/// writing nothing, where not. Every thread of F's warps must call it
/// together, as try_load_chunks.
template <typename F, typename T, int G>
__device__ __forceinline__ bool try_store_chunks(const Desc<T, G> &d, int row0,
                                                 int col0, const F &f) {
  if constexpr (Chunked<T>::value) {
    if (chunks_fit<F>(d, col0)) {
      store_chunks(d, row0, col0, f);
      return true;
    }
  }
  return false;
}

} // namespace kiln
