// RUN: kiln-opt %s -split-input-file -attn-infer-mask-bounds -convert-attn-to-tile-backward | FileCheck %s
// RUN: kiln-opt %s -split-input-file -attn-infer-mask-bounds -convert-attn-to-tile-backward="split-masked-blocks=false" | FileCheck %s --check-prefix=NOSPLIT

// Where the band is exact, the backward splits its loops as the forward
// does: the dQ kernel's KV loop into the blocks inside every row's band and
// inside Lk (unmasked) and the partial ones around them, the dK/dV kernel's
// query loop into the Q blocks whose rows all see the key block (and lie
// inside Lq; none when the key block reaches past Lk) between partial ones.
// Causal has no lower bound: the dQ kernel has no leading partial loop.
// CHECK-LABEL: func.func @causal_bwd_dq(
// CHECK: scf.for
// CHECK-NOT: arith.select {{.*}} : tensor<64x64xi1>
// CHECK-NOT: tile.kv_loop = "leading_partial"
// CHECK: } {tile.kv_loop = "full"}
// CHECK: scf.for
// CHECK: arith.select {{.*}} : tensor<64x64xi1>
// CHECK: } {tile.kv_loop = "trailing_partial"}
// CHECK-LABEL: func.func @causal_bwd_dkdv(
// CHECK: scf.for
// CHECK: arith.select {{.*}} : tensor<64x64xi1>
// CHECK: } {tile.q_loop = "leading_partial"}
// CHECK: scf.for
// CHECK-NOT: arith.select {{.*}} : tensor<64x64xi1>
// CHECK: } {tile.q_loop = "full"}
// CHECK: scf.for
// CHECK: arith.select {{.*}} : tensor<64x64xi1>
// CHECK: } {tile.q_loop = "trailing_partial"}
// The ablation keeps one masked loop per kernel.
// NOSPLIT-LABEL: func.func @causal_bwd_dq(
// NOSPLIT: } {tile.kv_loop = "masked"}
// NOSPLIT-NOT: tile.kv_loop = "full"
// NOSPLIT-LABEL: func.func @causal_bwd_dkdv(
// NOSPLIT: } {tile.q_loop = "masked"}
// NOSPLIT-NOT: tile.q_loop = "full"
attn.attention @causal {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<bottom_right>}

// -----

// A sliding window has both bounds: the dQ kernel's KV loop has all three.
// CHECK-LABEL: func.func @window_bwd_dq(
// CHECK: } {tile.kv_loop = "leading_partial"}
// CHECK: } {tile.kv_loop = "full"}
// CHECK: } {tile.kv_loop = "trailing_partial"}
// CHECK-LABEL: func.func @window_bwd_dkdv(
// CHECK: } {tile.q_loop = "leading_partial"}
// CHECK: } {tile.q_loop = "full"}
// CHECK: } {tile.q_loop = "trailing_partial"}
attn.attention @window {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %window = arith.constant 128 : index
    %dist = arith.subi %q, %kv : index
    %causal = arith.cmpi sle, %kv, %q : index
    %near = arith.cmpi sle, %dist, %window : index
    %keep = arith.andi %causal, %near : i1
    attn.yield %keep : i1
  }
