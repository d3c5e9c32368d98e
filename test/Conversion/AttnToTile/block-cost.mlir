// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile | FileCheck %s
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward | FileCheck %s --check-prefix=BWD
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile="block-m=128 decode-rows=64" | FileCheck %s --check-prefix=DECODE

// tile.block_cost: how a forward kernel's work moves along its query blocks,
// from the band's bounds that move with q (tgpu-longest-first orders the
// grid by it; the bands are written out here as attn-infer-mask-bounds
// would prove them). Causal (upper bounds only): later blocks see more keys.
// CHECK-LABEL: func.func @causal_fwd(
// CHECK-SAME: tile.block_cost = "grows"
// The backward's key blocks the other way: later key blocks are seen by
// fewer queries. The kernels over query blocks are not marked.
// A decode program (at most decode-rows query rows: one block or two) has
// no order of blocks to choose, so it carries none.
// DECODE-LABEL: func.func @causal_fwd(
// DECODE-SAME: tile.block_cost = "grows"
// DECODE-LABEL: func.func @causal_fwd_decode(
// DECODE-NOT: tile.block_cost
// DECODE: return
// BWD-LABEL: func.func @causal_bwd_preprocess(
// BWD-NOT: tile.block_cost
// BWD-LABEL: func.func @causal_bwd_dq(
// BWD-NOT: tile.block_cost
// BWD-LABEL: func.func @causal_bwd_dkdv(
// BWD-SAME: tile.block_cost = "shrinks"
attn.attention @causal {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<bottom_right>, kv_band = #attn.band<lower = [], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = true>], exact = true>}

// -----

// Lower bounds only (keys at or past the query): fewer keys later. A bound
// that does not move with q (kv <= 100) changes nothing.
// CHECK-LABEL: func.func @anti_fwd(
// CHECK-SAME: tile.block_cost = "shrinks"
// BWD-LABEL: func.func @anti_bwd_dkdv(
// BWD-SAME: tile.block_cost = "grows"
attn.attention @anti {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                      kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>],
                                           upper = [#attn.kv_bound<q_coeff = 0, offset = 100, diag = false>], exact = true>}

// -----

// No mark: a window (both bounds move: about as many keys per block), bounds
// that do not move with q, no band, a varlen batch (axis 0 runs over every
// sequence's blocks) and block lists (run-time work).
// CHECK-LABEL: func.func @window_fwd(
// CHECK-NOT: tile.block_cost
// CHECK-LABEL: func.func @prefix_fwd(
// CHECK-NOT: tile.block_cost
// CHECK-LABEL: func.func @plain_fwd(
// CHECK-NOT: tile.block_cost
// CHECK-LABEL: func.func @varlen_fwd(
// CHECK-NOT: tile.block_cost
// CHECK-LABEL: func.func @sparse_fwd(
// CHECK-NOT: tile.block_cost
// BWD-NOT: tile.block_cost
attn.attention @window {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>],
                                             upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}
attn.attention @prefix {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        kv_band = #attn.band<lower = [], upper = [#attn.kv_bound<q_coeff = 0, offset = 100, diag = false>], exact = true>}
attn.attention @plain {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
attn.attention @varlen {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<bottom_right>, varlen, kv_band = #attn.band<lower = [], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = true>], exact = true>}
attn.attention @sparse {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<top_left>, block_sparse = array<i64: 128, 128>,
                        kv_band = #attn.band<lower = [], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}

// -----

// A score_mod: the forward is marked, the backward's key blocks are not
// (the renumbering's ids cost registers the mod's per-element work needs).
// CHECK-LABEL: func.func @capped_fwd(
// CHECK-SAME: tile.block_cost = "grows"
// BWD-LABEL: func.func @capped_bwd_dkdv(
// BWD-NOT: tile.block_cost
// BWD: return
attn.attention @capped {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<top_left>, kv_band = #attn.band<lower = [], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %cap = arith.constant 20.0 : f32
    %x = arith.divf %score, %cap : f32
    %t = math.tanh %x : f32
    %capped = arith.mulf %t, %cap : f32
    attn.yield %capped : f32
  }
