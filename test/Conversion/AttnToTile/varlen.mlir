// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile | FileCheck %s
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile -tile-split-kv | FileCheck %s --check-prefix=NOSPLIT
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile-backward | FileCheck %s --check-prefix=BWD
// RUN: sed 's/varlen}/varlen, page_size = 16}/' %s | kiln-opt -attn-infer-mask-bounds -convert-attn-to-tile | FileCheck %s --check-prefix=PAGED

// A varlen batch: Q, K, V and the output are [T, H, D] with each sequence's
// rows delimited by cu_seqlens_q / cu_seqlens_kv, LSE is [H, T_q]. Grid axis
// 0 numbers every sequence's query blocks (tile.ragged_block: the sequence
// and its block), the views are the sequence's rows, so its Lq and Lk (and
// the bottom-right diagonal) are the ragged views' row counts; a program
// past its sequence's last block visits no keys.

// CHECK-LABEL: func.func @varlen_fwd(
// CHECK-SAME: %arg0: memref<?x?x64xbf16, {{.*}}> {tile.shape = ["total_q", "heads", 64], tile.tensor = "q"}
// CHECK-SAME: {tile.shape = ["total_kv", "kv_heads", 64], tile.tensor = "k"}
// CHECK-SAME: {tile.shape = ["heads", "total_q"], tile.tensor = "lse"}
// CHECK-SAME: %[[CUQ:[a-z0-9]+]]: memref<?xi32, {{.*}}> {tile.shape = {{\[}}["add", "batch", 1]], tile.tensor = "cu_seqlens_q"}
// CHECK-SAME: %[[CUK:[a-z0-9]+]]: memref<?xi32, {{.*}}> {tile.shape = {{\[}}["add", "batch", 1]], tile.tensor = "cu_seqlens_kv"}
// CHECK-SAME: tile.grid = {{\[}}["add", ["ceildiv", "total_q", 64], "batch"], "heads", 1]
// CHECK-SAME: tile.kv_extent = "total_kv"
// CHECK: %[[PID:.*]] = tile.program_id 0
// CHECK: %[[SEQ:.*]], %[[BLOCK:.*]] = tile.ragged_block %[[CUQ]][%[[PID]]] block 64
// CHECK: %[[Q:.*]] = tile.view %arg0[%{{.*}}] keep [0, 2] ragged %[[CUQ]][%[[SEQ]]]
// CHECK: %[[K:.*]] = tile.view %arg1[%{{.*}}] keep [0, 2] ragged %[[CUK]][%[[SEQ]]]
// CHECK: tile.view %arg4[%{{.*}}] keep [1] ragged %[[CUQ]][%[[SEQ]]]
// CHECK: %[[LQ:.*]] = tile.dim %[[Q]], 0
// CHECK: %[[LK:.*]] = tile.dim %[[K]], 0
// CHECK: %[[ROW0:.*]] = arith.muli %[[BLOCK]], %c64
// CHECK: %[[INSIDE:.*]] = arith.cmpi slt, %[[ROW0]], %[[LQ]] : index
// CHECK: %[[END:.*]] = arith.select %[[INSIDE]], %{{.*}}, %{{.*}} : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[END]]

// Splitting a varlen batch's keys is not done: no split, no combine kernel.
// NOSPLIT-NOT: kv_splits
// NOSPLIT-NOT: varlen_fwd_combine

// The backward: every kernel takes both offsets after its other arguments;
// the query-block kernels number the sequences' query blocks, the dK/dV
// kernel their key blocks.
// BWD-LABEL: func.func @varlen_bwd_preprocess(
// BWD-SAME: tile.tensor = "cu_seqlens_q"
// BWD: tile.ragged_block %arg5[%{{.*}}] block 64
// BWD-LABEL: func.func @varlen_bwd_dq(
// BWD-SAME: tile.grid = {{\[}}["add", ["ceildiv", "total_q", 64], "batch"], "heads", 1]
// BWD: tile.ragged_block %arg7[%{{.*}}] block 64
// BWD-LABEL: func.func @varlen_bwd_dkdv(
// BWD-SAME: tile.grid = {{\[}}["add", ["ceildiv", "total_kv", 64], "batch"], "kv_heads", 1]
// BWD: tile.ragged_block %arg9[%{{.*}}] block 64
// BWD: tile.view %arg1[%{{.*}}] keep [0, 2] ragged %arg9[
// With a paged KV cache too (chunked prefill): packed queries, K and V the
// cache's pools read through the block table, no cu_seqlens_kv.
// PAGED-LABEL: func.func @varlen_fwd(
// PAGED-SAME: {tile.shape = ["total_q", "heads", 64], tile.tensor = "q"}
// PAGED-SAME: {tile.shape = ["pages", 16, "kv_heads", 64], tile.tensor = "k"}
// PAGED-SAME: %[[CUQ:[a-z0-9]+]]: memref<?xi32, {{.*}}> {tile.shape = {{\[}}["add", "batch", 1]], tile.tensor = "cu_seqlens_q"}
// PAGED-SAME: {tile.shape = ["batch", "max_pages"], tile.tensor = "block_table"}
// PAGED-SAME: {tile.shape = ["batch"], tile.tensor = "kv_lens"}
// PAGED-NOT: cu_seqlens_kv
// PAGED: %[[SEQ:.*]], %{{.*}} = tile.ragged_block %[[CUQ]]
// PAGED: tile.view %arg0[%{{.*}}] keep [0, 2] ragged %[[CUQ]][%[[SEQ]]]
// PAGED: tile.view %arg1[%[[SEQ]], %{{.*}}] keep [1, 3] pages
attn.attention @varlen {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<bottom_right>, varlen}
