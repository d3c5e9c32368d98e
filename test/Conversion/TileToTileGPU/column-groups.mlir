// RUN: kiln-opt %s -split-input-file -verify-diagnostics -convert-tile-to-tgpu="arch=sm_90a atomic-product-whole-columns=128" | FileCheck %s --enable-var-scope

// A 128-key dK/dV kernel (tile.tile_rows = 128: eight warps of 16 keys) with
// a 64-query dQ share: too few rows for 16 per warp, so the warps split into
// two column groups of one warpgroup each (#tgpu.mma col_groups), each with
// all 64 rows of half the columns; the 128-row tiles keep the plain layout.
// CHECK-LABEL: func.func @dq_share
// CHECK-SAME: tgpu.num_warps = 8
// CHECK: tgpu.mma {{.*}} -> tensor<128x64xf32, #tgpu.mma<warps = 8>>
// CHECK: %[[DQ:.+]] = tgpu.mma {{.*}} {transpose_lhs} : {{.*}} -> tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK: %[[S:.+]] = arith.mulf %[[DQ]], %{{.+}} : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK: tile.atomic_add %[[S]], {{.*}} : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
func.func @dq_share(%qd: !tile.desc<?x128xbf16>, %kd: !tile.desc<?x128xbf16>,
                    %od: !tile.desc<?x128xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 128 : i64,
                tile.tile_rows = 128 : i64, tile.bwd_stage = "dkdv"} {
  %c0 = arith.constant 0 : index
  %scale = arith.constant 0.125 : f32
  %k = tile.load %kd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x128xbf16> -> tensor<128x128xbf16>
  %q = tile.load %qd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x128xbf16> -> tensor<64x128xbf16>
  %splat = tile.splat %scale : f32 -> tensor<64x128xf32>
  %st = tile.dot %k, %q {transpose_rhs} : tensor<128x128xbf16>, tensor<64x128xbf16> -> tensor<128x64xf32>
  %ds = arith.truncf %st : tensor<128x64xf32> to tensor<128x64xbf16>
  %dq = tile.dot %ds, %k {transpose_lhs} : tensor<128x64xbf16>, tensor<128x128xbf16> -> tensor<64x128xf32>
  %scaled = arith.mulf %dq, %splat : tensor<64x128xf32>
  tile.atomic_add %scaled, %od[%c0, %c0] : tensor<64x128xf32>, !tile.desc<?x128xf32>
  return
}

// -----

// A row statistic of a tile in column groups would need the other group's
// half of each row.
func.func @reduced(%qd: !tile.desc<?x128xbf16>, %kd: !tile.desc<?x128xbf16>,
                   %ld: !tile.desc<?xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 128 : i64,
                tile.tile_rows = 128 : i64, tile.bwd_stage = "dkdv"} {
  %c0 = arith.constant 0 : index
  %k = tile.load %kd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x128xbf16> -> tensor<128x128xbf16>
  %q = tile.load %qd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x128xbf16> -> tensor<64x128xbf16>
  %s = tile.dot %q, %k {transpose_rhs} : tensor<64x128xbf16>, tensor<128x128xbf16> -> tensor<64x128xf32>
  // expected-error @+1 {{no GPU register layout for 'tensor<64x128xf32>' read by tile.reduce: with 8 warps its rows split into column groups, whose rows span several warps}}
  %m = tile.reduce max %s dim 1 : tensor<64x128xf32> -> tensor<64xf32>
  tile.store %m, %ld[%c0] : tensor<64xf32>, !tile.desc<?xf32>
  return
}

// -----

// So would a broadcast of per-row values across one.
func.func @broadcast(%ld: !tile.desc<?xf32>, %od: !tile.desc<?x128xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 128 : i64,
                tile.tile_rows = 128 : i64, tile.bwd_stage = "dkdv"} {
  %c0 = arith.constant 0 : index
  %l = tile.load %ld[%c0] fill 0.0 : f32 : !tile.desc<?xf32> -> tensor<128xf32>
  // expected-error @+1 {{no GPU register layout for 'tensor<64x128xf32>' broadcast from a 1-D tile: with 8 warps its rows split into column groups}}
  %b = tile.broadcast %l dim 0 : tensor<128xf32> -> tensor<64x128xf32>
  tile.atomic_add %b, %od[%c0, %c0] : tensor<64x128xf32>, !tile.desc<?x128xf32>
  return
}

// -----

// ... and so would a register lhs of a product (its rows lie in one warp
// each in the product's A fragments).
func.func @register_lhs(%qd: !tile.desc<?x128xbf16>, %kd: !tile.desc<?x128xbf16>,
                        %od: !tile.desc<?x128xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 128 : i64,
                tile.tile_rows = 128 : i64, tile.bwd_stage = "dkdv"} {
  %c0 = arith.constant 0 : index
  %k = tile.load %kd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x128xbf16> -> tensor<128x128xbf16>
  %q = tile.load %qd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x128xbf16> -> tensor<64x128xbf16>
  %s = tile.dot %q, %k {transpose_rhs} : tensor<64x128xbf16>, tensor<128x128xbf16> -> tensor<64x128xf32>
  %p = arith.truncf %s : tensor<64x128xf32> to tensor<64x128xbf16>
  // expected-error @+1 {{no GPU register layout for 'tensor<64x128xbf16>' read by tgpu.mma: with 8 warps its rows split into column groups, whose rows span several warps}}
  %o = tile.dot %p, %k : tensor<64x128xbf16>, tensor<128x128xbf16> -> tensor<64x128xf32>
  tile.atomic_add %o, %od[%c0, %c0] : tensor<64x128xf32>, !tile.desc<?x128xf32>
  return
}
