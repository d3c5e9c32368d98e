// RUN: kiln-opt %s -kiln-fwd-tile-pipeline | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -kiln-fwd-tile-pipeline="block-m=32 block-n=16 split-masked-blocks=false" | FileCheck %s --check-prefix=SMALL

// attn -> tile, cleaned up: nothing of attn is left, loop-invariant tiles
// (the query index tile, splatted constants) sit outside the KV loops, and
// a causal window yields the three-loop split.
// CHECK-NOT: attn.
// CHECK-LABEL: func.func @causal_window_fwd
// CHECK: %[[QIDX:.*]] = tile.iota dim 0 : tensor<64x64xindex>
// CHECK: %[[KIDX:.*]] = tile.iota dim 1 : tensor<64x64xindex>
// CHECK: scf.for
// CHECK-NOT: tile.iota
// CHECK: } {tile.kv_loop = "leading_partial"}
// CHECK: scf.for
// CHECK-NOT: tensor<64x64xi1>
// CHECK: } {tile.kv_loop = "full"}
// CHECK: scf.for
// CHECK: } {tile.kv_loop = "trailing_partial"}
// tile-split-kv: the outputs go to the split's partial arrays unless the run
// does not split, and a combine kernel merges them.
// CHECK: scf.if
// CHECK-LABEL: func.func @causal_window_fwd_combine
// CHECK-NOT: attn.

// SMALL-LABEL: func.func @causal_window_fwd
// SMALL: tile.dot {{.*}} -> tensor<32x16xf32>
// SMALL: } {tile.kv_loop = "masked"}
// SMALL-NOT: tile.kv_loop
attn.attention @causal_window {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                               causal = #attn.causal<top_left>}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %w = arith.constant 256 : index
    %d = arith.subi %q, %kv : index
    %near = arith.cmpi sle, %d, %w : index
    attn.yield %near : i1
  }
