// RUN: kiln-opt %s -convert-attn-to-tile="split-masked-blocks=false decode-rows=0" | FileCheck %s
// RUN: kiln-opt %s -convert-attn-to-tile="split-masked-blocks=false decode-rows=0 static-max=false" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s -convert-attn-to-tile="split-masked-blocks=false decode-rows=0 static-max-flop-per-sfu=256" | FileCheck %s --check-prefix=SFU

// convert-attn-to-tile static-max: a score_mod whose results lie in an
// interval narrow enough for P's element type takes the interval's top (log2
// units, widened by its f32 error) as every row's maximum. Soft-capping
// at 20 returns [-20, 20]: the top is 20 * log2(e) * (1 + 2^-10) ~ 28.88, a
// range of 57.7 <= 96 in bf16.
attn.attention @cap20 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %cap = arith.constant 20.0 : f32
    %x = arith.divf %score, %cap : f32
    %t = math.tanh %x : f32
    %capped = arith.mulf %t, %cap : f32
    attn.yield %capped : f32
  }
// CHECK-LABEL: func.func @cap20_fwd
// CHECK: [[TOP:%.+]] = arith.constant 28.88{{[0-9]+}} : f32
// CHECK: [[M0:%.+]] = tile.splat [[TOP]] : f32 -> tensor<64xf32>
// CHECK: scf.for {{.*}} iter_args([[M:%[^ ]+]] = [[M0]], [[L:%[^ ]+]] = %{{[^,]+}}, [[ACC:%[^ ]+]] = %{{[^)]+}})
// CHECK-NOT: tile.reduce max
// CHECK-NOT: arith.maximumf
// CHECK: [[MB:%.+]] = tile.broadcast [[M]] dim 1
// CHECK: [[P:%.+]] = math.exp2 %{{.+}} : tensor<64x64xf32>
// CHECK: [[SUM:%.+]] = tile.reduce sum [[P]]
// The row sum and the accumulator grow without rescaling.
// CHECK: [[LN:%.+]] = arith.addf [[L]], [[SUM]]
// CHECK: [[PL:%.+]] = arith.truncf [[P]]
// CHECK: [[ACCN:%.+]] = tile.dot [[PL]], %{{.+}}, [[ACC]]
// CHECK: scf.yield [[M]], [[LN]], [[ACCN]]
// OFF-LABEL: func.func @cap20_fwd
// OFF: tile.reduce max

// With static-max-flop-per-sfu (sm_90a's 256: 4096 bf16 FLOP and 16 SFU
// results per SM and cycle) only where a score's products (2 * (64 + 64) FLOP
// at D = 64) take as long as its SFU ops (tanh and exp2: 2 * 256): not at
// D = 64, at D = 128.
// SFU-LABEL: func.func @cap20_fwd
// SFU: tile.reduce max
// SFU-LABEL: func.func @cap20_d128_fwd
// SFU-NOT: tile.reduce max
// SFU: } {tile.kv_loop
attn.attention @cap20_d128 {qk_head_dim = 128, v_head_dim = 128, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %cap = arith.constant 20.0 : f32
    %x = arith.divf %score, %cap : f32
    %t = math.tanh %x : f32
    %capped = arith.mulf %t, %cap : f32
    attn.yield %capped : f32
  }
// CHECK-LABEL: func.func @cap20_d128_fwd
// CHECK-NOT: tile.reduce max
// CHECK: } {tile.kv_loop

// The same in fp16, whose P is normal only down to 2^-14: the range of 57.7
// is too wide (the limit is 12), so the running maximum stays.
attn.attention @cap20_fp16 {qk_head_dim = 64, v_head_dim = 64, element_type = f16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %cap = arith.constant 20.0 : f32
    %x = arith.divf %score, %cap : f32
    %t = math.tanh %x : f32
    %capped = arith.mulf %t, %cap : f32
    attn.yield %capped : f32
  }
// CHECK-LABEL: func.func @cap20_fp16_fwd
// CHECK: tile.reduce max

// Gemma 2's cap of 50: a range of 144 > 96, so not in bf16 either.
attn.attention @cap50 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %cap = arith.constant 50.0 : f32
    %x = arith.divf %score, %cap : f32
    %t = math.tanh %x : f32
    %capped = arith.mulf %t, %cap : f32
    attn.yield %capped : f32
  }
// CHECK-LABEL: func.func @cap50_fwd
// CHECK: tile.reduce max

// Interval arithmetic through subtraction, negation, select, abs and
// maximum: 2 - |3 tanh(s)| lies in [-1, 2], max(-tanh(s), -0.5) in
// [-0.5, 1], their select in [-1, 2]: top 2 * log2(e) (the arithmetic after
// tanh widens the low end only).
attn.attention @arith {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %two = arith.constant 2.0 : f32
    %three = arith.constant 3.0 : f32
    %half = arith.constant -0.5 : f32
    %t = math.tanh %score : f32
    %t3 = arith.mulf %t, %three : f32
    %a = math.absf %t3 : f32
    %x = arith.subf %two, %a : f32
    %n = arith.negf %t : f32
    %y = arith.maximumf %n, %half : f32
    %c = arith.cmpf olt, %score, %two : f32
    %r = arith.select %c, %x, %y : f32
    attn.yield %r : f32
  }
// CHECK-LABEL: func.func @arith_fwd
// CHECK: arith.constant 2.88{{[0-9]+}} : f32
// CHECK-NOT: tile.reduce max
// CHECK: } {tile.kv_loop

// Unbounded: the score itself plus a bias by position (ALiBi-like), a
// division by a value that may be 0, and a capture's value.
attn.attention @alibi {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %qi = arith.index_cast %q : index to i32
    %qf = arith.sitofp %qi : i32 to f32
    %t = math.tanh %score : f32
    %r = arith.addf %t, %qf : f32
    attn.yield %r : f32
  }
// CHECK-LABEL: func.func @alibi_fwd
// CHECK: tile.reduce max
attn.attention @divzero {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %t = math.tanh %score : f32
    %r = arith.divf %t, %t : f32
    attn.yield %r : f32
  }
// CHECK-LABEL: func.func @divzero_fwd
// CHECK: tile.reduce max
attn.attention @capture {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                         captures = [#attn.capture<"bias", memref<?xf32>, ["heads"]>]}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index, %bias: memref<?xf32>) {
    %t = math.tanh %score : f32
    %w = memref.load %bias[%h] : memref<?xf32>
    %r = arith.mulf %t, %w : f32
    attn.yield %r : f32
  }
// CHECK-LABEL: func.func @capture_fwd
// CHECK: tile.reduce max

// Bounded in real arithmetic but not in f32 (from a review): a cancellation
// of 2^34 (f32 rounds 4 tanh(s) + 1026 + 2^34 to a multiple of 2048), an
// exp past f32's range scaled back down, 0 times an exp that overflows (NaN),
// and the sine of a product that overflows (sin(inf) is NaN). Each op's
// interval is widened by its f32 error and a bound past f32's range is
// infinite, so none of them gets a static maximum: the cancellation's
// interval, widened by 2^34's rounding, is thousands wide, the others are
// unbounded (test/unit/ScoreRangeTest.cpp checks the intervals).
attn.attention @cancel {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %four = arith.constant 4.0 : f32
    %off = arith.constant 1026.0 : f32
    %big = arith.constant 17179869184.0 : f32
    %t = math.tanh %score : f32
    %x0 = arith.mulf %t, %four : f32
    %x = arith.addf %x0, %off : f32
    %y = arith.addf %x, %big : f32
    %r = arith.subf %y, %big : f32
    attn.yield %r : f32
  }
// CHECK-LABEL: func.func @cancel_fwd
// CHECK: tile.reduce max
attn.attention @exp_overflow {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %c = arith.constant 88.5 : f32
    %tiny = arith.constant 1.0e-38 : f32
    %t = math.tanh %score : f32
    %x = arith.addf %t, %c : f32
    %e = math.exp %x : f32
    %r = arith.mulf %e, %tiny : f32
    attn.yield %r : f32
  }
// CHECK-LABEL: func.func @exp_overflow_fwd
// CHECK: tile.reduce max
attn.attention @zero_times_exp {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %zero = arith.constant 0.0 : f32
    %hundred = arith.constant 100.0 : f32
    %t = math.tanh %score : f32
    %x = arith.mulf %t, %hundred : f32
    %e = math.exp %x : f32
    %z = arith.mulf %e, %zero : f32
    %r = arith.addf %z, %t : f32
    attn.yield %r : f32
  }
// CHECK-LABEL: func.func @zero_times_exp_fwd
// CHECK: tile.reduce max
attn.attention @sin_overflow {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %big = arith.constant 1.0e30 : f32
    %t = math.tanh %score : f32
    %x = arith.mulf %t, %big : f32
    %y = arith.mulf %x, %big : f32
    %r = math.sin %y : f32
    attn.yield %r : f32
  }
// CHECK-LABEL: func.func @sin_overflow_fwd
// CHECK: tile.reduce max
