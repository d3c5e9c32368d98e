// RUN: kiln-opt %s -split-input-file -tgpu-warp-specialize -cse | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tgpu-warp-specialize="ring-vectors=false" -cse | FileCheck %s --check-prefix=OFF

// tgpu-warp-specialize ring-vectors: a step's per-query vector of a
// workspace whose rows start 16-byte aligned (the backward's base-2 LSE,
// padded to whole query blocks) travels with the ring's tile of the same
// rows. The producer copies it into a slot per stage (tgpu.bulk_load, on the
// tile's full barrier, before the tile's copy arrives there); the consumers
// read it right after their wait for the tile where the registers hold it
// until its first use (else at that use), filling what lies past the view's
// end as the load did. A
// vector of a caller's tensor (strides unknown) and one of a workspace whose
// rows need not start 16-byte aligned stay the consumers' loads.

// CHECK-LABEL: func.func @vectors
// CHECK-SAME: tgpu.producer_warps = 4 : i64, tgpu.shared_bytes = 25216 : i64
// CHECK: [[LV:%.+]] = tile.view %arg2
// CHECK: [[RV:%.+]] = tile.view %arg3
// CHECK: [[OV:%.+]] = tile.view %arg4
// CHECK-DAG: [[SLOT0:%.+]] = tgpu.shared_alloc offset 24576 : memref<64xf32, 3>
// CHECK-DAG: [[SLOT1:%.+]] = tgpu.shared_alloc offset 24832 : memref<64xf32, 3>
// CHECK: tgpu.warp_specialize
// CHECK: scf.for [[I:%[a-z0-9]+]] =
// CHECK:   tgpu.mbarrier_wait [[BARS:%.+]][{{%.+}}], {{%.+}}
// CHECK:   [[SLOT:%.+]] = arith.select {{%.+}}, [[SLOT1]], [[SLOT0]] : memref<64xf32, 3>
// CHECK:   tgpu.bulk_load [[LV]][[[I]]], [[SLOT]], [[BARS]][[[FULL:%.+]]] : <?xf32>, memref<64xf32, 3>, memref<{{[0-9]+}}xi64, 3>
// CHECK-NOT: tgpu.bulk_load
// CHECK:   tgpu.tma_load {{%.+}}[{{.*}}], {{%.+}}, [[BARS]][[[FULL]]]
// CHECK: } consumer {
// CHECK: scf.for [[J:%[a-z0-9]+]] =
// CHECK:   tile.load [[RV]][[[J]]] fill 0.000000e+00
// CHECK:   tile.load [[OV]][[[J]]] fill 0.000000e+00
// Read right after the wait (the registers hold it until its use), and
// released with the tile, after the step's last read of either.
// CHECK:   tgpu.mbarrier_wait
// CHECK-NEXT: [[ROWS:%.+]] = tile.dim [[LV]], 0
// CHECK-NEXT: [[COUNT:%.+]] = arith.subi [[ROWS]], [[J]] : index
// CHECK-NEXT: [[L:%.+]] = tgpu.load_shared {{%.+}}[[[COUNT]]] fill 0x7F800000 : memref<64xf32, 3> -> tensor<64xf32, #tgpu.cols<warps = 4>>
// CHECK-NEXT: tgpu.warpgroup_mma
// CHECK-NEXT: tgpu.mbarrier_arrive
// CHECK:   tile.broadcast [[L]] dim 0
// OFF-LABEL: func.func @vectors
// OFF-NOT: tgpu.bulk_load
// OFF-NOT: tgpu.load_shared
// OFF: tile.load {{%.+}}[{{%.+}}] fill 0x7F800000
// OFF: return
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
!r = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!rd = !tile.desc<?xf32>
!vec = tensor<64xf32, #tgpu.cols<warps = 4>>
func.func @vectors(%k: !t {tile.tensor = "k"}, %q: !t {tile.tensor = "q"},
    %lse: !r {tile.shape = ["batch", "heads", ["mul", ["ceildiv", "seq_q", 64], 64]], tile.workspace = "lse_log2"},
    %raw: !r {tile.shape = ["batch", "heads", "seq_q"], tile.tensor = "lse"},
    %odd: !r {tile.shape = ["batch", "heads", "seq_q"], tile.workspace = "odd"},
    %out: !t {tile.tensor = "out"})
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 16384 : i64} {
  %kb = tgpu.shared_alloc offset 0 : !buf
  %qb = tgpu.shared_alloc offset 8192 : !buf
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m = tile.program_id 0
  %h = tile.program_id 1
  %b = tile.program_id 2
  %kv = tile.view %k[%b, %h] keep [1, 3] : !t -> !d
  %qv = tile.view %q[%b, %h] keep [1, 3] : !t -> !d
  %lv = tile.view %lse[%b, %h] keep [2] : !r -> !rd
  %rv = tile.view %raw[%b, %h] keep [2] : !r -> !rd
  %ov = tile.view %odd[%b, %h] keep [2] : !r -> !rd
  %outv = tile.view %out[%b, %h] keep [1, 3] : !t -> !d
  %row = arith.muli %m, %c64 : index
  tgpu.barrier
  tgpu.copy_async %kv[%row, %c0], %kb : !d, !buf
  tgpu.async_wait
  tgpu.fence_async_shared
  tgpu.barrier
  %zero = arith.constant 0.0 : f32
  %o0 = tile.splat %zero : f32 -> !acc
  %n = tile.dim %qv, 0 : !d
  %r = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %o0) -> (!acc) {
    %l = tile.load %lv[%i] fill 0x7F800000 : f32 : !rd -> !vec
    %x = tile.load %rv[%i] fill 0.0 : f32 : !rd -> !vec
    %y = tile.load %ov[%i] fill 0.0 : f32 : !rd -> !vec
    tgpu.barrier
    tgpu.copy_async %qv[%i, %c0], %qb : !d, !buf
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    %s = tgpu.warpgroup_mma %kb, %qb, %o0 {transpose_rhs} : !buf, !buf, !acc -> !acc
    %lb = tile.broadcast %l dim 0 : !vec -> !acc
    %xb = tile.broadcast %x dim 0 : !vec -> !acc
    %yb = tile.broadcast %y dim 0 : !vec -> !acc
    %t1 = arith.subf %s, %lb : !acc
    %t2 = arith.subf %t1, %xb : !acc
    %t3 = arith.subf %t2, %yb : !acc
    %sum = arith.addf %acc, %t3 : !acc
    scf.yield %sum : !acc
  } {tile.q_loop = "full"}
  %rt = arith.truncf %r : !acc to !p
  tile.store %rt, %outv[%row, %c0] : !p, !d
  return
}

// -----

// A view the step makes itself (GQA's dK/dV kernel: one loop over the
// group's query heads and their blocks, the head from the induction
// variable): the producer computes the view again from the step's values
// and copies through it; two loops share a slot. A view whose head only the
// consumers know (a value the loop carries) stays the consumers' load.

// CHECK-LABEL: func.func @step_views
// CHECK-SAME: tgpu.shared_bytes = 25216 : i64
// CHECK: [[SLOT0:%.+]] = tgpu.shared_alloc offset 24576 : memref<64xf32, 3>
// CHECK: [[SLOT1:%.+]] = tgpu.shared_alloc offset 24832 : memref<64xf32, 3>
// CHECK-NOT: tgpu.shared_alloc {{.*}} memref<64xf32, 3>
// CHECK: tgpu.warp_specialize
// CHECK: scf.for [[I:%[a-z0-9]+]] =
// CHECK:   [[LV:%.+]] = tile.view %arg2[{{%.+}}, [[HEAD:%.+]]] keep [2]
// CHECK:   [[SLOT:%.+]] = arith.select {{%.+}}, [[SLOT1]], [[SLOT0]] : memref<64xf32, 3>
// CHECK:   tgpu.bulk_load [[LV]][{{%.+}}], [[SLOT]], [[BARS:%.+]][[[FULL:%.+]]] : <?xf32>
// CHECK-NOT: tgpu.bulk_load
// CHECK:   tgpu.tma_load {{%.+}}[{{.*}}[[HEAD]]{{.*}}], {{%.+}}, [[BARS]][[[FULL]]]
// CHECK: scf.for
// CHECK:   tgpu.bulk_load {{%.+}}[{{%.+}}], {{%.+}}, [[BARS]]
// CHECK: } consumer {
// CHECK: scf.for
// CHECK:   tile.load {{%.+}}[{{%.+}}] fill 0.000000e+00
// CHECK:   tgpu.mbarrier_wait
// CHECK-NEXT: tile.dim
// CHECK-NEXT: arith.subi
// CHECK-NEXT: tgpu.load_shared {{%.+}}[{{%.+}}] fill 0x7F800000
// CHECK: scf.for
// CHECK:   tgpu.load_shared {{%.+}}[{{%.+}}] fill 0x7F800000
// OFF-LABEL: func.func @step_views
// OFF-NOT: tgpu.bulk_load
// OFF: return
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
!r = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!rd = !tile.desc<?xf32>
!vec = tensor<64xf32, #tgpu.cols<warps = 4>>
func.func @step_views(%k: !t {tile.tensor = "k"}, %q: !t {tile.tensor = "q"},
    %lse: !r {tile.shape = ["batch", "heads", ["mul", ["ceildiv", "seq_q", 64], 64]], tile.workspace = "lse_log2"},
    %delta: !r {tile.shape = ["batch", "heads", ["mul", ["ceildiv", "seq_q", 64], 64]], tile.workspace = "delta"},
    %out: !t {tile.tensor = "out"}, %nq: index)
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 16384 : i64} {
  %kb = tgpu.shared_alloc offset 0 : !buf
  %qb = tgpu.shared_alloc offset 8192 : !buf
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %m = tile.program_id 0
  %h = tile.program_id 1
  %b = tile.program_id 2
  %kv = tile.view %k[%b, %h] keep [1, 3] : !t -> !d
  %outv = tile.view %out[%b, %h] keep [1, 3] : !t -> !d
  %first = arith.muli %h, %c4 : index
  %row = arith.muli %m, %c64 : index
  %steps = arith.muli %nq, %c4 : index
  tgpu.barrier
  tgpu.copy_async %kv[%row, %c0], %kb : !d, !buf
  tgpu.async_wait
  tgpu.fence_async_shared
  tgpu.barrier
  %zero = arith.constant 0.0 : f32
  %o0 = tile.splat %zero : f32 -> !acc
  %r:2 = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %o0, %carried = %h) -> (!acc, index) {
    %g = arith.divui %i, %nq : index
    %blk = arith.remui %i, %nq : index
    %qrow = arith.muli %blk, %c64 : index
    %head = arith.addi %first, %g : index
    %qv = tile.view %q[%b, %head] keep [1, 3] : !t -> !d
    %lv = tile.view %lse[%b, %head] keep [2] : !r -> !rd
    %dv = tile.view %delta[%b, %carried] keep [2] : !r -> !rd
    %l = tile.load %lv[%qrow] fill 0x7F800000 : f32 : !rd -> !vec
    %x = tile.load %dv[%qrow] fill 0.0 : f32 : !rd -> !vec
    tgpu.barrier
    tgpu.copy_async %qv[%qrow, %c0], %qb : !d, !buf
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    %s = tgpu.warpgroup_mma %kb, %qb, %o0 {transpose_rhs} : !buf, !buf, !acc -> !acc
    %lb = tile.broadcast %l dim 0 : !vec -> !acc
    %xb = tile.broadcast %x dim 0 : !vec -> !acc
    %t1 = arith.subf %s, %lb : !acc
    %t2 = arith.subf %t1, %xb : !acc
    %sum = arith.addf %acc, %t2 : !acc
    %next = arith.addi %carried, %c1 : index
    scf.yield %sum, %next : !acc, index
  } {tile.q_loop = "full"}
  %r2 = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %r#0) -> (!acc) {
    %g = arith.divui %i, %nq : index
    %blk = arith.remui %i, %nq : index
    %qrow = arith.muli %blk, %c64 : index
    %head = arith.addi %first, %g : index
    %qv = tile.view %q[%b, %head] keep [1, 3] : !t -> !d
    %lv = tile.view %lse[%b, %head] keep [2] : !r -> !rd
    %l = tile.load %lv[%qrow] fill 0x7F800000 : f32 : !rd -> !vec
    tgpu.barrier
    tgpu.copy_async %qv[%qrow, %c0], %qb : !d, !buf
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    %s = tgpu.warpgroup_mma %kb, %qb, %o0 {transpose_rhs} : !buf, !buf, !acc -> !acc
    %lb = tile.broadcast %l dim 0 : !vec -> !acc
    %t1 = arith.subf %s, %lb : !acc
    %sum = arith.addf %acc, %t1 : !acc
    scf.yield %sum : !acc
  } {tile.q_loop = "partial"}
  %rt = arith.truncf %r2 : !acc to !p
  tile.store %rt, %outv[%row, %c0] : !p, !d
  return
}

// -----

// Two vectors of one loop (the step's LSE rows of two heads) take a slot
// each; the next loop's one vector shares the first slot.

// CHECK-LABEL: func.func @two_in_a_loop
// CHECK: [[S0:%.+]] = tgpu.shared_alloc offset 24576 : memref<64xf32, 3>
// CHECK: [[S1:%.+]] = tgpu.shared_alloc offset 24832 : memref<64xf32, 3>
// CHECK: [[S2:%.+]] = tgpu.shared_alloc offset 25088 : memref<64xf32, 3>
// CHECK: [[S3:%.+]] = tgpu.shared_alloc offset 25344 : memref<64xf32, 3>
// CHECK-NOT: tgpu.shared_alloc {{.*}} memref<64xf32, 3>
// CHECK: tgpu.warp_specialize
// CHECK: scf.for
// CHECK:   [[A:%.+]] = arith.select {{%.+}}, [[S1]], [[S0]] : memref<64xf32, 3>
// CHECK:   tgpu.bulk_load {{%.+}}[{{%.+}}], [[A]],
// CHECK:   [[B:%.+]] = arith.select {{%.+}}, [[S3]], [[S2]] : memref<64xf32, 3>
// CHECK:   tgpu.bulk_load {{%.+}}[{{%.+}}], [[B]],
// CHECK: scf.for
// CHECK:   [[C:%.+]] = arith.select {{%.+}}, [[S1]], [[S0]] : memref<64xf32, 3>
// CHECK:   tgpu.bulk_load {{%.+}}[{{%.+}}], [[C]],
// CHECK-NOT: tgpu.bulk_load
// CHECK: } consumer {
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
!r = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!rd = !tile.desc<?xf32>
!vec = tensor<64xf32, #tgpu.cols<warps = 4>>
func.func @two_in_a_loop(%k: !t {tile.tensor = "k"}, %q: !t {tile.tensor = "q"},
    %lse: !r {tile.shape = ["batch", "heads", ["mul", ["ceildiv", "seq_q", 64], 64]], tile.workspace = "lse_log2"},
    %delta: !r {tile.shape = ["batch", "heads", ["mul", ["ceildiv", "seq_q", 64], 64]], tile.workspace = "delta"},
    %out: !t {tile.tensor = "out"}, %nq: index)
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 16384 : i64} {
  %kb = tgpu.shared_alloc offset 0 : !buf
  %qb = tgpu.shared_alloc offset 8192 : !buf
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %m = tile.program_id 0
  %h = tile.program_id 1
  %b = tile.program_id 2
  %kv = tile.view %k[%b, %h] keep [1, 3] : !t -> !d
  %outv = tile.view %out[%b, %h] keep [1, 3] : !t -> !d
  %first = arith.muli %h, %c4 : index
  %row = arith.muli %m, %c64 : index
  %steps = arith.muli %nq, %c4 : index
  tgpu.barrier
  tgpu.copy_async %kv[%row, %c0], %kb : !d, !buf
  tgpu.async_wait
  tgpu.fence_async_shared
  tgpu.barrier
  %zero = arith.constant 0.0 : f32
  %o0 = tile.splat %zero : f32 -> !acc
  %r:2 = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %o0, %carried = %h) -> (!acc, index) {
    %g = arith.divui %i, %nq : index
    %blk = arith.remui %i, %nq : index
    %qrow = arith.muli %blk, %c64 : index
    %head = arith.addi %first, %g : index
    %qv = tile.view %q[%b, %head] keep [1, 3] : !t -> !d
    %lv = tile.view %lse[%b, %head] keep [2] : !r -> !rd
    %h2 = arith.addi %head, %c1 : index
    %dv = tile.view %lse[%b, %h2] keep [2] : !r -> !rd
    %l = tile.load %lv[%qrow] fill 0x7F800000 : f32 : !rd -> !vec
    %x = tile.load %dv[%qrow] fill 0.0 : f32 : !rd -> !vec
    tgpu.barrier
    tgpu.copy_async %qv[%qrow, %c0], %qb : !d, !buf
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    %s = tgpu.warpgroup_mma %kb, %qb, %o0 {transpose_rhs} : !buf, !buf, !acc -> !acc
    %lb = tile.broadcast %l dim 0 : !vec -> !acc
    %xb = tile.broadcast %x dim 0 : !vec -> !acc
    %t1 = arith.subf %s, %lb : !acc
    %t2 = arith.subf %t1, %xb : !acc
    %sum = arith.addf %acc, %t2 : !acc
    %next = arith.addi %carried, %c1 : index
    scf.yield %sum, %next : !acc, index
  } {tile.q_loop = "full"}
  %r2 = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %r#0) -> (!acc) {
    %g = arith.divui %i, %nq : index
    %blk = arith.remui %i, %nq : index
    %qrow = arith.muli %blk, %c64 : index
    %head = arith.addi %first, %g : index
    %qv = tile.view %q[%b, %head] keep [1, 3] : !t -> !d
    %lv = tile.view %lse[%b, %head] keep [2] : !r -> !rd
    %l = tile.load %lv[%qrow] fill 0x7F800000 : f32 : !rd -> !vec
    tgpu.barrier
    tgpu.copy_async %qv[%qrow, %c0], %qb : !d, !buf
    tgpu.async_wait
    tgpu.fence_async_shared
    tgpu.barrier
    %s = tgpu.warpgroup_mma %kb, %qb, %o0 {transpose_rhs} : !buf, !buf, !acc -> !acc
    %lb = tile.broadcast %l dim 0 : !vec -> !acc
    %t1 = arith.subf %s, %lb : !acc
    %sum = arith.addf %acc, %t1 : !acc
    scf.yield %sum : !acc
  } {tile.q_loop = "partial"}
  %rt = arith.truncf %r2 : !acc to !p
  tile.store %rt, %outv[%row, %c0] : !p, !d
  return
}
