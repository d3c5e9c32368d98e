// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="decode-rows=0" -split-input-file | FileCheck %s
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="decode-rows=0 split-masked-blocks=false" -split-input-file | FileCheck %s --check-prefix=NOSPLIT
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="decode-rows=0 visible-below=false" -split-input-file | FileCheck %s --check-prefix=NOSPLIT

// A mask_mod `kv < X || ...` with X uniform per program (here a captured
// cache length of the program's batch, as in a speculative verify step):
// the band is inexact, yet the blocks below X run unmasked. X is read once
// before the loops and caps the full blocks' end; the other blocks keep the
// per-element mask.
// CHECK-LABEL: func.func @verify_fwd(
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: memref<?xi32> {tile.capture = 1 : i64}
// Its blocks' work depends on X too: no tile.block_cost for
// tgpu-longest-first.
// CHECK-NOT: tile.block_cost
// CHECK: %[[B:.*]] = tile.program_id 2
// CHECK: %[[X32:.*]] = memref.load %[[LEN]][%[[B]]] : memref<?xi32>
// CHECK-NEXT: %[[X:.*]] = arith.index_cast %[[X32]] : i32 to index
// CHECK-NEXT: %[[HI:.*]] = arith.minsi %{{.*}}, %[[X]] : index
// CHECK: arith.floordivsi %[[HI]]
// CHECK: scf.for
// CHECK-NOT: arith.shrui
// CHECK-NOT: tile.kv_loop = "leading_partial"
// CHECK: } {tile.kv_loop = "full"}
// CHECK: scf.for
// CHECK: arith.shrui
// CHECK: } {tile.kv_loop = "trailing_partial"}
// NOSPLIT-LABEL: func.func @verify_fwd(
// NOSPLIT: } {tile.kv_loop = "masked"}
// NOSPLIT-NOT: tile.kv_loop = "full"
attn.attention @verify {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<bottom_right>,
                        captures = [#attn.capture<"tree", memref<?x?xi32>, ["batch", "seq_q"]>,
                                    #attn.capture<"cache_len", memref<?xi32>, ["batch"]>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index,
           %tree: memref<?x?xi32>, %cache_len: memref<?xi32>) {
    %c0 = arith.constant 0 : index
    %len32 = memref.load %cache_len[%b] : memref<?xi32>
    %len = arith.index_cast %len32 : i32 to index
    %j = arith.subi %kv, %len : index
    %committed = arith.cmpi slt, %j, %c0 : index
    %jc = arith.maxsi %j, %c0 : index
    %bits = memref.load %tree[%b, %q] : memref<?x?xi32>
    %shift = arith.index_cast %jc : index to i32
    %bit = arith.shrui %bits, %shift : i32
    %one = arith.constant 1 : i32
    %low = arith.andi %bit, %one : i32
    %set = arith.cmpi eq, %low, %one : i32
    %visible = arith.ori %set, %committed : i1
    attn.yield %visible : i1
  }

// -----

// A bound that depends on the query (not uniform per program) or a
// conjunction leaves every block masked.
// CHECK-LABEL: func.func @per_query_fwd(
// CHECK: } {tile.kv_loop = "masked"}
// CHECK-NOT: tile.kv_loop = "full"
// CHECK-LABEL: func.func @conjunction_fwd(
// CHECK: } {tile.kv_loop = "masked"}
// CHECK-NOT: tile.kv_loop = "full"
attn.attention @per_query {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                           captures = [#attn.capture<"limit", memref<?xi32>, ["seq_q"]>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index, %limit: memref<?xi32>) {
    %x32 = memref.load %limit[%q] : memref<?xi32>
    %x = arith.index_cast %x32 : i32 to index
    %below = arith.cmpi slt, %kv, %x : index
    attn.yield %below : i1
  }
attn.attention @conjunction {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                             captures = [#attn.capture<"limit", memref<?xi32>, ["batch"]>,
                                         #attn.capture<"doc", memref<?xi32>, ["seq_kv"]>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index, %limit: memref<?xi32>,
           %doc: memref<?xi32>) {
    %x32 = memref.load %limit[%b] : memref<?xi32>
    %x = arith.index_cast %x32 : i32 to index
    %below = arith.cmpi slt, %kv, %x : index
    %d = memref.load %doc[%kv] : memref<?xi32>
    %c0 = arith.constant 0 : i32
    %even = arith.cmpi eq, %d, %c0 : i32
    %both = arith.andi %below, %even : i1
    attn.yield %both : i1
  }
