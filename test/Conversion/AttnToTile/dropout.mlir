// RUN: kiln-opt %s -convert-attn-to-tile="split-masked-blocks=false decode-rows=0" | FileCheck %s --enable-var-scope --check-prefix=FWD
// RUN: kiln-opt %s -convert-attn-to-tile-backward | FileCheck %s --enable-var-scope --check-prefix=BWD
// RUN: kiln-opt %s -convert-attn-to-tile-backward="keys-by-queries=true" | FileCheck %s --enable-var-scope --check-prefix=KBQ

// dropout_p = 0.25: kept where the uniform is below round(0.75 * 2^16) =
// 49152, kept weights scaled by 2^16 / 49152. The kernels read (seed,
// offset) from a `dropout_rng` tensor [2] of i64.
attn.attention @drop {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                      dropout_p = 0.25}

// The forward: the row sum takes the undropped P, P·V the dropped one, and
// the epilogue's 1 / l the scale.
// FWD-LABEL: func.func @drop_fwd
// FWD-SAME: [[RNG:%[^:]+]]: memref<?xi64, strided<[?], offset: ?>> {tile.shape = [2], tile.tensor = "dropout_rng"}
// FWD: [[SEED:%.+]] = memref.load [[RNG]][%c0{{.*}}]
// FWD: [[OFFSET:%.+]] = memref.load [[RNG]][%c1{{.*}}]
// The bits depend on positions only: drawn right after S's product (so that a
// GPU schedule runs them under it).
// FWD: scf.for [[KV:%[^ ]+]] =
// FWD: tile.dot
// FWD-NEXT: [[U:%.+]] = tile.philox [[SEED]], [[OFFSET]], %{{.+}}, %{{.+}}, %{{.+}}, [[KV]] : tensor<64x64xi32>
// FWD: [[THR:%.+]] = arith.constant 49152 : i32
// FWD: [[THRS:%.+]] = tile.splat [[THR]] : i32 -> tensor<64x64xi32>
// FWD: [[KEEP:%.+]] = arith.cmpi ult, [[U]], [[THRS]] : tensor<64x64xi32>
// FWD: [[P:%.+]] = math.exp2
// FWD: tile.reduce sum [[P]]
// FWD: [[PD:%.+]] = arith.select [[KEEP]], [[P]], %{{.+}} : tensor<64x64xi1>, tensor<64x64xf32>
// FWD: arith.truncf [[PD]]
// FWD: } {tile.kv_loop = "masked"}
// FWD: arith.constant 1.33333337 : f32
// FWD-NOT: tile.philox

// The backward: dQ's and dK/dV's recomputed P meet the same mask; dP is
// masked and scaled, dV scaled once after the loop.
// BWD-LABEL: func.func @drop_bwd_preprocess
// BWD-NOT: tile.philox
// BWD-LABEL: func.func @drop_bwd_dq
// BWD-SAME: {tile.shape = [2], tile.tensor = "dropout_rng"}
// BWD: scf.for [[J:%[^ ]+]] =
// BWD: tile.philox %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, [[J]] : tensor<64x64xi32>
// BWD: arith.cmpi ult
// BWD: arith.constant 1.33333337 : f32
// BWD-LABEL: func.func @drop_bwd_dkdv
// BWD-SAME: {tile.shape = [2], tile.tensor = "dropout_rng"}
// BWD: scf.for
// BWD: scf.for [[I:%[^ ]+]] =
// BWD: tile.philox %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, [[I]], %{{.+}} : tensor<64x64xi32>
// BWD: } {tile.q_loop = "masked"}
// BWD: arith.constant 1.33333337 : f32

// Keys by queries, the dK/dV kernel's bits come transposed.
// KBQ-LABEL: func.func @drop_bwd_dkdv
// KBQ: tile.philox {{.*}} {keys_by_queries} : tensor<64x64xi32>
