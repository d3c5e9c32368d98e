// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 decode-rows=64" -cse | FileCheck %s
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 decode-rows=64 gqa-pack=false" | FileCheck %s --check-prefix=NOPACK
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 decode-rows=64" -tile-split-kv | FileCheck %s --check-prefix=SPLIT

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
// outputs they stand for, and kv_splits counts the packed programs.
// SPLIT-LABEL: func.func @g_fwd_decode(
// SPLIT-SAME: kv_splits = {{\["max", \["min", \["sub", \["ceildiv", \["add", \["mul", "num_sms", "ctas_per_sm.g_fwd_decode"\], 1\], \["mul", \["ceildiv", \["mul", "seq_q", 4\], 64\], "kv_heads", "batch"\]\]}}
// SPLIT: scf.if
// SPLIT: tile.view %arg6[%{{.*}}, %{{.*}}] keep [1, 3] packed 2 : {{.*}} -> <?x64xf32, group 4>
// SPLIT: tile.view %arg7[%{{.*}}, %{{.*}}] keep [2] packed 1 : {{.*}} -> <?xf32, group 4>
