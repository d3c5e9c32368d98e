// RUN: kiln-opt %s -split-input-file -convert-attn-to-tile | FileCheck %s

// Mods run on the padding rows and keys of edge tiles too. A mod that reads
// a capture at a position (a document id) sees the positions clamped into
// the sequence, so that it never reads past the capture; one that only
// computes with them (ALiBi's slope[h] * (kv - q)) gets them as they are.
// CHECK-LABEL: func.func @alibi_fwd(
// CHECK-NOT: arith.minsi {{.*}} : tensor<64x64xindex>
// CHECK: return
attn.attention @alibi {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                       captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>]}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index,
            %slopes: memref<?xf32>) {
    %slope = memref.load %slopes[%h] : memref<?xf32>
    %dist = arith.subi %kv, %q : index
    %dist_i = arith.index_cast %dist : index to i64
    %dist_f = arith.sitofp %dist_i : i64 to f32
    %bias = arith.mulf %slope, %dist_f : f32
    %biased = arith.addf %score, %bias : f32
    attn.yield %biased : f32
  }

// -----

// CHECK-LABEL: func.func @docs_fwd(
// CHECK: arith.minsi {{.*}} : tensor<64x64xindex>
// CHECK: scf.for
// CHECK: arith.minsi {{.*}} : tensor<64x64xindex>
// CHECK: tile.gather
attn.attention @docs {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                      captures = [#attn.capture<"doc_q", memref<?xi32>, ["seq_q"]>,
                                  #attn.capture<"doc_kv", memref<?xi32>, ["seq_kv"]>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index,
           %doc_q: memref<?xi32>, %doc_kv: memref<?xi32>) {
    %dq = memref.load %doc_q[%q] : memref<?xi32>
    %dk = memref.load %doc_kv[%kv] : memref<?xi32>
    %same = arith.cmpi eq, %dq, %dk : i32
    attn.yield %same : i1
  }
