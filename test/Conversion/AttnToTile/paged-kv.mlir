// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile | FileCheck %s
// RUN: kiln-opt %s -attn-infer-mask-bounds -convert-attn-to-tile -tile-split-kv | FileCheck %s --check-prefix=SPLIT
// RUN: not kiln-opt %s -convert-attn-to-tile-backward 2>&1 | FileCheck %s --check-prefix=BWD

// A paged KV cache (page_size): K and V are pools of 16-key pages, read
// through the block table; each sequence's key count comes from kv_lens, so
// the program's Lk (and with it the KV loop's end and the bottom-right
// diagonal) is the paged view's row count.

// CHECK-LABEL: func.func @paged_fwd(
// CHECK-SAME: memref<?x16x?x128xbf16, {{.*}}> {tile.shape = ["pages", 16, "kv_heads", 128], tile.tensor = "k"}
// CHECK-SAME: memref<?x16x?x128xbf16, {{.*}}> {tile.shape = ["pages", 16, "kv_heads", 128], tile.tensor = "v"}
// CHECK-SAME: %[[TABLE:[a-z0-9]+]]: memref<?x?xi32, {{.*}}> {tile.shape = ["batch", "max_pages"], tile.tensor = "block_table"}
// CHECK-SAME: %[[LENS:[a-z0-9]+]]: memref<?xi32, {{.*}}> {tile.shape = ["batch"], tile.tensor = "kv_lens"}
// CHECK-SAME: tile.kv_extent = ["mul", "max_pages", 16]
// CHECK: %[[K:.*]] = tile.view %arg1[%{{.*}}, %{{.*}}] keep [1, 3] pages %[[TABLE]], %[[LENS]] {{.*}} -> <?x128xbf16, pages 16>
// CHECK: tile.view %arg2[%{{.*}}, %{{.*}}] keep [1, 3] pages %[[TABLE]], %[[LENS]] {{.*}} -> <?x128xbf16, pages 16>
// CHECK: %[[LK:.*]] = tile.dim %[[K]], 0 : <?x128xbf16, pages 16>
// CHECK: arith.subi %[[LK]],
// CHECK: tile.load %[[K]]

// The split count divides the cache's capacity, max_pages pages of 16.
// SPLIT: tile.symbols = {kv_splits = {{.*}}["ceildiv", ["mul", "max_pages", 16], 256]

// BWD: error: 'attn.attention' op has a paged KV cache (page_size); the backward takes dense K and V
attn.attention @paged {qk_head_dim = 128, v_head_dim = 128, element_type = bf16,
                       gqa_group = 4, causal = #attn.causal<bottom_right>,
                       page_size = 16}
