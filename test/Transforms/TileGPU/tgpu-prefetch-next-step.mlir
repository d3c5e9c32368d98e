// RUN: kiln-opt %s -split-input-file -tgpu-prefetch-next-step | FileCheck %s --enable-var-scope

!kbuf = memref<64x64xbf16, strided<[72, 1]>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>

// K of the first step before the loop; in the body, K of step j + step after
// the barrier that publishes V; a drain after the loop.
// CHECK-LABEL: func.func @kv_loop(
// CHECK-SAME: %[[KD:[a-z0-9]+]]: !tile.desc<?x64xbf16>, %[[VD:[a-z0-9]+]]: !tile.desc<?x64xbf16>, %[[LB:[a-z0-9]+]]: index, %[[UB:[a-z0-9]+]]: index, %[[STEP:[a-z0-9]+]]: index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[K:.*]] = tgpu.shared_alloc offset 0
// CHECK: %[[V:.*]] = tgpu.shared_alloc offset 9216
// CHECK: tgpu.barrier
// CHECK-NEXT: tgpu.copy_async %[[KD]][%[[LB]], %[[C0]]], %[[K]]
// CHECK-NEXT: scf.for %[[J:.*]] = %[[LB]] to %[[UB]] step %[[STEP]]
// CHECK-NEXT:   tgpu.barrier
// CHECK-NEXT:   tgpu.copy_async %[[VD]][%[[J]], %[[C0]]], %[[V]]
// CHECK-NEXT:   tgpu.async_wait {pending = 1 : i64}
// CHECK-NEXT:   tgpu.barrier
// CHECK-NEXT:   %[[S:.*]] = tgpu.mma %[[K]], %[[K]]
// CHECK:        tgpu.async_wait
// CHECK-NEXT:   tgpu.barrier
// CHECK-NEXT:   %[[NEXT:.*]] = arith.addi %[[J]], %[[STEP]] : index
// CHECK-NEXT:   tgpu.copy_async %[[KD]][%[[NEXT]], %[[C0]]], %[[K]]
// CHECK-NEXT:   tgpu.mma %{{.*}}, %[[V]]
// CHECK:      }
// CHECK-NEXT: tgpu.async_wait
// CHECK-NEXT: return
func.func @kv_loop(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>,
                   %lb: index, %ub: index, %step: index, %init: !acc, %p: !p) -> !acc {
  %c0 = arith.constant 0 : index
  %k = tgpu.shared_alloc offset 0 : !kbuf
  %v = tgpu.shared_alloc offset 9216 : !kbuf
  %r = scf.for %j = %lb to %ub step %step iter_args(%acc = %init) -> (!acc) {
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %k : !tile.desc<?x64xbf16>, !kbuf
    tgpu.copy_async %vd[%j, %c0], %v : !tile.desc<?x64xbf16>, !kbuf
    tgpu.async_wait {pending = 1 : i64}
    tgpu.barrier
    %s = tgpu.mma %k, %k, %acc {transpose_rhs} : !kbuf, !kbuf, !acc -> !acc
    tgpu.async_wait
    tgpu.barrier
    %o = tgpu.mma %p, %v, %s : !p, !kbuf, !acc -> !acc
    scf.yield %o : !acc
  }
  return %r : !acc
}

// -----

!kbuf = memref<64x64xbf16, strided<[72, 1]>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>

// K read after the barrier that would anchor the prefetch: left alone.
// CHECK-LABEL: func.func @k_read_late(
// CHECK-NOT: arith.addi
// CHECK: scf.for
// CHECK-NEXT: tgpu.barrier
// CHECK-NEXT: tgpu.copy_async
// CHECK-NEXT: tgpu.copy_async
func.func @k_read_late(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>,
                       %lb: index, %ub: index, %step: index, %init: !acc) -> !acc {
  %c0 = arith.constant 0 : index
  %k = tgpu.shared_alloc offset 0 : !kbuf
  %v = tgpu.shared_alloc offset 9216 : !kbuf
  %r = scf.for %j = %lb to %ub step %step iter_args(%acc = %init) -> (!acc) {
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %k : !tile.desc<?x64xbf16>, !kbuf
    tgpu.copy_async %vd[%j, %c0], %v : !tile.desc<?x64xbf16>, !kbuf
    tgpu.async_wait {pending = 1 : i64}
    tgpu.barrier
    tgpu.async_wait
    tgpu.barrier
    %s = tgpu.mma %k, %v, %acc {transpose_rhs} : !kbuf, !kbuf, !acc -> !acc
    scf.yield %s : !acc
  }
  return %r : !acc
}

// -----

!kbuf = memref<64x64xbf16, strided<[72, 1]>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>

// K's row offset is computed inside the loop, before the staged pair: the
// body does not start with the pattern and the next step's offset is not the
// induction variable, so the loop is left alone.
// CHECK-LABEL: func.func @offset_computed_in_loop(
// CHECK: scf.for
// CHECK-NEXT: %{{.*}} = arith.muli
// CHECK-NEXT: tgpu.barrier
// CHECK-NEXT: tgpu.copy_async
// CHECK-NEXT: tgpu.copy_async
// CHECK-NOT: tgpu.copy_async
// CHECK: scf.yield
func.func @offset_computed_in_loop(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>,
                                   %lb: index, %ub: index, %step: index, %init: !acc) -> !acc {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %k = tgpu.shared_alloc offset 0 : !kbuf
  %v = tgpu.shared_alloc offset 9216 : !kbuf
  %r = scf.for %j = %lb to %ub step %step iter_args(%acc = %init) -> (!acc) {
    %row = arith.muli %j, %c2 : index
    tgpu.barrier
    tgpu.copy_async %kd[%row, %c0], %k : !tile.desc<?x64xbf16>, !kbuf
    tgpu.copy_async %vd[%j, %c0], %v : !tile.desc<?x64xbf16>, !kbuf
    tgpu.async_wait {pending = 1 : i64}
    tgpu.barrier
    %s = tgpu.mma %k, %k, %acc {transpose_rhs} : !kbuf, !kbuf, !acc -> !acc
    tgpu.async_wait
    tgpu.barrier
    %o = tgpu.mma %k, %v, %s : !kbuf, !kbuf, !acc -> !acc
    scf.yield %o : !acc
  }
  return %r : !acc
}
