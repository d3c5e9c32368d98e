// RUN: kiln-opt %s -split-input-file -attn-guard-division | FileCheck %s --enable-var-scope
// A mod dividing by a position that reaches 0 runs on the CPU (where the
// unguarded division traps) and matches the float64 reference, which
// defines x / 0 and x % 0 as 0; forward and backward.
// RUN: kiln run %s --variant divide_by_positions --seqlen 70 --seqlen-kv 90 --heads 2 --check | FileCheck %s --check-prefix=NUM
// RUN: kiln run %s --variant divide_by_positions --seqlen 70 --seqlen-kv 90 --heads 2 --backward --check | FileCheck %s --check-prefix=NUM
// NUM: PASS

// Divisions by a run-time value: the divisor replaced by 1 where it is 0,
// the result by 0.
// CHECK-LABEL: attn.attention @divide_by_positions
// CHECK: score_mod
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[KV:.*]], %[[ZERO]] : index
// CHECK: %[[SAFE:.*]] = arith.select %[[IS0]], %[[ONE]], %[[KV]] : index
// CHECK: %[[R:.*]] = arith.remui %{{.*}}, %[[SAFE]] : index
// CHECK: arith.select %[[IS0]], %[[ZERO]], %[[R]] : index
// CHECK: mask_mod
// CHECK: %[[IS0M:.*]] = arith.cmpi eq, %[[Q:.*]], %{{.*}} : index
// CHECK: %[[SAFEM:.*]] = arith.select %[[IS0M]], %{{.*}}, %[[Q]] : index
// CHECK: arith.divsi %{{.*}}, %[[SAFEM]] : index
// CHECK: %[[SAFEI:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: arith.floordivsi %{{.*}}, %[[SAFEI]] : i32
attn.attention @divide_by_positions {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    %r = arith.remui %q, %kv : index
    %i = arith.index_cast %r : index to i64
    %f = arith.sitofp %i : i64 to f32
    %c = arith.constant 0.01 : f32
    %t = arith.mulf %f, %c : f32
    %o = arith.addf %s, %t : f32
    attn.yield %o : f32
  }
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %d = arith.divsi %kv, %q : index
    %c2 = arith.constant 2 : index
    %near = arith.cmpi slt, %d, %c2 : index
    %q32 = arith.index_cast %q : index to i32
    %kv32 = arith.index_cast %kv : index to i32
    %e = arith.floordivsi %q32, %kv32 : i32
    %c40 = arith.constant 40 : i32
    %small = arith.cmpi slt, %e, %c40 : i32
    %k = arith.andi %near, %small : i1
    attn.yield %k : i1
  }

// -----

// Divisions by non-zero constants stay as they are (tree_verify's word and
// bit of a draft index).
// CHECK-LABEL: attn.attention @divide_by_constants
// CHECK-NOT: arith.select
// CHECK: arith.divui %{{.*}}, %c32 : index
// CHECK-NOT: arith.select
// CHECK: arith.remui %{{.*}}, %c32 : index
// CHECK-NOT: arith.select
attn.attention @divide_by_constants {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %c32 = arith.constant 32 : index
    %w = arith.divui %kv, %c32 : index
    %bit = arith.remui %kv, %c32 : index
    %s = arith.addi %w, %bit : index
    %k = arith.cmpi sle, %s, %q : index
    attn.yield %k : i1
  }
