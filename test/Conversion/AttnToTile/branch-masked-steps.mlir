// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="decode-rows=0" -split-input-file | FileCheck %s
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="decode-rows=0 branch-masked-steps=false" -split-input-file | FileCheck %s --check-prefix=LOOP
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile-backward="schedule=atomic keys-by-queries=true branch-masked-steps=true" -split-input-file | FileCheck %s --check-prefix=BWD
// The CPU backend against float64, with a partial last key block (190 keys):
// RUN: kiln run %s --variant plain --heads 2 --seqlen 150 --seqlen-kv 190 --check | FileCheck %s --check-prefix=NUM
// RUN: kiln run %s --variant softcap --heads 2 --seqlen 150 --seqlen-kv 190 --check | FileCheck %s --check-prefix=NUM
// RUN: kiln run %s --variant plain --heads 2 --seqlen 150 --seqlen-kv 190 --check --no-branch-masked-steps | FileCheck %s --check-prefix=NUM
// RUN: kiln run %s --variant plain --heads 2 --seqlen 150 --seqlen-kv 190 --backward --branch-masked-backward-steps --check | FileCheck %s --check-prefix=NUM
// RUN: kiln run %s --variant plain --heads 2 --seqlen 190 --seqlen-kv 150 --backward --branch-masked-backward-steps --check | FileCheck %s --check-prefix=NUM

// branch-masked-steps: where only the key count bounds the keys, the partial
// steps are at most one (the key block holding Lk), so the full loop runs it
// too, its mask in a branch taken from the full blocks' end on: one copy of
// the step. The mask applies to the product itself, before the scale.
// CHECK-LABEL: func.func @plain_fwd(
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[PARTIAL:.*]] = arith.cmpi sge, %[[J]], %{{.*}} : index
// CHECK: %[[S:.*]] = tile.dot
// CHECK-NEXT: %[[MASKED:.*]] = scf.if %[[PARTIAL]] -> (tensor<64x64xf32>) {
// CHECK: tile.iota dim 1
// CHECK: %[[SEL:.*]] = arith.select %{{.*}}, %[[S]], %{{.*}} : tensor<64x64xi1>, tensor<64x64xf32>
// CHECK-NEXT: scf.yield %[[SEL]]
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[S]]
// CHECK-NEXT: }
// CHECK: arith.mulf %[[MASKED]],
// CHECK: } {tile.kv_loop = "full_then_partial"}
// CHECK-NOT: scf.for
// CHECK: return
// LOOP-LABEL: func.func @plain_fwd(
// LOOP-NOT: scf.if
// LOOP: } {tile.kv_loop = "full"}
// LOOP: } {tile.kv_loop = "trailing_partial"}
// NUM: PASS
// The dK/dV kernel's Q loop likewise (opt-in: measured 1-5% slower on an
// H200 for a third less compile time): its partial steps are the last Q
// block and, for a key block reaching past Lk, all of them (the branch then
// always taken).
// BWD-LABEL: func.func @plain_bwd_dkdv(
// BWD: %[[PARTIAL:.*]] = arith.cmpi sge, %arg{{[0-9]+}}, %{{.*}} : index
// BWD: scf.if %[[PARTIAL]] -> (tensor<
// BWD: } {tile.q_loop = "full_then_partial"}
// BWD-NOT: tile.q_loop
// BWD-LABEL: func.func @softcap_bwd_dkdv(
// BWD-NOT: scf.if
// BWD: } {tile.q_loop = "full"}
// BWD: } {tile.q_loop = "trailing_partial"}
// BWD-LABEL: func.func @causal_bwd_dkdv(
// BWD: } {tile.q_loop = "leading_partial"}
// BWD: } {tile.q_loop = "full"}
attn.attention @plain {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}

// -----

// A score_mod's partial step keeps its own loop: its mask would come after
// the mod, inside the per-element chain (measured slower on an H200).
// CHECK-LABEL: func.func @softcap_fwd(
// CHECK-NOT: scf.if
// CHECK: } {tile.kv_loop = "full"}
// CHECK: } {tile.kv_loop = "trailing_partial"}
attn.attention @softcap {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    %cap = arith.constant 20.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %y = arith.mulf %t, %cap : f32
    attn.yield %y : f32
  }

// -----

// A causal band's diagonal steps (several per tile) keep their own loop.
// CHECK-LABEL: func.func @causal_fwd(
// CHECK-NOT: scf.if
// CHECK: } {tile.kv_loop = "full"}
// CHECK: } {tile.kv_loop = "trailing_partial"}
attn.attention @causal {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<top_left>}
