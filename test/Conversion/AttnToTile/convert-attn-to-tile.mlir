// RUN: kiln-opt %s -split-input-file -attn-infer-mask-bounds -convert-attn-to-tile | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -attn-infer-mask-bounds -convert-attn-to-tile="split-masked-blocks=false block-m=128 block-n=32" | FileCheck %s --check-prefix=NOSPLIT
// RUN: kiln-opt %s -split-input-file -attn-infer-mask-bounds -convert-attn-to-tile="block-m=128 decode-rows=32" | FileCheck %s --check-prefix=DECODE
// RUN: kiln-opt %s -split-input-file -attn-infer-mask-bounds -convert-attn-to-tile="block-m=64 decode-rows=64" | FileCheck %s --check-prefix=NODECODE
// RUN: not kiln-opt %s -split-input-file -convert-attn-to-tile="decode-rows=-1" 2>&1 | FileCheck %s --check-prefix=BADDECODE

// With decode-rows below block-m, a second program of short blocks: the
// plan launches the prefill one when seq_q > 32, the decode one otherwise.
// DECODE-LABEL: func.func @causal_fwd(
// DECODE-SAME: tile.block_m = 128 : i64
// DECODE-SAME: tile.when = ["sub", "seq_q", 32]
// DECODE: tile.load {{.*}} -> tensor<128x64xbf16>
// DECODE-LABEL: func.func @causal_fwd_decode(
// DECODE-SAME: tile.block_m = 32 : i64
// DECODE-SAME: tile.grid = {{\[\["ceildiv", "seq_q", 32\], "heads", "batch"\]}}
// DECODE-SAME: tile.when = ["sub", 33, "seq_q"]
// DECODE: tile.load {{.*}} -> tensor<32x64xbf16>
// NODECODE-NOT: _fwd_decode
// NODECODE-NOT: tile.when
// BADDECODE: decode-rows, short-rows and short-keys must not be negative

// The FlashAttention-2 forward program: one Q block per program, KV loop
// carrying (m, l, acc), base-2 softmax with scale*log2(e) folded into one
// constant, keys past Lk masked to -inf only in the partial loops.
// CHECK-LABEL: func.func @causal_fwd(
// Each argument carries its launch role and shape, the kernel its grid: the
// launch plan is read off these.
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>> {tile.shape = ["batch", "seq_q", "heads", 64], tile.tensor = "q"}
// CHECK-SAME: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>> {tile.shape = ["batch", "seq_kv", "kv_heads", 64], tile.tensor = "k"}
// CHECK-SAME: {tile.shape = ["batch", "seq_kv", "kv_heads", 64], tile.tensor = "v"}
// CHECK-SAME: {tile.shape = ["batch", "seq_q", "heads", 64], tile.tensor = "out"}
// CHECK-SAME: %[[LSE:[a-z0-9]+]]: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>> {tile.shape = ["batch", "heads", "seq_q"], tile.tensor = "lse"})
// CHECK-SAME: tile.block_m = 64 : i64, tile.block_n = 64 : i64, tile.gqa_group = 1 : i64
// CHECK-SAME: tile.grid = {{\[}}["ceildiv", "seq_q", 64], "heads", "batch"], tile.kernel, tile.kv_extent = "seq_kv", tile.variant = "causal"
// CHECK: %[[QB:.*]] = tile.program_id 0
// CHECK: %[[H:.*]] = tile.program_id 1
// CHECK: %[[B:.*]] = tile.program_id 2
// CHECK: %[[QD:.*]] = tile.view %[[Q]][%[[B]], %[[H]]] keep [1, 3] : {{.*}} -> <?x64xbf16>
// CHECK: %[[KD:.*]] = tile.view %{{.*}}[%[[B]], %[[H]]] keep [1, 3]
// CHECK: %[[LD:.*]] = tile.view %[[LSE]][%[[B]], %[[H]]] keep [2] : {{.*}} -> <?xf32>
// CHECK: %[[LQ:.*]] = tile.dim %[[QD]], 0
// CHECK: %[[LK:.*]] = tile.dim %[[KD]], 0
// CHECK: %[[Q0:.*]] = arith.muli %[[QB]], %{{.*}} : index
// CHECK: %[[QT:.*]] = tile.load %[[QD]][%[[Q0]], %{{.*}}] fill 0.000000e+00 : bf16 : <?x64xbf16> -> tensor<64x64xbf16>
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// The full blocks need no per-element mask; with no lower bound in the band
// they start at the first key, so no leading partial loop comes before them.
// CHECK: scf.for
// CHECK-NOT: tensor<64x64xi1>
// CHECK-NOT: tile.kv_loop = "leading_partial"
// CHECK: } {tile.kv_loop = "full"}
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>)
// CHECK:   %[[K:.*]] = tile.load %[[KD]][%[[J]], %{{.*}}]
// CHECK:   %[[S:.*]] = tile.dot %[[QT]], %[[K]] {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
// CHECK:   arith.constant 0.180336878 : f32
// CHECK:   arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<64x64xindex>
// CHECK:   arith.cmpi sle, %{{.*}}, %{{.*}} : tensor<64x64xindex>
// CHECK:   %[[MASKED:.*]] = arith.select %{{.*}} : tensor<64x64xi1>, tensor<64x64xf32>
// CHECK:   tile.reduce max %[[MASKED]] dim 1 : tensor<64x64xf32> -> tensor<64xf32>
// CHECK:   math.exp2 %{{.*}} : tensor<64x64xf32>
// CHECK:   tile.reduce sum
// CHECK:   arith.truncf %{{.*}} : tensor<64x64xf32> to tensor<64x64xbf16>
// CHECK:   tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// CHECK: } {tile.kv_loop = "trailing_partial"}
// Epilogue: O = acc / l with l = 0 giving 0; natural-log LSE.
// CHECK: arith.cmpf oeq
// CHECK: arith.divf
// CHECK: arith.truncf %{{.*}} : tensor<64x64xf32> to tensor<64x64xbf16>
// CHECK: tile.store %{{.*}}, %{{.*}}[%[[Q0]], %{{.*}}] : tensor<64x64xbf16>, <?x64xbf16>
// CHECK: math.log2
// CHECK: arith.constant 0.693147182 : f32
// CHECK: tile.store %{{.*}}, %[[LD]][%[[Q0]]] : tensor<64xf32>, <?xf32>
// CHECK-NOT: attn.attention

// NOSPLIT-LABEL: func.func @causal_fwd
// NOSPLIT-SAME: tile.block_m = 128 : i64, tile.block_n = 32 : i64
// NOSPLIT: tile.dot %{{.*}}, %{{.*}} {transpose_rhs} : tensor<128x64xbf16>, tensor<32x64xbf16> -> tensor<128x32xf32>
// NOSPLIT: } {tile.kv_loop = "masked"}
// NOSPLIT-NOT: scf.for
attn.attention @causal {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<bottom_right>}

// -----

// A score_mod is inlined elementwise on the S tile after scaling, and log2(e)
// is applied after it; uniform ops stay scalar.
// CHECK-LABEL: func.func @softcap_fwd
// NOSPLIT-LABEL: func.func @softcap_fwd
// CHECK: scf.for
// CHECK:   %[[S:.*]] = tile.dot
// CHECK:   %[[SCALE:.*]] = tile.splat %{{.*}} : f32 -> tensor<64x64xf32>
// CHECK:   %[[SCALED:.*]] = arith.mulf %[[S]], %[[SCALE]] : tensor<64x64xf32>
// CHECK:   %[[CAP:.*]] = arith.constant 2.000000e+01 : f32
// CHECK:   %[[CAPT:.*]] = tile.splat %[[CAP]] : f32 -> tensor<64x64xf32>
// CHECK:   %[[X:.*]] = arith.divf %[[SCALED]], %[[CAPT]] : tensor<64x64xf32>
// CHECK:   %[[T:.*]] = math.tanh %[[X]] : tensor<64x64xf32>
// CHECK:   %[[R:.*]] = arith.mulf %[[T]], %{{.*}} : tensor<64x64xf32>
// CHECK:   %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK:   %[[LOG2ET:.*]] = tile.splat %[[LOG2E]]
// CHECK:   arith.mulf %[[R]], %[[LOG2ET]] : tensor<64x64xf32>
attn.attention @softcap {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %cap = arith.constant 20.0 : f32
    %x = arith.divf %score, %cap : f32
    %t = math.tanh %x : f32
    %capped = arith.mulf %t, %cap : f32
    attn.yield %capped : f32
  }

// -----

// A capture read at the head index is uniform (one scalar load per program);
// one read at a key index becomes a gather. GQA maps query heads to KV heads.
// CHECK-LABEL: func.func @bias_gqa_fwd(
// CHECK-SAME: %[[SLOPES:[a-z0-9]+]]: memref<?xf32> {tile.capture = 0 : i64}, %[[DOC:[a-z0-9]+]]: memref<?xi32> {tile.capture = 1 : i64})
// CHECK-SAME: tile.captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>, #attn.capture<"doc", memref<?xi32>, ["seq_kv"]>]
// CHECK-SAME: tile.gqa_group = 4 : i64
// CHECK: %[[H:.*]] = tile.program_id 1
// CHECK: %[[B:.*]] = tile.program_id 2
// CHECK: %[[HKV:.*]] = arith.divui %[[H]], %{{.*}} : index
// CHECK: tile.view %{{.*}}[%[[B]], %[[HKV]]] keep [1, 3]
// CHECK: scf.for
// CHECK:   memref.load %[[SLOPES]][%[[H]]] : memref<?xf32>
// CHECK:   tile.gather %[[DOC]][%{{.*}}] : memref<?xi32>, tensor<64x64xindex> -> tensor<64x64xi32>
// CHECK: } {tile.kv_loop = "masked"}
attn.attention @bias_gqa {qk_head_dim = 64, v_head_dim = 64, element_type = f16, gqa_group = 4,
                          captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>,
                                      #attn.capture<"doc", memref<?xi32>, ["seq_kv"]>]}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index,
            %slopes: memref<?xf32>, %doc: memref<?xi32>) {
    %slope = memref.load %slopes[%h] : memref<?xf32>
    %r = arith.addf %score, %slope : f32
    attn.yield %r : f32
  }
  mask_mod(%b: index, %h: index, %q: index, %kv: index,
           %slopes: memref<?xf32>, %doc: memref<?xi32>) {
    %d = memref.load %doc[%kv] : memref<?xi32>
    %zero = arith.constant 0 : i32
    %keep = arith.cmpi ne, %d, %zero : i32
    attn.yield %keep : i1
  }
