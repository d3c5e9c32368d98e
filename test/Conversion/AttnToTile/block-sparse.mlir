// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=64 block-n=64" | FileCheck %s
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=64 block-n=64" -tile-split-kv | FileCheck %s --check-prefix=NOSPLIT
// RUN: not kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile="block-m=64 block-n=96" 2>&1 | FileCheck %s --check-prefix=TILES
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile-backward="block-m=64 block-n=64" | FileCheck %s --check-prefix=BWD
// RUN: sed 's/block_sparse = array<i64: 128, 128>}/block_sparse = array<i64: 128, 128>, attn.build_block_mask}/' %s | kiln-opt -attn-infer-mask-bounds -convert-attn-to-tile | FileCheck %s --check-prefix=BUILD
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile-backward="block-m=64 block-n=64 schedule=atomic" | FileCheck %s --check-prefix=ATOMIC

// Block-sparse (FlexAttention's BlockMask): the run passes, per (batch,
// head, block of 128 queries), the lists of partial and of full blocks of
// 128 keys. The KV loops run over list positions instead of the causal
// band: each step reads its block's number (clamped: a negative or too
// large one visits a block past the last key, a too large count the blocks
// there are) and visits 128 / 64 = 2 tiles of it. Partial steps apply the
// whole mask (Lk, causal, mask_mod), full steps nothing or only Lk.

attn.attention @sparse {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<top_left>, block_sparse = array<i64: 128, 128>}

// CHECK-LABEL: func.func @sparse_fwd(
// CHECK-SAME: %[[NUM:[a-z0-9]+]]: memref<?x?x?xi32, {{.*}}> {tile.shape = ["batch", "heads", ["ceildiv", "seq_q", 128]], tile.tensor = "kv_num_blocks"}
// CHECK-SAME: %[[IDX:[a-z0-9]+]]: memref<?x?x?x?xi32, {{.*}}> {tile.shape = ["batch", "heads", ["ceildiv", "seq_q", 128], ["ceildiv", "seq_kv", 128]], tile.tensor = "kv_indices"}
// CHECK-SAME: %[[FNUM:[a-z0-9]+]]: memref<?x?x?xi32, {{.*}}> {{{.*}}tile.tensor = "full_kv_num_blocks"}
// CHECK-SAME: %[[FIDX:[a-z0-9]+]]: memref<?x?x?x?xi32, {{.*}}> {{{.*}}tile.tensor = "full_kv_indices"}
// CHECK: %[[ROW0:.*]] = arith.muli %{{.*}}, %c64{{[_0-9]*}}
// CHECK: %[[MROW:.*]] = arith.divui %[[ROW0]], %c128{{[_0-9]*}}
// CHECK: %[[BLOCKS:.*]] = arith.ceildivsi %{{.*}}, %c128{{[_0-9]*}}
// CHECK: %[[N:.*]] = memref.load %[[NUM]][%{{.*}}, %{{.*}}, %[[MROW]]]
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i32 to index
// CHECK: %[[NPOS:.*]] = arith.maxsi %[[NI]], %c0{{[_0-9]*}}
// CHECK: %[[COUNT:.*]] = arith.minsi %[[NPOS]], %[[BLOCKS]]
// CHECK: %[[STEPS:.*]] = arith.muli %[[COUNT]], %c2{{[_0-9]*}}
// CHECK: scf.for %[[T:.*]] = %c0{{[_0-9]*}} to %[[STEPS]] step %c1{{[_0-9]*}}
// CHECK: %[[POS:.*]] = arith.divui %[[T]], %c2{{[_0-9]*}}
// CHECK: %[[TILE:.*]] = arith.remui %[[T]], %c2{{[_0-9]*}}
// CHECK: %[[B:.*]] = memref.load %[[IDX]][%{{.*}}, %{{.*}}, %[[MROW]], %[[POS]]]
// CHECK: arith.cmpi slt, %{{.*}}, %c0{{[_0-9]*}}
// CHECK: %[[BLOCK:.*]] = arith.minsi
// CHECK: %[[KV0:.*]] = arith.muli %[[BLOCK]], %c128{{[_0-9]*}}
// CHECK: %[[OFF:.*]] = arith.muli %[[TILE]], %c64{{[_0-9]*}}
// CHECK: %[[KV:.*]] = arith.addi %[[KV0]], %[[OFF]]
// CHECK: tile.load %{{.*}}[%[[KV]], %c0{{[_0-9]*}}]
// The partial step: causal (kv <= q) and Lk.
// CHECK: arith.cmpi sle
// CHECK: } {tile.kv_loop = "listed_partial"}
// Full steps: unmasked when Lk is a multiple of the blocks, else (the
// other loop, the same list) only keys past Lk.
// CHECK: %[[REM:.*]] = arith.remsi %{{.*}}, %c128{{[_0-9]*}}
// CHECK: %[[RAGGED:.*]] = arith.cmpi ne, %[[REM]], %c0{{[_0-9]*}}
// CHECK: %[[WHOLE:.*]] = arith.xori %[[RAGGED]], %true
// CHECK: memref.load %[[FNUM]]
// CHECK: arith.select %[[WHOLE]], %{{.*}}, %c0{{[_0-9]*}}
// CHECK: scf.for
// CHECK: memref.load %[[FIDX]]
// CHECK-NOT: arith.cmpi {{.*}} : tensor
// CHECK: } {tile.kv_loop = "listed_full"}
// CHECK: memref.load %[[FNUM]]
// CHECK: arith.select %[[RAGGED]], %{{.*}}, %c0{{[_0-9]*}}
// CHECK: scf.for
// CHECK: memref.load %[[FIDX]]
// CHECK-NOT: arith.cmpi sle
// CHECK: arith.cmpi slt, {{.*}} : tensor
// CHECK-NOT: arith.cmpi sle
// CHECK: } {tile.kv_loop = "listed_full_bounded"}

// Split-KV leaves it alone (its loops run over lists, not keys).
// NOSPLIT-NOT: kv_splits
// NOSPLIT: } {tile.kv_loop = "listed_full_bounded"}

// TILES: error: 'attn.attention' op block_sparse blocks of 128 x 128 must be whole tiles of 64 x 96 (query rows x keys)
// The backward: the dQ kernel visits the forward's lists (partial steps
// masked, full ones past Lk), the dK/dV kernel the transposed ones, per key
// block of 128 the query blocks of 128 that list it, in 64-row tiles.
// BWD-LABEL: func.func @sparse_bwd_dq(
// BWD-SAME: tile.tensor = "kv_num_blocks"
// BWD-SAME: tile.tensor = "full_kv_indices"
// BWD: } {tile.kv_loop = "listed_partial"}
// BWD: } {tile.kv_loop = "listed_full"}
// BWD-LABEL: func.func @sparse_bwd_dkdv(
// BWD-SAME: %[[QN:[a-z0-9]+]]: memref<?x?x?xi32, {{.*}}> {tile.shape = ["batch", "heads", ["ceildiv", "seq_kv", 128]], tile.tensor = "q_num_blocks"}
// BWD-SAME: %[[QI:[a-z0-9]+]]: memref<?x?x?x?xi32, {{.*}}> {tile.shape = ["batch", "heads", ["ceildiv", "seq_kv", 128], ["ceildiv", "seq_q", 128]], tile.tensor = "q_indices"}
// BWD-SAME: tile.tensor = "full_q_num_blocks"
// BWD-SAME: tile.tensor = "full_q_indices"
// BWD: %[[KROW:.*]] = arith.divui %{{.*}}, %c128{{[_0-9]*}}
// BWD: memref.load %[[QN]][%{{.*}}, %{{.*}}, %[[KROW]]]
// BWD: scf.for
// BWD: memref.load %[[QI]][%{{.*}}, %{{.*}}, %[[KROW]], %{{.*}}]
// BWD: arith.cmpi sle
// BWD: } {tile.q_loop = "listed_partial"}
// BWD-NOT: arith.cmpi sle
// BWD: } {tile.q_loop = "listed_full"}
// Atomic: no dQ kernel, so only the transposed lists.
// ATOMIC-NOT: "kv_num_blocks"
// ATOMIC: tile.tensor = "q_num_blocks"
// ATOMIC: tile.atomic_add
// ATOMIC: } {tile.q_loop = "listed_partial"}
// ATOMIC: tile.atomic_add
// ATOMIC: } {tile.q_loop = "listed_full"}

// With attn.build_block_mask the program builds the lists instead: per
// block of 128 queries (then, transposed, of 128 keys) a loop over the
// other side's blocks counts the visible and the valid elements of each
// (128 x 64 tiles: a 2-D mask, row sums, tile.reduce_all) and writes the
// block's number at each list's next entry, advancing the partial count
// when some but not all are visible and the full count when all are.
// BUILD-LABEL: func.func @sparse_block_mask(
// BUILD-SAME: tile.tensor = "q"
// BUILD-SAME: tile.tensor = "k"
// BUILD-SAME: %[[NUM:[a-z0-9]+]]: memref<?x?x?xi32, {{.*}}> {{{.*}}tile.tensor = "kv_num_blocks"}
// BUILD-SAME: %[[IDX:[a-z0-9]+]]: memref<?x?x?x?xi32, {{.*}}> {{{.*}}tile.tensor = "kv_indices"}
// BUILD-SAME: tile.block_m = 128 : i64, tile.block_n = 64 : i64, tile.builds_block_mask
// BUILD: %[[LISTS:.*]]:2 = scf.for %[[J:.*]] = %{{.*}} iter_args(%[[P:.*]] = %{{.*}}, %[[F:.*]] = %{{.*}}) -> (index, index)
// BUILD: arith.cmpi sle, {{.*}} : tensor<128x64xindex>
// BUILD: tile.reduce_all sum %{{.*}} : tensor<128xf32> -> f32
// BUILD: tile.reduce_all sum %{{.*}} : tensor<128xf32> -> f32
// BUILD: %[[N:.*]] = arith.index_cast %[[J]] : index to i32
// BUILD: memref.store %[[N]], %[[IDX]][%{{.*}}, %{{.*}}, %{{.*}}, %[[P]]]
// BUILD: memref.store %[[N]], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[F]]]
// BUILD: memref.store %{{.*}}, %[[NUM]][
// BUILD-LABEL: func.func @sparse_block_mask_t(
// BUILD-SAME: tile.tensor = "q_num_blocks"
// BUILD-SAME: tile.tensor = "full_q_indices"
