// RUN: kiln-opt %s -split-input-file -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 block-n=64 decode-rows=32 short-rows=64 short-keys=1000" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 block-n=64 short-rows=64 short-keys=1000" | FileCheck %s --check-prefix=NODECODE
// RUN: kiln-opt %s -split-input-file -attn-infer-mask-bounds -convert-attn-to-tile="block-m=64 block-n=64 short-rows=64 short-keys=1000" | FileCheck %s --check-prefix=NOTBELOW
// RUN: not kiln-opt %s -split-input-file -convert-attn-to-tile="short-keys=-1" 2>&1 | FileCheck %s --check-prefix=BAD

// A masked variant (here causal) also gets @v_fwd_short with short-rows-row
// blocks, launched where seq_kv <= short-keys; the prefill program where
// seq_kv is above it; both only where the decode program does not run.
// CHECK-LABEL: func.func @c_fwd(
// CHECK-SAME: tile.block_m = 128
// CHECK-SAME: tile.when = ["mul", ["min", ["max", ["sub", "seq_q", 32], 0], 1], ["min", ["max", ["sub", "seq_kv", 1000], 0], 1]]
// CHECK-LABEL: func.func @c_fwd_short(
// CHECK-SAME: tile.block_m = 64
// CHECK-SAME: tile.grid = {{\[}}["ceildiv", "seq_q", 64], "heads", "batch"]
// CHECK-SAME: tile.when = ["mul", ["min", ["max", ["sub", "seq_q", 32], 0], 1], ["min", ["max", ["sub", 1001, "seq_kv"], 0], 1]]
// CHECK: tile.load {{.*}} -> tensor<64x64xbf16>
// CHECK-LABEL: func.func @c_fwd_decode(
// CHECK-SAME: tile.when = ["sub", 33, "seq_q"]
// Without a decode program the conditions are on seq_kv alone.
// NODECODE-LABEL: func.func @c_fwd(
// NODECODE-SAME: tile.when = ["sub", "seq_kv", 1000]
// NODECODE-LABEL: func.func @c_fwd_short(
// NODECODE-SAME: tile.when = ["sub", 1001, "seq_kv"]
// Not below the chosen rows: no short program.
// NOTBELOW: func.func @c_fwd(
// NOTBELOW-NOT: _fwd_short
// BAD: decode-rows, short-rows and short-keys must not be negative
attn.attention @c {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                   causal = #attn.causal<bottom_right>}

// -----

// Unmasked: no short program.
// CHECK-LABEL: func.func @p_fwd(
// CHECK-NOT: func.func @p_fwd_short
// CHECK-LABEL: func.func @p_fwd_decode(
// NODECODE-NOT: func.func @p_fwd_short
attn.attention @p {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
