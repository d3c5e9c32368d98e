// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=auto keys-by-queries=true producer=true" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=auto keys-by-queries=true key-block=64" | FileCheck %s --check-prefix=KEYS64
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=auto keys-by-queries=true producer=true deterministic-capture-gradients=true" | FileCheck %s --check-prefixes=DET,DET128
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=auto" | FileCheck %s --check-prefixes=DET,DET64
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=two-kernel keys-by-queries=true producer=true" | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=two-kernel keys-by-queries=true producer=true key-block=64" | FileCheck %s --check-prefix=TWO64
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=two-kernel keys-by-queries=true" | FileCheck %s --check-prefix=TWO64
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=auto keys-by-queries=true producer=true group-steps=false" | FileCheck %s --check-prefix=NOGROUP
// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile-backward="schedule=auto keys-by-queries=true split-dkdv-above=0" | FileCheck %s --check-prefix=SPLIT
// RUN: not kiln-opt %s -convert-attn-to-tile-backward="schedule=fast" 2>&1 | FileCheck %s --check-prefix=BAD

// schedule=auto takes the atomic schedule where attn-choose-tiles marked
// the op with its keys per dK/dV program (D = 128 on sm_90a): one dK/dV
// kernel over 128 keys adding dQ into an f32 workspace, and the kernel that
// converts it; no dQ kernel.
// CHECK-LABEL: func.func @hd128_bwd_preprocess(
// CHECK-NOT: func.func @hd128_bwd_dq(
// CHECK-LABEL: func.func @hd128_bwd_dkdv(
// CHECK-SAME: tile.workspace = "dq_accum"
// CHECK-SAME: tile.block_n = 128 : i64, tile.bwd_stage = "dkdv"
// CHECK-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 128], "kv_heads", "batch"]
// CHECK-LABEL: func.func @hd128_bwd_dq_convert(
// CHECK-SAME: tile.bwd_stage = "convert"
// Only the form measured is taken: another key-block, queries by keys
// (the second DET run) or dK and dV split give two kernels; and capture
// gradients the same in every run want dQ so too.
// KEYS64-LABEL: func.func @hd128_bwd_dq(
// KEYS64-LABEL: func.func @hd128_bwd_dkdv(
// KEYS64-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 64], "kv_heads", "batch"]
// KEYS64-NOT: _bwd_dq_convert
// SPLIT-LABEL: func.func @hd128_bwd_dq(
// SPLIT-LABEL: func.func @hd128_bwd_dk(
// SPLIT-NOT: _bwd_dq_convert
// The two-kernel schedule takes the keys attn-choose-tiles marked for it
// (128 at D = 128 on sm_90a) in the form measured, keys by queries with a
// producer warpgroup; given a key-block, queries by keys or no producer,
// block-n.
// DET-LABEL: func.func @hd128_bwd_dq(
// DET-LABEL: func.func @hd128_bwd_dkdv(
// DET128-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 128], "kv_heads", "batch"]
// DET64-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 64], "kv_heads", "batch"]
// TWO-LABEL: func.func @hd128_bwd_dkdv(
// TWO-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 128], "kv_heads", "batch"]
// TWO64-LABEL: func.func @hd128_bwd_dkdv(
// TWO64-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 64], "kv_heads", "batch"]
// DET-NOT: _bwd_dq_convert
attn.attention @hd128 {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, attn.atomic_key_block = 128 : i64, attn.two_kernel_key_block = 128 : i64}

// -----

// Unmarked (D = 64, or any head dim on sm_80 or the CPU): two kernels.
// CHECK-LABEL: func.func @hd64_bwd_preprocess(
// CHECK-LABEL: func.func @hd64_bwd_dq(
// CHECK-SAME: tile.bwd_stage = "dq"
// CHECK-LABEL: func.func @hd64_bwd_dkdv(
// CHECK-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 64], "kv_heads", "batch"]
// CHECK-NOT: _bwd_dq_convert
attn.attention @hd64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}

// -----

// Where the atomic schedule measured slower, auto keeps two kernels even on
// a marked op: GQA without its group's steps (no producer), a varlen batch,
// a band with a lower bound (a window). GQA at D = 64 takes it (measured
// faster at N >= 4096 since its key blocks go out longest first in wave
// chunks), as at D = 128 (its 64-key two-kernel dK/dV kernel spills). The
// two-kernel schedule keeps block-n keys for a varlen batch and a window.
// CHECK-LABEL: func.func @gqa64_bwd_preprocess(
// CHECK-NOT: func.func @gqa64_bwd_dq(
// CHECK-LABEL: func.func @gqa64_bwd_dkdv(
// CHECK-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 128], "kv_heads", "batch"]
// CHECK-LABEL: func.func @gqa64_bwd_dq_convert(
// NOGROUP-LABEL: func.func @gqa64_bwd_dq(
// NOGROUP-LABEL: func.func @gqa64_bwd_dkdv(
// NOGROUP-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 64], "kv_heads", "batch"]
// NOGROUP-NOT: _bwd_dq_convert
attn.attention @gqa64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, gqa_group = 4, attn.atomic_key_block = 128 : i64}

// -----

// Without its group's steps in top-level loops GQA's dK/dV kernel has no
// producer: two kernels at block-n keys.
// NOGROUP-LABEL: func.func @gqa_bwd_dq(
// NOGROUP-LABEL: func.func @gqa_bwd_dkdv(
// NOGROUP-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 64], "kv_heads", "batch"]
// NOGROUP-NOT: _bwd_dq_convert
// CHECK-LABEL: func.func @gqa_bwd_preprocess(
// CHECK-NOT: func.func @gqa_bwd_dq(
// CHECK-LABEL: func.func @gqa_bwd_dkdv(
// CHECK-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 128], "kv_heads", "batch"]
// CHECK-LABEL: func.func @gqa_bwd_dq_convert(
// TWO-LABEL: func.func @gqa_bwd_dkdv(
// TWO-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 128], "kv_heads", "batch"]
attn.attention @gqa {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, gqa_group = 4, attn.atomic_key_block = 128 : i64, attn.two_kernel_key_block = 128 : i64}

// -----

// CHECK-LABEL: func.func @packed_bwd_dq(
// CHECK-LABEL: func.func @packed_bwd_dkdv(
// CHECK-SAME: tile.grid = {{\[\[}}"add", ["ceildiv", "total_kv", 64], "batch"]
// CHECK-NOT: _bwd_dq_convert
// TWO-LABEL: func.func @packed_bwd_dkdv(
// TWO-SAME: tile.grid = {{\[\[}}"add", ["ceildiv", "total_kv", 64], "batch"]
attn.attention @packed {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, varlen, attn.atomic_key_block = 128 : i64, attn.two_kernel_key_block = 128 : i64}

// -----

// CHECK-LABEL: func.func @window_bwd_dq(
// CHECK-LABEL: func.func @window_bwd_dkdv(
// CHECK-SAME: tile.grid = {{\[\[}}"ceildiv", "seq_kv", 64]
// CHECK-NOT: _bwd_dq_convert
attn.attention @window {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, attn.atomic_key_block = 128 : i64, attn.two_kernel_key_block = 128 : i64,
                        kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>],
                                             upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>],
                                             exact = true>}

// BAD: error: schedule must be two-kernel, atomic, auto or deterministic, got 'fast'
