// RUN: kiln-opt %s -split-input-file -tgpu-double-buffer -tgpu-pipeline-products | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tgpu-warp-specialize -tgpu-pipeline-products -cse | FileCheck %s --check-prefix=RING --enable-var-scope

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

// -----

// On the warp-specialized form (tgpu-warp-specialize): step j issues
// Q K_j^T, waits for V_{j-1}'s slot (not in the first step) and issues
// P_{j-1} V_{j-1}, waits for Q K_j^T alone, and releases K_j's slot and
// (not in the first step) V_{j-1}'s only after P V completed; V's slot,
// parity and barriers are carried. After the loop, its last P V with its
// own wait and release.
// CHECK-LABEL: func.func @ring_loop
// RING-LABEL: func.func @ring_loop
// RING: } consumer {
// RING: scf.for [[J:%.+]] = [[LB:%[a-z0-9_]+]] to {{.*}} iter_args([[ACC:%.+]] = {{%.+}}, [[VFULL:%.+]] = {{%.+}}, [[VPASS:%.+]] = {{%.+}}, [[P:%.+]] = {{%.+}}, [[VBUF:%.+]] = {{%.+}}, [[VEMPTY:%.+]] = {{%.+}})
// RING: [[NOTFIRST:%.+]] = arith.cmpi ne, [[J]], [[LB]]
// RING: tgpu.mbarrier_wait
// RING-NEXT: [[S:%.+]] = tgpu.warpgroup_mma {{.*}} {async, transpose_rhs}
// RING-NEXT: scf.if [[NOTFIRST]] {
// RING-NEXT: tgpu.mbarrier_wait [[BARS:%.+]]{{\[}}[[VFULL]]{{\]}}, [[VPASS]]
// RING-NEXT: }
// RING-NEXT: [[O:%.+]] = tgpu.warpgroup_mma [[P]], [[VBUF]], [[ACC]] if [[NOTFIRST]] {async}
// RING-NEXT: tgpu.warpgroup_wait [[S]] {pending = 1 : i64}
// RING-NOT: tgpu.mbarrier_arrive
// RING: [[OUT:%.+]] = tgpu.warpgroup_wait [[O]] :
// RING-NEXT: tgpu.mbarrier_arrive [[BARS]]
// RING-NEXT: scf.if [[NOTFIRST]] {
// RING-NEXT: tgpu.mbarrier_arrive [[BARS]]{{\[}}[[VEMPTY]]{{\]}}
// RING: scf.yield [[OUT]],
// RING: [[RAN:%.+]] = arith.cmpi slt
// RING-NEXT: scf.if [[RAN]] {
// RING-NEXT: tgpu.mbarrier_wait
// RING: tgpu.warpgroup_mma {{%.+}}, {{%.+}}, {{%.+}} if [[RAN]] :
// RING-NEXT: scf.if [[RAN]] {
// RING-NEXT: tgpu.mbarrier_arrive
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
func.func @ring_loop(%q: !t {tile.tensor = "q"}, %k: !t {tile.tensor = "k"}, %v: !t {tile.tensor = "v"}, %out: !t {tile.tensor = "out"})
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 24576 : i64} {
  %vb = tgpu.shared_alloc offset 0 : !buf
  %kb = tgpu.shared_alloc offset 8192 : !buf
  %qb = tgpu.shared_alloc offset 16384 : !buf
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m = tile.program_id 0
  %h = tile.program_id 1
  %b = tile.program_id 2
  %qv = tile.view %q[%b, %h] keep [1, 3] : !t -> !d
  %kv = tile.view %k[%b, %h] keep [1, 3] : !t -> !d
  %vv = tile.view %v[%b, %h] keep [1, 3] : !t -> !d
  %ov = tile.view %out[%b, %h] keep [1, 3] : !t -> !d
  %row = arith.muli %m, %c64 : index
  tgpu.barrier
  tgpu.copy_async %qv[%row, %c0], %qb : !d, !buf
  tgpu.async_wait
  tgpu.fence_async_shared
  tgpu.barrier
  %zero = arith.constant 0.0 : f32
  %o0 = tile.splat %zero : f32 -> !acc
  %n = tile.dim %kv, 0 : !d
  %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %o0) -> (!acc) {
    tgpu.barrier
    tgpu.copy_async %kv[%j, %c0], %kb : !d, !buf
    tgpu.copy_async %vv[%j, %c0], %vb : !d, !buf
    tgpu.async_wait {pending = 1 : i64}
    tgpu.fence_async_shared
    tgpu.barrier
    %s = tgpu.warpgroup_mma %qb, %kb, %o0 {transpose_rhs} : !buf, !buf, !acc -> !acc
    %pt = arith.truncf %s : !acc to !p
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    %o = tgpu.warpgroup_mma %pt, %vb, %acc : !p, !buf, !acc -> !acc
    scf.yield %o : !acc
  } {tile.kv_loop = "full"}
  %rt = arith.truncf %r : !acc to !p
  tile.store %rt, %ov[%row, %c0] : !p, !d
  return
}
