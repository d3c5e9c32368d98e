// RUN: kiln run %examples/gqa_causal.mlir --backward --bwd-schedule two-kernel --heads 8 -emit=tgpu | FileCheck %s
// RUN: kiln run %examples/gqa_causal.mlir --backward --bwd-schedule two-kernel --heads 8 --no-group-steps -emit=tgpu | FileCheck %s --check-prefix=NESTED
// RUN: kiln run %examples/gqa_causal.mlir --backward --heads 8 --seqlens 40,100,3 --head-dim 256 -emit=tgpu | FileCheck %s --check-prefix=VARLEN

// GQA's dK/dV kernel makes Q's and dO's views per step (one loop per range
// of Q blocks over the group's heads): the producer computes each step's
// head and rows again from the induction variable and loads the step's
// tiles by TMA at them (coordinates: column, row, head, batch).
// CHECK-LABEL: func.func @gqa_causal_bwd_dkdv(
// CHECK: tgpu.warp_specialize
// CHECK-SAME: producer {
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK:   %[[G:.*]] = arith.divui %[[J]], %[[PER:.*]] : index
// CHECK:   %[[BLOCK:.*]] = arith.remui %[[J]], %[[PER]] : index
// CHECK:   %[[OFF:.*]] = arith.muli %[[BLOCK]], %{{.*}} : index
// CHECK:   %[[ROW:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK:   %[[HEAD:.*]] = arith.addi %{{.*}}, %[[G]] : index
// CHECK:   tgpu.tma_load %{{.*}}[%{{.*}}, %[[ROW]], %[[HEAD]], %{{.*}}]
// CHECK:   tgpu.tma_load %{{.*}}[%{{.*}}, %[[ROW]], %[[HEAD]], %{{.*}}]
// CHECK: } {tile.q_loop = "leading_partial"}
// CHECK: consumer {
// CHECK-NOT: tgpu.copy_async

// The ablation: a loop over the group's heads around the Q blocks' loops,
// whose copies the producer does not take (cp.async by every warp).
// NESTED-LABEL: func.func @gqa_causal_bwd_dkdv(
// NESTED-NOT: tgpu.warp_specialize
// NESTED: scf.for %{{.*}} = %c0 to %c4 step %c1
// NESTED: tgpu.copy_async

// A varlen batch keeps the loop over heads too (ragged views are not taken
// per step; grouped loops would stage Q and dO once per loop): at D = 256
// its dK and dV kernels fit the shared memory.
// VARLEN-LABEL: func.func @gqa_causal_bwd_dk(
// VARLEN-SAME: tgpu.shared_bytes = 131072
// VARLEN: scf.for %{{.*}} = %c0 to %c4 step %c1
// VARLEN-LABEL: func.func @gqa_causal_bwd_dv(
