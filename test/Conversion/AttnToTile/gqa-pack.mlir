// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 decode-rows=64" -cse | FileCheck %s
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 decode-rows=64 gqa-pack=false" | FileCheck %s --check-prefix=NOPACK
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 decode-rows=64" -tile-split-kv | FileCheck %s --check-prefix=SPLIT
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 decode-rows=64 wide-decode-rows=128" -tile-split-kv | FileCheck %s --check-prefix=WIDE
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 decode-rows=64 wide-decode-rows=128 gqa-pack=false" | FileCheck %s --check-prefix=NOWIDE
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 decode-rows=64 wide-decode-rows=256" | FileCheck %s --check-prefix=NOWIDE
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 decode-rows=64 wide-decode-rows=126" | FileCheck %s --check-prefix=NOWIDE
// The wide program's own keys per step (wide-decode-keys), the others' kept;
// a value that is not a multiple of 64 below block-n is ignored.
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 block-n=128 decode-rows=64 wide-decode-rows=128 wide-decode-keys=64" | FileCheck %s --check-prefix=KEYS
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 block-n=128 decode-rows=64 wide-decode-rows=128 wide-decode-keys=96" | FileCheck %s --check-prefix=SAMEKEYS

// GQA packing (convert-attn-to-tile gqa-pack): the decode program of a 4:1
// group runs one program per (block of 64 / 4 queries, KV head, batch); Q,
// O and LSE are viewed packed from the group's first head, K and V by the
// KV head; the query position of row r is r / 4 and its head 4h + r % 4,
// which the score_mod sees. The prefill program is unchanged.
attn.attention @g {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                   gqa_group = 4, causal = #attn.causal<bottom_right>,
                   captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>]}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index,
            %slopes: memref<?xf32>) {
    %slope = memref.load %slopes[%h] : memref<?xf32>
    %biased = arith.addf %score, %slope : f32
    attn.yield %biased : f32
  }

// CHECK-LABEL: func.func @g_fwd(
// CHECK-SAME: tile.grid = {{\[\["ceildiv", "seq_q", 128\], "heads", "batch"\]}}
// CHECK-NOT: packed
// CHECK-LABEL: func.func @g_fwd_decode(
// CHECK-SAME: tile.grid = {{\[\["ceildiv", \["mul", "seq_q", 4\], 64\], "kv_heads", "batch"\]}}
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[BLOCK:.+]] = tile.program_id 0
// CHECK-DAG: %[[KVH:.+]] = tile.program_id 1
// CHECK-DAG: %[[B:.+]] = tile.program_id 2
// CHECK: %[[H0:.+]] = arith.muli %[[KVH]], %[[C4]] : index
// CHECK: %[[Q:.+]] = tile.view %arg0[%[[B]], %[[H0]]] keep [1, 3] packed 2 : {{.*}} -> <?x64xbf16, group 4>
// CHECK: tile.view %arg1[%[[B]], %[[KVH]]] keep [1, 3] : {{.*}} -> <?x64xbf16>
// CHECK: tile.view %arg2[%[[B]], %[[KVH]]] keep [1, 3] : {{.*}} -> <?x64xbf16>
// CHECK: %[[O:.+]] = tile.view %arg3[%[[B]], %[[H0]]] keep [1, 3] packed 2 : {{.*}} -> <?x64xbf16, group 4>
// CHECK: %[[LSE:.+]] = tile.view %arg4[%[[B]], %[[H0]]] keep [2] packed 1 : {{.*}} -> <?xf32, group 4>
// CHECK: %[[ROWS:.+]] = tile.dim %[[Q]], 0 : <?x64xbf16, group 4>
// CHECK: arith.divui %[[ROWS]], %[[C4]] : index
// CHECK: %[[START:.+]] = arith.muli %[[BLOCK]], %c64 : index
// CHECK: tile.load %[[Q]][%[[START]], %c0]
// CHECK: %[[R:.+]] = arith.addi {{.*}} : tensor<64x64xindex>
// CHECK: %[[G:.+]] = tile.splat %[[C4]] : index -> tensor<64x64xindex>
// CHECK: arith.divui %[[R]], %[[G]] : tensor<64x64xindex>
// CHECK: %[[GI:.+]] = arith.remui %[[R]], %[[G]] : tensor<64x64xindex>
// CHECK: %[[H0S:.+]] = tile.splat %[[H0]] : index -> tensor<64x64xindex>
// CHECK: %[[HEAD:.+]] = arith.addi %[[H0S]], %[[GI]] : tensor<64x64xindex>
// CHECK: tile.gather %arg5[%[[HEAD]]]
// CHECK: tile.store %{{.*}}, %[[O]][%[[START]], %c0]
// CHECK: tile.store %{{.*}}, %[[LSE]][%[[START]]]

// NOPACK-LABEL: func.func @g_fwd_decode(
// NOPACK-SAME: tile.grid = {{\[\["ceildiv", "seq_q", 64\], "heads", "batch"\]}}
// NOPACK-NOT: packed

// Split: the partial results are stored through packed views like the
// outputs they stand for, and kv_splits counts the programs of the kernel
// that runs (each kernel's count weighted by its launch condition): the
// prefill's when seq_q > 64, the packed decode programs' otherwise.
// SPLIT-LABEL: func.func @g_fwd_decode(
// SPLIT-SAME: kv_splits = {{\["max", \["add", \["mul", \["min", \["max", \["sub", "seq_q", 64\], 0\], 1\], \["max", \["min", \["sub", \["ceildiv", \["add", \["mul", "num_sms", "ctas_per_sm.g_fwd"\], 1\], \["mul", \["ceildiv", "seq_q", 128\], "heads", "batch"\]\], 1\], \["ceildiv", "seq_kv", 256\], 128\], 1\]\], \["mul", \["min", \["max", \["sub", 65, "seq_q"\], 0\], 1\], \["max", \["min", \["sub", \["ceildiv", \["add", \["mul", "num_sms", "ctas_per_sm.g_fwd_decode"\], 1\], \["mul", \["ceildiv", \["mul", "seq_q", 4\], 64\], "kv_heads", "batch"\]\], 1\], \["ceildiv", "seq_kv", 256\], 128\], 1\]\]\], 1\]}}
// SPLIT: scf.if
// SPLIT: tile.view %arg6[%{{.*}}, %{{.*}}] keep [1, 3] packed 2 : {{.*}} -> <?x64xf32, group 4>
// SPLIT: tile.view %arg7[%{{.*}}, %{{.*}}] keep [2] packed 1 : {{.*}} -> <?xf32, group 4>

// The wide decode program (wide-decode-rows): a step whose packed rows
// (seq_q * 4) exceed the decode program's 64 runs on 128-row blocks of the
// same packing instead; the 64-row program keeps the steps it holds whole.
// kv_splits counts the wide program's own grid when it runs.
// WIDE-LABEL: func.func @g_fwd_decode(
// WIDE-SAME: tile.grid = {{\[\["ceildiv", \["mul", "seq_q", 4\], 64\], "kv_heads", \["mul", "batch", "kv_splits"\]\]}}
// WIDE-SAME: tile.when = ["sub", 65, ["mul", "seq_q", 4]]
// WIDE-LABEL: func.func @g_fwd_decode_wide(
// WIDE-SAME: tile.block_m = 128
// WIDE-SAME: tile.grid = {{\[\["ceildiv", \["mul", "seq_q", 4\], 128\], "kv_heads", \["mul", "batch", "kv_splits"\]\]}}
// WIDE-SAME: kv_splits = {{\[.*\["mul", \["min", \["max", \["mul", \["min", \["max", \["sub", 65, "seq_q"\], 0\], 1\], \["min", \["max", \["sub", \["mul", "seq_q", 4\], 64\], 0\], 1\]\], 0\], 1\], \["max", \["min", \["sub", \["ceildiv", \["add", \["mul", "num_sms", "ctas_per_sm.g_fwd_decode_wide"\], 1\], \["mul", \["ceildiv", \["mul", "seq_q", 4\], 128\], "kv_heads", "batch"\]\], 1\], \["ceildiv", "seq_kv", 256\], 128\], 1\]\]\], 1\]}}
// WIDE-SAME: tile.when = {{\["mul", \["min", \["max", \["sub", 65, "seq_q"\], 0\], 1\], \["min", \["max", \["sub", \["mul", "seq_q", 4\], 64\], 0\], 1\]\]}}
// WIDE: tile.view %arg0[%{{.*}}, %{{.*}}] keep [1, 3] packed 2 : {{.*}} -> <?x64xbf16, group 4>
// WIDE: tile.load {{.*}} -> tensor<128x64xbf16>
// Without packing there is no wide program, nor one taller than the
// prefill's blocks (256 > 128) or whose rows do not hold whole groups (126).
// NOWIDE-NOT: @g_fwd_decode_wide

// KEYS-LABEL: func.func @g_fwd(
// KEYS-SAME: tile.block_n = 128
// KEYS-LABEL: func.func @g_fwd_decode(
// KEYS-SAME: tile.block_n = 128
// KEYS-LABEL: func.func @g_fwd_decode_wide(
// KEYS-SAME: tile.block_n = 64
// SAMEKEYS-LABEL: func.func @g_fwd_decode_wide(
// SAMEKEYS-SAME: tile.block_n = 128
