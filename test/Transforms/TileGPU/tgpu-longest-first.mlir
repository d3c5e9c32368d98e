// RUN: kiln-opt %s -split-input-file -tgpu-longest-first | FileCheck %s --enable-var-scope

// tgpu-longest-first: the keys of a query block end where the block ends
// (causal), so the block index becomes blocks - 1 - program_id, blocks =
// ceildiv(rows of q, BLOCK_M), and every use sees the reversed index.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
// CHECK-LABEL: func.func @causal
// CHECK: [[PID:%.+]] = tile.program_id 0
// CHECK: [[QV:%.+]] = tile.view %arg0
// CHECK-NEXT: [[ROWS:%.+]] = tile.dim [[QV]], 0
// CHECK: [[BLOCKS:%.+]] = arith.ceildivsi [[ROWS]], %c64
// CHECK: [[LAST:%.+]] = arith.subi [[BLOCKS]], %c1
// CHECK-NEXT: [[REV:%.+]] = arith.subi [[LAST]], [[PID]]
// CHECK-NEXT: arith.muli [[REV]], %c64
// CHECK-NOT: [[PID]]
// CHECK: return
func.func @causal(%q: !t {tile.tensor = "q"}) attributes {tile.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m = tile.program_id 0
  %qv = tile.view %q[%c0, %c0] keep [1, 3] : !t -> !d
  %row = arith.muli %m, %c64 : index
  %end = arith.addi %row, %c64 : index
  scf.for %j = %c0 to %end step %c64 {
  } {tile.kv_loop = "full"}
  return
}

// -----

// Left alone: a window's keys start and end with the block (equal work),
// and a plain kernel's do not move at all.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
// CHECK-LABEL: func.func @window
// CHECK-NOT: arith.ceildivsi
// CHECK: return
func.func @window(%q: !t {tile.tensor = "q"}) attributes {tile.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m = tile.program_id 0
  %qv = tile.view %q[%c0, %c0] keep [1, 3] : !t -> !d
  %row = arith.muli %m, %c64 : index
  %end = arith.addi %row, %c64 : index
  scf.for %j = %row to %end step %c64 {
  } {tile.kv_loop = "full"}
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
!d = !tile.desc<?x64xbf16>
// CHECK-LABEL: func.func @plain
// CHECK-NOT: arith.ceildivsi
// CHECK: return
func.func @plain(%q: !t {tile.tensor = "q"}, %n: index) attributes {tile.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m = tile.program_id 0
  %qv = tile.view %q[%c0, %c0] keep [1, 3] : !t -> !d
  scf.for %j = %c0 to %n step %c64 {
  } {tile.kv_loop = "full"}
  return
}
