// RUN: kiln-opt %s -split-input-file -verify-diagnostics -convert-attn-to-tile-backward | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -verify-diagnostics -convert-attn-to-tile-backward="schedule=atomic" | FileCheck %s --check-prefix=ATOMIC
// RUN: kiln-opt %s -split-input-file -verify-diagnostics -convert-attn-to-tile-backward="keys-by-queries=true" | FileCheck %s --check-prefix=KBQ
// RUN: kiln-opt %s -split-input-file -verify-diagnostics -convert-attn-to-tile-backward="keys-by-queries=true schedule=atomic" | FileCheck %s --check-prefix=KBQ-ATOMIC

// Three kernels next to the (kept) spec: D = rowsum(dO * O) and the
// base-2 LSE; dQ over KV blocks; dK/dV over the query heads of a KV head and
// their Q blocks.
// CHECK-LABEL: attn.attention @softcap
// CHECK-LABEL: func.func @softcap_bwd_preprocess(
// CHECK-SAME: {tile.shape = ["batch", "heads", ["mul", ["ceildiv", "seq_q", 64], 64]], tile.workspace = "delta"}
// CHECK-SAME: {tile.shape = ["batch", "heads", "seq_q"], tile.tensor = "lse"}
// CHECK-SAME: {tile.shape = ["batch", "heads", ["mul", ["ceildiv", "seq_q", 64], 64]], tile.workspace = "lse_log2"}
// CHECK-SAME: tile.bwd_stage = "preprocess"
// CHECK: %[[O:.*]] = arith.extf %{{.*}} : tensor<64x64xbf16> to tensor<64x64xf32>
// CHECK: %[[DO:.*]] = arith.extf %{{.*}} : tensor<64x64xbf16> to tensor<64x64xf32>
// CHECK: %[[PROD:.*]] = arith.mulf %[[O]], %[[DO]] : tensor<64x64xf32>
// CHECK: tile.reduce sum %[[PROD]] dim 1
// Rows past Lq read LSE = +inf and rows that saw no key (-inf) use +inf, so
// P = 0 there; the padding's rows are written too.
// CHECK: %[[LSE:.*]] = tile.load %{{.*}} fill 0x7F800000 : f32
// CHECK: %[[LSE2:.*]] = arith.mulf %[[LSE]], %{{.*}} : tensor<64xf32>
// CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[LSE2]], %{{.*}} : tensor<64xf32>
// CHECK: %[[REF:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[LSE2]]
// CHECK: tile.store %[[REF]]
// CHECK-LABEL: func.func @softcap_bwd_dq(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>> {tile.shape = ["batch", "seq_q", "heads", 64], tile.tensor = "dq"})
// CHECK-SAME: tile.bwd_stage = "dq"
// The kernels read the base-2 LSE as it is (+inf past the padding).
// CHECK: %[[LSE:.*]] = tile.load %{{.*}} fill 0x7F800000 : f32
// CHECK-NOT: arith.cmpf oeq
// CHECK: scf.for
// CHECK:   %[[S:.*]] = tile.dot %{{.*}}, %{{.*}} {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
// The softcap and its derivative 1 - tanh^2, built side by side.
// CHECK:   %[[T:.*]] = math.tanh %{{.*}} : tensor<64x64xf32>
// CHECK:   %[[T2:.*]] = arith.mulf %[[T]], %[[T]] : tensor<64x64xf32>
// CHECK:   arith.subf %{{.*}}, %[[T2]] : tensor<64x64xf32>
// CHECK:   %[[P:.*]] = math.exp2
// dP = dO V^T, then dS; dQ accumulates dS K.
// CHECK:   tile.dot %{{.*}}, %{{.*}} {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
// CHECK:   %[[DS:.*]] = arith.truncf %{{.*}} : tensor<64x64xf32> to tensor<64x64xbf16>
// CHECK:   tile.dot %[[DS]], %{{.*}}, %{{.*}} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// CHECK: } {tile.kv_loop = "masked"}
// CHECK: %[[DQ:.*]] = arith.truncf %{{.*}} : tensor<64x64xf32> to tensor<64x64xbf16>
// CHECK: tile.store %[[DQ]], {{.*}} : tensor<64x64xbf16>, <?x64xbf16>
// CHECK-LABEL: func.func @softcap_bwd_dkdv(
// CHECK-SAME: tile.bwd_stage = "dkdv"
// CHECK: scf.for
// CHECK:   scf.for
// dV += P^T dO and dK += dS^T Q: the transposed-lhs products.
// CHECK:     tile.dot %{{.*}}, %{{.*}}, %{{.*}} {transpose_lhs}
// CHECK:     tile.dot %{{.*}}, %{{.*}}, %{{.*}} {transpose_lhs}
// CHECK:   } {tile.q_loop = "masked"}

// With keys-by-queries the dK/dV kernel works keys by queries: Sᵀ = K Qᵀ
// and dPᵀ = V dOᵀ, the per-query LSE and D broadcast down the columns, so
// Pᵀ and dSᵀ are the plain lhs of dV += Pᵀ dO and dK += dSᵀ Q.
// KBQ-LABEL: func.func @softcap_bwd_dkdv(
// KBQ-SAME: tile.bwd_stage = "dkdv"
// KBQ: %[[K:.*]] = tile.load %{{.*}} -> tensor<64x64xbf16>
// KBQ: %[[V:.*]] = tile.load %{{.*}} -> tensor<64x64xbf16>
// KBQ: tile.iota dim 0 : tensor<64x64xindex>
// KBQ: scf.for
// KBQ:   scf.for
// KBQ:     %[[Q:.*]] = tile.load %{{.*}} -> tensor<64x64xbf16>
// KBQ:     %[[DO:.*]] = tile.load %{{.*}} -> tensor<64x64xbf16>
// KBQ:     tile.load %{{.*}} fill 0x7F800000 : f32 : <?xf32> -> tensor<64xf32>
// KBQ:     tile.iota dim 1 : tensor<64x64xindex>
// KBQ:     tile.dot %[[K]], %[[Q]] {transpose_rhs}
// KBQ:     tile.broadcast %{{.*}} dim 0 : tensor<64xf32> -> tensor<64x64xf32>
// KBQ:     tile.dot %[[V]], %[[DO]] {transpose_rhs}
// KBQ:     tile.broadcast %{{.*}} dim 0 : tensor<64xf32> -> tensor<64x64xf32>
// KBQ:     %[[PT:.*]] = arith.truncf %{{.*}} : tensor<64x64xf32> to tensor<64x64xbf16>
// KBQ:     %[[DST:.*]] = arith.truncf %{{.*}} : tensor<64x64xf32> to tensor<64x64xbf16>
// KBQ:     tile.dot %[[PT]], %[[DO]], %{{.*}} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// KBQ:     tile.dot %[[DST]], %[[Q]], %{{.*}} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// KBQ:   } {tile.q_loop = "masked"}
// The atomic schedule's dQ = dS K then reads dSᵀ as a transposed lhs.
// KBQ-ATOMIC-LABEL: func.func @softcap_atomic_bwd_dkdv(
// KBQ-ATOMIC: %[[K:.*]] = tile.load %{{[0-9]+}}[%{{[0-9]+}}, %c0{{(_[0-9]+)?}}] {{.*}} -> tensor<64x64xbf16>
// KBQ-ATOMIC: scf.for
// KBQ-ATOMIC:   scf.for
// KBQ-ATOMIC:     tile.dot %{{[0-9]+}}, %[[K]] {transpose_lhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
// KBQ-ATOMIC:     tile.atomic_add
attn.attention @softcap {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %cap = arith.constant 20.0 : f32
    %x = arith.divf %score, %cap : f32
    %t = math.tanh %x : f32
    %capped = arith.mulf %t, %cap : f32
    attn.yield %capped : f32
  }

// -----

// GQA: dK/dV of a KV head sum over its 4 query heads, in one loop per
// range of Q blocks over every head's blocks (head-major): step j is head
// hkv * 4 + j / n, block j mod n, for n blocks per head.
// CHECK-LABEL: func.func @gqa_bwd_dq(
// CHECK: %[[H:.*]] = tile.program_id 1
// CHECK: arith.divui %[[H]], %{{.*}} : index
// CHECK-LABEL: func.func @gqa_bwd_dkdv(
// CHECK-SAME: tile.gqa_group = 4 : i64
// CHECK: %[[HKV:.*]] = tile.program_id 1
// CHECK: %[[FIRST:.*]] = arith.muli %[[HKV]], %{{.*}} : index
// CHECK: %[[PER:.*]] = arith.ceildivsi
// CHECK: %[[STEPS:.*]] = arith.muli %[[PER]], %{{.*}} : index
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[STEPS]] step
// CHECK:   %[[G:.*]] = arith.divui %[[J]], %[[PER]] : index
// CHECK:   arith.remui %[[J]], %[[PER]] : index
// CHECK:   %[[HEAD:.*]] = arith.addi %[[FIRST]], %[[G]] : index
// CHECK:   tile.view %arg0[%{{.*}}, %[[HEAD]]] keep [1, 3]
attn.attention @gqa {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, gqa_group = 4,
                     causal = #attn.causal<top_left>}

// -----

// An op with no derivative rule that depends on the score is refused.
attn.attention @floor_mod {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    // expected-error @+1 {{cannot differentiate 'math.floor' in score_mod with respect to the score for the backward pass}}
    %f = math.floor %score : f32
    attn.yield %f : f32
  }

// -----

// The atomic schedule: no dQ kernel; the preprocess zeroes dQ and the dK/dV
// kernel adds scale * dS K into it.

// ATOMIC-LABEL: func.func @softcap_atomic_bwd_preprocess(
// ATOMIC-SAME: %{{[a-z0-9]+}}: memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>> {tile.shape = ["batch", "heads", "seq_q", 64], tile.workspace = "dq_accum"})
// ATOMIC: tile.store %{{.*}} : tensor<64x64xf32>, <?x64xf32>
// ATOMIC-NOT: func.func @softcap_atomic_bwd_dq(
// The dK/dV kernel adds its whole share dS K for each Q block, unscaled; a
// GPU schedule splits it into column chunks (convert-tile-to-tgpu's
// atomic-product-columns), a register-budget choice that is not the tile
// program's.
// ATOMIC-LABEL: func.func @softcap_atomic_bwd_dkdv(
// ATOMIC: %[[K:.*]] = tile.load %{{[0-9]+}}[%{{[0-9]+}}, %c0{{(_[0-9]+)?}}] {{.*}} -> tensor<64x64xbf16>
// ATOMIC-NOT: tensor<64x32xbf16>
// ATOMIC: scf.for
// ATOMIC:   scf.for %[[I:[a-z0-9]+]] =
// ATOMIC:     %[[PART:[0-9]+]] = tile.dot %{{[0-9]+}}, %[[K]] : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
// ATOMIC:     tile.atomic_add %[[PART]], %{{.*}}[%[[I]], %c0{{(_[0-9]+)?}}] : tensor<64x64xf32>, <?x64xf32>
// The f32 accumulator scaled once and rounded to the input type by a convert
// kernel.
// ATOMIC-LABEL: func.func @softcap_atomic_bwd_dq_convert(
// ATOMIC-SAME: tile.bwd_stage = "convert"
// ATOMIC: %[[ACC:.*]] = tile.load
// ATOMIC: %[[SCALED:.*]] = arith.mulf %[[ACC]], %{{.*}} : tensor<64x64xf32>
// ATOMIC: %[[R:.*]] = arith.truncf %[[SCALED]] : tensor<64x64xf32> to tensor<64x64xbf16>
// ATOMIC: tile.store %[[R]]
attn.attention @softcap_atomic {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}

// -----

// split-dkdv-above: where Dqk + Dv exceeds it, dK and dV come from two
// kernels, each recomputing S; the dK kernel also adds the atomic
// schedule's dQ share (it has dS), the dV kernel needs neither dP nor D.
// RUN: kiln-opt %s -split-input-file -verify-diagnostics -convert-attn-to-tile-backward="split-dkdv-above=256 schedule=atomic" -canonicalize | FileCheck %s --check-prefix=SPLIT
// SPLIT-LABEL: func.func @split_bwd_dk(
// SPLIT-SAME: tile.tensor = "dk"
// SPLIT-SAME: tile.workspace = "dq_accum"
// SPLIT-SAME: tile.bwd_stage = "dk"
// SPLIT: tile.atomic_add
// SPLIT: tile.store
// SPLIT-NEXT: return
// SPLIT-LABEL: func.func @split_bwd_dv(
// SPLIT-SAME: tile.tensor = "dv"
// SPLIT-NOT: dq_accum
// SPLIT-SAME: tile.bwd_stage = "dv"
// SPLIT: scf.for
// SPLIT: tile.dot
// SPLIT: tile.dot
// SPLIT-NOT: tile.dot
// SPLIT: tile.store
// SPLIT-NEXT: return
// Below the threshold: one dK/dV kernel.
// SPLIT-LABEL: func.func @narrow_bwd_dkdv(
attn.attention @split {qk_head_dim = 192, v_head_dim = 192, element_type = bf16}
attn.attention @narrow {qk_head_dim = 128, v_head_dim = 128, element_type = bf16}
