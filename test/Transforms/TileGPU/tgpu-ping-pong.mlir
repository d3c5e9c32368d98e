// RUN: kiln-opt %s -tgpu-warp-specialize -tgpu-ping-pong | FileCheck %s --enable-var-scope

// tgpu-ping-pong: with two consumer warpgroups, each product of the KV loop
// becomes a turn: wait for it, issue async, pass it on, wait for the
// product; the consumer region starts the round and ends it after the loop.
// CHECK-LABEL: func.func @two_warpgroups
// CHECK: } consumer {
// CHECK-NEXT: tgpu.warpgroup_turn "start"
// CHECK: scf.for
// CHECK: tgpu.warpgroup_turn "wait"
// CHECK-NEXT: [[S:%.+]] = tgpu.warpgroup_mma {{.*}} {async, transpose_rhs}
// CHECK-NEXT: tgpu.warpgroup_turn "pass"
// CHECK-NEXT: tgpu.warpgroup_wait [[S]] :
// CHECK: tgpu.warpgroup_turn "wait"
// CHECK-NEXT: [[O:%.+]] = tgpu.warpgroup_mma {{.*}} {async}
// CHECK-NEXT: tgpu.warpgroup_turn "pass"
// CHECK-NEXT: tgpu.warpgroup_wait [[O]] :
// CHECK: } {tile.kv_loop = "full"}
// CHECK-NEXT: tgpu.warpgroup_turn "end"
!buf = memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<128x64xf32, #tgpu.mma<warps = 8>>
!p = tensor<128x64xbf16, #tgpu.mma<warps = 8>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
func.func @two_warpgroups(%q: !t {tile.tensor = "q"}, %k: !t {tile.tensor = "k"}, %v: !t {tile.tensor = "v"}, %out: !t {tile.tensor = "out"})
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.shared_bytes = 49152 : i64} {
  %vb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %kb = tgpu.shared_alloc offset 8192 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %qb = tgpu.shared_alloc offset 16384 : !buf
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m = tile.program_id 0
  %h = tile.program_id 1
  %b = tile.program_id 2
  %qv = tile.view %q[%b, %h] keep [1, 3] : !t -> !d
  %kv = tile.view %k[%b, %h] keep [1, 3] : !t -> !d
  %vv = tile.view %v[%b, %h] keep [1, 3] : !t -> !d
  %ov = tile.view %out[%b, %h] keep [1, 3] : !t -> !d
  %row = arith.muli %m, %c128 : index
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
    tgpu.copy_async %kv[%j, %c0], %kb : !d, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
    tgpu.copy_async %vv[%j, %c0], %vb : !d, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
    tgpu.async_wait {pending = 1 : i64}
    tgpu.fence_async_shared
    tgpu.barrier
    %s = tgpu.warpgroup_mma %qb, %kb, %o0 {transpose_rhs} : !buf, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, !acc -> !acc
    %pt = arith.truncf %s : !acc to !p
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    %o = tgpu.warpgroup_mma %pt, %vb, %acc : !p, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, !acc -> !acc
    scf.yield %o : !acc
  } {tile.kv_loop = "full"}
  %rt = arith.truncf %r : !acc to !p
  tile.store %rt, %ov[%row, %c0] : !p, !d
  return
}
