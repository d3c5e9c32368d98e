// RUN: kiln-opt %s -split-input-file -attn-choose-tiles | FileCheck %s --check-prefix=FWD90
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="arch=sm_80" | FileCheck %s --check-prefix=FWD80
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="program=backward" | FileCheck %s --check-prefix=BWD
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="program=backward arch=sm_80" | FileCheck %s --check-prefix=BWD80
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="block-m=128 block-n=32" | FileCheck %s --check-prefix=GIVEN
// RUN: kiln-opt %s -split-input-file -attn-choose-tiles="shared-memory-bytes=49152" | FileCheck %s --check-prefix=SMALL
// RUN: not kiln-opt %s -attn-choose-tiles="arch=sm_70" 2>&1 | FileCheck %s --check-prefix=BAD-ARCH
// RUN: not kiln-opt %s -attn-choose-tiles="program=decode" 2>&1 | FileCheck %s --check-prefix=BAD-PROGRAM
// RUN: not kiln-opt %s -attn-choose-tiles="block-m=-16" 2>&1 | FileCheck %s --check-prefix=BAD-BLOCK

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
// (attn.atomic_key_block sorts first: the other ops have none).

// Head dim 64: three warpgroups (160 registers per thread of a 170 share).
// FWD90-LABEL: attn.attention @hd64
// FWD90-SAME: attn.block_m = 192 : i64, attn.block_n = 128 : i64
// FWD80-LABEL: attn.attention @hd64
// FWD80-SAME: attn.block_m = 64 : i64, attn.block_n = 128 : i64
// BWD-LABEL: attn.attention @hd64
// BWD-SAME: {attn.atomic_key_block = 128 : i64, attn.block_m = 64 : i64, attn.block_n = 64 : i64, causal
// BWD80-LABEL: attn.attention @hd64
// BWD80-SAME: attn.block_m = 128 : i64, attn.block_n = 64 : i64
// GIVEN-LABEL: attn.attention @hd64
// GIVEN-SAME: attn.block_m = 128 : i64, attn.block_n = 32 : i64
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
