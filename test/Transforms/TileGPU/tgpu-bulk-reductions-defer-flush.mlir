// RUN: kiln-opt %s -split-input-file -tgpu-bulk-reductions=shared-memory-bytes=232448 | FileCheck %s
// RUN: kiln-opt %s -split-input-file -tgpu-bulk-reductions="shared-memory-bytes=232448 defer-flush=false" | FileCheck %s --check-prefix=WHOLE

// defer-flush: a core-order add in a loop of the consumers is staged where
// it was and flushed in the next step (at its start here: no product wait
// precedes the stage) where the step is not the first, and after the loop
// for the last step, lb + ((ub - lb - 1) / step) step, the span clamped to
// 0 where the loop did not run. The step's own copy of the offset (i + 64)
// is computed again from the previous step's counter.
!m = memref<?x?x?x128xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK-LABEL: func.func @one_add(
// CHECK: [[S:%.+]] = tgpu.shared_alloc offset {{[0-9]+}} : memref<64x128xf32, 3>
// CHECK: tgpu.warp_specialize
// CHECK: scf.for [[I:%.+]] = [[LB:%.+]] to [[UB:%.+]] step [[STEP:%.+]] {
// CHECK-NEXT: [[PREV:%.+]] = arith.subi [[I]], [[STEP]] : index
// CHECK-NEXT: [[PENDING:%.+]] = arith.cmpi ne, [[I]], [[LB]] : index
// CHECK-NEXT: [[ROW:%.+]] = arith.addi [[PREV]], %c64 : index
// CHECK-NEXT: tgpu.core_flush [[S]], [[D:%.+]]{{\[}}[[ROW]], %c0] if [[PENDING]] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>, <?x128xf32>
// CHECK-NEXT: tgpu.core_stage %arg1, [[S]] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>
// CHECK-NEXT: }
// CHECK-NEXT: [[RAN:%.+]] = arith.cmpi slt, [[LB]], [[UB]] : index
// CHECK: [[SPAN:%.+]] = arith.subi [[UB]], [[LB]] : index
// CHECK-NEXT: [[SPAN1:%.+]] = arith.subi [[SPAN]], %c1 : index
// CHECK-NEXT: [[CLAMPED:%.+]] = arith.select [[RAN]], [[SPAN1]], %c0{{(_[0-9]+)?}} : index
// CHECK-NEXT: [[STEPS:%.+]] = arith.divui [[CLAMPED]], [[STEP]] : index
// CHECK-NEXT: [[OFF:%.+]] = arith.muli [[STEPS]], [[STEP]] : index
// CHECK-NEXT: [[LAST:%.+]] = arith.addi [[LB]], [[OFF]] : index
// CHECK-NEXT: [[LASTROW:%.+]] = arith.addi [[LAST]], %c64 : index
// CHECK-NEXT: tgpu.core_flush [[S]], [[D]]{{\[}}[[LASTROW]], %c0] if [[RAN]]
// CHECK: tgpu.bulk_wait
// WHOLE-LABEL: func.func @one_add(
// WHOLE-NOT: tgpu.core_stage
// WHOLE: tgpu.core_reduce_add
// WHOLE-NOT: tgpu.core_flush
func.func @one_add(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}, %t: !acc, %n: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64, tgpu.shared_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %pz = arith.constant 0 : index
  } consumer {
    scf.for %i = %c0 to %n step %c64 {
      %r = arith.addi %i, %c64 : index
      tile.atomic_add %t, %d[%r, %c0] : !acc, !tile.desc<?x128xf32>
    }
  }
  return
}

// -----

// Two adds of one tile type in a step share the staging buffer: the second
// stage would overwrite the first's share before its flush, so both stay
// whole.
!m = memref<?x?x?x128xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK-LABEL: func.func @two_adds(
// CHECK-NOT: tgpu.core_stage
// CHECK: tgpu.core_reduce_add
// CHECK-NEXT: arith.addi
// CHECK-NEXT: tgpu.core_reduce_add
// CHECK-NOT: tgpu.core_flush
func.func @two_adds(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}, %t: !acc, %u: !acc, %n: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64, tgpu.shared_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %pz = arith.constant 0 : index
  } consumer {
    scf.for %i = %c0 to %n step %c64 {
      tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x128xf32>
      %j = arith.addi %i, %c128 : index
      tile.atomic_add %u, %d[%j, %c0] : !acc, !tile.desc<?x128xf32>
    }
  }
  return
}

// -----

// Outside a warp-specialized kernel's consumers the register budget is not
// known: the add stays whole.
!m = memref<?x?x?x128xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK-LABEL: func.func @no_producer(
// CHECK: scf.for
// CHECK-NEXT: tgpu.core_reduce_add
// CHECK-NOT: tgpu.core_flush
func.func @no_producer(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}, %t: !acc, %n: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.shared_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  scf.for %i = %c0 to %n step %c64 {
    tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x128xf32>
  }
  return
}
