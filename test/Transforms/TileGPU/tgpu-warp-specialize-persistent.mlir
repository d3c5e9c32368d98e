// RUN: kiln-opt %s -tgpu-warp-specialize="persistent=true" -cse | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -tgpu-warp-specialize -cse | FileCheck %s --check-prefix=ONE

// tgpu-warp-specialize persistent=true: the grid becomes min(tiles, SMs x
// CTAs per SM) CTAs, each side of the split loops over the tiles dealt to
// its CTA (one per round, every other round mirrored) and computes the
// tile's program ids and setup again; the ring's positions continue across
// tiles, and Q gets a "free" barrier the consumers arrive on after the KV
// loop and the producer waits on before the next tile's Q.

// CHECK-LABEL: func.func @kv_loop
// CHECK-SAME: [[X:%arg[0-9]+]]: i64 {tile.scalar = ["ceildiv", "seq_q", 64]}, [[Y:%arg[0-9]+]]: i64 {tile.scalar = "heads"}, [[Z:%arg[0-9]+]]: i64 {tile.scalar = "batch"}
// CHECK-SAME: [[CTAS:%arg[0-9]+]]: i64 {tile.scalar = ["min", ["mul", ["ceildiv", "seq_q", 64], "heads", "batch"], ["mul", "num_sms", "ctas_per_sm.kv_loop"]]}
// CHECK-SAME: tgpu.persistent
// CHECK-SAME: tile.grid = {{\[}}["min", ["mul", ["ceildiv", "seq_q", 64], "heads", "batch"], ["mul", "num_sms", "ctas_per_sm.kv_loop"]], 1, 1]
// CHECK: [[BARS:%.+]] = tgpu.shared_alloc offset 40960 : memref<10xi64, 3>
// Q's full barrier (8, one arrival: the copy) and its free one (9, every
// consumer thread).
// CHECK: tgpu.mbarrier_init [[BARS]][%c8] count 1
// CHECK-NEXT: %c9 = arith.constant 9
// CHECK-NEXT: tgpu.mbarrier_init [[BARS]][%c9] count 128
// CHECK-NEXT: tgpu.barrier
// CHECK-DAG: [[NX:%.+]] = arith.index_cast [[X]]
// CHECK-DAG: [[NY:%.+]] = arith.index_cast [[Y]]
// CHECK-DAG: [[NZ:%.+]] = arith.index_cast [[Z]]
// CHECK-DAG: [[W:%.+]] = arith.index_cast [[CTAS]]
// CHECK-DAG: [[FIRST:%.+]] = tile.program_id 0
// This CTA's rounds: the whole ones, plus the last if its place (mirrored
// in odd rounds) is among the rest.
// CHECK: [[XY:%.+]] = arith.muli [[NX]], [[NY]]
// CHECK: [[TOTAL:%.+]] = arith.muli [[XY]], [[NZ]]
// CHECK: [[WM1:%.+]] = arith.subi [[W]], %c1
// CHECK: [[MIRROR:%.+]] = arith.subi [[WM1]], [[FIRST]]
// CHECK: [[ROUNDS:%.+]] = arith.divui [[TOTAL]], [[W]]
// CHECK: [[REST:%.+]] = arith.remui [[TOTAL]], [[W]]
// CHECK: [[LASTODD:%.+]] = arith.andi [[ROUNDS]], %c1
// CHECK: [[ISODD:%.+]] = arith.cmpi eq, [[LASTODD]], %c1
// CHECK: [[PLACE:%.+]] = arith.select [[ISODD]], [[MIRROR]], [[FIRST]]
// CHECK: [[IN:%.+]] = arith.cmpi ult, [[PLACE]], [[REST]]
// CHECK: [[EXTRA:%.+]] = arith.select [[IN]], %c1, %c0
// CHECK: [[MINE:%.+]] = arith.addi [[ROUNDS]], [[EXTRA]]
// CHECK: tgpu.warp_specialize
// CHECK-SAME: producer {
// CHECK: scf.for [[R:%.+]] = %c0 to [[MINE]] step %c1 iter_args([[BASE:%.+]] = %c0) -> (index) {
// CHECK: [[RODD:%.+]] = arith.andi [[R]], %c1
// CHECK: [[RISODD:%.+]] = arith.cmpi eq, [[RODD]], %c1
// CHECK: [[P:%.+]] = arith.select [[RISODD]], [[MIRROR]], [[FIRST]]
// CHECK: [[RW:%.+]] = arith.muli [[R]], [[W]]
// CHECK: [[T:%.+]] = arith.addi [[RW]], [[P]]
// CHECK: [[PID0:%.+]] = arith.remui [[T]], [[NX]]
// CHECK: [[T1:%.+]] = arith.divui [[T]], [[NX]]
// CHECK: [[PID1:%.+]] = arith.remui [[T1]], [[NY]]
// CHECK: [[PID2:%.+]] = arith.divui [[T1]], [[NY]]
// The producer waits for Q's release with the round's parity flipped (the
// first round finds it free).
// CHECK: [[FREEPAR:%.+]] = arith.xori [[RODD]], %c1
// CHECK: [[KVIEW:%.+]] = tile.view %arg1[[[PID2]], [[PID1]]]
// CHECK: [[ROW:%.+]] = arith.muli [[PID0]], %c64
// CHECK: [[N:%.+]] = tile.dim [[KVIEW]], 0
// CHECK: [[END:%.+]] = arith.addi [[BASE]], {{%.+}}
// CHECK: tgpu.mbarrier_wait [[BARS]][%c9], [[FREEPAR]]
// CHECK-NEXT: tgpu.tma_load {{%.+}}[%c0, [[ROW]], [[PID1]], [[PID2]]], {{%.+}}, [[BARS]][%c8]
// The ring positions start at the tile's base.
// CHECK: scf.for [[J:%.+]] = %c0 to [[N]] step %c64 {
// CHECK: [[STEP:%.+]] = arith.divui
// CHECK-NEXT: arith.addi [[BASE]], [[STEP]]
// CHECK: scf.yield [[END]] : index
// CHECK: } consumer {
// CHECK: scf.for [[CR:%.+]] = %c0 to [[MINE]] step %c1 iter_args([[CBASE:%.+]] = %c0) -> (index) {
// CHECK: [[CODD:%.+]] = arith.andi [[CR]], %c1
// CHECK: tgpu.mbarrier_wait [[BARS]][%c8], [[CODD]]
// CHECK: scf.for
// CHECK: } {tile.kv_loop = "full"}
// Q is free once the KV loop has read it, before the epilogue.
// CHECK-NEXT: tgpu.mbarrier_arrive [[BARS]][%c9]
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: tile.store
// CHECK: scf.yield

// Without the option, the kernel keeps one tile per CTA and its grid.
// ONE-LABEL: func.func @kv_loop
// ONE-NOT: tgpu.persistent
// ONE-SAME: tile.grid = {{\[}}["ceildiv", "seq_q", 64], "heads", "batch"]
// ONE: memref<9xi64, 3>
// ONE-NOT: scf.for {{.*}} -> (index)
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

