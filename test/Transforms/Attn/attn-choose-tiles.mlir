// RUN: kiln-opt %s -split-input-file -attn-choose-tiles | FileCheck %s --check-prefix=FWD90
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="arch=sm_80" | FileCheck %s --check-prefix=FWD80
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="program=backward" | FileCheck %s --check-prefix=BWD
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="program=backward arch=sm_80" | FileCheck %s --check-prefix=BWD80
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="block-m=128 block-n=32" | FileCheck %s --check-prefix=GIVEN
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="program=backward block-m=64" | FileCheck %s --check-prefix=GIVENBWD
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="shared-memory-bytes=49152" | FileCheck %s --check-prefix=SMALL
// RUN: not kiln-opt %s -attn-choose-tiles="arch=sm_70" 2>&1 | FileCheck %s --check-prefix=BAD-ARCH
// RUN: not kiln-opt %s -attn-choose-tiles="program=decode" 2>&1 | FileCheck %s --check-prefix=BAD-PROGRAM
// RUN: not kiln-opt %s -attn-choose-tiles="block-m=-16" 2>&1 | FileCheck %s --check-prefix=BAD-BLOCK
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="narrow-band-tiles=false" | FileCheck %s --check-prefix=WIDE

// The tiles come from each op's own head dims and dtype. sm_80: 64 query
// rows, and the largest key block whose Q, K, V tiles fit the shared memory
// and whose S tile and accumulator fit 160 floats per thread. sm_90a: one
// CTA per SM; the larger key block (128, else 64), then the most
// warpgroups (64 query rows each) whose registers per thread (S, P, the
// accumulator and ~32 more) fit min(255, 65536 / threads) with 15% to
// spare and whose tiles fit the shared memory; when none fits, the sm_80
// rule. The backward takes 64 keys and 64 query rows on sm_90a (wgmma's
// one m16 tile per warp), and on sm_80 128 query rows up to head dim 64;
// on sm_90a at Dqk = Dv = 64 or 128 it also marks the atomic
// schedule's 128 keys per dK/dV program, measured the faster schedule there
// (attn.atomic_key_block sorts first: the other ops have none), and at 64
// for a step without a band, mods, dropout or GQA its 128 query rows per
// step (attn.atomic_query_block), unless block-m is given.

// Head dim 64: three warpgroups (160 registers per thread of a 170 share).
// FWD90-LABEL: attn.attention @hd64
// FWD90-SAME: attn.block_m = 192 : i64, attn.block_n = 128 : i64
// FWD80-LABEL: attn.attention @hd64
// FWD80-SAME: attn.block_m = 64 : i64, attn.block_n = 128 : i64
// BWD-LABEL: attn.attention @hd64
// BWD-SAME: {attn.atomic_key_block = 128 : i64, attn.atomic_query_block = 128 : i64, attn.block_m = 64 : i64, attn.block_n = 64 : i64, causal
// BWD80-LABEL: attn.attention @hd64
// BWD80-SAME: attn.block_m = 128 : i64, attn.block_n = 64 : i64
// GIVEN-LABEL: attn.attention @hd64
// GIVEN-SAME: attn.block_m = 128 : i64, attn.block_n = 32 : i64
// GIVENBWD-LABEL: attn.attention @hd64
// GIVENBWD-SAME: {attn.atomic_key_block = 128 : i64, attn.block_m = 64 : i64, attn.block_n = 64 : i64, causal
// With 48 KiB, two warpgroups' tiles are what fits.
// SMALL-LABEL: attn.attention @hd64
// SMALL-SAME: attn.block_m = 128 : i64, attn.block_n = 128 : i64
attn.attention @hd64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}

// -----

// Head dim 256: 256 registers per thread: two warpgroups.
// FWD90-LABEL: attn.attention @hd256
// FWD90-SAME: attn.block_m = 128 : i64, attn.block_n = 128 : i64
// FWD80-LABEL: attn.attention @hd256
// FWD80-SAME: attn.block_m = 64 : i64, attn.block_n = 64 : i64
// BWD-LABEL: attn.attention @hd256
// BWD-SAME: {attn.block_m = 64 : i64, attn.block_n = 64 : i64
// BWD80-LABEL: attn.attention @hd256
// BWD80-SAME: attn.block_m = 64 : i64, attn.block_n = 64 : i64
// Nothing of two warpgroups fits 48 KiB: the sm_80 rule.
// SMALL-LABEL: attn.attention @hd256
// SMALL-SAME: attn.block_m = 64 : i64, attn.block_n = 16 : i64
attn.attention @hd256 {qk_head_dim = 256, v_head_dim = 256, element_type = f16}

// -----

// Different qk and v head dims: the v head dim sizes the accumulator.
// FWD90-LABEL: attn.attention @qk192_v128
// FWD90-SAME: attn.block_m = 192 : i64, attn.block_n = 128 : i64
// BWD-LABEL: attn.attention @qk192_v128
// BWD-SAME: {attn.block_m = 64 : i64, attn.block_n = 64 : i64
// SMALL-LABEL: attn.attention @qk192_v128
// SMALL-SAME: attn.block_m = 64 : i64, attn.block_n = 32 : i64
attn.attention @qk192_v128 {qk_head_dim = 192, v_head_dim = 128, element_type = bf16}

// -----

// Head dim 128: the atomic schedule at 128 keys per dK/dV program on sm_90a
// (not on sm_80, whose backward has no such measurement), and the
// two-kernel schedule at 128 keys too (its 64-key dK/dV kernel spills
// there).
// BWD-LABEL: attn.attention @hd128
// BWD-SAME: {attn.atomic_key_block = 128 : i64, attn.block_m = 64 : i64, attn.block_n = 64 : i64, attn.two_kernel_key_block = 128 : i64
// BWD80-LABEL: attn.attention @hd128
// BWD80-SAME: {attn.block_m = 64 : i64, attn.block_n = 64 : i64
attn.attention @hd128 {qk_head_dim = 128, v_head_dim = 128, element_type = bf16}

// -----

// Only Dqk = Dv = 128 is marked (others unmeasured; Dqk != Dv has no
// 128-key atomic lowering).
// BWD-LABEL: attn.attention @qk192_v64
// BWD-SAME: {attn.block_m = 64 : i64, attn.block_n = 64 : i64
// BWD-LABEL: attn.attention @hd112
// BWD-SAME: {attn.block_m = 64 : i64, attn.block_n = 64 : i64
attn.attention @qk192_v64 {qk_head_dim = 192, v_head_dim = 64, element_type = bf16}
attn.attention @hd112 {qk_head_dim = 112, v_head_dim = 112, element_type = bf16}

// -----

// Block-sparse with 64-key mask blocks: a dK/dV tile lies in one block, so
// 128 keys do not fit and the two-kernel schedule stays.
// BWD-LABEL: attn.attention @hd128_sparse64
// BWD-SAME: {attn.block_m = 64 : i64, attn.block_n = 64 : i64, block_sparse
attn.attention @hd128_sparse64 {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, block_sparse = array<i64: 64, 64>}

// BAD-ARCH: error: arch must be sm_80 or sm_90a, got 'sm_70'
// BAD-PROGRAM: error: program must be forward or backward, got 'decode'
// BAD-BLOCK: error: block-m, block-n and shared-memory-bytes must not be negative

// -----

// Dropout's uniforms are one more 2-D tile per step (64 registers at 128
// keys): at head dim 64, 224 registers per thread, two warpgroups.
// FWD90-LABEL: attn.attention @hd64_dropout
// FWD90-SAME: attn.block_m = 128 : i64, attn.block_n = 128 : i64
attn.attention @hd64_dropout {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, dropout_p = 0.1}

// -----

// A narrow diagonal band (a sliding window of 129 keys per row: q - 128 <=
// kv <= q; the band is attn-infer-mask-bounds' result, written out here,
// and the mask_mod reads positions, so the head dim's rule takes 128 rows)
// on sm_90a: 64 x 64 tiles, two CTAs per SM, visit 192 keys per
// row (three blocks, the middle one unmasked) against 256 for 128 x 128
// (two masked blocks), at most the 85% asked; the backward and sm_80 keep
// their rule, and narrow-band-tiles=false is the ablation.
// FWD90-LABEL: attn.attention @window129
// FWD90-SAME: attn.block_m = 64 : i64, attn.block_n = 64 : i64
// FWD80-LABEL: attn.attention @window129
// FWD80-SAME: attn.block_m = 64 : i64, attn.block_n = 128 : i64
// BWD-LABEL: attn.attention @window129
// BWD-SAME: attn.block_m = 64 : i64, attn.block_n = 64 : i64
// WIDE-LABEL: attn.attention @window129
// WIDE-SAME: attn.block_m = 128 : i64, attn.block_n = 128 : i64
// GIVEN-LABEL: attn.attention @window129
// GIVEN-SAME: attn.block_m = 128 : i64, attn.block_n = 32 : i64
attn.attention @window129 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %keep = arith.cmpi sle, %kv, %q : index
    attn.yield %keep : i1
  }

// -----

// The tightest of several bounds sets the width (here 65 keys: 128 against
// 256 per row), and constant bounds do not count.
// FWD90-LABEL: attn.attention @window65
// FWD90-SAME: attn.block_m = 64 : i64, attn.block_n = 64 : i64
attn.attention @window65 {qk_head_dim = 128, v_head_dim = 128, element_type = bf16, kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>, #attn.kv_bound<q_coeff = 1, offset = -64, diag = false>, #attn.kv_bound<q_coeff = 0, offset = 0, diag = false>], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %keep = arith.cmpi sle, %kv, %q : index
    attn.yield %keep : i1
  }

// -----

// 513 keys per row: 576 keys against 640 (90%), more than 85%: the head
// dim's tiles (the 64 x 64 tiles measured 4-6% slower there).
// FWD90-LABEL: attn.attention @window513
// FWD90-SAME: attn.block_m = 128 : i64, attn.block_n = 128 : i64
attn.attention @window513 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -512, diag = false>], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %keep = arith.cmpi sle, %kv, %q : index
    attn.yield %keep : i1
  }

// -----

// Head dim 256: two 64 x 64 CTAs (Q and a two-stage K/V ring each) do not
// fit the shared memory, so the head dim's tiles stay.
// FWD90-LABEL: attn.attention @window129_hd256
// FWD90-SAME: attn.block_m = 128 : i64, attn.block_n = 64 : i64
attn.attention @window129_hd256 {qk_head_dim = 256, v_head_dim = 256, element_type = bf16, kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %keep = arith.cmpi sle, %kv, %q : index
    attn.yield %keep : i1
  }

// -----

// Bounds of both alignments (one shifted by Lk - Lq) have no fixed width;
// a band without a lower bound that moves with q (causal) is not narrow.
// FWD90-LABEL: attn.attention @mixed_alignment
// FWD90-SAME: attn.block_m = 128 : i64, attn.block_n = 128 : i64
// FWD90-LABEL: attn.attention @causal_band
// FWD90-SAME: attn.block_m = 128 : i64, attn.block_n = 128 : i64
attn.attention @mixed_alignment {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = true>], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %keep = arith.cmpi sle, %kv, %q : index
    attn.yield %keep : i1
  }
attn.attention @causal_band {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, kv_band = #attn.band<lower = [], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %keep = arith.cmpi sle, %kv, %q : index
    attn.yield %keep : i1
  }

// -----

// Not for GQA (64-row prefill tiles would leave no decode program to pack a
// KV group's heads), nor above head dim 128 on either side (measured at 64
// and 128; a 256-wide accumulator in one of two CTAs' register shares), nor
// for a band written beyond attn-infer-mask-bounds' 2^30 (~2^62 keys per
// row here: not narrow, and the key counts would overflow).
// FWD90-LABEL: attn.attention @window129_gqa
// FWD90-SAME: attn.block_m = 128 : i64, attn.block_n = 128 : i64
// FWD90-LABEL: attn.attention @window129_qk64_v256
// FWD90-NOT: attn.block_m = 64 : i64, attn.block_n = 64 : i64
// FWD90-SAME: v_head_dim = 256
// FWD90-LABEL: attn.attention @huge_band
// FWD90-SAME: attn.block_m = 128 : i64, attn.block_n = 128 : i64
attn.attention @window129_gqa {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, gqa_group = 4, kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %keep = arith.cmpi sle, %kv, %q : index
    attn.yield %keep : i1
  }
attn.attention @window129_qk64_v256 {qk_head_dim = 64, v_head_dim = 256, element_type = bf16, kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %keep = arith.cmpi sle, %kv, %q : index
    attn.yield %keep : i1
  }
attn.attention @huge_band {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -4611686018427387904, diag = false>], upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>], exact = true>}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %keep = arith.cmpi sle, %kv, %q : index
    attn.yield %keep : i1
  }

// -----

// The atomic backward's 128 query rows per step (attn.atomic_query_block)
// only where the step holds no per-element tile beyond Sᵀ and dPᵀ: not
// for a causal band, a score_mod, dropout or GQA (each measured or seen to
// spill at 128 rows), nor at D = 128.
// BWD-LABEL: attn.attention @causal64
// BWD-NOT: atomic_query_block
// BWD-SAME: causal = #attn.causal<top_left>
attn.attention @causal64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, causal = #attn.causal<top_left>}

// -----

// BWD-LABEL: attn.attention @dropout64
// BWD-NOT: atomic_query_block
// BWD-SAME: dropout_p
attn.attention @dropout64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, dropout_p = 0.1}

// -----

// BWD-LABEL: attn.attention @gqa64
// BWD-NOT: atomic_query_block
// BWD-SAME: gqa_group = 4
attn.attention @gqa64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, gqa_group = 4}

// -----

// BWD-LABEL: attn.attention @softcap64
// BWD-NOT: atomic_query_block
// BWD-SAME: element_type = bf16
attn.attention @softcap64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
    %c = arith.constant 30.0 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }

// -----

// BWD-LABEL: attn.attention @varlen64
// BWD-NOT: atomic_query_block
// BWD-SAME: varlen
attn.attention @varlen64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, varlen}

// -----

// BWD-LABEL: attn.attention @sparse64
// BWD-NOT: atomic_query_block
// BWD-SAME: block_sparse
attn.attention @sparse64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, block_sparse = array<i64: 128, 128>}

// -----

// BWD-LABEL: attn.attention @paged64
// BWD-NOT: atomic_query_block
// BWD-SAME: page_size = 16
attn.attention @paged64 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, page_size = 16}
