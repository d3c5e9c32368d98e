// RUN: kiln-opt %s -kiln-cuda-fwd-pipeline | FileCheck %s
// RUN: sed 's/_head_dim = 128/_head_dim = 256/g' %s | kiln-opt -kiln-cuda-fwd-pipeline="arch=sm_80" | FileCheck %s --check-prefix=HD256
// RUN: kiln-opt %s -kiln-cuda-fwd-pipeline="block-m=128 block-n=32" | FileCheck %s --check-prefix=GIVEN
// RUN: kiln-opt %s -kiln-cuda-fwd-pipeline="warpgroup-mma=false" | FileCheck %s --check-prefix=NOWG
// RUN: sed 's/constant 512/constant 128/' %s | kiln-opt -kiln-cuda-fwd-pipeline | FileCheck %s --check-prefix=NARROW
// RUN: sed 's/constant 512/constant 128/' %s | kiln-opt -kiln-cuda-fwd-pipeline="narrow-band-tiles=false" | FileCheck %s
// RUN: kiln-opt %examples/gqa_causal.mlir -kiln-cuda-fwd-pipeline | FileCheck %s --check-prefix=LONGEST
// RUN: kiln-opt %examples/gqa_causal.mlir -kiln-cuda-fwd-pipeline="longest-first=false" | FileCheck %s --check-prefix=GRID
// RUN: kiln-opt %examples/causal.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false" | FileCheck %s --check-prefix=GRID
// RUN: kiln-opt %examples/causal.mlir -kiln-cuda-fwd-pipeline | FileCheck %s --check-prefix=CHUNKS

// GQA causal's query blocks go out longest first over the whole grid
// (tgpu-longest-first, before the persistent tiles: the grid's extents are
// scalars from then on, which the tile counter's numbering reuses); causal
// without groups, and the ablation, keep the grid's order (the persistent
// kernel's scalars after the tensor maps).
// The persistent kernel reuses the three scalars (only its CTA count is
// new), and both sides number each tile drawn (its place t, split as x, y,
// z with x fastest) again with the block slowest: the producer where it
// draws, the consumers where they read the published ids.
// LONGEST-LABEL: func.func @gqa_causal_fwd(
// LONGEST-SAME: i64 {tile.scalar = "kv_splits"}, %arg8: i64 {tile.scalar = ["ceildiv", "seq_q", 192]}, %arg9: i64 {tile.scalar = "heads"}, %arg10: i64 {tile.scalar = ["mul", "batch", "kv_splits"]}, %arg11: !tgpu.tensor_map
// LONGEST-SAME: tensor = 2 : i64}}, %arg14: i64 {tile.scalar = ["min",
// LONGEST-SAME: tile.block_cost = "grows"
// LONGEST: %[[Y:.+]] = arith.index_cast %arg9 : i64 to index
// LONGEST-NEXT: %[[Z:.+]] = arith.index_cast %arg10 : i64 to index
// LONGEST-NEXT: %[[PER:.+]] = arith.muli %[[Y]], %[[Z]] : index
// LONGEST: producer {
// LONGEST: scf.while
// LONGEST: arith.remui %{{.+}}, %[[Y]]
// LONGEST: %[[RANK:.+]] = arith.divui %{{.+}}, %[[PER]]
// LONGEST: consumer {
// LONGEST: scf.while
// LONGEST: %[[RANK2:.+]] = arith.divui %{{.+}}, %[[PER]]
// LONGEST-NEXT: arith.remui %{{.+}}, %[[PER]]
// GRID-LABEL: causal_fwd(
// GRID-SAME: i64 {tile.scalar = "kv_splits"}, %arg8: !tgpu.tensor_map
// GRID-SAME: tile.block_cost = "grows"
// Causal's own heads (wave-chunks, the default): the same three scalars
// and the pairs per chunk, which the persistent kernel's producer uses
// where it draws a tile (its chunk's pairs, the last chunk's fewer).
// CHUNKS-LABEL: func.func @causal_fwd(
// CHUNKS-SAME: i64 {tile.scalar = "kv_splits"}, %arg8: i64 {tile.scalar = ["ceildiv", "seq_q", 192]}, %arg9: i64 {tile.scalar = "heads"}, %arg10: i64 {tile.scalar = ["mul", "batch", "kv_splits"]}, %arg11: i64 {tile.scalar = ["max", ["sub", ["ceildiv", ["add", ["mul", "num_sms", "ctas_per_sm.causal_fwd"], 1], ["max", ["ceildiv", "seq_q", 192], 1]], 1], 1]}, %arg12: !tgpu.tensor_map
// CHUNKS: %[[C:.+]] = arith.index_cast %arg11 : i64 to index
// CHUNKS: producer {
// CHUNKS: scf.while
// CHUNKS: arith.minsi %[[C]], %{{.+}} : index

// attn -> scheduled tgpu kernel: no attn op, no unscheduled tile.load or
// tile.dot, every register tile has a layout; tiles sized from the head dim
// of the variant itself and the target's shared memory (head dim 128 on
// sm_90a: 128 x 128 blocks, not 192, because the window's mask_mod reads
// the query and key positions; attn-choose-tiles), 8 warps of 16 rows, the
// products on wgmma (tgpu-warpgroup-mma).
// CHECK-NOT: attn.attention
// CHECK-LABEL: func.func @window_fwd
// CHECK-SAME: tgpu.arch = "sm_90a", tgpu.fast_math, tgpu.num_warps = 8 : i64
// CHECK-SAME: tile.block_m = 128 : i64, tile.block_n = 128 : i64
// CHECK-NOT: tile.load
// CHECK-NOT: tile.dot
// CHECK-NOT: tensor<{{[0-9x]+}}x{{[a-z0-9]+}}>
// CHECK-NOT: {{tgpu.mma }}
// CHECK: tgpu.warpgroup_mma
// CHECK: return
// The ablation keeps mma.sync at the same tiles.
// NOWG-LABEL: func.func @window_fwd
// NOWG-SAME: tgpu.num_warps = 8 : i64
// NOWG-NOT: tgpu.warpgroup_mma
// NOWG: {{tgpu.mma }}

// Head dim 256 keeps S and the accumulator in registers with 64-key blocks.
// HD256-LABEL: func.func @window_fwd
// HD256-SAME: tgpu.arch = "sm_80"
// HD256-SAME: tile.block_n = 64 : i64
// A window of 129 keys per row (not this one's 513) takes 64 x 64 tiles,
// one consumer warpgroup, two CTAs per SM: the pipeline proves the band
// before it chooses the tiles (attn-choose-tiles narrow-band-tiles).
// NARROW-LABEL: func.func @window_fwd
// NARROW-SAME: tgpu.ctas_per_sm = 2 : i64, tgpu.fast_math, tgpu.num_warps = 4 : i64
// NARROW-SAME: tile.block_m = 64 : i64, tile.block_n = 64 : i64
// Given tiles win over the choice; the warps follow BLOCK_M.
// GIVEN-LABEL: func.func @window_fwd
// GIVEN-SAME: tgpu.num_warps = 8 : i64
// GIVEN-SAME: tile.block_m = 128 : i64, tile.block_n = 32 : i64
attn.attention @window {qk_head_dim = 128, v_head_dim = 128, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %w = arith.constant 512 : index
    %d = arith.subi %q, %kv : index
    %near = arith.cmpi sle, %d, %w : index
    %causal = arith.cmpi sle, %kv, %q : index
    %keep = arith.andi %near, %causal : i1
    attn.yield %keep : i1
  }
