// RUN: kiln-opt %s -convert-attn-to-tile="split-masked-blocks=false decode-rows=0" | FileCheck %s --enable-var-scope --check-prefix=FWD
// RUN: kiln-opt %s -convert-attn-to-tile-backward="keys-by-queries=true" | FileCheck %s --enable-var-scope --check-prefix=KBQ

// dropout_bits = 8 with dropout_p = 0.3: every tile.philox draws 8-bit
// uniforms, kept below round(0.7 * 2^8) = 179 and scaled by 2^8 / 179
// (p rounded to 77 / 256).
attn.attention @drop8 {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                       dropout_p = 0.3, dropout_bits = 8}

// FWD-LABEL: func.func @drop8_fwd
// FWD: [[U:%.+]] = tile.philox %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {bits = 8 : i64} : tensor<64x64xi32>
// FWD: [[THR:%.+]] = arith.constant 179 : i32
// FWD: [[THRS:%.+]] = tile.splat [[THR]] : i32 -> tensor<64x64xi32>
// FWD: arith.cmpi ult, [[U]], [[THRS]] : tensor<64x64xi32>
// FWD: arith.constant 1.43016756 : f32

// KBQ-LABEL: func.func @drop8_bwd_dq
// KBQ: tile.philox %{{.+}} {bits = 8 : i64} : tensor<64x64xi32>
// KBQ: arith.constant 179 : i32
// KBQ-LABEL: func.func @drop8_bwd_dkdv
// KBQ: tile.philox %{{.+}} {bits = 8 : i64, keys_by_queries} : tensor<64x64xi32>
// KBQ: arith.constant 179 : i32
// KBQ: arith.constant 1.43016756 : f32
