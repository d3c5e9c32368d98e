// RUN: kiln-opt %s -convert-attn-to-tile-backward="capture-gradients=true" | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -convert-attn-to-tile-backward="capture-gradients=true schedule=atomic" | FileCheck %s --check-prefix=ATOMIC
// RUN: kiln-opt %s -convert-attn-to-tile-backward | FileCheck %s --check-prefix=OFF

// ALiBi with learnable slopes: d(score_mod)/d(slope[h]) = kv - q, so the
// dQ kernel (which sees every (q, kv) pair once) adds dS * (kv - q),
// masked, at slopes[h] of grad_slopes (a tensor shaped like the capture).
attn.attention @alibi {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                       causal = #attn.causal<top_left>,
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

// CHECK-LABEL: func.func @alibi_bwd_dq
// CHECK-SAME: [[G:%[^:]+]]: memref<?xf32, strided<[?], offset: ?>> {tile.shape = ["heads"], tile.tensor = "grad_slopes"}
// CHECK: scf.for
// CHECK: arith.subf {{.*}} : tensor<64x64xf32>
// CHECK: [[DS:%.+]] = arith.mulf {{%.+}}, {{%.+}} : tensor<64x64xf32>
// CHECK: [[SHARE:%.+]] = arith.mulf [[DS]], {{%.+}} : tensor<64x64xf32>
// CHECK-NEXT: [[MASKED:%.+]] = arith.select {{%.+}}, [[SHARE]], {{%.+}} : tensor<64x64xi1>, tensor<64x64xf32>
// CHECK-NEXT: [[H:%.+]] = tile.splat {{%.+}} : index -> tensor<64x64xindex>
// CHECK-NEXT: tile.scatter_add [[MASKED]], [[G]][[[H]]]
// CHECK-LABEL: func.func @alibi_bwd_dkdv
// CHECK-NOT: grad_slopes
// CHECK-NOT: tile.scatter_add
// CHECK: return

// The atomic schedule has no dQ kernel: the dK/dV kernel adds the share.
// ATOMIC-LABEL: func.func @alibi_bwd_dkdv
// ATOMIC-SAME: tile.tensor = "grad_slopes"
// ATOMIC: tile.scatter_add

// OFF-NOT: grad_slopes
// OFF-NOT: tile.scatter_add

// Deterministic: the dQ kernel adds fixed-point parts into a zeroed i64
// workspace [heads, 3], and a last kernel (one program per 4096 entries)
// writes grad_slopes from it, NaN where an addend was out of range.
// RUN: kiln-opt %s -convert-attn-to-tile-backward="deterministic-capture-gradients=true" | FileCheck %s --check-prefix=DET
// DET-LABEL: func.func @alibi_bwd_dq
// DET-SAME: memref<?x3xi64, strided<[?, ?], offset: ?>> {tile.shape = ["heads", 3], tile.workspace = "grad_slopes_fixed", tile.zero_fill}
// DET-NOT: tile.tensor = "grad_slopes"
// DET: tile.scatter_add {{.*}} {fixed_point} : tensor<64x64xf32>, memref<?x3xi64
// DET-LABEL: func.func @alibi_bwd_grad_slopes
// DET-SAME: tile.workspace = "grad_slopes_fixed"
// DET-SAME: tile.tensor = "grad_slopes"
// DET-SAME: tile.bwd_stage = "capture_grad"
// DET-SAME: tile.grid = {{\[}}["ceildiv", "heads", 4096], 1, 1]
// DET-SAME: tile.when = "heads"
// DET: memref.dim
// DET-COUNT-3: tile.gather
// DET: arith.sitofp {{.*}} : tensor<64x64xi64> to tensor<64x64xf64>
// DET: arith.truncf {{.*}} : tensor<64x64xf64> to tensor<64x64xf32>
// DET: tile.scatter_add
// DET-NOT: fixed_point
// DET: return
