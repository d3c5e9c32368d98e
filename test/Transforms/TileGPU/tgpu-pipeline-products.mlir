// RUN: kiln-opt %s -split-input-file -tgpu-double-buffer -tgpu-pipeline-products | FileCheck %s --enable-var-scope

// tgpu-pipeline-products rotates a double-buffered KV loop by one product:
// step j issues Q K_j^T and P_{j-1} V_{j-1} (none in the first step),
// waits for Q K^T alone, runs the softmax, then waits for P V, publishes
// that every warpgroup is done with V_{j-1}'s buffer and loads V_{j+1}
// into it; P and its buffer are carried, and the last P V runs after the
// loop, when the loop ran.

// CHECK-LABEL: func.func @kv_step
// CHECK-SAME: ([[QB:%[^:]+]]: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK: [[ZERO:%.+]] = arith.constant 0.000000e+00 : bf16
// CHECK: [[P0:%.+]] = tile.splat [[ZERO]] : bf16 -> tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK: [[R:%.+]]:3 = scf.for [[J:%[^ ]+]] = [[LB:%[^ ]+]] to [[UB:%[^ ]+]] step {{.*}} iter_args([[ACC:%[^ ]+]] = {{%.+}}, [[PP:%[^ ]+]] = [[P0]], [[PV:%[^ ]+]] = {{%.+}})
// CHECK: [[NOTFIRST:%.+]] = arith.cmpi ne, [[J]], [[LB]] : index
// CHECK: tgpu.copy_async
// CHECK-NOT: tgpu.copy_async
// CHECK: tgpu.async_wait {pending = 2 : i64}
// CHECK: [[S0:%.+]] = tgpu.warpgroup_mma [[QB]], {{%.+}}, {{%.+}} {async, transpose_rhs}
// CHECK-NEXT: [[O0:%.+]] = tgpu.warpgroup_mma [[PP]], [[PV]], [[ACC]] if [[NOTFIRST]] {async}
// CHECK-NEXT: [[S:%.+]] = tgpu.warpgroup_wait [[S0]] {pending = 1 : i64}
// CHECK-NEXT: [[P:%.+]] = arith.truncf [[S]]
// CHECK-NEXT: [[O:%.+]] = tgpu.warpgroup_wait [[O0]] :
// CHECK-NEXT: tgpu.barrier
// CHECK-NEXT: tgpu.copy_async
// CHECK-NEXT: [[SCALED:%.+]] = arith.mulf [[O]], {{%.+}}
// CHECK-NEXT: scf.yield [[SCALED]], [[P]], [[VC:%.+]] :
// CHECK: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK-NEXT: tgpu.barrier
// CHECK-NEXT: [[RAN:%.+]] = arith.cmpi slt, [[LB]], [[UB]] : index
// CHECK-NEXT: [[LAST:%.+]] = tgpu.warpgroup_mma [[R]]#1, [[R]]#2, [[R]]#0 if [[RAN]] :
// CHECK-NEXT: return [[LAST]]
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
func.func @kv_step(%qb: !buf, %kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %lb: index, %n: index, %scale: !acc) -> !acc
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 16384 : i64} {
  %vb = tgpu.shared_alloc offset 0 : !buf
  %kb = tgpu.shared_alloc offset 8192 : !buf
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %r = scf.for %j = %lb to %n step %c64 iter_args(%acc = %z) -> (!acc) {
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, !buf
    tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, !buf
    tgpu.async_wait {pending = 1 : i64}
    tgpu.fence_async_shared
    tgpu.barrier
    %s = tgpu.warpgroup_mma %qb, %kb, %z {transpose_rhs} : !buf, !buf, !acc -> !acc
    %p = arith.truncf %s : !acc to !p
    %scaled = arith.mulf %acc, %scale : !acc
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    %o = tgpu.warpgroup_mma %p, %vb, %scaled : !p, !buf, !acc -> !acc
    scf.yield %o : !acc
  }
  return %r : !acc
}

// -----

// Left alone: P V's result is read inside the step too.
// CHECK-LABEL: func.func @result_reused
// CHECK-NOT: {async
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
func.func @result_reused(%qb: !buf, %kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %n: index) -> !acc
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 16384 : i64} {
  %vb = tgpu.shared_alloc offset 0 : !buf
  %kb = tgpu.shared_alloc offset 8192 : !buf
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %z) -> (!acc) {
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, !buf
    tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, !buf
    tgpu.async_wait {pending = 1 : i64}
    tgpu.barrier
    %s = tgpu.warpgroup_mma %qb, %kb, %z {transpose_rhs} : !buf, !buf, !acc -> !acc
    %p = arith.truncf %s : !acc to !p
    tgpu.async_wait
    tgpu.barrier
    %o = tgpu.warpgroup_mma %p, %vb, %acc : !p, !buf, !acc -> !acc
    %o2 = arith.addf %o, %o : !acc
    scf.yield %o2 : !acc
  }
  return %r : !acc
}
