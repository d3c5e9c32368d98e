// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="arch=sm_80 block-m=64" | FileCheck %s
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="arch=sm_80 block-m=64 backward-schedule=atomic" | FileCheck %s --check-prefix=ATOMIC
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="arch=sm_80 block-m=64" | FileCheck %s --check-prefix=LAYOUT
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="arch=sm_80 block-m=64 backward-schedule=atomic" | FileCheck %s --check-prefix=LAYOUT
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="arch=sm_80 block-m=64 block-n=128" | FileCheck %s --check-prefix=BLOCKS
// RUN: not kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="backward-schedule=fast" 2>&1 | FileCheck %s --check-prefix=BAD-SCHEDULE
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="keys-by-queries=false" | FileCheck %s --check-prefix=WGMMA
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="arch=sm_80 block-m=64 keys-by-queries=true" | FileCheck %s --check-prefix=KBQ
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="backward-schedule=two-kernel" | FileCheck %s --check-prefix=WGMMA-KBQ
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="warpgroup-mma=false" | FileCheck %s --check-prefix=NO-WGMMA
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="backward-schedule=atomic" | FileCheck %s --check-prefix=WGMMA-ATOMIC
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="backward-schedule=atomic producer-reductions=false" | FileCheck %s --check-prefix=WGMMA-DEFER
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-bwd-pipeline="overlap-products=false" | FileCheck %s --check-prefix=NO-OVERLAP

// attn -> the scheduled tgpu backward kernels, for each backward schedule:
// preprocess, dQ and dK/dV (two-kernel), or preprocess, dK/dV with an
// atomic dQ, and the dQ convert (atomic). No tile.dot is left, every
// register tile has a layout, and the dK/dV kernel sends P and dS through
// shared memory for P^T dO and dS^T Q (tgpu.store_shared between barriers,
// then a transpose_lhs mma) on every Q step.

// LAYOUT-LABEL: func.func @causal_softcap_bwd_preprocess(
// LAYOUT-NOT: {{tensor<[0-9x]+[a-z0-9]+>}}
// LAYOUT-NOT: tile.dot

// BAD-SCHEDULE: error: schedule must be two-kernel, atomic, auto or deterministic, got 'fast'

// sm_90a with keys-by-queries=false: every product on wgmma. The dK/dV kernel's P and
// dS go into swizzled buffers, each writer fences for the async proxy
// before the barrier, and wgmma reads them MN-major (transpose_lhs).
// The dQ kernel has the forward's shape, so tgpu-warp-specialize feeds it
// from a producer warpgroup by TMA; with one consumer warpgroup, two CTAs
// share a multiprocessor. The dK/dV kernel gets a producer too: its threads
// write buffers of their own (P, dS), published to the consumer warpgroup
// by a fence and a barrier before the product that reads them.
// WGMMA-LABEL: func.func @causal_softcap_bwd_dq(
// WGMMA-SAME: tgpu.ctas_per_sm = 2 : i64
// WGMMA-SAME: tgpu.producer_warps = 4 : i64
// WGMMA-NOT: {{= tgpu\.mma }}
// WGMMA: tgpu.warp_specialize {consumer_registers = 232 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
// WGMMA: tgpu.tma_load
// WGMMA: } consumer {
// S and dP issued together (tgpu-overlap-products), each read after a wait.
// WGMMA: [[S:%[0-9]+]] = tgpu.warpgroup_mma {{.*}} {async, transpose_rhs}
// WGMMA-NEXT: tgpu.mbarrier_wait
// WGMMA-NEXT: [[DP:%[0-9]+]] = tgpu.warpgroup_mma {{.*}} {async, transpose_rhs}
// WGMMA-NEXT: tgpu.warpgroup_wait [[S]] {pending = 1 : i64}
// WGMMA: tgpu.warpgroup_wait [[DP]] :
// WGMMA: tgpu.warpgroup_mma %{{.+}}, %{{.+}}, %{{.+}} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// WGMMA-LABEL: func.func @causal_softcap_bwd_dkdv(
// WGMMA-SAME: tgpu.producer_warps = 4 : i64
// WGMMA-NOT: {{= tgpu\.mma }}
// WGMMA: tgpu.store_shared %{{.+}}, [[P:%[0-9]+]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// WGMMA-NEXT: tgpu.fence_async_shared
// WGMMA-NEXT: tgpu.barrier
// WGMMA-NEXT: tgpu.warpgroup_mma [[P]], %{{.+}}, %{{.+}} {async, transpose_lhs}
// WGMMA: tgpu.store_shared %{{.+}}, [[DS:%[0-9]+]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// WGMMA-NEXT: tgpu.fence_async_shared
// WGMMA-NEXT: tgpu.barrier
// WGMMA-NEXT: tgpu.warpgroup_mma [[DS]], %{{.+}}, %{{.+}} {transpose_lhs}
// WGMMA-NOT: {{= tgpu\.mma }}
// WGMMA: return
// The atomic schedule on sm_90a: keys by queries with a producer, every
// product on wgmma. dQ's share dS K is one product, not column chunks (its
// rhs is K's whole swizzled tile), its lhs the consumers' own copy of dSᵀ
// read MN-major, and it is added to the f32 accumulator in core order
// (tgpu-bulk-reductions). The consumers stage each step's share into one of
// two buffers by turns, fence it and arrive on its "full" barrier; the
// producer's warp issues the bulk reductions and releases the buffer on its
// "empty" barrier (producer-reductions). dK's product comes after dQ's,
// reads dS from the same buffer and stays in flight while the share is
// staged (tgpu-overlap-products' async-accumulate).
// WGMMA-ATOMIC-LABEL: func.func @causal_softcap_bwd_dkdv(
// WGMMA-ATOMIC-SAME: tgpu.producer_warps = 4 : i64
// WGMMA-ATOMIC-NOT: {{= tgpu\.mma }}
// WGMMA-ATOMIC: [[FIRST:%[0-9]+]] = tgpu.shared_alloc offset {{[0-9]+}} : memref<64x64xf32, 3>
// WGMMA-ATOMIC-NEXT: [[SECOND:%[0-9]+]] = tgpu.shared_alloc offset {{[0-9]+}} : memref<64x64xf32, 3>
// WGMMA-ATOMIC-NEXT: [[BARS:%[0-9]+]] = tgpu.shared_alloc offset {{[0-9]+}} : memref<4xi64, 3>
// WGMMA-ATOMIC: tgpu.mbarrier_init [[BARS]][%c0] count 128
// WGMMA-ATOMIC-NEXT: tgpu.mbarrier_init [[BARS]][%c2] count 32
// WGMMA-ATOMIC-NEXT: tgpu.mbarrier_init [[BARS]][%c1] count 128
// WGMMA-ATOMIC-NEXT: tgpu.mbarrier_init [[BARS]][%c3] count 32
// WGMMA-ATOMIC: tgpu.warp_specialize
// The producer: after each step's loads, the previous step's share (none
// before the first), then its wait for the reductions before to have read
// their buffer and the release of that buffer (none before the second).
// WGMMA-ATOMIC: scf.if
// WGMMA-ATOMIC: tgpu.mbarrier_wait [[BARS]]
// WGMMA-ATOMIC: arith.select %{{.+}}, [[SECOND]], [[FIRST]]
// WGMMA-ATOMIC-NEXT: tgpu.core_add_staged %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<64x64xf32, 3>
// WGMMA-ATOMIC-NEXT: tgpu.bulk_wait_read 1
// WGMMA-ATOMIC: scf.if
// WGMMA-ATOMIC: tgpu.mbarrier_arrive [[BARS]]
// WGMMA-ATOMIC: } {tile.q_loop = "leading_partial"}
// WGMMA-ATOMIC: tgpu.core_add_staged
// WGMMA-ATOMIC: } {tile.q_loop = "full"}
// WGMMA-ATOMIC: tgpu.core_add_staged
// WGMMA-ATOMIC: } {tile.q_loop = "trailing_partial"}
// The last share after the loops, and the sums complete before the end.
// WGMMA-ATOMIC: tgpu.core_add_staged
// WGMMA-ATOMIC: tgpu.bulk_wait{{$}}
// WGMMA-ATOMIC-NEXT: } consumer {
// WGMMA-ATOMIC: tgpu.store_shared %{{.+}}, [[DST:%[0-9]+]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// WGMMA-ATOMIC-NEXT: tgpu.fence_async_shared
// WGMMA-ATOMIC-NEXT: tgpu.barrier
// WGMMA-ATOMIC-NEXT: [[DQ:%[0-9]+]] = tgpu.warpgroup_mma [[DST]], %{{.+}}, %{{.+}} {transpose_lhs} : {{.*}} -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// WGMMA-ATOMIC-NEXT: [[DK:%[0-9]+]] = tgpu.warpgroup_mma [[DST]], %{{.+}}, %{{.+}} {async} : {{.*}} -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// WGMMA-ATOMIC: tgpu.mbarrier_wait [[BARS]]
// WGMMA-ATOMIC-NEXT: arith.select %{{.+}}, [[SECOND]], [[FIRST]]
// WGMMA-ATOMIC-NEXT: tgpu.core_stage [[DQ]], %{{.+}} : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, 3>
// WGMMA-ATOMIC-NEXT: tgpu.fence_async_shared
// WGMMA-ATOMIC-NEXT: tgpu.mbarrier_arrive [[BARS]]
// WGMMA-ATOMIC: tgpu.warpgroup_wait [[DK]]
// WGMMA-ATOMIC: scf.yield
// WGMMA-ATOMIC-NOT: tile.atomic_add
// WGMMA-ATOMIC-NOT: tgpu.bulk_wait
// WGMMA-ATOMIC-NOT: tgpu.core_flush
// The consumers' bulk operations are dK's and dV's stores (tgpu-tma-stores).
// WGMMA-ATOMIC: tgpu.tma_store
// WGMMA-ATOMIC: tgpu.tma_store
// WGMMA-ATOMIC-NEXT: tgpu.bulk_wait
// WGMMA-ATOMIC: func.func @causal_softcap_bwd_dq_convert(
// With producer-reductions=false (the ablation) the consumers add the
// shares themselves: through one staging buffer, by a bulk reduction per
// warp (a warp's 16 rows one contiguous run of the core-ordered array). dK's
// product comes after dQ's, reads dS from the same buffer and stays in
// flight while the share is added (tgpu-overlap-products' async-accumulate;
// the step waits for it before its yield).
// WGMMA-DEFER-LABEL: func.func @causal_softcap_bwd_dkdv(
// WGMMA-DEFER-SAME: tgpu.producer_warps = 4 : i64
// WGMMA-DEFER-NOT: {{= tgpu\.mma }}
// WGMMA-DEFER: tgpu.warp_specialize
// WGMMA-DEFER: tgpu.store_shared %{{.+}}, [[DST:%[0-9]+]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// WGMMA-DEFER-NEXT: tgpu.fence_async_shared
// WGMMA-DEFER-NEXT: tgpu.barrier
// WGMMA-DEFER-NEXT: [[DQ:%[0-9]+]] = tgpu.warpgroup_mma [[DST]], %{{.+}}, %{{.+}} {transpose_lhs} : {{.*}} -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// WGMMA-DEFER-NEXT: [[DK:%[0-9]+]] = tgpu.warpgroup_mma [[DST]], %{{.+}}, %{{.+}} {async} : {{.*}} -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// WGMMA-DEFER-NEXT: tgpu.core_stage [[DQ]], [[STAGING:%[0-9]+]] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, 3>
// WGMMA-DEFER: tgpu.warpgroup_wait [[DK]]
// WGMMA-DEFER: scf.yield
// The query loop split as the forward's KV loop: the Q blocks whose rows
// all see the key block run unmasked between the partial ones; each adds
// its share of dQ, fenced and added during the next step (defer-flush),
// the last step's after the loop.
// WGMMA-DEFER: } {tile.q_loop = "leading_partial"}
// WGMMA-DEFER-NEXT: arith.cmpi slt
// WGMMA-DEFER: tgpu.core_flush [[STAGING]], %{{.+}}[%{{.+}}, %{{.+}}] if
// WGMMA-DEFER: scf.for
// WGMMA-DEFER: tgpu.core_flush [[STAGING]], %{{.+}}[%{{.+}}, %{{.+}}] if
// WGMMA-DEFER-NEXT: tgpu.warpgroup_wait %{{.+}} {pending = 1 : i64}
// WGMMA-DEFER: tgpu.core_stage
// WGMMA-DEFER: } {tile.q_loop = "full"}
// WGMMA-DEFER: tgpu.core_flush
// WGMMA-DEFER: } {tile.q_loop = "trailing_partial"}
// WGMMA-DEFER: tgpu.core_flush
// WGMMA-DEFER-NOT: tile.atomic_add
// The sums complete before the consumers end.
// WGMMA-DEFER: tgpu.bulk_wait{{$}}
// WGMMA-DEFER-NEXT: }
// WGMMA-DEFER: return
// The overlap's ablation: every product waited for in turn.
// NO-OVERLAP-NOT: {async
// NO-OVERLAP-NOT: tgpu.warpgroup_wait
// The ablation keeps mma.sync and the padded buffers.
// NO-WGMMA-LABEL: func.func @causal_softcap_bwd_dkdv(
// NO-WGMMA-NOT: warpgroup_mma
// NO-WGMMA: tgpu.store_shared %{{.+}}, %{{.+}} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>
// NO-WGMMA: tgpu.mma {{.*}} {transpose_lhs}

//===----------------------------------------------------------------------===//
// Two-kernel schedule
//===----------------------------------------------------------------------===//

// D = rowsum(dO * O) and the base-2 LSE, with O, dO and LSE read straight into
// registers: no shared memory, no barrier, no mma.
// CHECK-LABEL: func.func @causal_softcap_bwd_preprocess(
// CHECK-SAME: tile.workspace = "delta"
// CHECK-SAME: tgpu.arch = "sm_80", tgpu.fast_math, tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 0 : i64, tile.block_m = 64 : i64, tile.block_n = 64 : i64, tile.bwd_stage = "preprocess"
// CHECK-SAME: tile.kernel
// CHECK-NOT: {{tgpu\.(shared_alloc|copy_async|barrier|async_wait|store_shared)|= tgpu\.mma}}
// CHECK: [[O:%.+]] = tile.load {{.*}} : bf16 : <?x64xbf16> -> tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-NOT: {{tgpu\.(shared_alloc|copy_async|barrier|async_wait|store_shared)|= tgpu\.mma}}
// CHECK: [[DO:%.+]] = tile.load {{.*}} : bf16 : <?x64xbf16> -> tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-NOT: {{tgpu\.(shared_alloc|copy_async|barrier|async_wait|store_shared)|= tgpu\.mma}}
// CHECK: [[D:%.+]] = tile.reduce sum %{{.+}} dim 1 : tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK: tile.store [[D]], {{.*}} : tensor<64xf32, #tgpu.rows<warps = 4>>, <?xf32>
// CHECK: [[LSE:%.+]] = tile.load {{.*}} fill 0x7F800000 : f32 : <?xf32> -> tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK: [[REF:%.+]] = arith.select {{.*}}, [[LSE2:%.+]] : tensor<64xi1, #tgpu.rows<warps = 4>>, tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK: tile.store [[REF]], {{.*}} : tensor<64xf32, #tgpu.rows<warps = 4>>, <?xf32>
// CHECK-NEXT: return

// dQ for one Q block: S = Q K^T and dP = dO V^T from shared buffers, then
// dQ += dS K with dS from registers (its rows are this warp's), so nothing
// goes through store_shared or a transposed lhs.
// CHECK-LABEL: func.func @causal_softcap_bwd_dq(
// CHECK-SAME: tgpu.shared_bytes = 36864 : i64
// CHECK-SAME: tile.bwd_stage = "dq"
// CHECK-NOT: {{store_shared|transpose_lhs}}
// CHECK: scf.for
// CHECK-NOT: {{store_shared|transpose_lhs}}
// CHECK: tgpu.mma {{.*}} {transpose_rhs}
// CHECK-NOT: {{store_shared|transpose_lhs}}
// CHECK: tgpu.mma {{.*}} {transpose_rhs}
// CHECK-NOT: {{store_shared|transpose_lhs}}
// CHECK: [[DS:%.+]] = arith.truncf {{.*}} to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[DQ:%.+]] = tgpu.mma [[DS]], %{{.+}}, %{{.+}} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: scf.yield [[DQ]]
// CHECK-NOT: {{store_shared|transpose_lhs}}
// CHECK: tile.store
// CHECK-NOT: {{store_shared|transpose_lhs}}
// CHECK: return

// dK and dV for one KV block: K and V staged once, Q and dO on every step of
// the Q loop; six 64 x 64 buffers, P and dS in their own.
// CHECK-LABEL: func.func @causal_softcap_bwd_dkdv(
// CHECK-SAME: tgpu.shared_bytes = 55296 : i64
// CHECK-SAME: tile.bwd_stage = "dkdv"
// CHECK-DAG: [[KD:%.+]] = tile.view %arg1[
// CHECK-DAG: [[VD:%.+]] = tile.view %arg2[
// CHECK: tgpu.copy_async [[KD]]{{.*}}, [[KB:%[0-9]+]] :
// CHECK-NEXT: tgpu.copy_async [[VD]]{{.*}}, [[VB:%[0-9]+]] :
// CHECK-DAG: [[QD:%.+]] = tile.view %arg0[
// CHECK-DAG: [[DOD:%.+]] = tile.view %arg3[
// CHECK: scf.for [[J:%[^ ]+]] = {{.*}} iter_args([[DK:%[^ ]+]] = %{{[0-9]+}}, [[DV:%[^ ]+]] = %{{[0-9]+}})
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[QD]]{{\[}}[[J]], {{.*}}, [[QB:%[0-9]+]] :
// CHECK-NEXT: tgpu.copy_async [[DOD]]{{\[}}[[J]], {{.*}}, [[DOB:%[0-9]+]] :
// CHECK-NOT: tgpu.store_shared
// CHECK: tgpu.mma [[QB]], [[KB]], %{{.+}} {transpose_rhs}
// CHECK-NOT: tgpu.store_shared
// CHECK: [[PF:%.+]] = math.exp2
// CHECK-NOT: tgpu.store_shared
// CHECK: tgpu.mma [[DOB]], [[VB]], %{{.+}} {transpose_rhs}
// CHECK-NOT: tgpu.store_shared
// CHECK: [[P:%.+]] = arith.truncf [[PF]] : tensor<64x64xf32, #tgpu.mma<warps = 4>> to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[DS:%.+]] = arith.truncf {{.*}} to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// dV += P^T dO ...
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.store_shared [[P]], [[PB:%[0-9]+]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[DV2:%.+]] = tgpu.mma [[PB]], [[DOB]], [[DV]] {transpose_lhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// ... and dK += dS^T Q, through a second buffer.
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.store_shared [[DS]], [[DSB:%[0-9]+]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[DK2:%.+]] = tgpu.mma [[DSB]], [[QB]], [[DK]] {transpose_lhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: scf.yield [[DK2]], [[DV2]]
// CHECK-NEXT: } {tile.q_loop = "leading_partial"}
// The full and trailing loops repeat the step (through the same buffers).
// CHECK: tgpu.store_shared %{{.+}}, [[PB]]
// CHECK: tgpu.store_shared %{{.+}}, [[DSB]]
// CHECK: } {tile.q_loop = "full"}
// CHECK: tgpu.store_shared %{{.+}}, [[PB]]
// CHECK: tgpu.store_shared %{{.+}}, [[DSB]]
// CHECK: } {tile.q_loop = "trailing_partial"}
// CHECK-NOT: tgpu.store_shared
// CHECK-NOT: tile.atomic_add
// CHECK: tile.store
// CHECK: tile.store
// CHECK-NEXT: return
// Three kernels only: no dQ convert.
// CHECK-NOT: func.func

// keys-by-queries=true: the dK/dV kernel works keys by queries: K and V staged once, Q and
// dO on every step of the Q loop; four 64 x 64 buffers. Sᵀ = K Qᵀ and
// dPᵀ = V dOᵀ; the per-query LSE and D are #tgpu.cols tiles broadcast down
// the columns; Pᵀ and dSᵀ are the register lhs of dV += Pᵀ dO and
// dK += dSᵀ Q, so nothing goes through shared memory.
// KBQ-LABEL: func.func @causal_softcap_bwd_dkdv(
// KBQ-SAME: tgpu.shared_bytes = 36864 : i64
// KBQ-SAME: tile.bwd_stage = "dkdv"
// KBQ-NOT: tgpu.store_shared
// KBQ-DAG: [[KD:%.+]] = tile.view %arg1[
// KBQ-DAG: [[VD:%.+]] = tile.view %arg2[
// KBQ: tgpu.copy_async [[KD]]{{.*}}, [[KB:%[0-9]+]] :
// KBQ-NEXT: tgpu.copy_async [[VD]]{{.*}}, [[VB:%[0-9]+]] :
// KBQ-DAG: [[QD:%.+]] = tile.view %arg0[
// KBQ-DAG: [[DOD:%.+]] = tile.view %arg3[
// KBQ: scf.for [[J:%[^ ]+]] = {{.*}} iter_args([[DK:%[^ ]+]] = %{{[0-9]+}}, [[DV:%[^ ]+]] = %{{[0-9]+}})
// KBQ-NEXT: tgpu.barrier{{$}}
// KBQ-NEXT: tgpu.copy_async [[QD]]{{\[}}[[J]], {{.*}}, [[QB:%[0-9]+]] :
// KBQ-NEXT: tgpu.copy_async [[DOD]]{{\[}}[[J]], {{.*}}, [[DOB:%[0-9]+]] :
// KBQ: [[LSE:%.+]] = tile.load %{{.+}}{{\[}}[[J]]{{\]}} fill 0x7F800000 : f32 : <?xf32> -> tensor<64xf32, #tgpu.cols<warps = 4>>
// KBQ: tgpu.mma [[KB]], [[QB]], %{{.+}} {transpose_rhs}
// KBQ: tile.broadcast %{{.+}} dim 0 : tensor<64xf32, #tgpu.cols<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// KBQ: [[PF:%.+]] = math.exp2
// KBQ: tgpu.mma [[VB]], [[DOB]], %{{.+}} {transpose_rhs}
// KBQ: tile.broadcast %{{.+}} dim 0 : tensor<64xf32, #tgpu.cols<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// KBQ: [[P:%.+]] = arith.truncf [[PF]] : tensor<64x64xf32, #tgpu.mma<warps = 4>> to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// KBQ-NEXT: [[DS:%.+]] = arith.truncf {{.*}} to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// KBQ-NEXT: [[DV2:%.+]] = tgpu.mma [[P]], [[DOB]], [[DV]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// KBQ-NEXT: [[DK2:%.+]] = tgpu.mma [[DS]], [[QB]], [[DK]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// KBQ-NEXT: scf.yield [[DK2]], [[DV2]]
// KBQ-NEXT: } {tile.q_loop =
// KBQ-NOT: tgpu.store_shared
// KBQ-NOT: tile.atomic_add
// KBQ: tile.store
// KBQ: tile.store
// KBQ-NEXT: return
// sm_90a by default (keys-by-queries=auto), in the two-kernel schedule (D =
// 64's default is the 128-key atomic one since core order): Pᵀ and dSᵀ feed
// wgmma from registers, and with no thread writing shared memory the dK/dV
// kernel gets its producer warpgroup too (two CTAs per multiprocessor).
// WGMMA-KBQ-LABEL: func.func @causal_softcap_bwd_dq(
// WGMMA-KBQ-NOT: {{= tgpu\.mma }}
// WGMMA-KBQ: tgpu.warpgroup_mma {{.*}} {async, transpose_rhs}
// WGMMA-KBQ: tgpu.warpgroup_mma {{.*}} {async, transpose_rhs}
// WGMMA-KBQ: tgpu.warpgroup_mma %{{.+}}, %{{.+}}, %{{.+}} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// WGMMA-KBQ-LABEL: func.func @causal_softcap_bwd_dkdv(
// WGMMA-KBQ-SAME: tgpu.ctas_per_sm = 2 : i64
// WGMMA-KBQ-SAME: tgpu.producer_warps = 4 : i64
// WGMMA-KBQ-NOT: {{= tgpu\.mma }}
// WGMMA-KBQ-NOT: tgpu.store_shared
// WGMMA-KBQ: tgpu.warp_specialize
// WGMMA-KBQ: tgpu.tma_load
// WGMMA-KBQ: } consumer {
// Sᵀ and dPᵀ issued together (tgpu-overlap-products).
// WGMMA-KBQ: tgpu.warpgroup_mma {{.*}} {async, transpose_rhs}
// WGMMA-KBQ-NEXT: tgpu.mbarrier_wait
// WGMMA-KBQ-NEXT: tgpu.warpgroup_mma {{.*}} {async, transpose_rhs}
// WGMMA-KBQ-NEXT: tgpu.warpgroup_wait {{.*}} {pending = 1 : i64}
// WGMMA-KBQ: tgpu.warpgroup_mma %{{.+}}, %{{.+}}, %{{.+}} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// WGMMA-KBQ: tgpu.warpgroup_mma %{{.+}}, %{{.+}}, %{{.+}} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// WGMMA-KBQ-NOT: {{= tgpu\.mma }}
// WGMMA-KBQ-NOT: tgpu.store_shared
// WGMMA-KBQ: return
//===----------------------------------------------------------------------===//
// Atomic schedule
//===----------------------------------------------------------------------===//

// The preprocess also zeroes the f32 dQ accumulator (its sixth argument).
// ATOMIC-LABEL: func.func @causal_softcap_bwd_preprocess(
// ATOMIC-SAME: %arg5: memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>> {tile.shape = ["batch", "heads", "seq_q", 64], tile.workspace = "dq_accum"})
// ATOMIC-SAME: tile.bwd_stage = "preprocess"
// ATOMIC: tile.reduce sum
// ATOMIC: [[ACCD:%.+]] = tile.view %arg5[
// ATOMIC: [[Z:%.+]] = tile.splat %{{.+}} : f32 -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// ATOMIC-NEXT: tile.store [[Z]], [[ACCD]]{{.*}} : tensor<64x64xf32, #tgpu.mma<warps = 4>>, <?x64xf32>
// No dQ kernel...
// ATOMIC-NOT: @causal_softcap_bwd_dq(
// ... the dK/dV kernel makes the same two transposed products per Q step,
// then computes dQ = dS K (in one or more column chunks) and adds it, in
// f32 and the mma layout, into the accumulator at this Q step's rows.
// ATOMIC-LABEL: func.func @causal_softcap_bwd_dkdv(
// ATOMIC-SAME: %arg8: memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>> {tile.shape = ["batch", "heads", "seq_q", 64], tile.workspace = "dq_accum"})
// ATOMIC-SAME: tile.bwd_stage = "dkdv"
// ATOMIC: [[DQD:%.+]] = tile.view %arg8[
// ATOMIC: scf.for [[J:%[^ ]+]] =
// ATOMIC-NOT: tile.atomic_add
// ATOMIC: tgpu.store_shared %{{.+}}, [[PB:%[0-9]+]] :
// ATOMIC-NEXT: tgpu.barrier{{$}}
// ATOMIC-NEXT: tgpu.mma [[PB]], {{.*}} {transpose_lhs}
// ATOMIC-NEXT: tgpu.barrier{{$}}
// ATOMIC-NEXT: tgpu.store_shared %{{.+}}, [[DSB:%[0-9]+]] :
// ATOMIC-NEXT: tgpu.barrier{{$}}
// ATOMIC-NEXT: tgpu.mma [[DSB]], {{.*}} {transpose_lhs}
// ATOMIC-NOT: transpose_lhs
// ATOMIC: [[DQ:%.+]] = tgpu.mma {{.*}} -> tensor<64x{{[0-9]+}}xf32, #tgpu.mma<warps = 4>>
// ATOMIC-NEXT: tile.atomic_add [[DQ]], [[DQD]]{{\[}}[[J]], %{{.+}}{{\]}} : tensor<64x{{[0-9]+}}xf32, #tgpu.mma<warps = 4>>, <?x64xf32>
// ATOMIC-NOT: tgpu.store_shared
// ATOMIC: scf.yield
// ATOMIC-NEXT: } {tile.q_loop = "leading_partial"}
// The full and trailing query loops add their shares the same way.
// ATOMIC: tile.atomic_add
// ATOMIC: } {tile.q_loop = "full"}
// ATOMIC: tile.atomic_add
// ATOMIC: } {tile.q_loop = "trailing_partial"}
// ATOMIC-NOT: tile.atomic_add
// ATOMIC: return
// ... and the convert kernel scales the accumulator once and rounds it to
// the input type.
// ATOMIC-LABEL: func.func @causal_softcap_bwd_dq_convert(
// ATOMIC-SAME: tgpu.shared_bytes = 0 : i64
// ATOMIC-SAME: tile.bwd_stage = "convert"
// ATOMIC: [[ACC:%.+]] = tile.load {{.*}} fill 0.000000e+00 : f32 : <?x64xf32> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// ATOMIC: [[DQS:%.+]] = arith.mulf [[ACC]], %{{.+}} : tensor<64x64xf32, #tgpu.mma<warps = 4>>
// ATOMIC: [[DQB:%.+]] = arith.truncf [[DQS]] : tensor<64x64xf32, #tgpu.mma<warps = 4>> to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// ATOMIC-NEXT: tile.store [[DQB]], {{.*}} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, <?x64xbf16>
// ATOMIC-NEXT: return
// ATOMIC-NOT: func.func

//===----------------------------------------------------------------------===//
// Block sizes
//===----------------------------------------------------------------------===//

// 128 keys per block, 64 query rows per step, on sm_80: the dK and dV
// accumulators have 128 rows (twice block_m) and still get the mma layout;
// P and dS (64 x 128) go through 64 x 128 buffers.
// BLOCKS-LABEL: func.func @causal_softcap_bwd_dkdv(
// BLOCKS-SAME: tgpu.arch = "sm_80", tgpu.fast_math, tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 90112 : i64, tile.block_m = 64 : i64, tile.block_n = 128 : i64
// BLOCKS: scf.for {{.*}} -> (tensor<128x64xf32, #tgpu.mma<warps = 4>>, tensor<128x64xf32, #tgpu.mma<warps = 4>>)
// BLOCKS: tgpu.store_shared %{{.+}}, [[PB:%[0-9]+]] : tensor<64x128xbf16, #tgpu.mma<warps = 4>>, memref<64x128xbf16, strided<[136, 1]>, 3>
// BLOCKS-NEXT: tgpu.barrier{{$}}
// BLOCKS-NEXT: tgpu.mma [[PB]], %{{.+}}, %{{.+}} {transpose_lhs} : memref<64x128xbf16, strided<[136, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
// BLOCKS: tgpu.store_shared %{{.+}}, [[DSB:%[0-9]+]] : tensor<64x128xbf16, #tgpu.mma<warps = 4>>, memref<64x128xbf16, strided<[136, 1]>, 3>
// BLOCKS-NEXT: tgpu.barrier{{$}}
// BLOCKS-NEXT: tgpu.mma [[DSB]], %{{.+}}, %{{.+}} {transpose_lhs} : memref<64x128xbf16, strided<[136, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
// BLOCKS: tile.store {{.*}} : tensor<128x64xbf16, #tgpu.mma<warps = 4>>, <?x64xbf16>
