// RUN: kiln-opt %s -split-input-file -allow-unregistered-dialect -tgpu-longest-first | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -allow-unregistered-dialect -tgpu-longest-first="shared-heads-only=false" | FileCheck %s --enable-var-scope --check-prefix=ALL
// RUN: kiln-opt %s -split-input-file -allow-unregistered-dialect -tgpu-longest-first="wave-chunks=true" | FileCheck %s --enable-var-scope --check-prefix=WAVES
// RUN: kiln-opt %s -split-input-file -allow-unregistered-dialect -tgpu-longest-first="shared-heads-only=false wave-chunks=true" | FileCheck %s --enable-var-scope --check-prefix=WAVES

// tgpu-longest-first: a kernel whose blocks' work grows along axis 0 (a
// causal forward's query blocks) over a GQA group's query heads gets the
// grid's extents as scalars and runs, as the CTA at place
// L = x + X * (y + Y * z) of the launch order, block X - 1 - L / (Y * Z),
// head (L mod Y * Z) mod Y and batch (L mod Y * Z) / Y: every (head,
// batch)'s last block first, a group's heads together. Every use of a
// program id sees the renumbered one.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>
// CHECK-LABEL: func.func @grows(
// CHECK-SAME: %[[Q:arg[0-9]+]]: memref<{{.*}}> {tile.tensor = "q"},
// CHECK-SAME: %[[EX:arg[0-9]+]]: i64 {tile.scalar = ["ceildiv", "seq_q", 64]}, %[[EY:arg[0-9]+]]: i64 {tile.scalar = "heads"}, %[[EZ:arg[0-9]+]]: i64 {tile.scalar = "batch"})
// CHECK-DAG: %[[X:.+]] = arith.index_cast %[[EX]] : i64 to index
// CHECK-DAG: %[[Y:.+]] = arith.index_cast %[[EY]] : i64 to index
// CHECK-DAG: %[[Z:.+]] = arith.index_cast %[[EZ]] : i64 to index
// CHECK-DAG: %[[P0:.+]] = tile.program_id 0
// CHECK-DAG: %[[P1:.+]] = tile.program_id 1
// CHECK-DAG: %[[P2:.+]] = tile.program_id 2
// CHECK: %[[YP2:.+]] = arith.muli %[[Y]], %[[P2]]
// CHECK-NEXT: %[[IN:.+]] = arith.addi %[[P1]], %[[YP2]]
// CHECK-NEXT: %[[XIN:.+]] = arith.muli %[[X]], %[[IN]]
// CHECK-NEXT: %[[L:.+]] = arith.addi %[[P0]], %[[XIN]]
// CHECK-NEXT: %[[PER:.+]] = arith.muli %[[Y]], %[[Z]]
// CHECK-NEXT: %[[RANK:.+]] = arith.divui %[[L]], %[[PER]]
// CHECK-NEXT: %[[REST:.+]] = arith.remui %[[L]], %[[PER]]
// CHECK-NEXT: %[[HEAD:.+]] = arith.remui %[[REST]], %[[Y]]
// CHECK-NEXT: %[[BATCH:.+]] = arith.divui %[[REST]], %[[Y]]
// CHECK: %[[LAST:.+]] = arith.subi %[[X]], %c1
// CHECK-NEXT: %[[BLOCK:.+]] = arith.subi %[[LAST]], %[[RANK]]
// CHECK: "test.use"(%[[BLOCK]], %[[HEAD]], %[[BATCH]], %[[BLOCK]])
// CHECK-NOT: tile.program_id
// CHECK: return
// With wave-chunks a GQA group's query heads keep the whole-grid order.
// WAVES-LABEL: func.func @grows(
// WAVES-NOT: ctas_per_sm
// WAVES: arith.divui
// WAVES: return
func.func @grows(%q: !t {tile.tensor = "q"}) attributes {
    tile.block_cost = "grows", tile.gqa_group = 4 : i64,
    tile.grid = [["ceildiv", "seq_q", 64], "heads", "batch"]} {
  %m = tile.program_id 0
  %h = tile.program_id 1
  %b = tile.program_id 2
  %m2 = tile.program_id 0
  "test.use"(%m, %h, %b, %m2) : (index, index, index, index) -> ()
  return
}

// -----

// Heads that share nothing (not a GQA group's, or the group's KV heads)
// are left in grid order, whose CTAs at work share their heads' tiles in
// L2; with shared-heads-only=false they are renumbered too. Work that
// shrinks along the axis (a band's lower bound alone): block 0 of every
// (head, batch) first, L / (Y * Z) itself; a grid extent already passed as
// a scalar is reused.
// CHECK-LABEL: func.func @shrinks(%arg0: i64 {tile.scalar = "kv_heads"})
// CHECK-NEXT: tile.program_id 0
// ALL-LABEL: func.func @shrinks(
// ALL-SAME: %[[N:arg[0-9]+]]: i64 {tile.scalar = "kv_heads"}, %[[EX:arg[0-9]+]]: i64 {tile.scalar = ["ceildiv", "seq_kv", 128]}, %[[EZ:arg[0-9]+]]: i64 {tile.scalar = "batch"})
// ALL-NOT: tile.scalar
// ALL-DAG: arith.index_cast %[[N]] : i64 to index
// ALL-DAG: arith.index_cast %[[EX]] : i64 to index
// ALL-DAG: arith.index_cast %[[EZ]] : i64 to index
// ALL: %[[RANK:.+]] = arith.divui
// ALL-NOT: arith.subi
// ALL: "test.use"(%[[RANK]])
// ALL: return
// With wave-chunks, chunks of C = max(1, floor(S / X)) (head, batch)
// pairs (S = num_sms * ctas_per_sm.<kernel>: a scalar the plan computes),
// the chunks in grid order: chunk c = L / (C * X); inside it, r = L mod
// (C * X) over C' = min(C, P - c * C) pairs (P = Y * Z), block r / C' of
// pair c * C + r mod C'.
// WAVES-LABEL: func.func @shrinks(
// WAVES-SAME: %[[N:arg[0-9]+]]: i64 {tile.scalar = "kv_heads"}, %[[EX:arg[0-9]+]]: i64 {tile.scalar = ["ceildiv", "seq_kv", 128]}, %[[EZ:arg[0-9]+]]: i64 {tile.scalar = "batch"}, %[[EC:arg[0-9]+]]: i64 {tile.scalar = ["max", ["sub", ["ceildiv", ["add", ["mul", "num_sms", "ctas_per_sm.shrinks"], 1], ["max", ["ceildiv", "seq_kv", 128], 1]], 1], 1]})
// WAVES-DAG: %[[Y:.+]] = arith.index_cast %[[N]] : i64 to index
// WAVES-DAG: %[[X:.+]] = arith.index_cast %[[EX]] : i64 to index
// WAVES-DAG: %[[Z:.+]] = arith.index_cast %[[EZ]] : i64 to index
// WAVES: arith.muli %[[Y]], %{{.+}}
// WAVES-NEXT: %[[YZ:.+]] = arith.addi
// WAVES-NEXT: %[[XYZ:.+]] = arith.muli %[[X]], %[[YZ]]
// WAVES-NEXT: %[[L:.+]] = arith.addi %{{.+}}, %[[XYZ]]
// WAVES-NEXT: %[[P:.+]] = arith.muli %[[Y]], %[[Z]]
// WAVES-NEXT: %[[C:.+]] = arith.index_cast %[[EC]] : i64 to index
// WAVES-NEXT: %[[CX:.+]] = arith.muli %[[C]], %[[X]]
// WAVES-NEXT: %[[CHUNK:.+]] = arith.divui %[[L]], %[[CX]]
// WAVES-NEXT: %[[R:.+]] = arith.remui %[[L]], %[[CX]]
// WAVES-NEXT: %[[FIRST:.+]] = arith.muli %[[CHUNK]], %[[C]]
// WAVES-NEXT: %[[LEFT:.+]] = arith.subi %[[P]], %[[FIRST]]
// WAVES-NEXT: %[[HERE:.+]] = arith.minsi %[[C]], %[[LEFT]]
// WAVES-NEXT: %[[RANK:.+]] = arith.divui %[[R]], %[[HERE]]
// WAVES-NEXT: %[[IN:.+]] = arith.remui %[[R]], %[[HERE]]
// WAVES-NEXT: %[[PAIR:.+]] = arith.addi %[[FIRST]], %[[IN]]
// WAVES-NEXT: arith.remui %[[PAIR]], %[[Y]]
// WAVES-NEXT: arith.divui %[[PAIR]], %[[Y]]
// WAVES-NOT: arith.subi
// WAVES: "test.use"(%[[RANK]])
// WAVES: return
func.func @shrinks(%n: i64 {tile.scalar = "kv_heads"}) attributes {
    tile.block_cost = "shrinks", tile.gqa_group = 4 : i64,
    tile.grid = [["ceildiv", "seq_kv", 128], "kv_heads", "batch"]} {
  %m = tile.program_id 0
  "test.use"(%m) : (index) -> ()
  return
}

// -----

// Left alone either way: no block cost (plain, a window, block lists,
// varlen), ordered adds (their turns follow the key blocks' own
// numbering), and program ids below the entry block.
// WAVES-LABEL: func.func @plain()
// WAVES-NEXT: tile.program_id 0
// WAVES-LABEL: func.func @ordered()
// WAVES-NEXT: tile.program_id 0
// WAVES-LABEL: func.func @nested(%arg0: i1)
// WAVES-NOT: arith.divui
// WAVES: return
// ALL-LABEL: func.func @plain()
// ALL-NEXT: tile.program_id 0
// ALL-LABEL: func.func @ordered()
// ALL-NEXT: tile.program_id 0
// ALL-LABEL: func.func @nested(%arg0: i1)
// ALL-NOT: arith.divui
// ALL: return
// CHECK-LABEL: func.func @plain()
// CHECK-NEXT: tile.program_id 0
// CHECK-LABEL: func.func @ordered()
// CHECK-NEXT: tile.program_id 0
// CHECK-LABEL: func.func @nested(%arg0: i1)
// CHECK-NOT: arith.divui
// CHECK: return
func.func @plain() attributes {tile.grid = ["seq_q", "heads", "batch"]} {
  %m = tile.program_id 0
  "test.use"(%m) : (index) -> ()
  return
}
func.func @ordered() attributes {
    tile.block_cost = "shrinks",
    tile.grid = [["ceildiv", "seq_kv", 128], "kv_heads", "batch"],
    tile.ordered_adds = {accumulator = "dq_accum", rows = 64 : i64, turns = "dq_turns"}} {
  %m = tile.program_id 0
  "test.use"(%m) : (index) -> ()
  return
}
func.func @nested(%c: i1) attributes {
    tile.block_cost = "grows",
    tile.grid = ["seq_q", "heads", "batch"]} {
  scf.if %c {
    %m = tile.program_id 0
    "test.use"(%m) : (index) -> ()
  }
  return
}

// -----

// Heads of their own (a causal forward without GQA): left alone by
// default; with wave-chunks=true alone (shared-heads-only stays on), the
// chunked order, counted from the last block where the work grows.
// CHECK-LABEL: func.func @own_heads()
// CHECK-NEXT: tile.program_id 0
// WAVES-LABEL: func.func @own_heads(
// WAVES-SAME: {tile.scalar = ["max", ["sub", ["ceildiv", ["add", ["mul", "num_sms", "ctas_per_sm.own_heads"], 1], ["max", ["ceildiv", "seq_q", 128], 1]], 1], 1]}
// WAVES: arith.minsi
// WAVES-NEXT: %[[RANK:.+]] = arith.divui
// WAVES: %[[LAST:.+]] = arith.subi %{{.+}}, %c1
// WAVES-NEXT: %[[BLOCK:.+]] = arith.subi %[[LAST]], %[[RANK]]
// WAVES: "test.use"(%[[BLOCK]])
func.func @own_heads() attributes {
    tile.block_cost = "grows", tile.gqa_group = 1 : i64,
    tile.grid = [["ceildiv", "seq_q", 128], "heads", "batch"]} {
  %m = tile.program_id 0
  "test.use"(%m) : (index) -> ()
  return
}
