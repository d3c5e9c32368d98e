// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s --enable-var-scope

// Round trips of attn.attention in the custom form: the attribute dictionary,
// default-valued attributes, and the score_mod / mask_mod regions with their
// block arguments (leading problem indices, then one per capture).

// The smallest op: only the required attributes. causal and gqa_group take
// their defaults; no scale, captures or mods are printed.
// CHECK-LABEL: attn.attention @minimal
// CHECK-SAME: {causal = #attn.causal<none>, element_type = bf16, gqa_group = 1 : i64, qk_head_dim = 64 : i64, v_head_dim = 64 : i64}
// CHECK-NOT: scale
// CHECK-NOT: score_mod
// CHECK-NOT: mask_mod
// CHECK: }
attn.attention @minimal {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}

// -----

// An explicit softmax scale is kept as an f64 attribute.
// CHECK-LABEL: attn.attention @scaled
// CHECK-SAME: qk_head_dim = 128 : i64
// CHECK-SAME: scale = 1.250000e-01 : f64
// CHECK-SAME: v_head_dim = 128 : i64
attn.attention @scaled {qk_head_dim = 128, v_head_dim = 128, element_type = bf16,
                        scale = 0.125}

// -----

// CHECK-LABEL: attn.attention @scaled_irrational
// CHECK-SAME: scale = 0.088388347648318433 : f64
attn.attention @scaled_irrational {qk_head_dim = 128, v_head_dim = 128,
                                   element_type = bf16,
                                   scale = 0.088388347648318433}

// -----

// CHECK-LABEL: attn.attention @causal_top_left
// CHECK-SAME: causal = #attn.causal<top_left>
attn.attention @causal_top_left {qk_head_dim = 64, v_head_dim = 64,
                                 element_type = bf16,
                                 causal = #attn.causal<top_left>}

// -----

// CHECK-LABEL: attn.attention @causal_bottom_right
// CHECK-SAME: causal = #attn.causal<bottom_right>
attn.attention @causal_bottom_right {qk_head_dim = 64, v_head_dim = 64,
                                     element_type = bf16,
                                     causal = #attn.causal<bottom_right>}

// -----

// An explicit `none` prints exactly like the default.
// CHECK-LABEL: attn.attention @causal_none
// CHECK-SAME: causal = #attn.causal<none>
attn.attention @causal_none {qk_head_dim = 64, v_head_dim = 64,
                             element_type = bf16, causal = #attn.causal<none>}

// -----

// Grouped-query attention: 8 query heads per KV head.
// CHECK-LABEL: attn.attention @gqa
// CHECK-SAME: gqa_group = 8 : i64
attn.attention @gqa {qk_head_dim = 128, v_head_dim = 128, element_type = bf16,
                     gqa_group = 8}

// -----

// Different Q/K and V head dims (DeepSeek MLA style: 192 / 128).
// CHECK-LABEL: attn.attention @mixed_head_dims
// CHECK-SAME: qk_head_dim = 192 : i64
// CHECK-SAME: v_head_dim = 128 : i64
attn.attention @mixed_head_dims {qk_head_dim = 192, v_head_dim = 128,
                                 element_type = bf16}

// -----

// CHECK-LABEL: attn.attention @half
// CHECK-SAME: element_type = f16
attn.attention @half {qk_head_dim = 64, v_head_dim = 64, element_type = f16}

// -----

// Every attribute at once.
// CHECK-LABEL: attn.attention @all_attributes
// CHECK-SAME: {causal = #attn.causal<bottom_right>, element_type = f16, gqa_group = 4 : i64, qk_head_dim = 96 : i64, scale = 5.000000e-01 : f64, v_head_dim = 32 : i64}
attn.attention @all_attributes {qk_head_dim = 96, v_head_dim = 32,
                                element_type = f16, scale = 0.5,
                                causal = #attn.causal<bottom_right>,
                                gqa_group = 4}

// -----

// score_mod only (tanh soft-capping).
// CHECK-LABEL: attn.attention @softcap
// CHECK-SAME: causal = #attn.causal<top_left>
// CHECK-NEXT: score_mod([[S:%[^:]+]]: f32, [[B:%[^:]+]]: index, [[H:%[^:]+]]: index, [[Q:%[^:]+]]: index, [[KV:%[^:]+]]: index) {
// CHECK-NEXT:   [[CAP:%.+]] = arith.constant 3.000000e+01 : f32
// CHECK-NEXT:   [[X:%.+]] = arith.divf [[S]], [[CAP]] : f32
// CHECK-NEXT:   [[T:%.+]] = math.tanh [[X]] : f32
// CHECK-NEXT:   [[R:%.+]] = arith.mulf [[T]], [[CAP]] : f32
// CHECK-NEXT:   attn.yield [[R]] : f32
// CHECK-NEXT: }
// CHECK-NOT: mask_mod
attn.attention @softcap {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                         causal = #attn.causal<top_left>}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    %cap = arith.constant 30.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  }

// -----

// A score_mod that ignores the score's position and returns it unchanged.
// CHECK-LABEL: attn.attention @identity_score
// CHECK-NEXT: score_mod([[S:%[^:]+]]: f32, {{%[^:]+}}: index, {{%[^:]+}}: index, {{%[^:]+}}: index, {{%[^:]+}}: index) {
// CHECK-NEXT:   attn.yield [[S]] : f32
// CHECK-NEXT: }
attn.attention @identity_score {qk_head_dim = 64, v_head_dim = 64,
                                element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    attn.yield %s : f32
  }

// -----

// mask_mod only (causal sliding window of 128 keys).
// CHECK-LABEL: attn.attention @sliding_window
// CHECK-NOT: score_mod
// CHECK: mask_mod([[B:%[^:]+]]: index, [[H:%[^:]+]]: index, [[Q:%[^:]+]]: index, [[KV:%[^:]+]]: index) {
// CHECK-NEXT:   [[W:%.+]] = arith.constant 128 : index
// CHECK-NEXT:   [[D:%.+]] = arith.subi [[Q]], [[KV]] : index
// CHECK-NEXT:   [[C:%.+]] = arith.cmpi sle, [[KV]], [[Q]] : index
// CHECK-NEXT:   [[N:%.+]] = arith.cmpi sle, [[D]], [[W]] : index
// CHECK-NEXT:   [[K:%.+]] = arith.andi [[C]], [[N]] : i1
// CHECK-NEXT:   attn.yield [[K]] : i1
// CHECK-NEXT: }
attn.attention @sliding_window {qk_head_dim = 64, v_head_dim = 64,
                                element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %window = arith.constant 128 : index
    %dist = arith.subi %q, %kv : index
    %causal = arith.cmpi sle, %kv, %q : index
    %near = arith.cmpi sle, %dist, %window : index
    %keep = arith.andi %causal, %near : i1
    attn.yield %keep : i1
  }

// -----

// Both mods; score_mod is printed before mask_mod, each with its own
// argument list.
// CHECK-LABEL: attn.attention @both_mods
// CHECK-SAME: causal = #attn.causal<bottom_right>
// CHECK-NEXT: score_mod([[S:%[^:]+]]: f32, [[B:%[^:]+]]: index, [[H:%[^:]+]]: index, [[Q:%[^:]+]]: index, [[KV:%[^:]+]]: index) {
// CHECK-NEXT:   [[HI:%.+]] = arith.index_cast [[H]] : index to i32
// CHECK-NEXT:   [[HF:%.+]] = arith.sitofp [[HI]] : i32 to f32
// CHECK-NEXT:   [[R:%.+]] = arith.addf [[S]], [[HF]] : f32
// CHECK-NEXT:   attn.yield [[R]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: mask_mod([[MB:%[^:]+]]: index, [[MH:%[^:]+]]: index, [[MQ:%[^:]+]]: index, [[MKV:%[^:]+]]: index) {
// CHECK-NEXT:   [[NE:%.+]] = arith.cmpi ne, [[MQ]], [[MKV]] : index
// CHECK-NEXT:   attn.yield [[NE]] : i1
// CHECK-NEXT: }
attn.attention @both_mods {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                           causal = #attn.causal<bottom_right>}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    %hi = arith.index_cast %h : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %r = arith.addf %s, %hf : f32
    attn.yield %r : f32
  }
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %ne = arith.cmpi ne, %q, %kv : index
    attn.yield %ne : i1
  }

// -----

// A float capture (ALiBi slopes, one per head) read by score_mod.
// CHECK-LABEL: attn.attention @alibi
// CHECK-SAME: captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>]
// CHECK-NEXT: score_mod([[S:%[^:]+]]: f32, [[B:%[^:]+]]: index, [[H:%[^:]+]]: index, [[Q:%[^:]+]]: index, [[KV:%[^:]+]]: index, [[SLOPES:%[^:]+]]: memref<?xf32>) {
// CHECK-NEXT:   [[SLOPE:%.+]] = memref.load [[SLOPES]]{{\[}}[[H]]{{\]}} : memref<?xf32>
// CHECK-NEXT:   [[DIST:%.+]] = arith.subi [[KV]], [[Q]] : index
// CHECK-NEXT:   [[DI:%.+]] = arith.index_cast [[DIST]] : index to i64
// CHECK-NEXT:   [[DF:%.+]] = arith.sitofp [[DI]] : i64 to f32
// CHECK-NEXT:   [[BIAS:%.+]] = arith.mulf [[SLOPE]], [[DF]] : f32
// CHECK-NEXT:   [[R:%.+]] = arith.addf [[S]], [[BIAS]] : f32
// CHECK-NEXT:   attn.yield [[R]] : f32
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

// -----

// An integer capture with two symbolic dims (document ids per batch and key
// position) read by mask_mod: document masking.
// CHECK-LABEL: attn.attention @document_mask
// CHECK-SAME: captures = [#attn.capture<"doc_q", memref<?x?xi32>, ["batch", "seq_q"]>, #attn.capture<"doc_kv", memref<?x?xi32>, ["batch", "seq_kv"]>]
// CHECK-NOT: score_mod
// CHECK: mask_mod([[B:%[^:]+]]: index, [[H:%[^:]+]]: index, [[Q:%[^:]+]]: index, [[KV:%[^:]+]]: index, [[DQ:%[^:]+]]: memref<?x?xi32>, [[DK:%[^:]+]]: memref<?x?xi32>) {
// CHECK-NEXT:   [[IQ:%.+]] = memref.load [[DQ]]{{\[}}[[B]], [[Q]]{{\]}} : memref<?x?xi32>
// CHECK-NEXT:   [[IK:%.+]] = memref.load [[DK]]{{\[}}[[B]], [[KV]]{{\]}} : memref<?x?xi32>
// CHECK-NEXT:   [[SAME:%.+]] = arith.cmpi eq, [[IQ]], [[IK]] : i32
// CHECK-NEXT:   attn.yield [[SAME]] : i1
attn.attention @document_mask {qk_head_dim = 64, v_head_dim = 64,
                               element_type = bf16,
                               captures = [#attn.capture<"doc_q", memref<?x?xi32>, ["batch", "seq_q"]>,
                                           #attn.capture<"doc_kv", memref<?x?xi32>, ["batch", "seq_kv"]>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index,
           %doc_q: memref<?x?xi32>, %doc_kv: memref<?x?xi32>) {
    %iq = memref.load %doc_q[%b, %q] : memref<?x?xi32>
    %ik = memref.load %doc_kv[%b, %kv] : memref<?x?xi32>
    %same = arith.cmpi eq, %iq, %ik : i32
    attn.yield %same : i1
  }

// -----

// Integer (fixed) dimensions mixed with problem symbols, static and dynamic
// sizes, every problem symbol, and i64 / index / f16 / rank-0 captures.
// Captures may be declared without any mod reading them.
// CHECK-LABEL: attn.attention @capture_dims
// CHECK-SAME: captures = [
// CHECK-SAME: #attn.capture<"table", memref<32x?xf32>, [32, "heads"]>,
// CHECK-SAME: #attn.capture<"rel", memref<?x?x?x?xf16>, ["batch", "kv_heads", "seq_q", "seq_kv"]>,
// CHECK-SAME: #attn.capture<"buckets", memref<7xi64>, [7]>,
// CHECK-SAME: #attn.capture<"offsets", memref<?x4xindex>, ["batch", 4]>,
// CHECK-SAME: #attn.capture<"cap", memref<f32>, []>]
// CHECK-NOT: score_mod
// CHECK-NOT: mask_mod
attn.attention @capture_dims {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
    captures = [#attn.capture<"table", memref<32x?xf32>, [32, "heads"]>,
                #attn.capture<"rel", memref<?x?x?x?xf16>, ["batch", "kv_heads", "seq_q", "seq_kv"]>,
                #attn.capture<"buckets", memref<7xi64>, [7]>,
                #attn.capture<"offsets", memref<?x4xindex>, ["batch", 4]>,
                #attn.capture<"cap", memref<f32>, []>]}

// -----

// An integer dim given for a dynamic size is kept as written.
// CHECK-LABEL: attn.attention @integer_dim_dynamic_size
// CHECK-SAME: captures = [#attn.capture<"bias", memref<?x16xf32>, [8, 16]>]
// CHECK-NEXT: score_mod({{%[^:]+}}: f32, {{%[^:]+}}: index, [[H:%[^:]+]]: index, {{%[^:]+}}: index, {{%[^:]+}}: index, [[BIAS:%[^:]+]]: memref<?x16xf32>)
// CHECK-NEXT:   [[C3:%.+]] = arith.constant 3 : index
// CHECK-NEXT:   [[V:%.+]] = memref.load [[BIAS]]{{\[}}[[C3]], [[H]]{{\]}} : memref<?x16xf32>
// CHECK-NEXT:   attn.yield [[V]] : f32
attn.attention @integer_dim_dynamic_size {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16,
    captures = [#attn.capture<"bias", memref<?x16xf32>, [8, 16]>]}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index,
            %bias: memref<?x16xf32>) {
    %c3 = arith.constant 3 : index
    %v = memref.load %bias[%c3, %h] : memref<?x16xf32>
    attn.yield %v : f32
  }

// -----

// Captures used in both mods: every mod takes every capture, in declaration
// order, after its leading arguments. A rank-0 capture is loaded with no
// indices.
// CHECK-LABEL: attn.attention @captures_in_both_mods
// CHECK-SAME: captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>, #attn.capture<"doc", memref<?x?xi32>, ["batch", "seq_kv"]>, #attn.capture<"window", memref<i64>, []>]
// CHECK-SAME: causal = #attn.causal<top_left>
// CHECK-SAME: gqa_group = 2 : i64
// CHECK-NEXT: score_mod([[S:%[^:]+]]: f32, [[B:%[^:]+]]: index, [[H:%[^:]+]]: index, [[Q:%[^:]+]]: index, [[KV:%[^:]+]]: index, [[SLOPES:%[^:]+]]: memref<?xf32>, [[DOC:%[^:]+]]: memref<?x?xi32>, [[WIN:%[^:]+]]: memref<i64>) {
// CHECK-NEXT:   [[SLOPE:%.+]] = memref.load [[SLOPES]]{{\[}}[[H]]{{\]}} : memref<?xf32>
// CHECK-NEXT:   [[DIST:%.+]] = arith.subi [[Q]], [[KV]] : index
// CHECK-NEXT:   [[DI:%.+]] = arith.index_cast [[DIST]] : index to i64
// CHECK-NEXT:   [[DF:%.+]] = arith.sitofp [[DI]] : i64 to f32
// CHECK-NEXT:   [[PEN:%.+]] = arith.mulf [[SLOPE]], [[DF]] : f32
// CHECK-NEXT:   [[R:%.+]] = arith.subf [[S]], [[PEN]] : f32
// CHECK-NEXT:   attn.yield [[R]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: mask_mod([[MB:%[^:]+]]: index, [[MH:%[^:]+]]: index, [[MQ:%[^:]+]]: index, [[MKV:%[^:]+]]: index, [[MSLOPES:%[^:]+]]: memref<?xf32>, [[MDOC:%[^:]+]]: memref<?x?xi32>, [[MWIN:%[^:]+]]: memref<i64>) {
// CHECK-NEXT:   [[DQ:%.+]] = memref.load [[MDOC]]{{\[}}[[MB]], [[MQ]]{{\]}} : memref<?x?xi32>
// CHECK-NEXT:   [[DK:%.+]] = memref.load [[MDOC]]{{\[}}[[MB]], [[MKV]]{{\]}} : memref<?x?xi32>
// CHECK-NEXT:   [[SAME:%.+]] = arith.cmpi eq, [[DQ]], [[DK]] : i32
// CHECK-NEXT:   [[W:%.+]] = memref.load [[MWIN]][] : memref<i64>
// CHECK-NEXT:   [[WI:%.+]] = arith.index_cast [[W]] : i64 to index
// CHECK-NEXT:   [[MD:%.+]] = arith.subi [[MQ]], [[MKV]] : index
// CHECK-NEXT:   [[NEAR:%.+]] = arith.cmpi sle, [[MD]], [[WI]] : index
// CHECK-NEXT:   [[KEEP:%.+]] = arith.andi [[SAME]], [[NEAR]] : i1
// CHECK-NEXT:   attn.yield [[KEEP]] : i1
// CHECK-NEXT: }
attn.attention @captures_in_both_mods {qk_head_dim = 64, v_head_dim = 64,
    element_type = bf16, causal = #attn.causal<top_left>, gqa_group = 2,
    captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>,
                #attn.capture<"doc", memref<?x?xi32>, ["batch", "seq_kv"]>,
                #attn.capture<"window", memref<i64>, []>]}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index,
            %slopes: memref<?xf32>, %doc: memref<?x?xi32>, %window: memref<i64>) {
    %slope = memref.load %slopes[%h] : memref<?xf32>
    %dist = arith.subi %q, %kv : index
    %dist_i = arith.index_cast %dist : index to i64
    %dist_f = arith.sitofp %dist_i : i64 to f32
    %penalty = arith.mulf %slope, %dist_f : f32
    %r = arith.subf %s, %penalty : f32
    attn.yield %r : f32
  }
  mask_mod(%b: index, %h: index, %q: index, %kv: index,
           %slopes: memref<?xf32>, %doc: memref<?x?xi32>, %window: memref<i64>) {
    %dq = memref.load %doc[%b, %q] : memref<?x?xi32>
    %dk = memref.load %doc[%b, %kv] : memref<?x?xi32>
    %same = arith.cmpi eq, %dq, %dk : i32
    %w = memref.load %window[] : memref<i64>
    %wi = arith.index_cast %w : i64 to index
    %d = arith.subi %q, %kv : index
    %near = arith.cmpi sle, %d, %wi : index
    %keep = arith.andi %same, %near : i1
    attn.yield %keep : i1
  }

// -----

// A wider sample of the scalar ops a mod may use round-trips unchanged.
// CHECK-LABEL: attn.attention @many_ops
// CHECK-NEXT: score_mod([[S:%[^:]+]]: f32, {{%[^:]+}}: index, {{%[^:]+}}: index, [[Q:%[^:]+]]: index, [[KV:%[^:]+]]: index) {
// CHECK-NEXT:   [[NEGINF:%.+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT:   [[HALF:%.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:   [[E:%.+]] = math.exp [[S]] : f32
// CHECK-NEXT:   [[L:%.+]] = math.log2 [[E]] : f32
// CHECK-NEXT:   [[SQ:%.+]] = math.sqrt [[L]] : f32
// CHECK-NEXT:   [[M:%.+]] = arith.maximumf [[SQ]], [[HALF]] : f32
// CHECK-NEXT:   [[GT:%.+]] = arith.cmpf ogt, [[M]], [[S]] : f32
// CHECK-NEXT:   [[D:%.+]] = arith.subi [[KV]], [[Q]] : index
// CHECK-NEXT:   [[DI:%.+]] = arith.index_cast [[D]] : index to i32
// CHECK-NEXT:   [[A:%.+]] = math.absi [[DI]] : i32
// CHECK-NEXT:   [[AF:%.+]] = arith.sitofp [[A]] : i32 to f32
// CHECK-NEXT:   [[LF:%.+]] = arith.extf [[HALF]] : f32 to f64
// CHECK-NEXT:   [[TF:%.+]] = arith.truncf [[LF]] : f64 to f32
// CHECK-NEXT:   [[P:%.+]] = math.powf [[AF]], [[TF]] : f32
// CHECK-NEXT:   [[SEL:%.+]] = arith.select [[GT]], [[P]], [[NEGINF]] : f32
// CHECK-NEXT:   attn.yield [[SEL]] : f32
attn.attention @many_ops {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    %neg_inf = arith.constant 0xFF800000 : f32
    %half = arith.constant 0.5 : f32
    %e = math.exp %s : f32
    %l = math.log2 %e : f32
    %sq = math.sqrt %l : f32
    %m = arith.maximumf %sq, %half : f32
    %gt = arith.cmpf ogt, %m, %s : f32
    %d = arith.subi %kv, %q : index
    %di = arith.index_cast %d : index to i32
    %a = math.absi %di : i32
    %af = arith.sitofp %a : i32 to f32
    %lf = arith.extf %half : f32 to f64
    %tf = arith.truncf %lf : f64 to f32
    %p = math.powf %af, %tf : f32
    %sel = arith.select %gt, %p, %neg_inf : f32
    attn.yield %sel : f32
  }

// -----

// The band that attn-infer-mask-bounds attaches round-trips too.
// CHECK-LABEL: attn.attention @with_band
// CHECK-SAME: kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = true>], exact = true>
attn.attention @with_band {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
    kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>],
                         upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = true>],
                         exact = true>}

// -----

// Several attention ops in one module keep their order and symbols.
// CHECK-LABEL: attn.attention @first
// CHECK-SAME: qk_head_dim = 32 : i64
// CHECK-LABEL: attn.attention @second
// CHECK-SAME: qk_head_dim = 256 : i64
attn.attention @first {qk_head_dim = 32, v_head_dim = 32, element_type = bf16}
attn.attention @second {qk_head_dim = 256, v_head_dim = 256, element_type = f16}
