// RUN: kiln run %examples/gqa_causal.mlir --backward --bwd-schedule two-kernel --heads 8 -emit=tgpu | FileCheck %s

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
