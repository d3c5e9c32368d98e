// RUN: kiln-opt %s -split-input-file -attn-guard-division | FileCheck %s --enable-var-scope
// Mods dividing by a position that reaches 0, and INT_MIN by -1, run on the
// CPU (where the unguarded division traps) and match the float64
// reference, which defines x / 0 and x % 0 as 0, INT_MIN / -1 as the
// wrapping -INT_MIN and x % -1 as 0; forward and backward.
// RUN: kiln run %s --variant divide_by_positions --seqlen 70 --seqlen-kv 90 --heads 2 --check | FileCheck %s --check-prefix=NUM
// RUN: kiln run %s --variant divide_by_positions --seqlen 70 --seqlen-kv 90 --heads 2 --backward --check | FileCheck %s --check-prefix=NUM
// RUN: kiln run %s --variant int_min_by_minus_one --batch 2 --seqlen 40 --check | FileCheck %s --check-prefix=NUM
// RUN: kiln run %s --variant int_min_by_minus_one --batch 2 --seqlen 40 --backward --check | FileCheck %s --check-prefix=NUM
// NUM: PASS

// Divisions by a run-time value: the divisor replaced by 1 where it is 0,
// the result by 0; signed ones also where it is -1, the quotient then the
// wrapping negation.
// CHECK-LABEL: attn.attention @divide_by_positions
// CHECK: score_mod
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[KV:.*]], %[[ZERO]] : index
// CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[IS0]], %[[ONE]], %[[KV]] : index
// CHECK-NEXT: %[[R:.*]] = arith.remui %{{.*}}, %[[SAFE]] : index
// CHECK-NEXT: arith.select %[[IS0]], %[[ZERO]], %[[R]] : index
// CHECK: mask_mod
// CHECK-DAG: %[[ZEROM:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[ONEM:.*]] = arith.constant 1 : index
// CHECK: %[[IS0M:.*]] = arith.cmpi eq, %[[Q:.*]], %[[ZEROM]] : index
// CHECK: %[[ISM1:.*]] = arith.cmpi eq, %[[Q]], %c-1 : index
// CHECK: %[[BAD:.*]] = arith.ori %[[IS0M]], %[[ISM1]] : i1
// CHECK: %[[SAFEM:.*]] = arith.select %[[BAD]], %[[ONEM]], %[[Q]] : index
// CHECK: %[[QUOT:.*]] = arith.divsi %[[KVM:.*]], %[[SAFEM]] : index
// CHECK: %[[NEG:.*]] = arith.subi %[[ZEROM]], %[[KVM]] : index
// CHECK: %[[BYM1:.*]] = arith.select %[[ISM1]], %[[NEG]], %[[QUOT]] : index
// CHECK: arith.select %[[IS0M]], %[[ZEROM]], %[[BYM1]] : index
// CHECK: arith.floordivsi %{{.*}}, %{{.*}} : i32
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

// INT_MIN by -1 (batch 0) and by 0 (batch 1), 32 and 64 bits, quotient and
// remainder: the signed guards' numerics.
// CHECK-LABEL: attn.attention @int_min_by_minus_one
// CHECK-COUNT-4: arith.ori
attn.attention @int_min_by_minus_one {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    %c1 = arith.constant 1 : index
    %bm1 = arith.subi %b, %c1 : index
    %d32 = arith.index_cast %bm1 : index to i32
    %min32 = arith.constant -2147483648 : i32
    %q32 = arith.divsi %min32, %d32 : i32
    %r32 = arith.remsi %min32, %d32 : i32
    %d64 = arith.index_cast %bm1 : index to i64
    %min64 = arith.constant -9223372036854775808 : i64
    %q64 = arith.floordivsi %min64, %d64 : i64
    %r64 = arith.ceildivsi %min64, %d64 : i64
    %fq32 = arith.sitofp %q32 : i32 to f32
    %fr32 = arith.sitofp %r32 : i32 to f32
    %fq64 = arith.sitofp %q64 : i64 to f32
    %fr64 = arith.sitofp %r64 : i64 to f32
    %t32 = arith.addf %fq32, %fr32 : f32
    %t64 = arith.addf %fq64, %fr64 : f32
    %c32 = arith.constant 1.0e-10 : f32
    %c64 = arith.constant 1.0e-19 : f32
    %u32 = arith.mulf %t32, %c32 : f32
    %u64 = arith.mulf %t64, %c64 : f32
    %u = arith.addf %u32, %u64 : f32
    %o = arith.addf %s, %u : f32
    attn.yield %o : f32
  }

// -----

// Divisions by constants other than 0 (and, signed, -1) stay as they are (tree_verify's word and
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
