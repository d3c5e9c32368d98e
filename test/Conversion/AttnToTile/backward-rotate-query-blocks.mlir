// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=auto keys-by-queries=true" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=auto keys-by-queries=true rotate-query-blocks=false" | FileCheck %s --check-prefix=OFF

// The atomic schedule without a band: each dK/dV program walks its Q blocks
// from its own key block's index (program id 0) mod the range's steps, so
// the programs running at once add their dQ shares into different rows.
// The loop counts steps; the step's Q block is (k + first) mod steps.
// CHECK-LABEL: func.func @plain_bwd_dkdv(
// CHECK:       [[KB:%.+]] = tile.program_id 0
// CHECK:       [[STEPS:%.+]] = arith.ceildivsi
// CHECK:       [[ONE:%.+]] = arith.maxsi [[STEPS]],
// CHECK:       [[FIRST:%.+]] = arith.remui [[KB]], [[ONE]] : index
// CHECK:       scf.for [[K:%.+]] = %{{.+}} to [[STEPS]] step
// CHECK:         [[SUM:%.+]] = arith.addi [[K]], [[FIRST]] : index
// CHECK-NEXT:    [[BLOCK:%.+]] = arith.remui [[SUM]], [[STEPS]] : index
// CHECK:       {tile.q_loop = "masked"}
// CHECK-LABEL: func.func @plain_bwd_dq_convert(
// OFF-LABEL:   func.func @plain_bwd_dkdv(
// OFF-NOT:     arith.remui
// OFF:         {tile.q_loop = "masked"}
attn.attention @plain {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, attn.atomic_key_block = 128 : i64}

// -----

// A band staggers the programs already (each starts at its diagonal): the
// causal dK/dV kernel's loops run from their first Q block.
// CHECK-LABEL: func.func @causal_bwd_dkdv(
// CHECK-NOT:   arith.remui
// CHECK-LABEL: func.func @causal_bwd_dq_convert(
attn.attention @causal {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, attn.atomic_key_block = 128 : i64,
                        kv_band = #attn.band<lower = [], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}

// -----

// The two-kernel schedule (no dQ adds) keeps its order.
// CHECK-LABEL: func.func @hd64_bwd_dkdv(
// CHECK-NOT:   arith.remui
attn.attention @hd64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
