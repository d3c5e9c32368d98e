// RUN: kiln-opt %s -split-input-file -attn-infer-mask-bounds | FileCheck %s --enable-var-scope

// No mask at all: an exact, unbounded band (every KV block but a ragged tail
// is full).
// CHECK-LABEL: attn.attention @plain
// CHECK-SAME: kv_band = #attn.band<lower = [], upper = [], exact = true>
attn.attention @plain {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}

// -----

// CHECK-LABEL: attn.attention @causal_top_left
// CHECK-SAME: kv_band = #attn.band<lower = [], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>
attn.attention @causal_top_left {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                                 causal = #attn.causal<top_left>}

// -----

// Bottom-right alignment adds Lk - Lq to the bound (diag = true).
// CHECK-LABEL: attn.attention @causal_bottom_right
// CHECK-SAME: upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = true>], exact = true
attn.attention @causal_bottom_right {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                                     causal = #attn.causal<bottom_right>}

// -----

// A sliding window written as q - kv <= 128 and kv <= q.
// CHECK-LABEL: attn.attention @window
// CHECK-SAME: lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>]
// CHECK-SAME: upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>]
// CHECK-SAME: exact = true
attn.attention @window {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %w = arith.constant 128 : index
    %d = arith.subi %q, %kv : index
    %near = arith.cmpi sle, %d, %w : index
    %causal = arith.cmpi sle, %kv, %q : index
    %keep = arith.andi %near, %causal : i1
    attn.yield %keep : i1
  }

// -----

// Strict comparisons tighten by one; a prefix (kv < 16) is a q-independent
// upper bound; both combine with causal.
// CHECK-LABEL: attn.attention @strict_and_prefix
// CHECK-SAME: lower = [#attn.kv_bound<q_coeff = 1, offset = -63, diag = false>]
// CHECK-SAME: upper = [#attn.kv_bound<q_coeff = 0, offset = 15, diag = false>, #attn.kv_bound<q_coeff = 1, offset = 0, diag = true>]
// CHECK-SAME: exact = true
attn.attention @strict_and_prefix {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                                   causal = #attn.causal<bottom_right>}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %prefix = arith.cmpi slt, %kv, %c16 : index
    %lo = arith.subi %q, %c64 : index
    %recent = arith.cmpi sgt, %kv, %lo : index
    %keep = arith.andi %prefix, %recent : i1
    attn.yield %keep : i1
  }

// -----

// Scaled and integer-cast affine forms are still read; a constant-false
// conjunct empties the band.
// CHECK-LABEL: attn.attention @never
// CHECK-SAME: upper = [#attn.kv_bound<q_coeff = 0, offset = -1, diag = false>]
// CHECK-SAME: exact = true
attn.attention @never {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %false = arith.constant false
    attn.yield %false : i1
  }

// -----

// A data-dependent conjunct (document ids) cannot be read: the causal part
// still bounds the loop, but the band is not exact (no unmasked blocks).
// CHECK-LABEL: attn.attention @document_causal
// CHECK-SAME: upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>]
// CHECK-SAME: exact = false
attn.attention @document_causal {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                                 causal = #attn.causal<top_left>,
                                 captures = [#attn.capture<"doc", memref<?xi32>, ["seq_q"]>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index, %doc: memref<?xi32>) {
    %dq = memref.load %doc[%q] : memref<?xi32>
    %dk = memref.load %doc[%kv] : memref<?xi32>
    %same = arith.cmpi eq, %dq, %dk : i32
    attn.yield %same : i1
  }

// -----

// Unsigned comparisons of differences wrap, and 2*kv is not a unit bound:
// neither is used, and the band says so.
// CHECK-LABEL: attn.attention @unreadable
// CHECK-SAME: kv_band = #attn.band<lower = [], upper = [], exact = false>
attn.attention @unreadable {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %c2 = arith.constant 2 : index
    %d = arith.subi %q, %kv : index
    %a = arith.cmpi ule, %d, %c2 : index
    %kv2 = arith.muli %kv, %c2 : index
    %b2 = arith.cmpi sle, %kv2, %q : index
    %keep = arith.andi %a, %b2 : i1
    attn.yield %keep : i1
  }

// -----

// q + (2^63 - 1) wraps for every q > 0, as the mask_mod computes it: not the
// affine bound kv <= q + 2^63 - 2 it reads as, so no bound is taken and the
// mask stays per element.
// CHECK-LABEL: attn.attention @wrapping_offset
// CHECK-SAME: kv_band = #attn.band<lower = [], upper = [], exact = false>
attn.attention @wrapping_offset {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %max = arith.constant 9223372036854775807 : index
    %end = arith.addi %q, %max : index
    %keep = arith.cmpi slt, %kv, %end : index
    attn.yield %keep : i1
  }

// -----

// Likewise in i32, where q + (2^31 - 1) wraps; a window's small offset in
// i32 is still read.
// CHECK-LABEL: attn.attention @wrapping_i32
// CHECK-SAME: kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>], upper = [], exact = false>
attn.attention @wrapping_i32 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %max = arith.constant 2147483647 : i32
    %w = arith.constant 128 : i32
    %q32 = arith.index_cast %q : index to i32
    %kv32 = arith.index_cast %kv : index to i32
    %end = arith.addi %q32, %max : i32
    %below = arith.cmpi slt, %kv32, %end : i32
    %start = arith.subi %q32, %w : i32
    %inside = arith.cmpi sge, %kv32, %start : i32
    %keep = arith.andi %below, %inside : i1
    attn.yield %keep : i1
  }

// -----

// A coefficient whose product overflows 64 bits is not affine: (kv - q) *
// 2^31 is read (its values stay within 2^62), times 2^33 the coefficients'
// own product overflows.
// CHECK-LABEL: attn.attention @overflowing_scale
// CHECK-SAME: kv_band = #attn.band<lower = [], upper = [], exact = false>
attn.attention @overflowing_scale {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %a = arith.constant 2147483648 : index
    %big = arith.constant 8589934592 : index
    %d = arith.subi %kv, %q : index
    %scaled = arith.muli %d, %a : index
    %scaled2 = arith.muli %scaled, %big : index
    %zero = arith.constant 0 : index
    %keep = arith.cmpi sle, %scaled2, %zero : index
    attn.yield %keep : i1
  }

// -----

// kv <= q + 2^40 holds for every position, and reads as affine, but the
// GPU's loop bounds are 32-bit: offsets beyond 2^30 are not taken.
// CHECK-LABEL: attn.attention @wide_offset
// CHECK-SAME: kv_band = #attn.band<lower = [], upper = [], exact = false>
attn.attention @wide_offset {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %c = arith.constant 1099511627776 : index
    %end = arith.addi %q, %c : index
    %keep = arith.cmpi sle, %kv, %end : index
    attn.yield %keep : i1
  }
