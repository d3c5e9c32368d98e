// RUN: kiln-opt %s -split-input-file -tgpu-warp-specialize="persistent=true double-tile-buffers=false" -cse | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tgpu-warp-specialize="persistent=true" -cse | FileCheck %s --check-prefix=TWO --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tgpu-warp-specialize -cse | FileCheck %s --check-prefix=ONE
// RUN: kiln run %examples/causal.mlir --backward --bwd-schedule two-kernel -emit=tgpu --persistent-backward | FileCheck %s --check-prefix=BWD
// RUN: kiln run %examples/causal.mlir --backward --bwd-schedule two-kernel -emit=tgpu | FileCheck %s --check-prefix=BWD-OFF
// RUN: kiln run %examples/causal.mlir --backward --bwd-schedule two-kernel -emit=tgpu --persistent-backward --head-dim 64 | FileCheck %s --check-prefix=BWD64
// RUN: kiln run %examples/causal.mlir --backward -emit=tgpu --persistent-backward --head-dim 128 --bwd-schedule two-kernel --key-block 64 | FileCheck %s --check-prefix=BWD128

// tgpu-warp-specialize persistent=true: the grid becomes min(tiles, SMs x
// CTAs per SM) CTAs, each starting on its own tile; the producer then draws
// tiles from a zeroed counter (a workspace sized 0 when the CTAs take every
// tile) and publishes each tile's program ids with its Q copy; the consumers
// wait for Q's barrier, read the ids, and stop at x = -1. Each side computes
// the tile's setup again, the ring's positions continue across tiles, and Q
// gets a "free" barrier the consumers arrive on after the KV loop and the
// producer waits on before the next tile's Q.

// CHECK-LABEL: func.func @kv_loop
// CHECK-SAME: [[X:%arg[0-9]+]]: i64 {tile.scalar = ["ceildiv", "seq_q", 64]}, [[Y:%arg[0-9]+]]: i64 {tile.scalar = "heads"}, [[Z:%arg[0-9]+]]: i64 {tile.scalar = "batch"}
// CHECK-SAME: [[CTAS:%arg[0-9]+]]: i64 {tile.scalar = ["min", ["mul", ["ceildiv", "seq_q", 64], "heads", "batch"], ["mul", "num_sms", "ctas_per_sm.kv_loop"]]}
// CHECK-SAME: [[COUNTER:%arg[0-9]+]]: memref<?xi32, strided<[?], offset: ?>> {tile.shape = {{\[}}["min", ["max", ["sub", ["mul", ["ceildiv", "seq_q", 64], "heads", "batch"], ["min", {{.*}}]], 0], 1]], tile.workspace = "kv_loop_tiles", tile.zero_fill}
// CHECK-SAME: tgpu.persistent
// CHECK-SAME: tile.grid = {{\[}}["min", ["mul", ["ceildiv", "seq_q", 64], "heads", "batch"], ["mul", "num_sms", "ctas_per_sm.kv_loop"]], 1, 1]
// Q's full barrier (8, one arrival: the copy) and its free one (9, every
// consumer thread); words 10-12 hold the published program ids.
// CHECK: [[BARS:%.+]] = tgpu.shared_alloc offset 40960 : memref<13xi64, 3>
// CHECK: tgpu.mbarrier_init [[BARS]][%c8] count 1
// CHECK-NEXT: %c9 = arith.constant 9
// CHECK-NEXT: tgpu.mbarrier_init [[BARS]][%c9] count 128
// CHECK-NEXT: tgpu.barrier
// CHECK-DAG: [[NX:%.+]] = arith.index_cast [[X]]
// CHECK-DAG: [[NY:%.+]] = arith.index_cast [[Y]]
// CHECK-DAG: [[NZ:%.+]] = arith.index_cast [[Z]]
// CHECK-DAG: [[W:%.+]] = arith.index_cast [[CTAS]]
// CHECK-DAG: [[FIRST:%.+]] = tile.program_id 0
// CHECK: [[XY:%.+]] = arith.muli [[NX]], [[NY]]
// CHECK: [[TOTAL:%.+]] = arith.muli [[XY]], [[NZ]]
// CHECK: tgpu.warp_specialize
// CHECK-SAME: producer {
// The producer: its own tile first, then the drawn ones, while any is left.
// CHECK: [[PEND:%.+]]:3 = scf.while ([[T:%.+]] = [[FIRST]], [[B:%.+]] = %c0, [[K:%.+]] = %c0)
// CHECK: [[MORE:%.+]] = arith.cmpi ult, [[T]], [[TOTAL]]
// CHECK-NEXT: scf.condition([[MORE]]) [[T]], [[B]], [[K]]
// CHECK: ^bb0([[PT:%[a-z0-9]+]]: index, [[BASE:%[a-z0-9]+]]: index, [[ROUND:%[a-z0-9]+]]: index):
// CHECK: [[PID0:%.+]] = arith.remui [[PT]], [[NX]]
// CHECK: [[T1:%.+]] = arith.divui [[PT]], [[NX]]
// CHECK: [[PID1:%.+]] = arith.remui [[T1]], [[NY]]
// CHECK: [[PID2:%.+]] = arith.divui [[T1]], [[NY]]
// The producer waits for Q's release with the round's parity flipped (the
// first round finds it free), publishes the ids, then copies Q.
// CHECK: [[ODD:%.+]] = arith.andi [[ROUND]], %c1
// CHECK: [[FREEPAR:%.+]] = arith.xori [[ODD]], %c1
// CHECK: [[KVIEW:%.+]] = tile.view %arg1[[[PID2]], [[PID1]]]
// CHECK: [[ROW:%.+]] = arith.muli [[PID0]], %c64
// CHECK: [[N:%.+]] = tile.dim [[KVIEW]], 0
// CHECK: [[END:%.+]] = arith.addi [[BASE]], {{%.+}}
// CHECK: tgpu.mbarrier_wait [[BARS]][%c9], [[FREEPAR]]
// CHECK-NEXT: tgpu.publish_tile [[PID0]], [[PID1]], [[PID2]] to [[BARS]][%c10]
// CHECK-NEXT: tgpu.tma_load {{%.+}}[%c0, [[ROW]], [[PID1]], [[PID2]]], {{%.+}}, [[BARS]][%c8]
// The ring positions start at the tile's base.
// CHECK: scf.for [[J:%.+]] = %c0 to [[N]] step %c64 {
// CHECK: [[STEP:%.+]] = arith.divui
// CHECK-NEXT: arith.addi [[BASE]], [[STEP]]
// CHECK: [[NEXT:%.+]] = tgpu.next_tile [[COUNTER]], [[W]], [[TOTAL]]
// CHECK-NEXT: [[ROUND1:%.+]] = arith.addi [[ROUND]], %c1
// CHECK-NEXT: scf.yield [[NEXT]], [[END]], [[ROUND1]]
// After the last tile: x = -1, with an arrival of its own.
// CHECK: [[LAST:%.+]] = arith.andi [[PEND]]#2, %c1
// CHECK-NEXT: [[LASTFREE:%.+]] = arith.xori [[LAST]], %c1
// CHECK-NEXT: tgpu.mbarrier_wait [[BARS]][%c9], [[LASTFREE]]
// CHECK: tgpu.publish_tile %c-1, %c0, %c0 to [[BARS]][%c10] arrive %c8
// CHECK: } consumer {
// CHECK: scf.while ([[CB:%.+]] = %c0, [[CK:%.+]] = %c0)
// CHECK: [[CODD:%.+]] = arith.andi [[CK]], %c1
// CHECK-NEXT: tgpu.mbarrier_wait [[BARS]][%c8], [[CODD]]
// CHECK-NEXT: [[CX:%.+]] = tgpu.read_tile [[BARS]][%c10] axis 0
// CHECK-NEXT: [[CY:%.+]] = tgpu.read_tile [[BARS]][%c10] axis 1
// CHECK-NEXT: [[CZ:%.+]] = tgpu.read_tile [[BARS]][%c10] axis 2
// CHECK-NEXT: [[CMORE:%.+]] = arith.cmpi sge, [[CX]], %c0
// CHECK-NEXT: scf.condition([[CMORE]]) [[CX]], [[CY]], [[CZ]], [[CB]], [[CK]]
// CHECK: ^bb0([[X0:%[a-z0-9]+]]: index, [[Y0:%[a-z0-9]+]]: index, [[Z0:%[a-z0-9]+]]: index, [[CBASE:%[a-z0-9]+]]: index, [[CROUND:%[a-z0-9]+]]: index):
// CHECK: [[OVIEW:%.+]] = tile.view %arg3[[[Z0]], [[Y0]]]
// CHECK: [[CROW:%.+]] = arith.muli [[X0]], %c64
// CHECK: [[CEND:%.+]] = arith.addi [[CBASE]], {{%.+}}
// CHECK-NOT: tgpu.mbarrier_wait [[BARS]][%c8]
// CHECK: scf.for
// CHECK: [[CSTEP:%.+]] = arith.divui
// CHECK-NEXT: arith.addi [[CBASE]], [[CSTEP]]
// CHECK: } {tile.kv_loop = "full"}
// Q is free once the KV loop has read it, before the epilogue.
// CHECK-NEXT: tgpu.mbarrier_arrive [[BARS]][%c9]
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: tile.store {{%.+}}, [[OVIEW]][[[CROW]], %c0]
// CHECK-NEXT: [[CROUND1:%.+]] = arith.addi [[CROUND]], %c1
// CHECK-NEXT: scf.yield [[CEND]], [[CROUND1]] : index, index

// With two copies of Q (double-tile-buffers, the default): the second copy,
// the full barriers 8-9 and free ones 10-11 of copies 0 and 1, and words
// 12-14 and 15-17 for the program ids. Round r uses copy r mod 2 and waits
// for parity (r / 2) mod 2 on its barriers.
// TWO-LABEL: func.func @kv_loop
// TWO: [[Q0:%.+]] = tgpu.shared_alloc offset 32768 : memref<64x64xbf16
// TWO-NEXT: [[Q1:%.+]] = tgpu.shared_alloc offset 40960 : memref<64x64xbf16
// TWO: [[BARS:%.+]] = tgpu.shared_alloc offset 49152 : memref<18xi64, 3>
// TWO: tgpu.mbarrier_init [[BARS]][%c8] count 1
// TWO: tgpu.mbarrier_init [[BARS]][%c10] count 128
// TWO: tgpu.mbarrier_init [[BARS]][%c9] count 1
// TWO: tgpu.mbarrier_init [[BARS]][%c11] count 128
// TWO: producer {
// TWO: ^bb0({{%[a-z0-9]+}}: index, {{%[a-z0-9]+}}: index, [[ROUND:%[a-z0-9]+]]: index):
// TWO: [[HALF:%.+]] = arith.shrui [[ROUND]], %c1
// TWO-NEXT: [[PAR:%.+]] = arith.andi [[HALF]], %c1
// TWO-NEXT: [[FREEPAR:%.+]] = arith.xori [[PAR]], %c1
// TWO-NEXT: [[SLOT:%.+]] = arith.andi [[ROUND]], %c1
// TWO: [[SECOND:%.+]] = arith.cmpi eq, [[SLOT]], %c1
// TWO-NEXT: [[Q:%.+]] = arith.select [[SECOND]], [[Q1]], [[Q0]]
// TWO: [[FREE:%.+]] = arith.addi %c10, [[SLOT]]
// TWO-NEXT: tgpu.mbarrier_wait [[BARS]][[[FREE]]], [[FREEPAR]]
// TWO-NEXT: [[W3:%.+]] = arith.muli [[SLOT]], %c3
// TWO-NEXT: [[WORDS:%.+]] = arith.addi %c12, [[W3]]
// TWO-NEXT: tgpu.publish_tile {{.*}} to [[BARS]][[[WORDS]]]
// TWO-NEXT: [[FULL:%.+]] = arith.addi %c8, [[SLOT]]
// TWO-NEXT: tgpu.tma_load {{%.+}}[{{.*}}], [[Q]], [[BARS]][[[FULL]]]
// After the last tile, x = -1 in the words of the next round's copy.
// TWO: [[LASTSLOT:%.+]] = arith.andi [[PEND:%.+]]#2, %c1
// TWO-NEXT: [[LASTFREE:%.+]] = arith.addi %c10, [[LASTSLOT]]
// TWO-NEXT: tgpu.mbarrier_wait [[BARS]][[[LASTFREE]]]
// TWO: [[LASTFULL:%.+]] = arith.addi %c8, [[LASTSLOT]]
// TWO: tgpu.publish_tile %c-1, %c0, %c0 to [[BARS]][{{%.+}}] arrive [[LASTFULL]]
// TWO: } consumer {
// TWO: scf.while ({{%.+}} = %c0, [[CK:%.+]] = %c0)
// TWO-NEXT: [[CHALF:%.+]] = arith.shrui [[CK]], %c1
// TWO-NEXT: [[CPAR:%.+]] = arith.andi [[CHALF]], %c1
// TWO-NEXT: [[CSLOT:%.+]] = arith.andi [[CK]], %c1
// TWO-NEXT: [[CFULL:%.+]] = arith.addi %c8, [[CSLOT]]
// TWO-NEXT: tgpu.mbarrier_wait [[BARS]][[[CFULL]]], [[CPAR]]
// TWO-NEXT: [[C3:%.+]] = arith.muli [[CSLOT]], %c3
// TWO-NEXT: [[CWORDS:%.+]] = arith.addi %c12, [[C3]]
// TWO-NEXT: tgpu.read_tile [[BARS]][[[CWORDS]]] axis 0
// The tile's products read its copy, which it frees after the KV loop.
// TWO: ^bb0({{.*}}, [[CROUND:%[a-z0-9]+]]: index):
// TWO-NEXT: [[TSLOT:%.+]] = arith.andi [[CROUND]], %c1
// TWO: [[TSECOND:%.+]] = arith.cmpi eq, [[TSLOT]], %c1
// TWO-NEXT: [[CQ:%.+]] = arith.select [[TSECOND]], [[Q1]], [[Q0]]
// TWO: tgpu.warpgroup_mma [[CQ]],
// TWO: } {tile.kv_loop = "full"}
// TWO-NEXT: [[TFREE:%.+]] = arith.addi %c10, [[TSLOT]]
// TWO-NEXT: tgpu.mbarrier_arrive [[BARS]][[[TFREE]]]

// Without the option, the kernel keeps one tile per CTA and its grid.
// ONE-LABEL: func.func @kv_loop
// ONE-NOT: tgpu.persistent
// ONE-SAME: tile.grid = {{\[}}["ceildiv", "seq_q", 64], "heads", "batch"]
// ONE: memref<9xi64, 3>
// ONE-NOT: scf.while

!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
func.func @kv_loop(%q: !t {tile.tensor = "q"}, %k: !t {tile.tensor = "k"}, %v: !t {tile.tensor = "v"}, %out: !t {tile.tensor = "out"})
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 24576 : i64, tile.grid = [["ceildiv", "seq_q", 64], "heads", "batch"]} {
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

// The backward's kernels take the option too (opt-in): the dQ kernel and
// the dK/dV kernel each draw their tiles; the forward stays persistent
// either way.
// BWD-LABEL: func.func @causal_bwd_dq(
// BWD-SAME: tgpu.persistent
// BWD: tgpu.next_tile
// BWD-LABEL: func.func @causal_bwd_dkdv(
// BWD-SAME: tgpu.persistent
// BWD: tgpu.next_tile
// At D = 64 the backward's kernels (one consumer warpgroup, two CTAs per
// multiprocessor) hold two copies of K and V (22 barrier words); at D = 128
// (64 keys per dK/dV CTA: --key-block 64)
// a second copy would leave room for one CTA only, so they keep one (15).
// BWD64-LABEL: func.func @causal_bwd_dq(
// BWD64-SAME: tgpu.ctas_per_sm = 2
// BWD64: tgpu.shared_alloc {{.*}} memref<22xi64, 3>
// BWD128-LABEL: func.func @causal_bwd_dq(
// BWD128-SAME: tgpu.ctas_per_sm = 2
// BWD128: tgpu.shared_alloc {{.*}} memref<15xi64, 3>
// BWD128-LABEL: func.func @causal_bwd_dkdv(
// BWD128-SAME: tgpu.ctas_per_sm = 2
// BWD128: tgpu.shared_alloc {{.*}} memref<15xi64, 3>
// BWD-OFF-LABEL: func.func @causal_bwd_dq(
// BWD-OFF-NOT: tgpu.persistent
// BWD-OFF-SAME: tile.grid
// BWD-OFF-NOT: tgpu.next_tile
// BWD-OFF-LABEL: func.func @causal_bwd_dkdv(
// BWD-OFF-NOT: tgpu.next_tile

// -----

// A program id the kernel reads only after the split (here the output's
// batch) moves into the consumers with their part of the kernel; it is
// mapped to the published id like the others, not left as blockIdx.
// CHECK-LABEL: func.func @late_id
// CHECK: } consumer {
// CHECK: ^bb0([[X0:%[a-z0-9]+]]: index, [[Y0:%[a-z0-9]+]]: index, [[Z0:%[a-z0-9]+]]: index,
// CHECK-NOT: tile.program_id
// CHECK: tile.view %arg3[[[Z0]], [[Y0]]]
// ONE-LABEL: func.func @late_id

!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
func.func @late_id(%q: !t {tile.tensor = "q"}, %k: !t {tile.tensor = "k"}, %v: !t {tile.tensor = "v"}, %out: !t {tile.tensor = "out"})
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 24576 : i64, tile.grid = [["ceildiv", "seq_q", 64], "heads", "batch"]} {
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
  %b2 = tile.program_id 2
  %ov = tile.view %out[%b2, %h] keep [1, 3] : !t -> !d
  %rt = arith.truncf %r : !acc to !p
  tile.store %rt, %ov[%row, %c0] : !p, !d
  return
}
