// RUN: kiln-translate %s -split-input-file -verify-diagnostics --emit-cuda | FileCheck %s
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="arch=sm_80 block-m=64" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="arch=sm_80 block-m=64 backward-schedule=atomic" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=ATOMIC
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="arch=sm_80 block-m=64 keys-by-queries=true" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=KBQ

// The CUDA text of the ops only the backward kernels use: register
// tile.loads (kiln::load with the fill value), tile.atomic_add (fp32
// reductions into dQ), tgpu.store_shared, and tgpu.mma's two transpose flags
// (kiln::mma<TRANS_A, TRANS_B>). First on a hand-written scheduled kernel
// (every flag combination, both load ranks, the error for a non-float load),
// then on the kernels kiln-cuda-bwd-pipeline makes of causal softcap with
// each backward schedule. NVRTC compiles those in nvrtc-compile.test.

// CHECK-LABEL: // Kernel bwd_ops: 4 warps, 18432 bytes of shared memory
// CHECK: bwd_ops(kiln::Desc<kiln::bf16> [[OD:v[0-9]+]],
// CHECK-NEXT: kiln::Desc<float> [[LD:v[0-9]+]],
// CHECK-NEXT: kiln::Desc<float> [[DQD:v[0-9]+]],
// CHECK-NEXT: int [[ROW:v[0-9]+]]) {
// CHECK: const kiln::SmemTile<kiln::bf16, 64, 64, 72> [[PB:v[0-9]+]]{reinterpret_cast<kiln::bf16 *>(kiln_smem + 0)};
// CHECK: const kiln::SmemTile<kiln::bf16, 64, 64, 72> [[VB:v[0-9]+]]{reinterpret_cast<kiln::bf16 *>(kiln_smem + 9216)};
// CHECK: const int [[C0:v[0-9]+]] = 0;
// A register load declares the fragment, then fills it from the descriptor
// at the offsets; the fill value is a float literal (converted to the
// element type by kiln::load)...
// CHECK: // tile.load loc(
// CHECK-NEXT: kiln::Frag<kiln::bf16, 64, 64, 4> [[O:v[0-9]+]];
// CHECK-NEXT: kiln::load([[O]], [[OD]], [[ROW]], [[C0]], 0.000000000e+00f);
// ... or a named constant. 1-D loads take one offset.
// CHECK-NEXT: // tile.load loc(
// CHECK-NEXT: kiln::RowFrag<float, 64, 4> [[LSE:v[0-9]+]];
// CHECK-NEXT: kiln::load([[LSE]], [[LD]], [[ROW]], kiln::pos_inf());
// CHECK: // tile.splat loc(
// CHECK-NEXT: kiln::Frag<float, 64, 64, 4> [[ACC:v[0-9]+]];
// The shared store between its barriers.
// CHECK: // tgpu.barrier loc(
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: // tgpu.store_shared loc(
// CHECK-NEXT: kiln::store_shared([[PB]], [[O]]);
// CHECK-NEXT: // tgpu.barrier loc(
// CHECK-NEXT: __syncthreads();
// kiln::mma<transpose_lhs, transpose_rhs>, with a shared or register lhs.
// CHECK-NEXT: // tgpu.mma loc(
// CHECK-NEXT: kiln::Frag<float, 64, 64, 4> [[A:v[0-9]+]] = [[ACC]];
// CHECK-NEXT: kiln::mma<true, false>([[A]], [[PB]], [[VB]]);
// CHECK-NEXT: // tgpu.mma loc(
// CHECK-NEXT: kiln::Frag<float, 64, 64, 4> [[B:v[0-9]+]] = [[A]];
// CHECK-NEXT: kiln::mma<true, true>([[B]], [[PB]], [[VB]]);
// CHECK-NEXT: // tgpu.mma loc(
// CHECK-NEXT: kiln::Frag<float, 64, 64, 4> [[C:v[0-9]+]] = [[B]];
// CHECK-NEXT: kiln::mma<false, true>([[C]], [[PB]], [[VB]]);
// CHECK-NEXT: // tgpu.mma loc(
// CHECK-NEXT: kiln::Frag<float, 64, 64, 4> [[D:v[0-9]+]] = [[C]];
// CHECK-NEXT: kiln::mma<false, false>([[D]], [[O]], [[VB]]);
// The atomic add: descriptor, offsets, then the value (as kiln::store).
// CHECK-NEXT: // tile.atomic_add loc(
// CHECK-NEXT: kiln::atomic_add([[DQD]], [[ROW]], [[C0]], [[D]]);
// CHECK-NEXT: // tile.store loc(
// CHECK-NEXT: kiln::store([[LD]], [[ROW]], [[LSE]]);
// CHECK-NEXT: return;
func.func @bwd_ops(%od: !tile.desc<?x64xbf16>, %ld: !tile.desc<?xf32>,
                   %dqd: !tile.desc<?x64xf32>, %row: index)
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 18432 : i64,
                tile.block_m = 64 : i64, tile.block_n = 64 : i64, tile.kernel} {
  %pb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %o = tile.load %od[%row, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16, #tgpu.mma<warps = 4>>
  %lse = tile.load %ld[%row] fill 0x7F800000 : f32 : !tile.desc<?xf32> -> tensor<64xf32, #tgpu.rows<warps = 4>>
  %acc = tile.splat %zero : f32 -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  tgpu.barrier
  tgpu.store_shared %o, %pb : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  %a = tgpu.mma %pb, %vb, %acc {transpose_lhs}
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  %b = tgpu.mma %pb, %vb, %a {transpose_lhs, transpose_rhs}
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  %c = tgpu.mma %pb, %vb, %b {transpose_rhs}
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  %d = tgpu.mma %o, %vb, %c
      : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  tile.atomic_add %d, %dqd[%row, %c0] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, !tile.desc<?x64xf32>
  tile.store %lse, %ld[%row] : tensor<64xf32, #tgpu.rows<warps = 4>>, !tile.desc<?xf32>
  return
}

// -----

// kiln::load reads float fills only.
func.func @int_load(%id: !tile.desc<?xi32>, %row: index)
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 0 : i64,
                tile.block_m = 64 : i64, tile.kernel} {
  // expected-error @+1 {{the CUDA emitter loads float tiles only}}
  %ids = tile.load %id[%row] fill 0 : i32 : !tile.desc<?xi32> -> tensor<64xi32, #tgpu.rows<warps = 4>>
  tile.store %ids, %id[%row] : tensor<64xi32, #tgpu.rows<warps = 4>>, !tile.desc<?xi32>
  return
}

// Two-kernel schedule. The preprocess reads O and dO straight into
// registers (no shared memory) and stores rowsum(dO * O) and the base-2 LSE.
// TWO-LABEL: // Kernel causal_softcap_bwd_preprocess: 4 warps, 0 bytes of shared memory
// TWO-NEXT: extern "C" __global__ void __launch_bounds__(128)
// TWO-NEXT: causal_softcap_bwd_preprocess(kiln::Tensor<kiln::bf16, 4> {{v[0-9]+}},
// TWO-NOT: kiln_smem +
// TWO: // tile.load loc(
// TWO-NEXT: kiln::Frag<kiln::bf16, 64, 64, 4> [[O:v[0-9]+]];
// TWO-NEXT: kiln::load([[O]], {{v[0-9]+}}, [[ROW:v[0-9]+]], [[C0:v[0-9]+]], 0.000000000e+00f);
// TWO-NOT: kiln_smem +
// TWO: // tile.load loc(
// TWO-NEXT: kiln::Frag<kiln::bf16, 64, 64, 4> [[DO:v[0-9]+]];
// TWO-NEXT: kiln::load([[DO]], {{v[0-9]+}}, [[ROW]], [[C0]], 0.000000000e+00f);
// TWO-NOT: kiln_smem +
// TWO: kiln::reduce_rows<false>(
// TWO: kiln::store({{v[0-9]+}}, [[ROW]], {{v[0-9]+}});
// Then the base-2 LSE, +inf past Lq: once per query here, not per step below.
// TWO: kiln::load({{v[0-9]+}}, {{v[0-9]+}}, [[ROW]], kiln::pos_inf());
// TWO: kiln::store({{v[0-9]+}}, [[ROW]], {{v[0-9]+}});
// TWO-NEXT: return;
//
// dQ: LSE (+inf outside, so exp2 gives 0) and D in row fragments, then
// S = Q K^T, dP = dO V^T and dQ += dS K; nothing goes through store_shared.
// TWO-LABEL: // Kernel causal_softcap_bwd_dq: 4 warps, 36864 bytes of shared memory
// TWO: // tile.load loc(
// TWO-NEXT: kiln::RowFrag<float, 64, 4> [[LSE:v[0-9]+]];
// TWO-NEXT: kiln::load([[LSE]], {{v[0-9]+}}, {{v[0-9]+}}, kiln::pos_inf());
// TWO: // tile.load loc(
// TWO-NEXT: kiln::RowFrag<float, 64, 4> [[D:v[0-9]+]];
// TWO-NEXT: kiln::load([[D]], {{v[0-9]+}}, {{v[0-9]+}}, 0.000000000e+00f);
// TWO: // KV loop: full
// TWO-NEXT: for (
// TWO-NOT: kiln::store_shared
// TWO: kiln::mma<false, true>(
// TWO-NOT: kiln::store_shared
// TWO: kiln::mma<false, true>(
// TWO-NOT: kiln::store_shared
// TWO: // arith.truncf loc(
// TWO-NEXT: kiln::Frag<kiln::bf16, 64, 64, 4> [[DS:v[0-9]+]];
// TWO-NOT: kiln::store_shared
// TWO: // tgpu.mma loc(
// TWO-NEXT: kiln::Frag<float, 64, 64, 4> [[DQ:v[0-9]+]] = {{v[0-9]+}};
// TWO-NEXT: kiln::mma<false, false>([[DQ]], [[DS]], {{v[0-9]+}});
// TWO-NOT: kiln::store_shared
// TWO: kiln::store(
// TWO-NEXT: return;
//
// dK/dV: per Q step, P then dS go through their shared buffers between
// barriers and feed kiln::mma<true, false> (ldmatrix.trans) into dV and dK.
// TWO-LABEL: // Kernel causal_softcap_bwd_dkdv: 4 warps, 55296 bytes of shared memory
// TWO: for (int [[I:v[0-9]+]] =
// TWO: // tile.load loc(
// TWO-NEXT: kiln::RowFrag<float, 64, 4> {{v[0-9]+}};
// TWO-NEXT: kiln::load({{v[0-9]+}}, {{v[0-9]+}}, [[I]], kiln::pos_inf());
// TWO: kiln::mma<false, true>(
// TWO: kiln::mma<false, true>(
// TWO-NOT: kiln::store_shared
// TWO: // tgpu.barrier loc(
// TWO-NEXT: __syncthreads();
// TWO-NEXT: // tgpu.store_shared loc(
// TWO-NEXT: kiln::store_shared([[PB:v[0-9]+]], {{v[0-9]+}});
// TWO-NEXT: // tgpu.barrier loc(
// TWO-NEXT: __syncthreads();
// TWO-NEXT: // tgpu.mma loc(
// TWO-NEXT: kiln::Frag<float, 64, 64, 4> [[DV:v[0-9]+]] = {{v[0-9]+}};
// TWO-NEXT: kiln::mma<true, false>([[DV]], [[PB]], {{v[0-9]+}});
// TWO-NEXT: // tgpu.barrier loc(
// TWO-NEXT: __syncthreads();
// TWO-NEXT: // tgpu.store_shared loc(
// TWO-NEXT: kiln::store_shared([[DSB:v[0-9]+]], {{v[0-9]+}});
// TWO-NEXT: // tgpu.barrier loc(
// TWO-NEXT: __syncthreads();
// TWO-NEXT: // tgpu.mma loc(
// TWO-NEXT: kiln::Frag<float, 64, 64, 4> [[DK:v[0-9]+]] = {{v[0-9]+}};
// TWO-NEXT: kiln::mma<true, false>([[DK]], [[DSB]], {{v[0-9]+}});
// The split query loops after it repeat the step through the same buffers.
// TWO: kiln::store_shared([[PB]], {{v[0-9]+}});
// TWO: kiln::store_shared([[DSB]], {{v[0-9]+}});
// TWO: kiln::store_shared([[PB]], {{v[0-9]+}});
// TWO: kiln::store_shared([[DSB]], {{v[0-9]+}});
// TWO-NOT: kiln::store_shared
// TWO-NOT: kiln::atomic_add
// TWO: kiln::store(
// TWO: kiln::store(
// TWO-NEXT: return;
// TWO-NOT: __global__

// With keys-by-queries=true, dK/dV works keys by queries: the per-query LSE is a kiln::ColFrag loaded at
// this Q step's columns and broadcast down the columns of Sᵀ = K Qᵀ; Pᵀ
// and dSᵀ are the register lhs of the dV and dK products (the forward's
// P·V form), so nothing goes through shared memory.
// KBQ-LABEL: // Kernel causal_softcap_bwd_dkdv: 4 warps, 36864 bytes of shared memory
// KBQ-NOT: kiln::store_shared
// KBQ: for (int [[I:v[0-9]+]] =
// KBQ: // tile.load loc(
// KBQ-NEXT: kiln::ColFrag<float, 64, 4> {{v[0-9]+}};
// KBQ-NEXT: kiln::load({{v[0-9]+}}, {{v[0-9]+}}, [[I]], kiln::pos_inf());
// KBQ: kiln::mma<false, true>(
// KBQ: = kiln::broadcast_cols<kiln::Frag<float, 64, 64, 4>>(
// KBQ: kiln::mma<false, true>(
// KBQ: = kiln::broadcast_cols<kiln::Frag<float, 64, 64, 4>>(
// KBQ: // tgpu.mma loc(
// KBQ-NEXT: kiln::Frag<float, 64, 64, 4> [[DV:v[0-9]+]] = {{v[0-9]+}};
// KBQ-NEXT: kiln::mma<false, false>([[DV]], {{v[0-9]+}}, {{v[0-9]+}});
// KBQ-NEXT: // tgpu.mma loc(
// KBQ-NEXT: kiln::Frag<float, 64, 64, 4> [[DK:v[0-9]+]] = {{v[0-9]+}};
// KBQ-NEXT: kiln::mma<false, false>([[DK]], {{v[0-9]+}}, {{v[0-9]+}});
// KBQ-NOT: kiln::store_shared
// KBQ: kiln::store(
// KBQ: kiln::store(
// KBQ-NEXT: return;

// Atomic schedule: the preprocess also zeroes the f32 dQ accumulator; no dQ
// kernel; the dK/dV kernel adds dS K into it; a convert kernel rounds it.
// ATOMIC-LABEL: // Kernel causal_softcap_bwd_preprocess: 4 warps, 0 bytes of shared memory
// ATOMIC: causal_softcap_bwd_preprocess(kiln::Tensor<kiln::bf16, 4> {{v[0-9]+}},
// ATOMIC-NEXT: kiln::Tensor<kiln::bf16, 4> {{v[0-9]+}},
// ATOMIC-NEXT: kiln::Tensor<float, 3> {{v[0-9]+}},
// ATOMIC-NEXT: kiln::Tensor<float, 3> {{v[0-9]+}},
// ATOMIC-NEXT: kiln::Tensor<float, 3> {{v[0-9]+}},
// ATOMIC-NEXT: kiln::Tensor<float, 4> {{v[0-9]+}}) {
// ATOMIC: const float [[ZERO:v[0-9]+]] = 0.000000000e+00f;
// ATOMIC: kiln::load({{.*}}, kiln::pos_inf());
// ATOMIC: // tile.store loc(
// ATOMIC: // tile.splat loc(
// ATOMIC-NEXT: kiln::Frag<float, 64, 64, 4> [[Z:v[0-9]+]];
// ATOMIC-NEXT: #pragma unroll
// ATOMIC-NEXT: for ({{.*}}) [[Z]].x[e] = [[ZERO]];
// ATOMIC-NEXT: // tile.store loc(
// ATOMIC-NEXT: kiln::store({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, [[Z]]);
// ATOMIC-NEXT: return;
// ATOMIC-NOT: causal_softcap_bwd_dq(
// ATOMIC-LABEL: // Kernel causal_softcap_bwd_dkdv: 4 warps, {{[0-9]+}} bytes of shared memory
// ATOMIC: kiln::Tensor<float, 4> [[DQACC:v[0-9]+]]) {
// The dS K chunks read 32-column windows of K's staged buffer (no copy).
// ATOMIC: // memref.subview loc(
// ATOMIC-NEXT: const kiln::SmemTile<kiln::bf16, 64, 32, 72> [[W0:v[0-9]+]]{[[KB:v[0-9]+]].ptr + 0};
// ATOMIC: // memref.subview loc(
// ATOMIC-NEXT: const kiln::SmemTile<kiln::bf16, 64, 32, 72> [[W1:v[0-9]+]]{[[KB]].ptr + 32};
// ATOMIC: const kiln::Desc<float> [[DQD:v[0-9]+]] = {[[DQACC]].ptr
// ATOMIC: for (int [[I:v[0-9]+]] =
// ATOMIC: kiln::store_shared([[PB:v[0-9]+]], {{v[0-9]+}});
// ATOMIC: kiln::mma<true, false>({{v[0-9]+}}, [[PB]], {{v[0-9]+}});
// ATOMIC: kiln::store_shared([[DSB:v[0-9]+]], {{v[0-9]+}});
// ATOMIC: kiln::mma<true, false>({{v[0-9]+}}, [[DSB]], {{v[0-9]+}});
// dQ = dS K, added unscaled at this Q step's rows.
// ATOMIC: // tgpu.mma loc(
// ATOMIC-NEXT: kiln::Frag<float, 64, {{[0-9]+}}, 4> [[DQ:v[0-9]+]] = {{v[0-9]+}};
// ATOMIC-NEXT: kiln::mma<false, false>([[DQ]], [[DSB]], [[W0]]);
// ATOMIC: // tile.atomic_add loc(
// ATOMIC-NEXT: kiln::atomic_add([[DQD]], [[I]], {{v[0-9]+}}, [[DQ]]);
// ATOMIC-LABEL: // Kernel causal_softcap_bwd_dq_convert: 4 warps, 0 bytes of shared memory
// ATOMIC-NEXT: extern "C" __global__ void __launch_bounds__(128)
// ATOMIC-NEXT: causal_softcap_bwd_dq_convert(kiln::Tensor<float, 4> {{v[0-9]+}},
// ATOMIC-NEXT: kiln::Tensor<kiln::bf16, 4> {{v[0-9]+}}) {
// ATOMIC: // tile.load loc(
// ATOMIC-NEXT: kiln::Frag<float, 64, 64, 4> [[ACC:v[0-9]+]];
// ATOMIC-NEXT: kiln::load([[ACC]], {{v[0-9]+}}, [[ROW:v[0-9]+]], [[C0:v[0-9]+]], 0.000000000e+00f);
// ATOMIC: // arith.mulf loc(
// ATOMIC-NEXT: kiln::Frag<float, 64, 64, 4> [[DQS:v[0-9]+]];
// ATOMIC: kiln::to_bf16([[DQS]].x[e]);
// ATOMIC: kiln::store({{v[0-9]+}}, [[ROW]], [[C0]], {{v[0-9]+}});
// ATOMIC-NEXT: return;
// ATOMIC-NOT: __global__
