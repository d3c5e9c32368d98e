// kiln/mma.cuh - tensor-core products with mma.sync.m16n8k16 (sm_80+).
#pragma once
#include "kiln/copy.cuh"

namespace kiln {

__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned r[4],
                                                  const void *p) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(smem_addr(p)));
}

/// d += a * b for one m16n8k16 fragment, f32 accumulation.
__device__ __forceinline__ void mma_16816(float d[4], const unsigned a[4],
                                          unsigned b0, unsigned b1, bf16) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_16816(float d[4], const unsigned a[4],
                                          unsigned b0, unsigned b1, f16) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <typename T> __device__ __forceinline__ unsigned pack2(T lo, T hi) {
  return static_cast<unsigned>(lo.bits) | (static_cast<unsigned>(hi.bits) << 16);
}

/// A operand (16 rows from `row0`, 16 columns from `k0`) from shared memory.
template <typename T, int M, int K, int P>
__device__ __forceinline__ void load_a(unsigned a[4], SmemTile<T, M, K, P> s,
                                       int row0, int k0, int /*mt*/) {
  int lane = lane_id();
  ldmatrix_x4(a, s.ptr + (row0 + (lane & 15)) * P + k0 + (lane >> 4) * 8);
}

/// A operand from registers: the accumulator layout of two adjacent n8
/// fragments is exactly the m16n8k16 A layout (FlashAttention-2's P reuse).
template <typename T, int M, int K, int W>
__device__ __forceinline__ void load_a(unsigned a[4], const Frag<T, M, K, W> &f,
                                       int /*row0*/, int k0, int mt) {
  using F = Frag<T, M, K, W>;
  int base0 = (mt * F::kNT + k0 / 8) * 4, base1 = base0 + 4;
  a[0] = pack2(f.x[base0], f.x[base0 + 1]);
  a[1] = pack2(f.x[base0 + 2], f.x[base0 + 3]);
  a[2] = pack2(f.x[base1], f.x[base1 + 1]);
  a[3] = pack2(f.x[base1 + 2], f.x[base1 + 3]);
}

/// A operand read transposed: `s` holds A^T (K x M, e.g. P for P^T dO), and
/// ldmatrix.trans turns its 8x8 blocks around. Matrix i of the x4 load
/// covers A rows row0 + (i&1)*8 and A columns k0 + (i>>1)*8, i.e. rows
/// k0 + (i>>1)*8 .. +7 of `s` at column row0 + (i&1)*8.
template <typename T, int K, int M, int P>
__device__ __forceinline__ void load_a_trans(unsigned a[4],
                                             SmemTile<T, K, M, P> s, int row0,
                                             int k0) {
  int lane = lane_id(), mi = lane >> 3, r = lane & 7;
  ldmatrix_x4_trans(a,
                    s.ptr + (k0 + (mi >> 1) * 8 + r) * P + row0 + (mi & 1) * 8);
}

/// B operands of two n8 fragments (columns n0..n0+15), rows k0..k0+15.
/// TRANS: `s` holds B^T (N x K, e.g. K for Q K^T): plain ldmatrix. Otherwise
/// `s` holds B (K x N, e.g. V for P V): ldmatrix.trans.
template <bool TRANS, typename T, int R, int C, int P>
__device__ __forceinline__ void load_b(unsigned b[4], SmemTile<T, R, C, P> s,
                                       int n0, int k0) {
  int lane = lane_id(), mi = lane >> 3, r = lane & 7;
  if (TRANS) {
    ldmatrix_x4(b, s.ptr + (n0 + (mi >> 1) * 8 + r) * P + k0 + (mi & 1) * 8);
  } else {
    ldmatrix_x4_trans(b, s.ptr + (k0 + (mi & 1) * 8 + r) * P + n0 +
                             (mi >> 1) * 8);
  }
}

/// The reduction length of an A operand: its columns, or its rows when it
/// is read transposed.
template <bool TRANS, typename A> struct operand_k;
template <bool TRANS, typename T, int R, int C, int P>
struct operand_k<TRANS, SmemTile<T, R, C, P>> {
  static constexpr int value = TRANS ? R : C;
};
template <typename T, int M, int K, int W>
struct operand_k<false, Frag<T, M, K, W>> {
  static constexpr int value = K;
};

/// acc += op(A) * op(B) (TRANS_A: A given as K x M in shared memory;
/// TRANS_B: B given as N x K). Every warp multiplies its own rows of op(A)
/// by all of op(B). A warp with several m16 tiles loads each B fragment once
/// for all of them: B is what every warp reads whole, so its shared-memory
/// traffic is what a taller warp tile saves.
template <bool TRANS_A, bool TRANS_B, typename A, typename T, int R, int C,
          int P, int M, int N, int W>
__device__ __forceinline__ void mma(Frag<float, M, N, W> &acc, const A &a,
                                    SmemTile<T, R, C, P> b) {
  using F = Frag<float, M, N, W>;
  constexpr int K = operand_k<TRANS_A, A>::value;
  static_assert(K % 16 == 0 && N % 16 == 0, "mma works on 16-wide steps");
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 16) {
    unsigned af[F::kMT][4];
#pragma unroll
    for (int mt = 0; mt < F::kMT; ++mt) {
      int row0 = warp_id() * 16 * F::kMT + mt * 16;
      if constexpr (TRANS_A)
        load_a_trans(af[mt], a, row0, k0);
      else
        load_a(af[mt], a, row0, k0, mt);
    }
#pragma unroll
    for (int n0 = 0; n0 < N; n0 += 16) {
      unsigned bf[4];
      load_b<TRANS_B>(bf, b, n0, k0);
#pragma unroll
      for (int mt = 0; mt < F::kMT; ++mt) {
        float *d0 = &acc.x[(mt * F::kNT + n0 / 8) * 4];
        mma_16816(d0, af[mt], bf[0], bf[1], T{});
        mma_16816(d0 + 4, af[mt], bf[2], bf[3], T{});
      }
    }
  }
}

} // namespace kiln
