// kiln/wgmma.cuh - warpgroup products on Hopper's tensor cores (wgmma,
// sm_90a): shared-memory matrix descriptors over swizzled tiles, the
// m64nNk16 instructions, and their fences.
//
// A warpgroup (four consecutive warps, the first a multiple of 4) computes
// 64 rows of the product; its accumulator layout is the mma.m16n8
// accumulator layout of each warp's 16 rows (kiln::Frag with one m16 tile
// per warp), and a register A operand is mma.m16n8k16's A layout.
#pragma once
#include "kiln/copy.cuh"
#include "kiln/mma.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace kiln {

/// The 64-bit shared-memory matrix descriptor of the 16-byte aligned
/// `offset` from a tile at shared address `base`: start address, leading
/// and stride byte offsets (all in 16-byte units) and the swizzle mode
/// (1: 128 bytes, 2: 64, 3: 32). The start field is the base's plus the
/// offset's, so the k16 steps of one product share the base's field (computed
/// once per tile) and differ by constants, and the high word (stride and
/// swizzle) is a constant. (Built from each step's whole address instead, the
/// fields' masks and shifts were 8-15% of the hot loops' SASS instructions.)
/// Shared addresses are below 2^18 and offsets stay inside the tile, so the
/// start field (14 bits of 16-byte units) never carries into the leading
/// offset.
__device__ __forceinline__ unsigned long long
wgmma_desc(unsigned base, unsigned offset, unsigned leading, unsigned stride,
           int swizzle) {
  unsigned long long mode = swizzle == 128 ? 1 : swizzle == 64 ? 2 : 3;
  unsigned lo = ((base & 0x3FFFF) >> 4) + (offset >> 4) +
                (((leading >> 4) & 0x3FFF) << 16);
  unsigned hi = ((stride >> 4) & 0x3FFF) | static_cast<unsigned>(mode << 30);
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}

/// K-major operand (rows are M or N, columns K): the 16 columns from k0 of
/// the 8-row atoms from row0. Rows step by 8 * SWIZZLE bytes (stride
/// offset); a step of K stays inside one swizzle column (the leading offset
/// is unused), so k0 selects the column block and the bytes within it.
template <typename T, int R, int C, int S>
__device__ __forceinline__ unsigned long long
desc_k_major(SwizzledTile<T, R, C, S> t, int row0, int k0) {
  int kb = k0 * static_cast<int>(sizeof(T));
  return wgmma_desc(smem_addr(t.ptr), (kb / S) * R * S + row0 * S + kb % S, 16,
                    8 * S, S);
}

/// MN-major operand (rows are K, columns M or N: V in P V, or P stored for
/// Pᵀ dO): the 16 rows from k0, from the column block holding column mn0
/// (a warpgroup's 64 rows of a transposed A). Groups of 8 rows step by
/// 8 * SWIZZLE bytes (stride offset); the column blocks of SWIZZLE bytes
/// step by a whole block, R * SWIZZLE bytes (leading offset).
template <typename T, int R, int C, int S>
__device__ __forceinline__ unsigned long long
desc_mn_major(SwizzledTile<T, R, C, S> t, int k0, int mn0 = 0) {
  int block = mn0 * static_cast<int>(sizeof(T)) / S;
  return wgmma_desc(smem_addr(t.ptr), block * R * S + k0 * S, R * S, 8 * S, S);
}

/// A shared tile that holds the transpose of a product's A (K x M): the
/// operand is read MN-major (wgmma's imm-trans-a).
template <typename Tile> struct Transposed {
  Tile tile;
};
template <typename Tile>
__device__ __forceinline__ Transposed<Tile> transposed(Tile t) {
  return {t};
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/// wgmma_commit on a path that issued no product (an empty group).
__device__ __forceinline__ void wgmma_commit_empty() {
  asm volatile("wgmma.commit_group.sync.aligned; // empty group\n" ::
                   : "memory");
}
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/// Keeps the compiler from moving accesses of the accumulators across the
/// asynchronous products that own them.
template <int N> __device__ __forceinline__ void wgmma_fence_regs(float (&x)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+f"(x[i])::"memory");
}

/// Pins a register value to this point of the program: what computes it
/// stays before it. Before a wgmma_wait, this keeps the compiler from
/// sinking work meant to overlap the asynchronous products below the wait.
__device__ __forceinline__ void pin(float x) { asm volatile("" ::"f"(x)); }
__device__ __forceinline__ void pin(int x) { asm volatile("" ::"r"(x)); }
__device__ __forceinline__ void pin(bf16 x) { asm volatile("" ::"h"(x.bits)); }
__device__ __forceinline__ void pin(f16 x) { asm volatile("" ::"h"(x.bits)); }
// Other types, bool among them, are not pinned: pinning a keep-bit tile's
// bools (the dropout's compare kept before the wait in PTX) measured 0 to
// 4% slower on the dropout forward (docs/performance.md).
template <typename T> __device__ __forceinline__ void pin(const T &) {}
/// pin() for every element of a register tile (Frag, RowFrag).
template <typename F> __device__ __forceinline__ void pin_tile(const F &f) {
#pragma unroll
  for (int e = 0; e < F::kSize; ++e)
    pin(f.x[e]);
}

/// False in every thread (no CTA has 2 GiB of shared memory), though
/// neither compiler can tell: ptxas folds comparisons of %laneid.
__device__ __forceinline__ bool never() {
  unsigned bytes;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return bytes > 0x7fffffffu;
}
/// A shared-memory store of x that never runs (see settle_tile).
__device__ __forceinline__ void sink(float x) {
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(0), "f"(x) : "memory");
}
__device__ __forceinline__ void sink(int x) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(0), "r"(x) : "memory");
}
__device__ __forceinline__ void sink(bf16 x) {
  asm volatile("st.shared.b16 [%0], %1;" ::"r"(0), "h"(x.bits) : "memory");
}
__device__ __forceinline__ void sink(f16 x) {
  asm volatile("st.shared.b16 [%0], %1;" ::"r"(0), "h"(x.bits) : "memory");
}
// A keep-bit tile's bools (the template below would take them and store
// nothing).
__device__ __forceinline__ void sink(bool x) { sink(static_cast<int>(x)); }
template <typename T> __device__ __forceinline__ void sink(const T &) {}
/// pin_tile() that ptxas keeps too: every element is read by a store in a
/// branch no thread takes, which ptxas orders before the next wgmma wait.
/// pin() is an empty asm statement, gone by the time ptxas schedules, and
/// ptxas moves a wgmma wait above independent work when it wants a
/// register (or a uniform register) the products in flight hold; work
/// meant to overlap the products then runs after them. The branch costs
/// ptxas its freedom to interleave across it: measured slower than pin_tile
/// (docs/performance.md), so used only under order-before-waits.
template <typename F> __device__ __forceinline__ void settle_tile(const F &f) {
  if (never()) {
#pragma unroll
    for (int e = 0; e < F::kSize; ++e)
      sink(f.x[e]);
  }
}

/// Publishes this thread's generic-proxy shared-memory writes (cp.async,
/// st.shared) to the async proxy (wgmma, TMA).
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---- m64nNk16 instructions -------------------------------------------------
// Inline asm needs the accumulator list spelled out: %0..%(N/2 - 1) are the
// accumulators, the operands after them are numbered from N/2.
#define KILN_WG_R0 "%0, %1, %2, %3, %4, %5, %6, %7"
#define KILN_WG_R1 "%8, %9, %10, %11, %12, %13, %14, %15"
#define KILN_WG_R2 "%16, %17, %18, %19, %20, %21, %22, %23"
#define KILN_WG_R3 "%24, %25, %26, %27, %28, %29, %30, %31"
#define KILN_WG_R4 "%32, %33, %34, %35, %36, %37, %38, %39"
#define KILN_WG_R5 "%40, %41, %42, %43, %44, %45, %46, %47"
#define KILN_WG_R6 "%48, %49, %50, %51, %52, %53, %54, %55"
#define KILN_WG_R7 "%56, %57, %58, %59, %60, %61, %62, %63"
#define KILN_WG_R8 "%64, %65, %66, %67, %68, %69, %70, %71"
#define KILN_WG_R9 "%72, %73, %74, %75, %76, %77, %78, %79"
#define KILN_WG_R10 "%80, %81, %82, %83, %84, %85, %86, %87"
#define KILN_WG_R11 "%88, %89, %90, %91, %92, %93, %94, %95"
#define KILN_WG_R12 "%96, %97, %98, %99, %100, %101, %102, %103"
#define KILN_WG_R13 "%104, %105, %106, %107, %108, %109, %110, %111"
#define KILN_WG_R14 "%112, %113, %114, %115, %116, %117, %118, %119"
#define KILN_WG_R15 "%120, %121, %122, %123, %124, %125, %126, %127"
#define KILN_WG_OUT8(i)                                                     \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]),                \
      "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define KILN_WG_REGS_8 KILN_WG_R0
#define KILN_WG_REGS_16 KILN_WG_REGS_8 ", " KILN_WG_R1
#define KILN_WG_REGS_24 KILN_WG_REGS_16 ", " KILN_WG_R2
#define KILN_WG_REGS_32 KILN_WG_REGS_24 ", " KILN_WG_R3
#define KILN_WG_REGS_40 KILN_WG_REGS_32 ", " KILN_WG_R4
#define KILN_WG_REGS_48 KILN_WG_REGS_40 ", " KILN_WG_R5
#define KILN_WG_REGS_56 KILN_WG_REGS_48 ", " KILN_WG_R6
#define KILN_WG_REGS_64 KILN_WG_REGS_56 ", " KILN_WG_R7
#define KILN_WG_REGS_72 KILN_WG_REGS_64 ", " KILN_WG_R8
#define KILN_WG_REGS_80 KILN_WG_REGS_72 ", " KILN_WG_R9
#define KILN_WG_REGS_88 KILN_WG_REGS_80 ", " KILN_WG_R10
#define KILN_WG_REGS_96 KILN_WG_REGS_88 ", " KILN_WG_R11
#define KILN_WG_REGS_104 KILN_WG_REGS_96 ", " KILN_WG_R12
#define KILN_WG_REGS_112 KILN_WG_REGS_104 ", " KILN_WG_R13
#define KILN_WG_REGS_120 KILN_WG_REGS_112 ", " KILN_WG_R14
#define KILN_WG_REGS_128 KILN_WG_REGS_120 ", " KILN_WG_R15
#define KILN_WG_OUTS_8 KILN_WG_OUT8(0)
#define KILN_WG_OUTS_16 KILN_WG_OUTS_8, KILN_WG_OUT8(8)
#define KILN_WG_OUTS_24 KILN_WG_OUTS_16, KILN_WG_OUT8(16)
#define KILN_WG_OUTS_32 KILN_WG_OUTS_24, KILN_WG_OUT8(24)
#define KILN_WG_OUTS_40 KILN_WG_OUTS_32, KILN_WG_OUT8(32)
#define KILN_WG_OUTS_48 KILN_WG_OUTS_40, KILN_WG_OUT8(40)
#define KILN_WG_OUTS_56 KILN_WG_OUTS_48, KILN_WG_OUT8(48)
#define KILN_WG_OUTS_64 KILN_WG_OUTS_56, KILN_WG_OUT8(56)
#define KILN_WG_OUTS_72 KILN_WG_OUTS_64, KILN_WG_OUT8(64)
#define KILN_WG_OUTS_80 KILN_WG_OUTS_72, KILN_WG_OUT8(72)
#define KILN_WG_OUTS_88 KILN_WG_OUTS_80, KILN_WG_OUT8(80)
#define KILN_WG_OUTS_96 KILN_WG_OUTS_88, KILN_WG_OUT8(88)
#define KILN_WG_OUTS_104 KILN_WG_OUTS_96, KILN_WG_OUT8(96)
#define KILN_WG_OUTS_112 KILN_WG_OUTS_104, KILN_WG_OUT8(104)
#define KILN_WG_OUTS_120 KILN_WG_OUTS_112, KILN_WG_OUT8(112)
#define KILN_WG_OUTS_128 KILN_WG_OUTS_120, KILN_WG_OUT8(120)

/// D = A * op(B) + D (+ D only where scale_d is nonzero), one k16 step:
/// `ss` with A through a descriptor, `rs` with A from registers. TA, TB: A,
/// B is MN-major (imm-trans-a, imm-trans-b).
template <int N> struct Wgmma;
#define KILN_WGMMA_TYPED(N, C, TY, CTY, P0, P1, P2, P3, P4, P5, P6)            \
  template <int TA, int TB>                                                    \
  __device__ __forceinline__ static void ss(float *d, unsigned long long a,    \
                                            unsigned long long b, int scale_d, \
                                            CTY) {                             \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #P2 ", 0;\n"             \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #TY         \
                 "." #TY " {" KILN_WG_REGS_##C "}, %" #P0 ", %" #P1            \
                 ", p, 1, 1, %" #P3 ", %" #P4 ";\n}\n"                         \
                 : KILN_WG_OUTS_##C                                            \
                 : "l"(a), "l"(b), "r"(scale_d), "n"(TA), "n"(TB));            \
  }                                                                            \
  template <int TB>                                                            \
  __device__ __forceinline__ static void rs(float *d, const unsigned *a,       \
                                            unsigned long long b, int scale_d, \
                                            CTY) {                             \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #P5 ", 0;\n"             \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #TY         \
                 "." #TY " {" KILN_WG_REGS_##C "}, {%" #P0 ", %" #P1           \
                 ", %" #P2 ", %" #P3 "}, %" #P4 ", p, 1, 1, %" #P6 ";\n}\n"    \
                 : KILN_WG_OUTS_##C                                            \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b),         \
                   "r"(scale_d), "n"(TB));                                     \
  }
#define KILN_WGMMA_SHAPE(N, C, P0, P1, P2, P3, P4, P5, P6)                     \
  template <> struct Wgmma<N> {                                                \
    KILN_WGMMA_TYPED(N, C, bf16, bf16, P0, P1, P2, P3, P4, P5, P6)             \
    KILN_WGMMA_TYPED(N, C, f16, f16, P0, P1, P2, P3, P4, P5, P6)               \
  };
KILN_WGMMA_SHAPE(16, 8, 8, 9, 10, 11, 12, 13, 14)
KILN_WGMMA_SHAPE(32, 16, 16, 17, 18, 19, 20, 21, 22)
KILN_WGMMA_SHAPE(48, 24, 24, 25, 26, 27, 28, 29, 30)
KILN_WGMMA_SHAPE(64, 32, 32, 33, 34, 35, 36, 37, 38)
KILN_WGMMA_SHAPE(80, 40, 40, 41, 42, 43, 44, 45, 46)
KILN_WGMMA_SHAPE(96, 48, 48, 49, 50, 51, 52, 53, 54)
KILN_WGMMA_SHAPE(112, 56, 56, 57, 58, 59, 60, 61, 62)
KILN_WGMMA_SHAPE(128, 64, 64, 65, 66, 67, 68, 69, 70)
KILN_WGMMA_SHAPE(144, 72, 72, 73, 74, 75, 76, 77, 78)
KILN_WGMMA_SHAPE(160, 80, 80, 81, 82, 83, 84, 85, 86)
KILN_WGMMA_SHAPE(176, 88, 88, 89, 90, 91, 92, 93, 94)
KILN_WGMMA_SHAPE(192, 96, 96, 97, 98, 99, 100, 101, 102)
KILN_WGMMA_SHAPE(208, 104, 104, 105, 106, 107, 108, 109, 110)
KILN_WGMMA_SHAPE(224, 112, 112, 113, 114, 115, 116, 117, 118)
KILN_WGMMA_SHAPE(240, 120, 120, 121, 122, 123, 124, 125, 126)
KILN_WGMMA_SHAPE(256, 128, 128, 129, 130, 131, 132, 133, 134)

/// One k16 step with A from a swizzled shared tile (K-major): the 64 rows
/// from m0 (this warpgroup's).
template <int TB, int N, typename T, int M, int K, int S>
__device__ __forceinline__ void wgmma_step(float *d, SwizzledTile<T, M, K, S> a,
                                           unsigned long long b, int m0, int k0,
                                           int scale_d) {
  Wgmma<N>::template ss<0, TB>(d, desc_k_major(a, m0, k0), b, scale_d, T{});
}
/// One k16 step with A from a shared tile holding Aᵀ (MN-major): its 64
/// columns from m0 (this warpgroup's rows of A).
template <int TB, int N, typename T, int K, int M, int S>
__device__ __forceinline__ void
wgmma_step(float *d, Transposed<SwizzledTile<T, K, M, S>> a,
           unsigned long long b, int m0, int k0, int scale_d) {
  Wgmma<N>::template ss<1, TB>(d, desc_mn_major(a.tile, k0, m0), b, scale_d,
                               T{});
}
/// A register A operand packed into each k16 step's fragments at the step
/// itself, after wgmma.fence (the ablation of tgpu-warpgroup-mma's
/// pack-lhs-first=false): ptxas then sees registers written while products
/// are in flight and injects a warpgroup.arrive before the step.
template <typename F> struct PackedPerStep { const F &frag; };
template <typename F>
__device__ __forceinline__ PackedPerStep<F> packed_per_step(const F &f) {
  return {f};
}
/// One k16 step with A from registers (P in P V), packed here: each warp's
/// 16 rows are mma.m16n8k16's A fragment.
template <int TB, int N, typename T, int M, int K, int W>
__device__ __forceinline__ void
wgmma_step(float *d, PackedPerStep<Frag<T, M, K, W>> a, unsigned long long b,
           int /*m0*/, int k0, int scale_d) {
  unsigned af[4];
  load_a(af, a.frag, 0, k0, 0);
  Wgmma<N>::template rs<TB>(d, af, b, scale_d, T{});
}
/// Every k16 step's A fragments of a register tile, packed (two 16-bit
/// values per register) before wgmma.fence.
template <typename T, int K> struct PackedA { unsigned x[K / 16][4]; };
template <typename T, int M, int K, int W>
__device__ __forceinline__ PackedA<T, K> pack_a(const Frag<T, M, K, W> &f) {
  PackedA<T, K> p;
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 16) {
    load_a(p.x[k0 / 16], f, 0, k0, 0);
    // Packed here, not sunk past the fence that follows.
#pragma unroll
    for (int i = 0; i < 4; ++i)
      asm volatile("" : "+r"(p.x[k0 / 16][i]));
  }
  return p;
}
template <int TB, int N, typename T, int K>
__device__ __forceinline__ void wgmma_step(float *d, const PackedA<T, K> &a,
                                           unsigned long long b, int /*m0*/,
                                           int k0, int scale_d) {
  Wgmma<N>::template rs<TB>(d, a.x[k0 / 16], b, scale_d, T{});
}

/// wgmma_issue's A operand: a register tile packed into its fragments, any
/// other (a shared tile, a tile packed per step) as it is.
template <typename A>
__device__ __forceinline__ const A &pack_a_operand(const A &a) {
  return a;
}
template <typename T, int M, int K, int W>
__device__ __forceinline__ PackedA<T, K>
pack_a_operand(const Frag<T, M, K, W> &f) {
  return pack_a(f);
}

/// Issues acc += A * op(B) on wgmma, uncommitted (acc = A * op(B) with
/// ZERO: the first step ignores acc's registers, so no zero tile need be
/// live). TRANS_B: `b` holds B^T (N x K, K-major: K for Q K^T); otherwise
/// B (K x N, MN-major: V for P V), transposed by the descriptor. Each
/// warpgroup computes its 64 rows; with column groups (G > 1), of its
/// group's N / G columns of B.
template <bool TRANS_B, bool ZERO = false, typename A, typename T, int R, int C,
          int S, int M, int N, int W, int G>
__device__ __forceinline__ void wgmma_issue(Frag<float, M, N, W, G> &acc,
                                            const A &a,
                                            SwizzledTile<T, R, C, S> b) {
  using F = Frag<float, M, N, W, G>;
  static_assert(M == 16 * F::kGroupWarps && F::kGroupWarps % 4 == 0,
                "whole warpgroups per column group, one m16 tile per warp");
  static_assert(G == 1 || TRANS_B || (F::kGroupCols * sizeof(T)) % S == 0,
                "an MN-major B's column groups are whole swizzle columns");
  constexpr int K = TRANS_B ? C : R;
  static_assert(K % 16 == 0, "wgmma steps over 16 of K");
  const int m0 = (F::group_warp() / 4) * 64, n0 = F::group() * F::kGroupCols;
  // A register A operand is packed whole before the fence: wgmma.fence
  // must follow every write of registers a product reads, so packing a
  // step's fragment between products makes ptxas insert a warpgroup.arrive
  // before that product.
  const auto &operand = pack_a_operand(a);
  wgmma_fence_regs(acc.x);
  wgmma_fence();
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 16) {
    unsigned long long db =
        TRANS_B ? desc_k_major(b, n0, k0) : desc_mn_major(b, k0, n0);
    wgmma_step<TRANS_B ? 0 : 1, F::kGroupCols>(acc.x, operand, db, m0, k0,
                                               ZERO && k0 == 0 ? 0 : 1);
  }
}

/// acc += A * op(B) as one committed group, not waited for (where `issue`
/// is false, warpgroup-uniformly, an empty group: wait counts stay the
/// same). Read acc only after wgmma_wait(acc).
template <bool TRANS_B, bool ZERO = false, typename A, typename T, int R, int C,
          int S, int M, int N, int W, int G>
__device__ __forceinline__ void
wgmma_async(Frag<float, M, N, W, G> &acc, const A &a,
            SwizzledTile<T, R, C, S> b, bool issue = true) {
  // Each path commits on its own: with one commit after the branch, ptxas
  // closes the group with a dummy HGMMA after the issued products, so the
  // issuing path commits two groups and a later wait for "all but the last
  // group" also waits for these products (the overlap it was meant for is
  // lost). The empty commit's text differs so the two are not merged.
  if (issue) {
    wgmma_issue<TRANS_B, ZERO>(acc, a, b);
    wgmma_commit();
  } else {
    wgmma_commit_empty();
  }
}

/// Waits until at most N groups are in flight; `acc` is then readable.
template <int N, int M, int Cols, int W, int G>
__device__ __forceinline__ void wgmma_wait(Frag<float, M, Cols, W, G> &acc) {
  wgmma_wait<N>();
  wgmma_fence_regs(acc.x);
}

/// acc += A * op(B) (acc = A * op(B) with ZERO) where `issue` holds,
/// waiting for the result.
template <bool TRANS_B, bool ZERO = false, typename A, typename T, int R, int C,
          int S, int M, int N, int W, int G>
__device__ __forceinline__ void wgmma(Frag<float, M, N, W, G> &acc, const A &a,
                                      SwizzledTile<T, R, C, S> b,
                                      bool issue = true) {
  wgmma_async<TRANS_B, ZERO>(acc, a, b, issue);
  wgmma_wait<0>(acc);
}

} // namespace kiln
#endif // __CUDA_ARCH_FEAT_SM90_ALL
