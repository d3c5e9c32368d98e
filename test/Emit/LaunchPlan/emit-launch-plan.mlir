// The launch plan read off a module's kernels (kiln-translate
// --emit-launch-plan): the tensors and workspaces with their shapes, the
// captures, the constraints between symbols and the kernels in launch order
// with their grids and arguments by role.

// At the tile level (the CPU backend's plan): unscheduled kernels run one
// program at a time and copy nothing, so every tensor needs only to be
// contiguous in its last dimension (an alignment of its element size).
// RUN: kiln-opt %examples/alibi.mlir -kiln-fwd-tile-pipeline | kiln-translate --emit-launch-plan | FileCheck %s --check-prefix=TILE
// TILE: "variant": "alibi",
// TILE-NEXT: "kind": "forward",
// TILE: "tensors": [
// TILE-NEXT: {"name":"q","dtype":"bf16","shape":["batch","seq_q","heads",64],"align":2},
// TILE-NEXT: {"name":"k","dtype":"bf16","shape":["batch","seq_kv","kv_heads",64],"align":2},
// TILE-NEXT: {"name":"v","dtype":"bf16","shape":["batch","seq_kv","kv_heads",64],"align":2},
// TILE-NEXT: {"name":"out","dtype":"bf16","shape":["batch","seq_q","heads",64],"align":2},
// TILE-NEXT: {"name":"lse","dtype":"f32","shape":["batch","heads","seq_q"],"align":4}
// TILE-NEXT: {{^ \]}},
// TILE-NEXT: "captures": [
// TILE-NEXT: {"name":"slopes","dtype":"f32","dims":["heads"]}
// TILE-NEXT: {{^ \]}},
// The split-KV workspaces, derived symbol and combine kernel (tile-split-kv).
// TILE-NEXT: "workspaces": [
// TILE-NEXT: {"name":"o_partial","dtype":"f32","shape":{{\[\["mul","batch","kv_splits",\["min",\["sub","kv_splits",1\],1\]\],"seq_q","heads",64\]}},"zero_fill":false},
// TILE-NEXT: {"name":"lse_partial","dtype":"f32","shape":{{\[\["mul","batch","kv_splits",\["min",\["sub","kv_splits",1\],1\]\],"heads","seq_q"\]}},"zero_fill":false}
// TILE-NEXT: {{^ \]}},
// TILE-NEXT: "constraints": {{\[\["heads","kv_heads"\]\]}},
// TILE-NEXT: "symbols": {"kv_splits":{{\["max",\["min",\["sub",\["ceildiv",\["add",\["mul","num_sms","ctas_per_sm.alibi_fwd"\],1\],\["mul",\["ceildiv","seq_q",64\],"heads","batch"\]\],1\],\["ceildiv","seq_kv",256\],128\],1\]}}},
// TILE-NEXT: "kernels": [
// TILE-NEXT: {"name":"alibi_fwd","grid":{{\[\["ceildiv","seq_q",64\],"heads",\["mul","batch","kv_splits"\]\]}},"threads":1,"shared_bytes":0,"args":[{"tensor":"q","rank":4},{"tensor":"k","rank":4},{"tensor":"v","rank":4},{"tensor":"out","rank":4},{"tensor":"lse","rank":3},{"capture":0,"rank":1},{"workspace":"o_partial","rank":4},{"workspace":"lse_partial","rank":3},{"scalar":"kv_splits"}]},
// The two forms of the combine kernel, each launched when its cost rule
// picks it (by splits: one query row per program; by rows: 64 per program).
// TILE-NEXT: {"name":"alibi_fwd_combine","grid":["seq_q","heads","batch"],"when":["mul",["min",["max",["sub","kv_splits",1],0],1],["min",["max",["sub",["mul","kv_splits",["ceildiv",["mul",["ceildiv","seq_q",64],"heads","batch"],["mul","num_sms","ctas_per_sm.alibi_fwd_combine_rows"]]],["mul",2,["ceildiv",["mul","seq_q","heads","batch"],["mul","num_sms","ctas_per_sm.alibi_fwd_combine"]],["ceildiv","kv_splits",16]]],0],1]],"threads":1,"shared_bytes":0,"args":[{"workspace":"o_partial","rank":4},{"workspace":"lse_partial","rank":3},{"tensor":"out","rank":4},{"tensor":"lse","rank":3},{"scalar":"kv_splits"}]},
// TILE-NEXT: {"name":"alibi_fwd_combine_rows","grid":{{\[\["ceildiv","seq_q",64\],"heads","batch"\]}},"when":["mul",["min",["max",["sub","kv_splits",1],0],1],["min",["max",["sub",["add",["mul",2,["ceildiv",["mul","seq_q","heads","batch"],["mul","num_sms","ctas_per_sm.alibi_fwd_combine"]],["ceildiv","kv_splits",16]],1],["mul","kv_splits",["ceildiv",["mul",["ceildiv","seq_q",64],"heads","batch"],["mul","num_sms","ctas_per_sm.alibi_fwd_combine_rows"]]]],0],1]],"threads":1,"shared_bytes":0,"args":[{"workspace":"o_partial","rank":4},{"workspace":"lse_partial","rank":3},{"tensor":"out","rank":4},{"tensor":"lse","rank":3},{"scalar":"kv_splits"}]}
// TILE-NEXT: {{^ \]}},
// TILE-NEXT: "source": ""

// The tile pipeline with the backward: the module holds both programs, and
// each plan takes its own kernels.
// RUN: kiln-opt %examples/plain.mlir -kiln-fwd-tile-pipeline="backward=true" | kiln-translate --emit-launch-plan | FileCheck %s --check-prefix=BOTH
// BOTH: "kind": "forward",
// BOTH: "kernels": [
// BOTH-NEXT: {"name":"plain_fwd",
// BOTH-NEXT: {"name":"plain_fwd_combine",
// BOTH-NEXT: {"name":"plain_fwd_combine_rows",
// BOTH-NEXT: {{^ \]}},
// BOTH: "kind": "backward",
// BOTH: "kernels": [
// BOTH-NEXT: {"name":"plain_bwd_preprocess",
// BOTH-NEXT: {"name":"plain_bwd_dq",
// BOTH-NEXT: {"name":"plain_bwd_dkdv",
// BOTH-NEXT: {{^ \]}},

// Scheduled for the GPU: the tensors the kernels copy with cp.async need
// 16-byte aligned rows; threads and shared memory come from the schedule;
// GQA ties heads to kv_heads; the atomic schedule's dQ accumulator is a
// workspace shared by three kernels, zeroed by the first of them. The dK/dV
// kernel's last scalars are tgpu-longest-first's: the grid's extents and
// the (head, batch) pairs per chunk.
// RUN: kiln-opt %examples/gqa_causal.mlir -kiln-cuda-bwd-pipeline="backward-schedule=atomic arch=sm_80" | kiln-translate --emit-launch-plan | FileCheck %s --check-prefix=SCHED
// SCHED: "arch": "sm_80",
// SCHED: "gqa_group": 4,
// SCHED: {"name":"out","dtype":"bf16","shape":["batch","seq_q","heads",128],"align":2},
// SCHED-NEXT: {"name":"dout","dtype":"bf16","shape":["batch","seq_q","heads",128],"align":16},
// SCHED-NEXT: {"name":"lse","dtype":"f32","shape":["batch","heads","seq_q"],"align":4},
// SCHED-NEXT: {"name":"q","dtype":"bf16","shape":["batch","seq_q","heads",128],"align":16},
// SCHED-NEXT: {"name":"k","dtype":"bf16","shape":["batch","seq_kv","kv_heads",128],"align":16},
// SCHED: "workspaces": [
// SCHED-NEXT: {"name":"delta","dtype":"f32","shape":["batch","heads",["mul",["ceildiv","seq_q",64],64]],"zero_fill":false},
// SCHED-NEXT: {"name":"lse_log2","dtype":"f32","shape":["batch","heads",["mul",["ceildiv","seq_q",64],64]],"zero_fill":false},
// SCHED-NEXT: {"name":"dq_accum","dtype":"f32","shape":["batch","heads","seq_q",128],"zero_fill":false}
// SCHED-NEXT: {{^ \]}},
// SCHED-NEXT: "constraints": {{\[\["heads",\["mul","kv_heads",4\]\]\]}},
// SCHED-NEXT: "kernels": [
// SCHED-NEXT: {"name":"gqa_causal_bwd_preprocess","grid":{{\[\["ceildiv","seq_q",64\],"heads","batch"\]}},"threads":128,"shared_bytes":0,"args":[{"tensor":"out","rank":4},{"tensor":"dout","rank":4},{"workspace":"delta","rank":3},{"tensor":"lse","rank":3},{"workspace":"lse_log2","rank":3},{"workspace":"dq_accum","rank":4}]},
// SCHED-NEXT: {"name":"gqa_causal_bwd_dkdv","grid":{{\[\["ceildiv","seq_kv",64\],"kv_heads","batch"\]}},"threads":128,"shared_bytes":{{[1-9][0-9]*}},"args":[{"tensor":"q","rank":4},{"tensor":"k","rank":4},{"tensor":"v","rank":4},{"tensor":"dout","rank":4},{"workspace":"lse_log2","rank":3},{"workspace":"delta","rank":3},{"tensor":"dk","rank":4},{"tensor":"dv","rank":4},{"workspace":"dq_accum","rank":4},{"scalar":["ceildiv","seq_kv",64]},{"scalar":"kv_heads"},{"scalar":"batch"},{"scalar":["max",["sub",["ceildiv",["add",["mul","num_sms","ctas_per_sm.gqa_causal_bwd_dkdv"],1],["max",["ceildiv","seq_kv",64],1]],1],1]}]},
// SCHED-NEXT: {"name":"gqa_causal_bwd_dq_convert","grid":{{\[\["ceildiv","seq_q",64\],"heads","batch"\]}},"threads":128,"shared_bytes":0,"args":[{"workspace":"dq_accum","rank":4},{"tensor":"dq","rank":4}]}
// SCHED-NEXT: {{^ \]}},

// GQA packing on sm_90a: the decode kernel runs per KV head, and its Q tensor
// map is a 3-D box (64 columns, the group's 4 heads, 16 queries) that TMA
// lays out as 64 packed rows; the prefill kernel keeps the 2-D box.
// RUN: kiln-opt %S/../../Numerics/Inputs/gqa-head-mods.mlir -kiln-cuda-fwd-pipeline | kiln-translate --emit-launch-plan | FileCheck %s --check-prefix=PACK
// PACK: {"name":"gqa_head_mods_fwd","grid":{{\[\["min",\["mul",\["ceildiv","seq_q",[0-9]+\],"heads",\["mul","batch","kv_splits"\]\],.*\],1,1\]}},{{.*}}{"tensor_map":"q","dims":[3,1,2,0],
// PACK: {"name":"gqa_head_mods_fwd_decode","grid":{{\[\["min",\["mul",\["ceildiv",\["mul","seq_q",4\],64\],"kv_heads",\["mul","batch","kv_splits"\]\],.*\],1,1\]}},{{.*}}{"tensor_map":"q","dims":[3,2,1,0],"box":[64,4,16],"swizzle":128}

// A rank-0 (scalar) capture is passed as a rank-1 tensor, as the emitter
// declares it; the variant runs on both backends' plans (CPU checked here,
// the GPU kernel compiled by NVRTC).
// RUN: kiln-opt %S/Inputs/scalar-capture.mlir -kiln-cuda-fwd-pipeline | kiln-translate --emit-launch-plan | FileCheck %s --check-prefix=SCALAR
// SCALAR: {"name":"window","dtype":"i64","dims":[]}
// SCALAR: {"tensor":"lse","rank":3},{"capture":0,"rank":1},{"workspace":"o_partial","rank":4},{"workspace":"lse_partial","rank":3},{"scalar":"kv_splits"},{{.*}}{"tensor_map":"q","dims":[3,1,2,0],"box":[32,128],"swizzle":64},{"tensor_map":"k",{{.*}}},{"tensor_map":"v",{{.*}}}]}
// RUN: kiln run %S/Inputs/scalar-capture.mlir --seqlen 70 --heads 2 --backward --check | FileCheck %s --check-prefix=SCALAR-CHECKED
// SCALAR-CHECKED: PASS
// SCALAR-CHECKED: PASS (backward)
// RUN: kiln compile %S/Inputs/scalar-capture.mlir -o %t.scalar.cubin | FileCheck %s --check-prefix=SCALAR-NVRTC
// SCALAR-NVRTC: kiln compile: runtime_window_forward for sm_90a

// A module with kernels of two variants has no single plan.
// RUN: cat %examples/plain.mlir %examples/causal.mlir | kiln-opt -kiln-fwd-tile-pipeline | not kiln-translate --emit-launch-plan 2>&1 | FileCheck %s --check-prefix=MIXED
// MIXED: error: the module holds forward kernels of variants 'plain' and 'causal'; a launch plan is one variant's

// Kernels the plan cannot describe are refused with the reason.
// RUN: not kiln-translate %s -split-input-file --emit-launch-plan 2>&1 | FileCheck %s --check-prefix=ERR
// ERR: error: argument 1 of kernel 'no_role' has no launch role: a memref with 'tile.tensor' or 'tile.workspace' and 'tile.shape', 'tile.capture', or an i64 with 'tile.scalar'
// ERR: error: kernel 'disagree_b' declares 'q' as bf16 [batch, seq_kv, heads, 64], an earlier kernel as bf16 [batch, seq_q, heads, 64]
// ERR: error: kernel 'no_grid' has no launch grid or variant ('tile.grid', 'tile.variant')
// ERR: error: argument 0 of kernel 'two_roles' has more than one launch role
module {
  func.func @no_role(%q: memref<?x?x?x64xbf16> {tile.tensor = "q", tile.shape = ["batch", "seq_q", "heads", 64]},
                     %k: memref<?x?x?x64xbf16>)
      attributes {tile.kernel, tile.variant = "v", tile.grid = [1, 1, 1]} {
    return
  }
}
// -----
module {
  func.func @disagree_a(%q: memref<?x?x?x64xbf16> {tile.tensor = "q", tile.shape = ["batch", "seq_q", "heads", 64]})
      attributes {tile.kernel, tile.variant = "v", tile.grid = [1, 1, 1]} {
    return
  }
  func.func @disagree_b(%q: memref<?x?x?x64xbf16> {tile.tensor = "q", tile.shape = ["batch", "seq_kv", "heads", 64]})
      attributes {tile.kernel, tile.variant = "v", tile.grid = [1, 1, 1]} {
    return
  }
}
// -----
module {
  func.func @no_grid() attributes {tile.kernel, tile.variant = "v"} {
    return
  }
}
// -----
module {
  func.func @two_roles(%q: memref<?xf32> {tile.tensor = "q", tile.shape = ["seq_q"], tile.capture = 0})
      attributes {tile.kernel, tile.variant = "v", tile.grid = [1, 1, 1]} {
    return
  }
}
