// RUN: kiln-opt %s -split-input-file -tgpu-skip-unit-scales | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tgpu-skip-unit-scales | kiln-opt -split-input-file | FileCheck %s --check-prefix=VALID

// The online softmax's accumulator correction in a KV loop: the carried
// accumulator times its rows' factors (either operand order) becomes
// tgpu.scale_rows, and the broadcast goes when nothing else reads it. The
// same product in a loop that is not a KV loop (the combine kernel's loop
// over splits) stays.

!acc = tensor<64x128xf32, #tgpu.mma<warps = 4>>
!rows = tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-LABEL: func.func @correction
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[ACC2:.*]] = %{{.*}})
// CHECK-NOT: tile.broadcast
// CHECK: %[[F:.*]] = math.exp2
// CHECK-NEXT: %[[S:.*]] = tgpu.scale_rows %[[ACC]], %[[F]] : tensor<64x128xf32, #tgpu.mma<warps = 4>>, tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: %[[S2:.*]] = tgpu.scale_rows %[[ACC2]], %[[F]]
// CHECK-NEXT: scf.yield %[[S]], %[[S2]]
// CHECK: scf.for
// CHECK-NOT: tgpu.scale_rows
// CHECK: return
// VALID-LABEL: func.func @correction
func.func @correction(%m: !rows, %init: !acc, %n: index) -> (!acc, !acc) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init, %acc2 = %init) -> (!acc, !acc) {
    %f = math.exp2 %m : !rows
    %b = tile.broadcast %f dim 1 : !rows -> !acc
    %s = arith.mulf %acc, %b : !acc
    %s2 = arith.mulf %b, %acc2 : !acc
    scf.yield %s, %s2 : !acc, !acc
  } {tile.kv_loop = "full"}
  %o = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %r#0) -> (!acc) {
    %f = math.exp2 %m : !rows
    %b = tile.broadcast %f dim 1 : !rows -> !acc
    %s = arith.mulf %acc, %b : !acc
    scf.yield %s : !acc
  }
  return %o, %r#1 : !acc, !acc
}

// -----

// Left alone in a KV loop: a broadcast down the columns; a bf16 tile; warps
// that hold half rows (col_groups = 2); and after it the epilogue's 1 / l
// (not carried). A broadcast that another op reads stays.

!acc = tensor<64x128xf32, #tgpu.mma<warps = 4>>
!rows = tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: tgpu.scale_rows
// CHECK: return
func.func @untouched(%m: !rows, %init: !acc, %h: tensor<64x128xbf16, #tgpu.mma<warps = 4>>,
                     %hf: tensor<64xbf16, #tgpu.rows<warps = 4>>,
                     %g: tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>,
                     %gf: tensor<64xf32, #tgpu.rows<warps = 8>>,
                     %cols: tensor<128xf32, #tgpu.cols<warps = 4>>, %n: index)
    -> (!acc, !acc, !acc, tensor<64x128xbf16, #tgpu.mma<warps = 4>>,
        tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:4 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init, %a2 = %init, %hh = %h, %gg = %g)
      -> (!acc, !acc, tensor<64x128xbf16, #tgpu.mma<warps = 4>>,
          tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>) {
    %bc = tile.broadcast %cols dim 0 : tensor<128xf32, #tgpu.cols<warps = 4>> -> !acc
    %s = arith.mulf %acc, %bc : !acc
    %bh = tile.broadcast %hf dim 1 : tensor<64xbf16, #tgpu.rows<warps = 4>> -> tensor<64x128xbf16, #tgpu.mma<warps = 4>>
    %sh = arith.mulf %hh, %bh : tensor<64x128xbf16, #tgpu.mma<warps = 4>>
    %bg = tile.broadcast %gf dim 1 : tensor<64xf32, #tgpu.rows<warps = 8>> -> tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
    %sg = arith.mulf %gg, %bg : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
    scf.yield %s, %a2, %sh, %sg : !acc, !acc, tensor<64x128xbf16, #tgpu.mma<warps = 4>>,
        tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
  } {tile.kv_loop = "full"}
  %inv = math.exp2 %m : !rows
  %b = tile.broadcast %inv dim 1 : !rows -> !acc
  %o = arith.mulf %r#0, %b : !acc
  return %o, %r#1, %b, %r#2, %r#3 : !acc, !acc, !acc, tensor<64x128xbf16, #tgpu.mma<warps = 4>>,
      tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
}
