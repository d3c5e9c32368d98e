// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of attn.attention (AttentionOp::verify, its ODS
// constraints, verifyModRegion), attn.yield and #attn.capture
// (CaptureAttr::verify).

//===----------------------------------------------------------------------===//
// AttentionOp::verify
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'attn.attention' op element_type must be bf16 or f16, got 'f32'}}
attn.attention @f32_elements {qk_head_dim = 64, v_head_dim = 64, element_type = f32}

// -----

// expected-error @+1 {{element_type must be bf16 or f16, got 'i8'}}
attn.attention @int_elements {qk_head_dim = 64, v_head_dim = 64, element_type = i8}

// -----

// expected-error @+1 {{dropout_p must be in [0, 1 - 2^-17], got 1.000000e+00}}
attn.attention @drop_all {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, dropout_p = 1.0}

// -----

// expected-error @+1 {{dropout_p must be in [0, 1 - 2^-17], got -1.000000e-01}}
attn.attention @negative_dropout {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, dropout_p = -0.1}

// -----

// expected-error @+1 {{dropout_bits must be 16 or 8, got 4}}
attn.attention @narrow_uniforms {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, dropout_p = 0.1, dropout_bits = 4}

// -----

// 8-bit uniforms keep round((1 - p) * 256) of 256: 0 here.
// expected-error @+1 {{dropout_p must be in [0, 1 - 2^-9] with dropout_bits = 8, got 9.990000e-01}}
attn.attention @drop_all_bytes {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, dropout_p = 0.999, dropout_bits = 8}


// -----

// expected-error @+1 {{is varlen, but capture 'bias' declares dim 'seq_kv': a packed batch has no common sequence length (use batch, heads, kv_heads or a size)}}
attn.attention @varlen_capture {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, varlen,
                                captures = [#attn.capture<"bias", memref<?xf32>, ["seq_kv"]>]}

// -----

// expected-error @+1 {{scale must be a positive finite number, got 0.000000e+00}}
attn.attention @zero_scale {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                            scale = 0.0}

// -----

// expected-error @+1 {{scale must be a positive finite number, got -1.250000e-01}}
attn.attention @negative_scale {qk_head_dim = 64, v_head_dim = 64,
                                element_type = bf16, scale = -0.125}

// -----

// expected-error @+1 {{scale must be a positive finite number, got nan}}
attn.attention @nan_scale {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                           scale = 0x7FF8000000000000 : f64}

// -----

// expected-error @+1 {{scale must be a positive finite number, got INF}}
attn.attention @inf_scale {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                           scale = 0x7FF0000000000000 : f64}

// -----

// The kernels multiply by scale * log2(e) as an f32 constant, which would be
// 0 here (every output NaN).
// expected-error @+1 {{scale 1.000000e-46 is out of range: the kernels multiply scores by scale * log2(e) as a normal f32 (about 1.2e-38 to 2.3e38)}}
attn.attention @underflowing_scale {qk_head_dim = 64, v_head_dim = 64,
                                    element_type = bf16, scale = 1.0e-46}

// -----

// ... and infinity here.
// expected-error @+1 {{scale 1.000000e+39 is out of range}}
attn.attention @overflowing_scale {qk_head_dim = 64, v_head_dim = 64,
                                   element_type = bf16, scale = 1.0e39}

// -----

// expected-error @+1 {{'attn.attention' op captures 'slopes' twice}}
attn.attention @duplicate_capture {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>,
                #attn.capture<"doc", memref<?xi32>, ["seq_kv"]>,
                #attn.capture<"slopes", memref<?xf32>, ["heads"]>]}

//===----------------------------------------------------------------------===//
// ODS constraints of attn.attention
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{attribute 'qk_head_dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
attn.attention @zero_qk_head_dim {qk_head_dim = 0, v_head_dim = 64, element_type = bf16}

// -----

// expected-error @+1 {{attribute 'v_head_dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
attn.attention @negative_v_head_dim {qk_head_dim = 64, v_head_dim = -64, element_type = bf16}

// -----

// expected-error @+1 {{attribute 'gqa_group' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
attn.attention @zero_gqa_group {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                                gqa_group = 0}

// -----

// expected-error @+1 {{attribute 'gqa_group' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
attn.attention @negative_gqa_group {qk_head_dim = 64, v_head_dim = 64,
                                    element_type = bf16, gqa_group = -2}

// -----

// expected-error @+1 {{requires attribute 'element_type'}}
attn.attention @no_element_type {qk_head_dim = 64, v_head_dim = 64}

// -----

// expected-error @+1 {{requires attribute 'qk_head_dim'}}
attn.attention @no_qk_head_dim {v_head_dim = 64, element_type = bf16}

// -----

// expected-error @+1 {{attribute 'element_type' failed to satisfy constraint: any type attribute}}
attn.attention @element_type_not_a_type {qk_head_dim = 64, v_head_dim = 64,
                                         element_type = 16}

// -----

// expected-error @+1 {{attribute 'scale' failed to satisfy constraint: 64-bit float attribute}}
attn.attention @f32_scale {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                           scale = 0.125 : f32}

// -----

// expected-error @+1 {{attribute 'captures' failed to satisfy constraint: captured tensors}}
attn.attention @captures_not_captures {qk_head_dim = 64, v_head_dim = 64,
                                       element_type = bf16, captures = ["slopes"]}

// -----

attn.attention @bad_causal {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
    // expected-error @+2 {{expected ::kiln::attn::CausalAlignment to be one of: none, top_left, bottom_right}}
    // expected-error @+1 {{failed to parse Attn_CausalAttr parameter 'value'}}
    causal = #attn.causal<diagonal>}

// -----

// expected-error @+1 {{region #0 ('score_mod') failed to verify constraint: region with at most 1 blocks}}
attn.attention @two_blocks {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    cf.br ^bb1
  ^bb1:
    attn.yield %s : f32
  }

//===----------------------------------------------------------------------===//
// attn.yield
//===----------------------------------------------------------------------===//

// -----

func.func @yield_outside_attention(%x: f32) {
  // expected-error @+1 {{'attn.yield' op expects parent op 'attn.attention'}}
  attn.yield %x : f32
}

//===----------------------------------------------------------------------===//
// CaptureAttr::verify
//===----------------------------------------------------------------------===//

// -----

attn.attention @empty_capture_name {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture needs a non-empty name}}
    captures = [#attn.capture<"", memref<?xf32>, ["heads"]>]}

// -----

attn.attention @capture_rank_too_high {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'bias' has rank 2 but 1 dimension names}}
    captures = [#attn.capture<"bias", memref<?x?xf32>, ["heads"]>]}

// -----

attn.attention @capture_rank_too_low {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'bias' has rank 0 but 2 dimension names}}
    captures = [#attn.capture<"bias", memref<f32>, ["heads", "seq_q"]>]}

// -----

// The runtime passes captures row-major: a strided layout would read the
// wrong elements.
attn.attention @capture_strided {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'slopes' must have the identity (row-major) layout, got strided<[2]>}}
    captures = [#attn.capture<"slopes", memref<?xf32, strided<[2]>>, ["heads"]>]}

// -----

attn.attention @capture_memory_space {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'slopes' must be in the default memory space, got 3 : i64}}
    captures = [#attn.capture<"slopes", memref<?xf32, 3>, ["heads"]>]}

// -----

attn.attention @capture_vector_elements {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'v' must hold integers or floats, not 'vector<4xf32>'}}
    captures = [#attn.capture<"v", memref<?xvector<4xf32>>, ["heads"]>]}

// -----

attn.attention @capture_complex_elements {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'c' must hold integers or floats, not 'complex<f32>'}}
    captures = [#attn.capture<"c", memref<?xcomplex<f32>>, ["heads"]>]}

// -----

attn.attention @capture_bad_symbol {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'doc' dimension 1 names 'seq'; expected one of batch, heads, kv_heads, seq_q, seq_kv or an integer}}
    captures = [#attn.capture<"doc", memref<?x?xi32>, ["batch", "seq"]>]}

// -----

attn.attention @capture_symbol_is_case_sensitive {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'slopes' dimension 0 names 'Heads'; expected one of batch, heads, kv_heads, seq_q, seq_kv or an integer}}
    captures = [#attn.capture<"slopes", memref<?xf32>, ["Heads"]>]}

// -----

attn.attention @capture_zero_dim {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'bias' dimension 0 must be a problem symbol or a positive integer}}
    captures = [#attn.capture<"bias", memref<?xf32>, [0]>]}

// -----

attn.attention @capture_negative_dim {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'bias' dimension 1 must be a problem symbol or a positive integer}}
    captures = [#attn.capture<"bias", memref<?x?xf32>, ["heads", -8]>]}

// -----

attn.attention @capture_float_dim {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'bias' dimension 0 must be a problem symbol or a positive integer}}
    captures = [#attn.capture<"bias", memref<?xf32>, [8.0]>]}

// -----

attn.attention @capture_size_mismatch {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    // expected-error @+1 {{capture 'bias' dimension 1 is 16 but its type says 32}}
    captures = [#attn.capture<"bias", memref<?x32xf32>, ["heads", 16]>]}

//===----------------------------------------------------------------------===//
// verifyModRegion: block arguments
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'attn.attention' op score_mod takes 5 arguments (score: f32, b, h, q_idx, kv_idx: index, then one per capture) but has 4}}
attn.attention @score_mod_missing_score {qk_head_dim = 64, v_head_dim = 64,
                                         element_type = bf16}
  score_mod(%b: index, %h: index, %q: index, %kv: index) {
    %c = arith.constant 0.0 : f32
    attn.yield %c : f32
  }

// -----

// expected-error @+1 {{'attn.attention' op mask_mod takes 4 arguments (b, h, q_idx, kv_idx: index, then one per capture) but has 5}}
attn.attention @mask_mod_with_score {qk_head_dim = 64, v_head_dim = 64,
                                     element_type = bf16}
  mask_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    %t = arith.constant true
    attn.yield %t : i1
  }

// -----

// Every mod takes every capture, even one it does not read.
// expected-error @+1 {{'attn.attention' op mask_mod takes 5 arguments (b, h, q_idx, kv_idx: index, then one per capture) but has 4}}
attn.attention @mask_mod_missing_capture {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %t = arith.constant true
    attn.yield %t : i1
  }

// -----

// expected-error @+1 {{'attn.attention' op score_mod takes 5 arguments (score: f32, b, h, q_idx, kv_idx: index, then one per capture) but has 6}}
attn.attention @score_mod_undeclared_capture {qk_head_dim = 64, v_head_dim = 64,
                                              element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index,
            %slopes: memref<?xf32>) {
    attn.yield %s : f32
  }

// -----

attn.attention @score_not_f32 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  // expected-error @+1 {{score_mod argument #0 must be 'f32', got 'bf16'}}
  score_mod(%s: bf16, %b: index, %h: index, %q: index, %kv: index) {
    %c = arith.constant 0.0 : f32
    attn.yield %c : f32
  }

// -----

// The diagnostic points at the offending argument.
attn.attention @score_index_not_index {qk_head_dim = 64, v_head_dim = 64,
                                       element_type = bf16}
  score_mod(%s: f32, %b: index,
            // expected-error @+1 {{score_mod argument #2 must be 'index', got 'i64'}}
            %h: i64,
            %q: index, %kv: index) {
    attn.yield %s : f32
  }

// -----

attn.attention @mask_index_not_index {qk_head_dim = 64, v_head_dim = 64,
                                      element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index,
           // expected-error @+1 {{mask_mod argument #3 must be 'index', got 'i32'}}
           %kv: i32) {
    %t = arith.constant true
    attn.yield %t : i1
  }

// -----

attn.attention @capture_arg_type_mismatch {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>,
                #attn.capture<"doc", memref<?x?xi32>, ["batch", "seq_kv"]>]}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index,
            %slopes: memref<?xf32>,
            // expected-error @+1 {{score_mod argument #6 must be 'memref<?x?xi32>', got 'memref<?x?xi64>'}}
            %doc: memref<?x?xi64>) {
    attn.yield %s : f32
  }

// -----

// Captures are passed in declaration order.
attn.attention @capture_args_swapped {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>,
                #attn.capture<"doc", memref<?x?xi32>, ["batch", "seq_kv"]>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index,
           // expected-error @+1 {{mask_mod argument #4 must be 'memref<?xf32>', got 'memref<?x?xi32>'}}
           %doc: memref<?x?xi32>, %slopes: memref<?xf32>) {
    %t = arith.constant true
    attn.yield %t : i1
  }

//===----------------------------------------------------------------------===//
// verifyModRegion: terminator and yielded value
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'attn.attention' op score_mod must end with attn.yield}}
attn.attention @not_yield_terminated {qk_head_dim = 64, v_head_dim = 64,
                                      element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    llvm.unreachable
  }

// -----

attn.attention @score_yields_f64 {qk_head_dim = 64, v_head_dim = 64,
                                  element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    %w = arith.extf %s : f32 to f64
    // expected-error @+1 {{'attn.yield' op in score_mod must yield exactly one 'f32'}}
    attn.yield %w : f64
  }

// -----

attn.attention @score_yields_nothing {qk_head_dim = 64, v_head_dim = 64,
                                      element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    // expected-error @+1 {{'attn.yield' op in score_mod must yield exactly one 'f32'}}
    attn.yield
  }

// -----

attn.attention @score_yields_two {qk_head_dim = 64, v_head_dim = 64,
                                  element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    // expected-error @+1 {{'attn.yield' op in score_mod must yield exactly one 'f32'}}
    attn.yield %s, %s : f32, f32
  }

// -----

attn.attention @mask_yields_f32 {qk_head_dim = 64, v_head_dim = 64,
                                 element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %one = arith.constant 1.0 : f32
    // expected-error @+1 {{'attn.yield' op in mask_mod must yield exactly one 'i1'}}
    attn.yield %one : f32
  }

// -----

attn.attention @mask_yields_i8 {qk_head_dim = 64, v_head_dim = 64,
                                element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %one = arith.constant 1 : i8
    // expected-error @+1 {{'attn.yield' op in mask_mod must yield exactly one 'i1'}}
    attn.yield %one : i8
  }

// -----

attn.attention @mask_yields_two {qk_head_dim = 64, v_head_dim = 64,
                                 element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %t = arith.constant true
    // expected-error @+1 {{'attn.yield' op in mask_mod must yield exactly one 'i1'}}
    attn.yield %t, %t : i1, i1
  }

//===----------------------------------------------------------------------===//
// verifyModRegion: ops in the body
//===----------------------------------------------------------------------===//

// -----

func.func private @helper(f32) -> f32

attn.attention @call_in_mod {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    // expected-error @+1 {{'func.call' op is not allowed in score_mod; mods are scalar programs of arith and math ops and memref.load from captures}}
    %r = func.call @helper(%s) : (f32) -> f32
    attn.yield %r : f32
  }

// -----

attn.attention @scf_if_in_mod {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %lt = arith.cmpi ult, %kv, %q : index
    // expected-error @+1 {{'scf.if' op is not allowed in mask_mod}}
    %r = scf.if %lt -> (i1) {
      %t = arith.constant true
      scf.yield %t : i1
    } else {
      %f = arith.constant false
      scf.yield %f : i1
    }
    attn.yield %r : i1
  }

// -----

attn.attention @tensor_op_in_mod {qk_head_dim = 64, v_head_dim = 64,
                                  element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    // expected-error @+1 {{'tensor.from_elements' op is not allowed in score_mod}}
    %t = tensor.from_elements %s : tensor<1xf32>
    attn.yield %s : f32
  }

// -----

// Mods only read captures; they may not write them.
attn.attention @store_in_mod {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
    captures = [#attn.capture<"scratch", memref<?xf32>, ["heads"]>]}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index,
            %scratch: memref<?xf32>) {
    // expected-error @+1 {{'memref.store' op is not allowed in score_mod}}
    memref.store %s, %scratch[%h] : memref<?xf32>
    attn.yield %s : f32
  }

// -----

attn.attention @math_tan_in_mod {qk_head_dim = 64, v_head_dim = 64,
                                 element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    // expected-error @+1 {{'math.tan' op is not allowed in score_mod}}
    %t = math.tan %s : f32
    attn.yield %t : f32
  }

// -----

attn.attention @vector_constant_in_mod {qk_head_dim = 64, v_head_dim = 64,
                                        element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    // expected-error @+1 {{'arith.constant' op in score_mod must produce scalars, got 'vector<4xf32>'}}
    %v = arith.constant dense<1.0> : vector<4xf32>
    attn.yield %s : f32
  }

// -----

// An allowed op (arith.select) that produces a memref is rejected as
// non-scalar.
attn.attention @memref_select_in_mod {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    captures = [#attn.capture<"a", memref<?xf32>, ["heads"]>,
                #attn.capture<"b", memref<?xf32>, ["heads"]>]}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index,
            %x: memref<?xf32>, %y: memref<?xf32>) {
    %c = arith.constant true
    // expected-error @+1 {{'arith.select' op in score_mod must produce scalars, got 'memref<?xf32>'}}
    %m = arith.select %c, %x, %y : memref<?xf32>
    %v = memref.load %m[%h] : memref<?xf32>
    attn.yield %v : f32
  }

// -----

// memref.load of something other than a capture argument. A mod is a single
// block isolated from above and every other op producing a memref is
// rejected, so the only way to reach this diagnostic is a forward reference
// to such an op (dominance is verified after the op's region verifier).
attn.attention @load_of_non_capture {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    captures = [#attn.capture<"a", memref<?xf32>, ["heads"]>]}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index,
            %x: memref<?xf32>) {
    // expected-error @+1 {{'memref.load' op in score_mod may only read a captured tensor}}
    %v = memref.load %m[%h] : memref<?xf32>
    %c = arith.constant true
    %m = arith.select %c, %x, %x : memref<?xf32>
    attn.yield %v : f32
  }

// -----

// expected-error @+1 {{block_sparse must be two positive multiples of 16 (query rows, keys per mask block)}}
attn.attention @sparse_one {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, block_sparse = array<i64: 128>}

// -----

// expected-error @+1 {{block_sparse must be two positive multiples of 16 (query rows, keys per mask block)}}
attn.attention @sparse_odd {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, block_sparse = array<i64: 128, 40>}

// -----

// expected-error @+1 {{block_sparse takes a dense batch: its lists are per (batch, head, query block) of one sequence length (not with varlen)}}
attn.attention @sparse_varlen {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, varlen, block_sparse = array<i64: 128, 128>}

// -----

// expected-error @+1 {{block_sparse takes a dense batch: its lists are per (batch, head, query block) of one sequence length (not with page_size)}}
attn.attention @sparse_paged {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, page_size = 16, block_sparse = array<i64: 128, 128>}

// -----

// No sequence is 2^31 long, and the kernels' block arithmetic would overflow.
// expected-error @+1 {{block_sparse blocks must be below 2^31, got 128 x 9223372036854775792}}
attn.attention @sparse_huge {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, block_sparse = array<i64: 128, 9223372036854775792>}

// -----

// Head dims below 2^31, as every runtime dimension (the tile choosers'
// shared-memory sums would overflow past that).
// expected-error @+1 {{qk_head_dim must be below 2^31, got 9223372036854775807}}
attn.attention @head_dim_huge {qk_head_dim = 9223372036854775807, v_head_dim = 64, element_type = bf16}
