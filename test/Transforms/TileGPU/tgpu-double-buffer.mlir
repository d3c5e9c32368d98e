// RUN: kiln-opt %s -split-input-file -tgpu-double-buffer | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tgpu-double-buffer="shared-memory-bytes=40000" | FileCheck %s --check-prefix=SMALL

// tgpu-double-buffer gives K's and V's buffers twins, alternates them by
// the step's parity, issues the next step's copies at the top of each step
// and waits for this step's (issued a step earlier) with two groups in
// flight; the wait and barrier that published V go.

// CHECK-LABEL: func.func @kv_step
// CHECK-SAME: tgpu.shared_bytes = 41984 : i64
// CHECK-DAG: [[V0:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-DAG: [[V1:%.+]] = tgpu.shared_alloc offset 8192 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-DAG: [[K0:%.+]] = tgpu.shared_alloc offset 16384 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-DAG: [[K1:%.+]] = tgpu.shared_alloc offset 24576 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-DAG: [[Q:%.+]] = tgpu.shared_alloc offset 32768 : memref<64x64xbf16, strided<[72, 1]>, 3>
// The prologue: step 0's copies into the first buffers.
// CHECK: tgpu.barrier
// CHECK-NEXT: tgpu.copy_async [[KD:%arg[0-9]+]]{{\[}}[[LB:%[a-z0-9_]+]], [[C0:%[a-z0-9_]+]]{{\]}}, [[K0]]
// CHECK-NEXT: tgpu.copy_async [[VD:%arg[0-9]+]]{{\[}}[[LB]], [[C0]]{{\]}}, [[V0]]
// CHECK-NEXT: scf.for [[J:%[^ ]+]] = [[LB]] to {{%.+}} step [[STEP:%[^ ]+]]
// CHECK: [[ODD:%.+]] = arith.cmpi ne
// CHECK-DAG: [[KC:%.+]] = arith.select [[ODD]], [[K1]], [[K0]]
// CHECK-DAG: [[KN:%.+]] = arith.select [[ODD]], [[K0]], [[K1]]
// CHECK-DAG: [[VC:%.+]] = arith.select [[ODD]], [[V1]], [[V0]]
// CHECK-DAG: [[VN:%.+]] = arith.select [[ODD]], [[V0]], [[V1]]
// CHECK: tgpu.barrier
// CHECK-NEXT: [[NEXT:%.+]] = arith.addi [[J]], [[STEP]]
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[NEXT]], [[C0]]{{\]}}, [[KN]]
// CHECK-NEXT: tgpu.copy_async [[VD]]{{\[}}[[NEXT]], [[C0]]{{\]}}, [[VN]]
// CHECK-NEXT: tgpu.async_wait {pending = 2 : i64}
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK-NEXT: tgpu.barrier
// CHECK: tgpu.warpgroup_mma {{%.+}}, [[KC]], {{%.+}} {transpose_rhs}
// CHECK-NOT: tgpu.async_wait
// CHECK-NOT: tgpu.barrier
// CHECK: tgpu.warpgroup_mma {{%.+}}, [[VC]], {{%.+}} :
// CHECK: scf.yield
// The epilogue drains the last step's unused copies.
// CHECK: tgpu.async_wait{{$}}
// CHECK-NEXT: return
// Without room for the twins the kernel stays as it was.
// SMALL-LABEL: func.func @kv_step
// SMALL-NOT: arith.select
// SMALL: tgpu.async_wait {pending = 1 : i64}
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
func.func @kv_step(%qb: memref<64x64xbf16, strided<[72, 1]>, 3>, %kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %lb: index, %n: index) -> !acc
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 25600 : i64} {
  %vb = tgpu.shared_alloc offset 0 : !buf
  %kb = tgpu.shared_alloc offset 8192 : !buf
  %q = tgpu.shared_alloc offset 16384 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %o0 = tile.splat %zero : f32 -> !acc
  %r = scf.for %j = %lb to %n step %c64 iter_args(%acc = %o0) -> (!acc) {
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, !buf
    tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, !buf
    tgpu.async_wait {pending = 1 : i64}
    tgpu.fence_async_shared
    tgpu.barrier
    %p0 = arith.truncf %acc : !acc to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
    %s = tgpu.warpgroup_mma %p0, %kb, %acc {transpose_rhs} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, !buf, !acc -> !acc
    %p = arith.truncf %s : !acc to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    %o = tgpu.warpgroup_mma %p, %vb, %acc : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, !buf, !acc -> !acc
    scf.yield %o : !acc
  }
  return %r : !acc
}

// -----

// Left alone: a loop whose copy depends on a value computed in the loop.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-LABEL: func.func @loop_dependent
// CHECK-NOT: arith.select
// CHECK: tgpu.async_wait {pending = 1 : i64}
func.func @loop_dependent(%kd: !tile.desc<?x64xbf16>, %n: index)
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 16384 : i64} {
  %a = tgpu.shared_alloc offset 0 : !buf
  %b = tgpu.shared_alloc offset 8192 : !buf
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  scf.for %j = %c0 to %n step %c64 {
    %row = arith.muli %j, %c64 : index
    tgpu.barrier
    tgpu.copy_async %kd[%row, %c0], %a : !tile.desc<?x64xbf16>, !buf
    tgpu.copy_async %kd[%j, %c0], %b : !tile.desc<?x64xbf16>, !buf
    tgpu.async_wait {pending = 1 : i64}
    tgpu.barrier
    tgpu.async_wait
    tgpu.barrier
  }
  return
}
