// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=deterministic keys-by-queries=true producer=true" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=deterministic keys-by-queries=true" | FileCheck %s --check-prefix=NOPROD
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=deterministic keys-by-queries=true producer=true deterministic-capture-gradients=true" | FileCheck %s --check-prefix=NOPROD

// schedule=deterministic: the same bits in every run, the faster way for
// the op. Under a band's upper bound (causal) at D = 128 with the producer
// that issues the adds: the atomic schedule with its dQ adds in a fixed
// order (ordered-dq, turns passed on a step late); at auto's 128 keys.
// CHECK-LABEL: func.func @causal128_bwd_preprocess(
// CHECK-NOT: func.func @causal128_bwd_dq(
// CHECK-LABEL: func.func @causal128_bwd_dkdv(
// CHECK-SAME: tile.workspace = "dq_turns", tile.zero_fill
// CHECK-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 128], "kv_heads", "batch"]
// CHECK-SAME: tile.ordered_adds = {accumulator = "dq_accum", deferred_signal, rows = 64 : i64, turns = "dq_turns"}
// CHECK-LABEL: func.func @causal128_bwd_dq_convert(
// Without the producer (its adds are the consumers') or with capture
// gradients to be deterministic too (not measured): two kernels.
// NOPROD-LABEL: func.func @causal128_bwd_dq(
// NOPROD-LABEL: func.func @causal128_bwd_dkdv(
// NOPROD-NOT: tile.ordered_adds
// NOPROD-NOT: _bwd_dq_convert
attn.attention @causal128 {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, attn.atomic_key_block = 128 : i64, attn.two_kernel_key_block = 128 : i64,
                           kv_band = #attn.band<lower = [], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = true>], exact = true>}

// -----

// Without an upper bound (plain) too, the turns in key-block order, each
// passed on as soon as its sums are in (no deferred_signal).
// CHECK-LABEL: func.func @plain128_bwd_preprocess(
// CHECK-NOT: func.func @plain128_bwd_dq(
// CHECK-LABEL: func.func @plain128_bwd_dkdv(
// CHECK-SAME: tile.ordered_adds = {accumulator = "dq_accum", rows = 64 : i64, turns = "dq_turns"}
// CHECK-LABEL: func.func @plain128_bwd_dq_convert(
attn.attention @plain128 {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, attn.atomic_key_block = 128 : i64, attn.two_kernel_key_block = 128 : i64}

// -----

// At D = 64 (two kernels measured faster), for GQA (its adds are not the
// producer's) and a window (not a prefix of the keys): two kernels.
// CHECK-LABEL: func.func @causal64_bwd_dq(
// CHECK-LABEL: func.func @causal64_bwd_dkdv(
// CHECK-NOT: tile.ordered_adds
// CHECK-NOT: _bwd_dq_convert
attn.attention @causal64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, attn.atomic_key_block = 128 : i64,
                          kv_band = #attn.band<lower = [], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = true>], exact = true>}

// -----

// CHECK-LABEL: func.func @gqa_bwd_dq(
// CHECK-LABEL: func.func @gqa_bwd_dkdv(
// CHECK-NOT: tile.ordered_adds
// CHECK-NOT: _bwd_dq_convert
attn.attention @gqa {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, gqa_group = 4, attn.atomic_key_block = 128 : i64, attn.two_kernel_key_block = 128 : i64,
                     kv_band = #attn.band<lower = [], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = true>], exact = true>}

// -----

// CHECK-LABEL: func.func @window_bwd_dq(
// CHECK-LABEL: func.func @window_bwd_dkdv(
// CHECK-NOT: tile.ordered_adds
// CHECK-NOT: _bwd_dq_convert
attn.attention @window {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, attn.atomic_key_block = 128 : i64, attn.two_kernel_key_block = 128 : i64,
                        kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>],
                                             upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>],
                                             exact = true>}
