// RUN: kiln-opt %s -split-input-file -tgpu-warp-specialize -cse | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tgpu-warp-specialize="stages=1" -cse | FileCheck %s --check-prefix=ONE

// tgpu-warp-specialize: the copies move to a producer warpgroup that issues
// them through TMA (one tensor map per argument and box), K and V get a
// two-stage ring with full / empty mbarriers, Q one barrier; the consumers
// keep the kernel less its cp.async copies, waits and barriers, and wait
// for each buffer before its first read in a step and release it after
// the last. The loop bound the producer needs (tile.dim) moves before the
// split.

// CHECK-LABEL: func.func @kv_loop
// CHECK-SAME: [[QMAP:%arg[0-9]+]]: !tgpu.tensor_map {tgpu.tensor_map = {box = array<i64: 64, 64>, dims = array<i64: 3, 1, 2, 0>, swizzle = 128 : i64, tensor = 0 : i64}}
// CHECK-SAME: [[KMAP:%arg[0-9]+]]: !tgpu.tensor_map {tgpu.tensor_map = {{{.*}}tensor = 1 : i64}}
// CHECK-SAME: [[VMAP:%arg[0-9]+]]: !tgpu.tensor_map {tgpu.tensor_map = {{{.*}}tensor = 2 : i64}}
// CHECK-SAME: tgpu.producer_warps = 4 : i64, tgpu.shared_bytes = 41088 : i64
// CHECK-DAG: [[V0:%.+]] = tgpu.shared_alloc offset 0 :
// CHECK-DAG: [[V1:%.+]] = tgpu.shared_alloc offset 8192 :
// CHECK-DAG: [[K0:%.+]] = tgpu.shared_alloc offset 16384 :
// CHECK-DAG: [[K1:%.+]] = tgpu.shared_alloc offset 24576 :
// CHECK-DAG: [[Q:%.+]] = tgpu.shared_alloc offset 32768 :
// CHECK: [[ROW:%.+]] = arith.muli
// CHECK: [[N:%.+]] = tile.dim
// CHECK: [[BARS:%.+]] = tgpu.shared_alloc offset 40960 : memref<9xi64, 3>
// CHECK: tgpu.mbarrier_init [[BARS]][{{%.+}}] count 1
// CHECK: tgpu.mbarrier_init [[BARS]][{{%.+}}] count 128
// CHECK: tgpu.barrier
// One consumer warpgroup raises its budget to 256 (never below the 255 it
// may start with).
// CHECK: tgpu.warp_specialize {consumer_registers = 256 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
// CHECK: tgpu.tma_load [[QMAP]][{{%.+}}, [[ROW]], {{%.+}}, {{%.+}}], [[Q]], [[BARS]][[[QBAR:%.+]]]
// CHECK: scf.for [[J:%.+]] = {{%.+}} to [[N]] step
// CHECK: [[STAGE:%.+]] = arith.remui
// CHECK: [[PASS:%.+]] = arith.andi
// CHECK: [[FREE:%.+]] = arith.xori [[PASS]]
// CHECK: tgpu.mbarrier_wait [[BARS]][{{%.+}}], [[FREE]]
// CHECK: [[KN:%.+]] = arith.select {{%.+}}, [[K1]], [[K0]]
// CHECK: tgpu.tma_load [[KMAP]][{{%.+}}, [[J]], {{%.+}}, {{%.+}}], [[KN]], [[BARS]]
// CHECK: tgpu.mbarrier_wait [[BARS]][{{%.+}}], [[FREE]]
// CHECK: tgpu.tma_load [[VMAP]]
// CHECK: } consumer {
// CHECK-NEXT: tgpu.mbarrier_wait [[BARS]][[[QBAR]]]
// CHECK: scf.for
// CHECK-DAG: [[VC:%.+]] = arith.select {{%.+}}, [[V1]], [[V0]]
// CHECK-DAG: [[KC:%.+]] = arith.select {{%.+}}, [[K1]], [[K0]]
// CHECK: tgpu.mbarrier_wait [[BARS]][[[KFULL:%.+]]], [[CPASS:%.+]] :
// CHECK-NEXT: tgpu.warpgroup_mma [[Q]], [[KC]]
// CHECK-NEXT: tgpu.mbarrier_arrive
// CHECK: tgpu.mbarrier_wait [[BARS]][{{%.+}}], [[CPASS]] :
// CHECK-NEXT: tgpu.warpgroup_mma {{%.+}}, [[VC]]
// CHECK-NEXT: tgpu.mbarrier_arrive
// CHECK-NEXT: scf.yield
// CHECK: tile.store
// CHECK-NOT: tgpu.copy_async
// CHECK-NOT: tgpu.async_wait
// CHECK: return
// One stage: no stage buffers to pick.
// ONE-LABEL: func.func @kv_loop
// ONE-SAME: tgpu.shared_bytes = 24704 : i64
// ONE: memref<5xi64, 3>
// ONE-NOT: arith.select
// ONE: tgpu.warp_specialize
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
func.func @kv_loop(%q: !t {tile.tensor = "q"}, %k: !t {tile.tensor = "k"}, %v: !t {tile.tensor = "v"}, %out: !t {tile.tensor = "out"})
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

// -----

// Left alone: a copy of rows the loop carries (an iteration argument), which
// the producer's copy loop would not have. (Rows computed from the induction
// variable, as a block-sparse step's, are computed again by the producer.)
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
// CHECK-LABEL: func.func @next_rows
// CHECK-NOT: tgpu.warp_specialize
// CHECK: tgpu.copy_async
func.func @next_rows(%k: !t {tile.tensor = "k"}, %q: !buf, %n: index) -> !acc
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 8192 : i64} {
  %kb = tgpu.shared_alloc offset 0 : !buf
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %kv = tile.view %k[%c0, %c0] keep [1, 3] : !t -> !d
  %zero = arith.constant 0.0 : f32
  %o0 = tile.splat %zero : f32 -> !acc
  %r:2 = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %o0, %row = %c0) -> (!acc, index) {
    %next = arith.addi %row, %c64 : index
    tgpu.barrier
    tgpu.copy_async %kv[%next, %c0], %kb : !d, !buf
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    %s = tgpu.warpgroup_mma %q, %kb, %acc {transpose_rhs} : !buf, !buf, !acc -> !acc
    scf.yield %s, %next : !acc, index
  }
  return %r#0 : !acc
}

// -----

// Left alone: a buffer written by the threads that copies also fill.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
// CHECK-LABEL: func.func @thread_writes_copied
// CHECK-NOT: tgpu.warp_specialize
// CHECK: tgpu.copy_async
func.func @thread_writes_copied(%k: !t {tile.tensor = "k"}, %out: !t {tile.tensor = "out"}, %p: tensor<64x64xbf16, #tgpu.mma<warps = 4>>)
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 8192 : i64} {
  %kb = tgpu.shared_alloc offset 0 : !buf
  %c0 = arith.constant 0 : index
  %kv = tile.view %k[%c0, %c0] keep [1, 3] : !t -> !d
  %ov = tile.view %out[%c0, %c0] keep [1, 3] : !t -> !d
  %zero = arith.constant 0.0 : f32
  %o0 = tile.splat %zero : f32 -> !acc
  tgpu.copy_async %kv[%c0, %c0], %kb : !d, !buf
  tgpu.async_wait
  tgpu.fence_async_shared
  tgpu.barrier
  tgpu.store_shared %p, %kb : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, !buf
  tgpu.fence_async_shared
  tgpu.barrier
  %s = tgpu.warpgroup_mma %p, %kb, %o0 {transpose_rhs} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, !buf, !acc -> !acc
  %st = arith.truncf %s : !acc to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
  tile.store %st, %ov[%c0, %c0] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, !d
  return
}

// -----

// Taken: a buffer of the consumers' own (the atomic backward's dS): each
// write waits for every consumer (the previous step's product has read the
// buffer), then is fenced to the async proxy and published by a barrier
// before the product reads it. The copies' own waits and barriers go.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
// CHECK-LABEL: func.func @thread_writes_own
// CHECK: tgpu.warp_specialize
// CHECK: } consumer {
// CHECK: scf.for
// CHECK: tgpu.mbarrier_wait
// CHECK-NEXT: [[S:%.+]] = tgpu.warpgroup_mma
// CHECK-NEXT: tgpu.mbarrier_arrive
// CHECK-NEXT: [[ST:%.+]] = arith.truncf [[S]]
// CHECK-NEXT: tgpu.barrier
// CHECK-NEXT: tgpu.store_shared [[ST]], [[SB:%.+]] :
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK-NEXT: tgpu.barrier
// CHECK-NEXT: tgpu.warpgroup_mma [[SB]], {{%.+}}, {{%.+}} {transpose_lhs}
// CHECK-NOT: tgpu.barrier
// CHECK: scf.yield
func.func @thread_writes_own(%q: !t {tile.tensor = "q"}, %k: !t {tile.tensor = "k"}, %out: !t {tile.tensor = "out"})
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 24576 : i64} {
  %sb = tgpu.shared_alloc offset 0 : !buf
  %kb = tgpu.shared_alloc offset 8192 : !buf
  %qb = tgpu.shared_alloc offset 16384 : !buf
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %qv = tile.view %q[%c0, %c0] keep [1, 3] : !t -> !d
  %kv = tile.view %k[%c0, %c0] keep [1, 3] : !t -> !d
  %ov = tile.view %out[%c0, %c0] keep [1, 3] : !t -> !d
  tgpu.copy_async %qv[%c0, %c0], %qb : !d, !buf
  tgpu.async_wait
  tgpu.fence_async_shared
  tgpu.barrier
  %zero = arith.constant 0.0 : f32
  %o0 = tile.splat %zero : f32 -> !acc
  %n = tile.dim %kv, 0 : !d
  %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %o0) -> (!acc) {
    tgpu.barrier
    tgpu.copy_async %kv[%j, %c0], %kb : !d, !buf
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    %s = tgpu.warpgroup_mma %kb, %qb, %o0 {transpose_rhs} : !buf, !buf, !acc -> !acc
    %st = arith.truncf %s : !acc to !p
    tgpu.barrier
    tgpu.store_shared %st, %sb : !p, !buf
    tgpu.fence_async_shared
    tgpu.barrier
    %o = tgpu.warpgroup_mma %sb, %qb, %acc {transpose_lhs} : !buf, !buf, !acc -> !acc
    scf.yield %o : !acc
  } {tile.kv_loop = "full"}
  %rt = arith.truncf %r : !acc to !p
  tile.store %rt, %ov[%c0, %c0] : !p, !d
  return
}

// -----

// Left alone: a buffer its loop loads but never reads (its ring slot would
// never be released) and one read before its copy in the step.
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
// CHECK-LABEL: func.func @never_read
// CHECK-NOT: tgpu.warp_specialize
// CHECK: tgpu.copy_async
func.func @never_read(%k: !t {tile.tensor = "k"}, %q: !buf, %n: index)
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 8192 : i64} {
  %kb = tgpu.shared_alloc offset 0 : !buf
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %kv = tile.view %k[%c0, %c0] keep [1, 3] : !t -> !d
  scf.for %j = %c0 to %n step %c64 {
    tgpu.barrier
    tgpu.copy_async %kv[%j, %c0], %kb : !d, !buf
    tgpu.async_wait
  }
  return
}

// -----

!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
// CHECK-LABEL: func.func @read_before_copy
// CHECK-NOT: tgpu.warp_specialize
// CHECK: tgpu.copy_async
func.func @read_before_copy(%k: !t {tile.tensor = "k"}, %q: !buf, %n: index) -> !acc
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 8192 : i64} {
  %kb = tgpu.shared_alloc offset 0 : !buf
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %kv = tile.view %k[%c0, %c0] keep [1, 3] : !t -> !d
  %zero = arith.constant 0.0 : f32
  %o0 = tile.splat %zero : f32 -> !acc
  %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %o0) -> (!acc) {
    %s = tgpu.warpgroup_mma %q, %kb, %acc {transpose_rhs} : !buf, !buf, !acc -> !acc
    tgpu.barrier
    tgpu.copy_async %kv[%j, %c0], %kb : !d, !buf
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    scf.yield %s : !acc
  }
  return %r : !acc
}
