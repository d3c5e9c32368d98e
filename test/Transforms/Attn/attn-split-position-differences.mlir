// RUN: kiln-opt %s -split-input-file -attn-split-position-differences | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -attn-split-position-differences | kiln-opt -split-input-file | FileCheck %s --check-prefix=VALID

// ALiBi: float(kv - q) becomes float(kv) - float(q) (exact below 2^24).
// CHECK-LABEL: attn.attention @alibi
// CHECK: score_mod(%[[S:[^:]+]]: f32, %{{[^:]+}}: index, %[[H:[^:]+]]: index, %[[Q:[^:]+]]: index, %[[KV:[^:]+]]: index
// CHECK-DAG: %[[KI:.+]] = arith.index_cast %[[KV]] : index to i64
// CHECK-DAG: %[[KF:.+]] = arith.sitofp %[[KI]] : i64 to f32
// CHECK-DAG: %[[QI:.+]] = arith.index_cast %[[Q]] : index to i64
// CHECK-DAG: %[[QF:.+]] = arith.sitofp %[[QI]] : i64 to f32
// CHECK: %[[D:.+]] = arith.subf %[[KF]], %[[QF]] : f32
// CHECK: arith.mulf %{{.+}}, %[[D]] : f32
// CHECK-NOT: arith.subi
// VALID: attn.attention @alibi
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

// A difference that is not of two positions (a position and a constant, a
// scaled position) stays: its value need not be below 2^24.
// CHECK-LABEL: attn.attention @other
// CHECK: arith.subi
// CHECK: arith.sitofp {{.*}} : i32 to f32
// CHECK: arith.subi
// CHECK: arith.sitofp {{.*}} : i32 to f32
// CHECK-NOT: arith.subf
attn.attention @other {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %c7 = arith.constant 7 : index
    %d1 = arith.subi %kv, %c7 : index
    %i1 = arith.index_cast %d1 : index to i32
    %f1 = arith.sitofp %i1 : i32 to f32
    %kv3 = arith.muli %kv, %c7 : index
    %d2 = arith.subi %kv3, %q : index
    %i2 = arith.index_cast %d2 : index to i32
    %f2 = arith.sitofp %i2 : i32 to f32
    %s1 = arith.addf %score, %f1 : f32
    %s2 = arith.addf %s1, %f2 : f32
    attn.yield %s2 : f32
  }
