// RUN: kiln-opt %s -split-input-file -tgpu-overlap-products | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tgpu-overlap-products=async-accumulate=false | FileCheck %s --check-prefix=SYNC-ACC

// tgpu-overlap-products: dP needs only the step's tiles, so it is issued
// right after S (with the ring wait for its buffer), both asynchronously;
// S is read through a wait that leaves dP in flight, dP through a wait
// before its first use, and the release of dP's buffer follows that wait.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @step
// CHECK: scf.for
// CHECK: tgpu.mbarrier_wait [[BARS:%.+]][[[KFULL:%.+]]]
// CHECK-NEXT: [[S:%.+]] = tgpu.warpgroup_mma [[Q:%.+]], [[K:%.+]], {{%.+}} {async, transpose_rhs}
// CHECK-NEXT: tgpu.mbarrier_wait [[BARS]][[[VFULL:%.+]]]
// CHECK-NEXT: [[DP:%.+]] = tgpu.warpgroup_mma [[DO:%.+]], [[V:%.+]], {{%.+}} {async, transpose_rhs}
// CHECK-NEXT: [[SW:%.+]] = tgpu.warpgroup_wait [[S]] {pending = 1 : i64}
// CHECK-NEXT: [[E:%.+]] = math.exp2 [[SW]]
// CHECK-NEXT: [[DPW:%.+]] = tgpu.warpgroup_wait [[DP]] :
// CHECK-NEXT: tgpu.mbarrier_arrive [[BARS]][[[VEMPTY:%.+]]]
// CHECK-NEXT: [[DS:%.+]] = arith.mulf [[E]], [[DPW]]
// The product after dP reads what the step computed: left synchronous.
// CHECK-NEXT: arith.truncf [[DS]]
// CHECK-NEXT: [[DQ:%.+]] = tgpu.warpgroup_mma {{%.+}}, [[K]], {{%.+}} :
// CHECK-NEXT: tgpu.mbarrier_arrive
// CHECK-NEXT: scf.yield [[DQ]]
func.func @step(%bars: memref<4xi64, 3>, %q: !buf, %k: !buf, %do: !buf, %v: !buf, %n: index)
    -> !acc attributes {tgpu.arch = "sm_90a"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%dq = %z) -> (!acc) {
    tgpu.mbarrier_wait %bars[%c0], %c0 : memref<4xi64, 3>
    %s = tgpu.warpgroup_mma %q, %k, %z {transpose_rhs} : !buf, !buf, !acc -> !acc
    %e = math.exp2 %s : !acc
    tgpu.mbarrier_wait %bars[%c1], %c0 : memref<4xi64, 3>
    %dp = tgpu.warpgroup_mma %do, %v, %z {transpose_rhs} : !buf, !buf, !acc -> !acc
    tgpu.mbarrier_arrive %bars[%c3] : memref<4xi64, 3>
    %ds = arith.mulf %e, %dp : !acc
    %dsb = arith.truncf %ds : !acc to !p
    %dq2 = tgpu.warpgroup_mma %dsb, %k, %dq : !p, !buf, !acc -> !acc
    tgpu.mbarrier_arrive %bars[%c2] : memref<4xi64, 3>
    scf.yield %dq2 : !acc
  }
  return %r : !acc
}

// -----

// Left alone: the second product reads what the first step computed (the
// forward's P V), or a buffer the threads write between the two.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @dependent
// CHECK-NOT: {async
// CHECK-NOT: tgpu.warpgroup_wait
// CHECK: return
func.func @dependent(%q: !buf, %k: !buf, %v: !buf, %o: !acc) -> (!acc, !acc) attributes {tgpu.arch = "sm_90a"} {
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %s = tgpu.warpgroup_mma %q, %k, %z {transpose_rhs} : !buf, !buf, !acc -> !acc
  %pb = arith.truncf %s : !acc to !p
  %o2 = tgpu.warpgroup_mma %pb, %v, %o : !p, !buf, !acc -> !acc
  tgpu.barrier
  tgpu.store_shared %pb, %q : !p, !buf
  tgpu.fence_async_shared
  tgpu.barrier
  %t = tgpu.warpgroup_mma %q, %k, %z {transpose_lhs} : !buf, !buf, !acc -> !acc
  return %o2, %t : !acc, !acc
}

// -----

// Left alone: independent products, but the second reads a buffer the
// threads write (its publishing barriers assume synchronous readers).
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @thread_written
// CHECK-NOT: {async
// CHECK: return
func.func @thread_written(%q: !buf, %k: !buf, %ds: !buf, %pb: !p) -> (!acc, !acc) attributes {tgpu.arch = "sm_90a"} {
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %s = tgpu.warpgroup_mma %q, %k, %z {transpose_rhs} : !buf, !buf, !acc -> !acc
  %t = tgpu.warpgroup_mma %ds, %k, %z {transpose_lhs} : !buf, !buf, !acc -> !acc
  tgpu.barrier
  tgpu.store_shared %pb, %ds : !p, !buf
  return %s, %t : !acc, !acc
}
// The same with the buffer read through a select of allocations, one of
// which the threads write under another name.
// CHECK-LABEL: func.func @thread_written_alias
// CHECK-NOT: {async
// CHECK: return
func.func @thread_written_alias(%q: !buf, %k: !buf, %pb: !p, %c: i1) -> (!acc, !acc) attributes {tgpu.arch = "sm_90a"} {
  %a = tgpu.shared_alloc offset 0 : !buf
  %b = tgpu.shared_alloc offset 8192 : !buf
  %ds = arith.select %c, %a, %b : !buf
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %s = tgpu.warpgroup_mma %q, %k, %z {transpose_rhs} : !buf, !buf, !acc -> !acc
  %t = tgpu.warpgroup_mma %ds, %k, %z {transpose_lhs} : !buf, !buf, !acc -> !acc
  tgpu.barrier
  tgpu.store_shared %pb, %b : !p, !buf
  return %s, %t : !acc, !acc
}

// -----

// A lone product with independent work before its first use (the forward's
// Q K^T, then dropout's bits): issued async and waited for at that use; the
// release of its K slot moves after the wait. P V reads the softmax: it stays
// synchronous.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
!bits = tensor<64x64xi32, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @wait_at_first_use
// CHECK: [[S:%.+]] = tgpu.warpgroup_mma {{.*}} {async, transpose_rhs}
// CHECK-NEXT: [[U:%.+]] = tile.philox
// CHECK-NEXT: arith.cmpi ult, [[U]]
// CHECK-NEXT: [[SW:%.+]] = tgpu.warpgroup_wait [[S]] :
// CHECK-NEXT: tgpu.mbarrier_arrive
// CHECK-NEXT: math.exp2 [[SW]]
// CHECK: tgpu.warpgroup_mma {{%.+}}, {{%.+}}, {{%.+}} :
func.func @wait_at_first_use(%bars: memref<4xi64, 3>, %q: !buf, %k: !buf, %v: !buf, %seed: i64, %i: index,
                             %thr: !bits, %zf: !acc) -> !acc attributes {tgpu.arch = "sm_90a"} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %s = tgpu.warpgroup_mma %q, %k, %z {transpose_rhs} : !buf, !buf, !acc -> !acc
  %u = tile.philox %seed, %seed, %i, %i, %i, %i : !bits
  %keep = arith.cmpi ult, %u, %thr : !bits
  tgpu.mbarrier_arrive %bars[%c0] : memref<4xi64, 3>
  %e = math.exp2 %s : !acc
  %d = arith.select %keep, %e, %zf : tensor<64x64xi1, #tgpu.mma<warps = 4>>, !acc
  %pb = arith.truncf %d : !acc to !p
  %o = tgpu.warpgroup_mma %pb, %v, %z : !p, !buf, !acc -> !acc
  return %o : !acc
}

// -----

// Left synchronous: nothing but the release between the product and its use,
// or a shared-memory store in between.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @nothing_between
// CHECK-NOT: async
// CHECK-NOT: tgpu.warpgroup_wait
// CHECK: return
func.func @nothing_between(%bars: memref<4xi64, 3>, %q: !buf, %k: !buf, %out: !buf, %t: !p)
    -> !acc attributes {tgpu.arch = "sm_90a"} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %s = tgpu.warpgroup_mma %q, %k, %z {transpose_rhs} : !buf, !buf, !acc -> !acc
  tgpu.mbarrier_arrive %bars[%c0] : memref<4xi64, 3>
  %e = math.exp2 %s : !acc
  %s2 = tgpu.warpgroup_mma %q, %k, %z {transpose_rhs} : !buf, !buf, !acc -> !acc
  tgpu.store_shared %t, %out : !p, !buf
  %e2 = math.exp2 %s2 : !acc
  %r = arith.addf %e, %e2 : !acc
  return %r : !acc
}

// -----

// async-accumulate: dV and dK accumulate across the loop (iteration
// arguments yielded in their place), and a dS store, barriers, the dQ
// product and its add follow them. dV is issued async and waited for
// before the yield, after which the releases in between move; dK's
// register lhs (dS) is stored after it, a read of its A registers in
// flight, so it stays synchronous; dQ reads the thread-written dS buffer.
// Without the option dV is waited for where it is issued.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @accumulate
// CHECK: scf.for {{.*}} iter_args([[DKA:%.+]] = {{%.+}}, [[DVA:%.+]] = {{%.+}})
// CHECK: [[DV:%.+]] = tgpu.warpgroup_mma {{%.+}}, {{%.+}}, [[DVA]] {async}
// CHECK-NEXT: [[DK:%.+]] = tgpu.warpgroup_mma {{%.+}}, {{%.+}}, [[DKA]] :
// CHECK-NEXT: tgpu.barrier
// CHECK-NEXT: tgpu.store_shared
// CHECK: [[DQ:%.+]] = tgpu.warpgroup_mma {{%.+}} {transpose_lhs} :
// CHECK-NEXT: tile.atomic_add [[DQ]]
// CHECK-NEXT: [[DVW:%.+]] = tgpu.warpgroup_wait [[DV]] :
// CHECK-NEXT: tgpu.mbarrier_arrive
// CHECK-NEXT: tgpu.mbarrier_arrive
// CHECK-NEXT: scf.yield [[DK]], [[DVW]]
// SYNC-ACC-LABEL: func.func @accumulate
// SYNC-ACC: tgpu.warpgroup_mma {{%.+}}, {{%.+}}, {{%.+}} :
// SYNC-ACC-NEXT: tgpu.mbarrier_arrive
// SYNC-ACC-NEXT: tgpu.warpgroup_mma {{%.+}}, {{%.+}}, {{%.+}} :
// SYNC-ACC-NOT: tgpu.warpgroup_wait
// SYNC-ACC: scf.yield
func.func @accumulate(%bars: memref<4xi64, 3>, %pt: !p, %dst: !p,
                      %dqd: !tile.desc<?x64xf32>, %n: index)
    -> (!acc, !acc) attributes {tgpu.arch = "sm_90a"} {
  %q = tgpu.shared_alloc offset 0 : !buf
  %k = tgpu.shared_alloc offset 8192 : !buf
  %do = tgpu.shared_alloc offset 16384 : !buf
  %ds = tgpu.shared_alloc offset 24576 : !buf
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%dk = %z, %dv = %z) -> (!acc, !acc) {
    %dv2 = tgpu.warpgroup_mma %pt, %do, %dv : !p, !buf, !acc -> !acc
    tgpu.mbarrier_arrive %bars[%c1] : memref<4xi64, 3>
    %dk2 = tgpu.warpgroup_mma %dst, %q, %dk : !p, !buf, !acc -> !acc
    tgpu.mbarrier_arrive %bars[%c2] : memref<4xi64, 3>
    tgpu.barrier
    tgpu.store_shared %dst, %ds : !p, !buf
    tgpu.fence_async_shared
    tgpu.barrier
    %dq = tgpu.warpgroup_mma %ds, %k, %z {transpose_lhs} : !buf, !buf, !acc -> !acc
    tile.atomic_add %dq, %dqd[%j, %c0] : !acc, !tile.desc<?x64xf32>
    scf.yield %dk2, %dv2 : !acc, !acc
  }
  return %r#0, %r#1 : !acc, !acc
}

// -----

// The atomic schedule's order since dQ's product comes before dK's: dK
// reads dS from the buffer stored for dQ (thread-written, but no store into
// it follows before the yield, and the next step's store comes after every
// warpgroup's wait), so it is issued async and waited for before the yield,
// while dQ's share is added.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @accumulate_shared_lhs
// CHECK: [[DV:%.+]] = tgpu.warpgroup_mma {{%.+}}, {{%.+}}, {{%.+}} {async}
// CHECK: tgpu.store_shared
// CHECK: [[DQ:%.+]] = tgpu.warpgroup_mma {{%.+}} {transpose_lhs} :
// CHECK-NEXT: [[DK:%.+]] = tgpu.warpgroup_mma {{%.+}}, {{%.+}}, {{%.+}} {async}
// CHECK-NEXT: tile.atomic_add [[DQ]]
// CHECK-NEXT: [[DVW:%.+]] = tgpu.warpgroup_wait [[DV]] :
// CHECK-NEXT: [[DKW:%.+]] = tgpu.warpgroup_wait [[DK]] :
// CHECK-NEXT: scf.yield [[DKW]], [[DVW]]
// SYNC-ACC-LABEL: func.func @accumulate_shared_lhs
// SYNC-ACC-NOT: {async
// SYNC-ACC: scf.yield
func.func @accumulate_shared_lhs(%pt: !p, %dst: !p, %dqd: !tile.desc<?x64xf32>,
                                 %n: index) -> (!acc, !acc) attributes {tgpu.arch = "sm_90a"} {
  %q = tgpu.shared_alloc offset 0 : !buf
  %k = tgpu.shared_alloc offset 8192 : !buf
  %do = tgpu.shared_alloc offset 16384 : !buf
  %ds = tgpu.shared_alloc offset 24576 : !buf
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%dk = %z, %dv = %z) -> (!acc, !acc) {
    %dv2 = tgpu.warpgroup_mma %pt, %do, %dv : !p, !buf, !acc -> !acc
    tgpu.barrier
    tgpu.store_shared %dst, %ds : !p, !buf
    tgpu.fence_async_shared
    tgpu.barrier
    %dq = tgpu.warpgroup_mma %ds, %k, %z {transpose_lhs} : !buf, !buf, !acc -> !acc
    %dk2 = tgpu.warpgroup_mma %ds, %q, %dk : !buf, !buf, !acc -> !acc
    tile.atomic_add %dq, %dqd[%j, %c0] : !acc, !tile.desc<?x64xf32>
    scf.yield %dk2, %dv2 : !acc, !acc
  }
  return %r#0, %r#1 : !acc, !acc
}

// -----

// Left synchronous: a ring wait lies between the accumulation and the
// yield (its release, moved after the wait, could hold back the slot
// awaited), or nothing but releases does.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @accumulate_kept
// CHECK-NOT: {async
// CHECK-NOT: tgpu.warpgroup_wait
// CHECK: return
func.func @accumulate_kept(%bars: memref<4xi64, 3>, %q: !buf, %k: !buf, %do: !buf,
                           %pt: !p, %sd: !tile.desc<?x64xf32>, %n: index) -> (!acc, !acc) attributes {tgpu.arch = "sm_90a"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%dv = %z) -> (!acc) {
    %dv2 = tgpu.warpgroup_mma %pt, %do, %dv : !p, !buf, !acc -> !acc
    tgpu.mbarrier_arrive %bars[%c1] : memref<4xi64, 3>
    tgpu.mbarrier_wait %bars[%c0], %c0 : memref<4xi64, 3>
    %s = tgpu.warpgroup_mma %q, %k, %z {transpose_rhs} : !buf, !buf, !acc -> !acc
    tile.atomic_add %s, %sd[%j, %c0] : !acc, !tile.desc<?x64xf32>
    scf.yield %dv2 : !acc
  }
  %t = scf.for %j = %c0 to %n step %c1 iter_args(%dv = %z) -> (!acc) {
    %dv2 = tgpu.warpgroup_mma %pt, %do, %dv : !p, !buf, !acc -> !acc
    tgpu.mbarrier_arrive %bars[%c1] : memref<4xi64, 3>
    scf.yield %dv2 : !acc
  }
  // A store into a buffer that may be the one the product reads (a select
  // of its double buffers).
  %a = tgpu.shared_alloc offset 0 : !buf
  %b = tgpu.shared_alloc offset 8192 : !buf
  %u = scf.for %j = %c0 to %n step %c1 iter_args(%dv = %z) -> (!acc) {
    %odd = arith.cmpi eq, %j, %c1 : index
    %cur = arith.select %odd, %a, %b : !buf
    %dv2 = tgpu.warpgroup_mma %pt, %cur, %dv : !p, !buf, !acc -> !acc
    tgpu.store_shared %pt, %a : !p, !buf
    scf.yield %dv2 : !acc
  }
  return %r, %t : !acc, !acc
}

// -----

// A product whose lhs the threads write stays synchronous where a write into
// that buffer may follow its wait without a barrier in between: a store
// before the yield; a store at the top of the next step (the barrier after
// the product would no longer mean every warpgroup's product completed); a
// store after the loop.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @lhs_stored_before_yield
// CHECK-NOT: {async
// CHECK: return
func.func @lhs_stored_before_yield(%pt: !p, %n: index) -> !acc attributes {tgpu.arch = "sm_90a"} {
  %a = tgpu.shared_alloc offset 0 : !buf
  %b = tgpu.shared_alloc offset 8192 : !buf
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %w = scf.for %j = %c0 to %n step %c1 iter_args(%dk = %z) -> (!acc) {
    tgpu.barrier
    tgpu.store_shared %pt, %a : !p, !buf
    tgpu.fence_async_shared
    tgpu.barrier
    %dk2 = tgpu.warpgroup_mma %a, %b, %dk : !buf, !buf, !acc -> !acc
    tgpu.store_shared %pt, %a : !p, !buf
    scf.yield %dk2 : !acc
  }
  return %w : !acc
}
// CHECK-LABEL: func.func @lhs_stored_next_step
// CHECK-NOT: {async
// CHECK: return
func.func @lhs_stored_next_step(%pt: !p, %n: index) -> !acc attributes {tgpu.arch = "sm_90a"} {
  %a = tgpu.shared_alloc offset 0 : !buf
  %b = tgpu.shared_alloc offset 8192 : !buf
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %x = scf.for %j = %c0 to %n step %c1 iter_args(%dk = %z) -> (!acc) {
    tgpu.store_shared %pt, %a : !p, !buf
    tgpu.fence_async_shared
    tgpu.barrier
    %dk2 = tgpu.warpgroup_mma %a, %b, %dk : !buf, !buf, !acc -> !acc
    tgpu.barrier
    scf.yield %dk2 : !acc
  }
  return %x : !acc
}
// CHECK-LABEL: func.func @lhs_stored_after_loop
// CHECK-NOT: {async
// CHECK: return
func.func @lhs_stored_after_loop(%pt: !p, %n: index) -> !acc attributes {tgpu.arch = "sm_90a"} {
  %a = tgpu.shared_alloc offset 0 : !buf
  %b = tgpu.shared_alloc offset 8192 : !buf
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %y = scf.for %j = %c0 to %n step %c1 iter_args(%dk = %z) -> (!acc) {
    tgpu.barrier
    tgpu.store_shared %pt, %a : !p, !buf
    tgpu.fence_async_shared
    tgpu.barrier
    %dk2 = tgpu.warpgroup_mma %a, %b, %dk : !buf, !buf, !acc -> !acc
    tgpu.barrier
    scf.yield %dk2 : !acc
  }
  tgpu.store_shared %pt, %a : !p, !buf
  return %y : !acc
}
