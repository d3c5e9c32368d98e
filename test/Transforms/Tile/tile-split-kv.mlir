// RUN: kiln-opt %s -convert-attn-to-tile -tile-split-kv -split-input-file | FileCheck %s
// RUN: kiln-opt %s -convert-attn-to-tile -tile-split-kv="max-splits=8 min-blocks=2 ctas-per-sm=1 combine-splits=48" -split-input-file | FileCheck %s --check-prefix=OPTS
// RUN: kiln-opt %s -convert-attn-to-tile -tile-split-kv="combine-splits=0 combine-rows=32" -split-input-file | FileCheck %s --check-prefix=ROWS
// RUN: kiln-opt %s -convert-attn-to-tile="block-m=128 decode-rows=32" -tile-split-kv -split-input-file | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %s -convert-attn-to-tile -tile-split-kv="combine-rows-steps=0" -split-input-file | FileCheck %s --check-prefix=SPLITS

// A prefill and a decode program of one variant share kv_splits, which
// counts the programs of the kernel that runs (each kernel's count weighted
// by its launch condition), and the combine kernels, after both.
// TWO-LABEL: func.func @decode_fwd(
// TWO-SAME: tile.symbols = {kv_splits = {{\["max", \["add", \["mul", \["min", \["max", \["sub", "seq_q", 32\], 0\], 1\], \["max", \["min", \["sub", \["ceildiv", \["add", \["mul", "num_sms", "ctas_per_sm.decode_fwd"\], 1\], \["mul", \["ceildiv", "seq_q", 128\], "heads", "batch"\]\], 1\], \["ceildiv", "seq_kv", 256\], 128\], 1\]\], \["mul", \["min", \["max", \["sub", 33, "seq_q"\], 0\], 1\], \["max", \["min", \["sub", \["ceildiv", \["add", \["mul", "num_sms", "ctas_per_sm.decode_fwd_decode"\], 1\], \["mul", \["ceildiv", "seq_q", 32\], "heads", "batch"\]\], 1\], \["ceildiv", "seq_kv", 256\], 128\], 1\]\]\], 1\]}}
// TWO-SAME: tile.when = ["sub", "seq_q", 32]
// TWO-LABEL: func.func @decode_fwd_decode(
// TWO-SAME: tile.symbols = {kv_splits = {{\["max", \["add", \["mul", \["min", \["max", \["sub", "seq_q", 32\], 0\], 1\], .*"ctas_per_sm.decode_fwd_decode".*\]\]\], 1\]}}
// TWO-SAME: tile.when = ["sub", 33, "seq_q"]
// TWO-LABEL: func.func @decode_fwd_combine(
// TWO-LABEL: func.func @decode_fwd_combine_rows(
// TWO-NOT: func.func @decode

// The forward kernel takes kv_splits (derived at run time, passed as an i64),
// two partial-result workspaces sized 0 unless the run splits, and a grid
// whose z axis holds batch * kv_splits programs.
// CHECK-LABEL: func.func @decode_fwd(
// CHECK-SAME: %[[OP:[a-z0-9]+]]: memref<?x?x?x64xf32, {{.*}}> {tile.shape = {{\[\["mul", "batch", "kv_splits", \["min", \["sub", "kv_splits", 1\], 1\]\], "seq_q", "heads", 64\]}}, tile.workspace = "o_partial"}
// CHECK-SAME: %[[LP:[a-z0-9]+]]: memref<?x?x?xf32, {{.*}}> {{{.*}}tile.workspace = "lse_partial"}
// CHECK-SAME: %[[S:[a-z0-9]+]]: i64 {tile.scalar = "kv_splits"}
// CHECK-SAME: tile.grid = {{\[\["ceildiv", "seq_q", 64\], "heads", \["mul", "batch", "kv_splits"\]\]}}
// CHECK-SAME: tile.symbols = {kv_splits = {{\["max", \["min", \["sub", \["ceildiv", \["add", \["mul", "num_sms", "ctas_per_sm.decode_fwd"\], 1\], \["mul", \["ceildiv", "seq_q", 64\], "heads", "batch"\]\], 1\], \["ceildiv", "seq_kv", 256\], 128\], 1\]}}}
// z = batch * kv_splits + split: the batch every view indexes, and the split.
// CHECK: %[[N:.*]] = arith.index_cast %[[S]] : i64 to index
// CHECK: %[[Z:.*]] = tile.program_id 2
// CHECK: %[[B:.*]] = arith.divui %[[Z]], %[[N]] : index
// CHECK: %[[SPLIT:.*]] = arith.remui %[[Z]], %[[N]] : index
// CHECK-NOT: tile.program_id 2
// CHECK: tile.view %{{.*}}[%[[B]], %{{.*}}] keep [1, 3]
// The split's keys: contiguous chunks of ceil(blocks / kv_splits) blocks from
// the first loop's lower bound, intersected with each loop's bounds.
// CHECK: %[[PER:.*]] = arith.ceildivsi %{{.*}}, %[[N]] : index
// CHECK-NEXT: %[[CHUNK:.*]] = arith.muli %[[PER]], %{{.*}} : index
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[SPLIT]], %[[CHUNK]] : index
// CHECK-NEXT: %[[LO:.*]] = arith.addi %[[LO0:.*]], %[[OFF]] : index
// CHECK-NEXT: %[[END:.*]] = arith.addi %[[LO]], %[[CHUNK]] : index
// CHECK-NEXT: %[[HI:.*]] = arith.minsi %[[END]], %[[HI0:.*]] : index
// CHECK: %[[LB:.*]] = arith.maxsi %[[LO0]], %[[LO]] : index
// CHECK: %[[UB:.*]] = arith.minsi %[[HI0]], %[[HI]] : index
// CHECK: scf.for %{{.*}} = %[[LB]] to %[[UB]]
// CHECK: } {tile.kv_loop = "masked"}
// Unsplit, the stores as before; split, the f32 output before rounding and
// the LSE at row z of the partial arrays.
// CHECK: %[[OUT32:.*]] = arith.mulf
// CHECK: %[[OUT:.*]] = arith.truncf %[[OUT32]]
// CHECK: %[[UNSPLIT:.*]] = arith.cmpi eq, %[[N]], %{{.*}} : index
// CHECK: scf.if %[[UNSPLIT]] {
// CHECK-NEXT: tile.store %[[OUT]], %{{.*}} : tensor<64x64xbf16>, <?x64xbf16>
// CHECK-NEXT: tile.store %[[LSE:.*]], %{{.*}} : tensor<64xf32>, <?xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[OPV:.*]] = tile.view %[[OP]][%[[Z]], %{{.*}}] keep [1, 3]
// CHECK-NEXT: tile.store %[[OUT32]], %[[OPV]]{{.*}} : tensor<64x64xf32>, <?x64xf32>
// CHECK-NEXT: %[[LPV:.*]] = tile.view %[[LP]][%[[Z]], %{{.*}}] keep [2]
// CHECK-NEXT: tile.store %[[LSE]], %[[LPV]]
// CHECK-NEXT: }

// The by-splits combine kernel: launched when kv_splits >= 2 and the
// by-rows one (below) would take more steps than 2 times its waves
// (programs over the slots the device holds, times blocks of 16 splits); one
// program per (query row, head, batch), an online merge in base 2 over the splits in
// blocks of 16, read transposed ([Dv, splits] of this row and head, from
// column batch * kv_splits) so that the sums over the splits are row
// reductions. Columns past the batch's splits are not read (a masked load)
// and weigh 0; the first of the tile's rows (all alike) writes the LSE.
// CHECK-LABEL: func.func @decode_fwd_combine(
// CHECK-SAME: tile.workspace = "o_partial"
// CHECK-SAME: tile.workspace = "lse_partial"
// CHECK-SAME: tile.tensor = "out"
// CHECK-SAME: tile.tensor = "lse"
// CHECK-SAME: %[[CS:[a-z0-9]+]]: i64 {tile.scalar = "kv_splits"}
// CHECK-SAME: tile.block_m = 64
// CHECK-SAME: tile.grid = ["seq_q", "heads", "batch"]
// CHECK-SAME: tile.symbols = {kv_splits =
// CHECK-SAME: tile.when = ["mul", ["min", ["max", ["sub", "kv_splits", 1], 0], 1], ["min", ["max", ["sub", ["mul", "kv_splits", ["ceildiv", ["mul", ["ceildiv", "seq_q", 64], "heads", "batch"], ["mul", "num_sms", "ctas_per_sm.decode_fwd_combine_rows"]]], ["mul", 2, ["ceildiv", ["mul", "seq_q", "heads", "batch"], ["mul", "num_sms", "ctas_per_sm.decode_fwd_combine"]], ["ceildiv", "kv_splits", 16]]], 0], 1]]
// CHECK: %[[CN:.*]] = arith.index_cast %[[CS]]
// CHECK: %[[Q:.*]] = tile.program_id 0
// CHECK: %[[H:.*]] = tile.program_id 1
// CHECK: %[[B:.*]] = tile.program_id 2
// CHECK: %[[FIRST:.*]] = arith.muli %[[B]], %[[CN]]
// CHECK: %[[OV:.*]] = tile.view %{{.*}}[%[[Q]], %[[H]]] keep [3, 0] : {{.*}} -> <64x?xf32>
// CHECK: %[[LV:.*]] = tile.view %{{.*}}[%[[H]], %[[Q]]] keep [0] : {{.*}} -> <?xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[CN]] step %{{.*}} iter_args
// CHECK: %[[POS:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<64x16xindex>
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %[[POS]], %{{.*}} : tensor<64x16xindex>
// CHECK: %[[COL:.*]] = arith.addi %[[FIRST]], %[[I]]
// CHECK: tile.load %[[OV]][%{{.*}}, %[[COL]]] mask %[[VALID]] fill 0.000000e+00 : f32 : <64x?xf32>, tensor<64x16xi1> -> tensor<64x16xf32>
// CHECK: tile.load %[[LV]][%[[COL]]] fill 0xFF800000 : f32 : <?xf32> -> tensor<16xf32>
// CHECK: tile.broadcast %{{.*}} dim 0 : tensor<16xf32> -> tensor<64x16xf32>
// CHECK: arith.select %[[VALID]]
// CHECK: tile.reduce max %{{.*}} dim 1
// CHECK: arith.maximumf
// CHECK: math.exp2
// CHECK: math.exp2
// CHECK: tile.reduce sum
// CHECK: tile.reduce sum
// CHECK: scf.yield
// CHECK: arith.truncf {{.*}} to tensor<64xbf16>
// CHECK: tile.view %{{.*}}[%[[B]], %[[Q]], %[[H]]] keep [3]
// CHECK: tile.store
// CHECK: math.log2
// CHECK: %[[LO:.*]] = tile.view %{{.*}}[%[[B]], %[[H]]] keep [2]
// CHECK: %[[ROW0:.*]] = arith.cmpi eq
// CHECK: tile.store %{{.*}}, %[[LO]][%[[Q]]] mask %[[ROW0]]

// The by-rows combine kernel (many query rows over few splits: a
// speculative verify): one program per (64 query rows, head, batch), one
// split's block per step, launched exactly when the by-splits one is not.
// CHECK-LABEL: func.func @decode_fwd_combine_rows(
// CHECK-SAME: %{{[a-z0-9]+}}: i64 {tile.scalar = "kv_splits"}
// CHECK-SAME: tile.block_m = 64
// CHECK-SAME: tile.grid = {{\[\["ceildiv", "seq_q", 64\], "heads", "batch"\]}}
// CHECK-SAME: tile.when = ["mul", ["min", ["max", ["sub", "kv_splits", 1], 0], 1], ["min", ["max", ["sub", ["add", ["mul", 2, ["ceildiv", ["mul", "seq_q", "heads", "batch"], ["mul", "num_sms", "ctas_per_sm.decode_fwd_combine"]], ["ceildiv", "kv_splits", 16]], 1], ["mul", "kv_splits", ["ceildiv", ["mul", ["ceildiv", "seq_q", 64], "heads", "batch"], ["mul", "num_sms", "ctas_per_sm.decode_fwd_combine_rows"]]]], 0], 1]]
// CHECK: scf.for
// CHECK: tile.load {{.*}} fill 0.000000e+00 : f32 : <?x64xf32> -> tensor<64x64xf32>
// CHECK: scf.yield
// CHECK: arith.truncf {{.*}} to tensor<64x64xbf16>

// The ablation of the choice: the by-splits kernel in every split run.
// SPLITS-LABEL: func.func @decode_fwd_combine(
// SPLITS-SAME: tile.grid = ["seq_q", "heads", "batch"]
// SPLITS-SAME: tile.when = ["sub", "kv_splits", 1]
// SPLITS-NOT: func.func @decode_fwd_combine_rows

// The other ablation: the by-rows form in every split run, here over 32
// query rows.
// ROWS-LABEL: func.func @decode_fwd_combine(
// ROWS-SAME: tile.grid = {{\[\["ceildiv", "seq_q", 32\], "heads", "batch"\]}}
// ROWS-SAME: tile.when = ["sub", "kv_splits", 1]
// ROWS: scf.for
// ROWS: tile.load {{.*}} fill 0.000000e+00 : f32 : <?x64xf32> -> tensor<32x64xf32>
// ROWS: tile.load {{.*}} fill 0xFF800000 : f32 : <?xf32> -> tensor<32xf32>
// ROWS: scf.yield
// ROWS: arith.truncf {{.*}} to tensor<32x64xbf16>
// ROWS-NOT: func.func @decode_fwd_combine_rows

// OPTS-LABEL: func.func @decode_fwd(
// OPTS-SAME: tile.symbols = {kv_splits = {{\["max", \["min", \["sub", \["ceildiv", \["add", \["mul", "num_sms", 1\], 1\], \["mul", \["ceildiv", "seq_q", 64\], "heads", "batch"\]\], 1\], \["ceildiv", "seq_kv", 128\], 8\], 1\]}}}
// OPTS-LABEL: func.func @decode_fwd_combine(
// The combine forms' waves use the fixed occupancy too.
// OPTS-SAME: tile.when = {{.*\["ceildiv", \["mul", \["ceildiv", "seq_q", 64\], "heads", "batch"\], \["mul", "num_sms", 1\]\].*\["ceildiv", \["mul", "seq_q", "heads", "batch"\], \["mul", "num_sms", 1\]\], \["ceildiv", "kv_splits", 48\]}}
// OPTS: tile.load {{.*}} -> tensor<64x48xf32>
attn.attention @decode {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<bottom_right>}

// -----

// The backward's kernels are left alone.
// CHECK-LABEL: func.func @bwd_only_dq(
// CHECK-NOT: kv_splits
func.func @bwd_only_dq() attributes {tile.kernel, tile.bwd_stage = "dq", tile.variant = "v", tile.grid = [1, 1, 1]} {
  return
}
