// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of the tgpu op verifiers (TileGPUDialect.cpp), and a few
// ODS constraints and attribute parse errors they rely on.

//===----------------------------------------------------------------------===//
// tgpu.shared_alloc
//===----------------------------------------------------------------------===//

func.func @shared_alloc_default_space() {
  // expected-error @+1 {{'tgpu.shared_alloc' op allocates in shared memory: the memref needs memory space 3}}
  %b = tgpu.shared_alloc offset 0 : memref<64x64xbf16>
  return
}

// -----

func.func @shared_alloc_global_space() {
  // expected-error @+1 {{'tgpu.shared_alloc' op allocates in shared memory: the memref needs memory space 3}}
  %b = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 1>
  return
}

// -----

func.func @shared_alloc_string_space() {
  // expected-error @+1 {{'tgpu.shared_alloc' op allocates in shared memory: the memref needs memory space 3}}
  %b = tgpu.shared_alloc offset 0 : memref<64xf32, "shared">
  return
}

// -----

func.func @shared_alloc_misaligned() {
  // expected-error @+1 {{'tgpu.shared_alloc' op offset must be a non-negative multiple of 16 bytes (cp.async and ldmatrix alignment), got 8}}
  %b = tgpu.shared_alloc offset 8 : memref<64x64xbf16, strided<[72, 1]>, 3>
  return
}

// -----

func.func @shared_alloc_overlay_elsewhere() {
  %a = tgpu.shared_alloc offset 0 : memref<64x64xbf16, 3>
  // expected-error @+1 {{'tgpu.shared_alloc' op starts where the buffer it overlays does (offset 0), got offset 8192}}
  %b = tgpu.shared_alloc overlays %a : memref<64x64xbf16, 3>, offset 8192 : memref<64xf32, 3>
  return
}

// -----

func.func @shared_alloc_overlay_of_argument(%a: memref<64x64xbf16, 3>) {
  // expected-error @+1 {{'tgpu.shared_alloc' op overlays a buffer of its own (a tgpu.shared_alloc without `overlays`)}}
  %b = tgpu.shared_alloc overlays %a : memref<64x64xbf16, 3>, offset 0 : memref<64xf32, 3>
  return
}

// -----

func.func @shared_alloc_overlay_of_overlay() {
  %a = tgpu.shared_alloc offset 0 : memref<64x64xbf16, 3>
  %b = tgpu.shared_alloc overlays %a : memref<64x64xbf16, 3>, offset 0 : memref<64xf32, 3>
  // expected-error @+1 {{'tgpu.shared_alloc' op overlays a buffer of its own (a tgpu.shared_alloc without `overlays`)}}
  %c = tgpu.shared_alloc overlays %b : memref<64xf32, 3>, offset 0 : memref<16xf32, 3>
  return
}

// -----

// A negative offset is rejected too (it used to be compared as unsigned).
func.func @shared_alloc_negative() {
  // expected-error @+1 {{'tgpu.shared_alloc' op offset must be a non-negative multiple of 16 bytes (cp.async and ldmatrix alignment), got -16}}
  %b = tgpu.shared_alloc offset -16 : memref<64x64xbf16, strided<[72, 1]>, 3>
  return
}

// -----

func.func @shared_alloc_dynamic() {
  // expected-error @+1 {{'tgpu.shared_alloc' op result #0 must be statically shaped memref of any type values, but got 'memref<?x64xbf16, 3>'}}
  %b = tgpu.shared_alloc offset 0 : memref<?x64xbf16, 3>
  return
}

//===----------------------------------------------------------------------===//
// tgpu.mma
//===----------------------------------------------------------------------===//

// -----

func.func @mma_result_not_acc(%acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op result type must equal the accumulator type}}
  %s = tgpu.mma %q, %q, %acc {transpose_rhs}
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_result_other_warps(%acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op result type must equal the accumulator type}}
  %s = tgpu.mma %q, %q, %acc
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 2>>
  return
}

// -----

func.func @mma_acc_rows_layout(%acc: tensor<64x64xf32, #tgpu.rows<warps = 4>>) {
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op accumulates in f32 #tgpu.mma register tiles}}
  %s = tgpu.mma %q, %q, %acc
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.rows<warps = 4>> -> tensor<64x64xf32, #tgpu.rows<warps = 4>>
  return
}

// -----

// An accumulator without encoding is diagnosed (it used to crash).
func.func @mma_acc_no_encoding(%acc: tensor<64x64xf32>) {
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op accumulates in f32 #tgpu.mma register tiles}}
  %s = tgpu.mma %q, %q, %acc
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_acc_f16(%acc: tensor<64x64xf16, #tgpu.mma<warps = 4>>) {
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op accumulates in f32 #tgpu.mma register tiles}}
  %s = tgpu.mma %q, %q, %acc
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf16, #tgpu.mma<warps = 4>> -> tensor<64x64xf16, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @mma_rhs_not_shared(%acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>,
                              %k: memref<64x64xbf16>) {
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op reads rhs from shared memory}}
  %s = tgpu.mma %q, %k, %acc {transpose_rhs}
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @mma_rhs_tensor(%acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>,
                          %k: tensor<64x64xbf16, #tgpu.mma<warps = 4>>) {
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+2 {{custom op 'tgpu.mma' invalid kind of type specified: expected builtin.memref, but found 'tensor<64x64xbf16, #tgpu.mma<warps = 4>>'}}
  %s = tgpu.mma %q, %k, %acc
      : memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xbf16, #tgpu.mma<warps = 4>>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @mma_register_lhs_rows_layout(%p: tensor<64x64xbf16, #tgpu.rows<warps = 4>>,
                                        %acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %v = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op a register lhs must be in #tgpu.mma layout}}
  %o = tgpu.mma %p, %v, %acc
      : tensor<64x64xbf16, #tgpu.rows<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

// So is a register lhs without encoding (it used to crash).
func.func @mma_register_lhs_no_encoding(%p: tensor<64x64xbf16>,
                                        %acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %v = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op a register lhs must be in #tgpu.mma layout}}
  %o = tgpu.mma %p, %v, %acc
      : tensor<64x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @mma_lhs_global_memref(%q: memref<64x64xbf16>,
                                 %acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %k = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op lhs must be a shared buffer or a register tile}}
  %s = tgpu.mma %q, %k, %acc {transpose_rhs}
      : memref<64x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @mma_lhs_descriptor(%q: !tile.desc<?x64xbf16>,
                              %acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %k = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op lhs must be a shared buffer or a register tile}}
  %s = tgpu.mma %q, %k, %acc {transpose_rhs}
      : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @mma_lhs_vector(%q: vector<64x64xbf16>,
                          %acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %k = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op lhs must be a shared buffer or a register tile}}
  %s = tgpu.mma %q, %k, %acc
      : vector<64x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

// A transposed lhs is read with ldmatrix.trans, so it must be in shared
// memory; a register tile is not transposed in place.
func.func @mma_transpose_register_lhs(%p: tensor<64x64xbf16, #tgpu.mma<warps = 4>>,
                                      %acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %do = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op a transposed lhs is read from shared memory (ldmatrix.trans); store the register tile with tgpu.store_shared first}}
  %dv = tgpu.mma %p, %do, %acc {transpose_lhs}
      : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @mma_rhs_1d(%acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %k = tgpu.shared_alloc offset 9216 : memref<64xbf16, 3>
  // expected-error @+1 {{'tgpu.mma' op multiplies 2-D tiles}}
  %s = tgpu.mma %q, %k, %acc
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64xbf16, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

// A 1-D accumulator (the rank is checked before its dims are read).
func.func @mma_acc_1d(%acc: tensor<64xf32, #tgpu.mma<warps = 4>>) {
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %k = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op multiplies 2-D tiles}}
  %s = tgpu.mma %q, %k, %acc
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64xf32, #tgpu.mma<warps = 4>> -> tensor<64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @mma_lhs_3d(%acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %q = tgpu.shared_alloc offset 0 : memref<2x64x64xbf16, 3>
  %k = tgpu.shared_alloc offset 16384 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op multiplies 2-D tiles}}
  %s = tgpu.mma %q, %k, %acc
      : memref<2x64x64xbf16, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

// op(lhs) 64x32 times op(rhs) 64x64: the contraction sizes differ.
func.func @mma_k_mismatch(%acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %a = tgpu.shared_alloc offset 0 : memref<64x32xbf16, strided<[40, 1]>, 3>
  %b = tgpu.shared_alloc offset 5120 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op shapes do not multiply: op(lhs) is 64x32, op(rhs) 64x64, accumulator 64x64}}
  %s = tgpu.mma %a, %b, %acc
      : memref<64x32xbf16, strided<[40, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

// With transpose_lhs the lhs is K x M: a 64 x 128 P gives op(lhs) 128x64,
// which does not fit a 64 x 64 accumulator.
func.func @mma_transpose_lhs_m_mismatch(%acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %p = tgpu.shared_alloc offset 0 : memref<64x128xbf16, strided<[136, 1]>, 3>
  %do = tgpu.shared_alloc offset 17408 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op shapes do not multiply: op(lhs) is 128x64, op(rhs) 64x64, accumulator 64x64}}
  %dv = tgpu.mma %p, %do, %acc {transpose_lhs}
      : memref<64x128xbf16, strided<[136, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

// ... and its rows are the contraction: 32 rows of P against 64 of dO.
func.func @mma_transpose_lhs_k_mismatch(%acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %p = tgpu.shared_alloc offset 0 : memref<32x64xbf16, strided<[72, 1]>, 3>
  %do = tgpu.shared_alloc offset 4608 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op shapes do not multiply: op(lhs) is 64x32, op(rhs) 64x64, accumulator 64x64}}
  %dv = tgpu.mma %p, %do, %acc {transpose_lhs}
      : memref<32x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

// With transpose_rhs the rhs is N x K: 128 keys give op(rhs) 64x128.
func.func @mma_transpose_rhs_n_mismatch(%acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %k = tgpu.shared_alloc offset 9216 : memref<128x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op shapes do not multiply: op(lhs) is 64x64, op(rhs) 64x128, accumulator 64x64}}
  %s = tgpu.mma %q, %k, %acc {transpose_rhs}
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<128x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

// A register lhs is checked too: P with 128 columns against 64 rows of V.
func.func @mma_register_lhs_k_mismatch(%p: tensor<64x128xbf16, #tgpu.mma<warps = 4>>,
                                       %acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %v = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op shapes do not multiply: op(lhs) is 64x128, op(rhs) 64x64, accumulator 64x64}}
  %o = tgpu.mma %p, %v, %acc
      : tensor<64x128xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @mma_acc_rows_mismatch(%acc: tensor<128x64xf32, #tgpu.mma<warps = 4>>) {
  %a = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.mma' op shapes do not multiply: op(lhs) is 64x64, op(rhs) 64x64, accumulator 128x64}}
  %s = tgpu.mma %a, %a, %acc
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
  return
}

//===----------------------------------------------------------------------===//
// tgpu.store_shared
//===----------------------------------------------------------------------===//

// -----

func.func @store_shared_global(%p: tensor<64x64xbf16, #tgpu.mma<warps = 4>>,
                               %b: memref<64x64xbf16>) {
  // expected-error @+1 {{'tgpu.store_shared' op writes to shared memory (memory space 3)}}
  tgpu.store_shared %p, %b : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16>
  return
}

// -----

func.func @store_shared_space_1(%p: tensor<64x64xbf16, #tgpu.mma<warps = 4>>,
                                %b: memref<64x64xbf16, strided<[72, 1]>, 1>) {
  // expected-error @+1 {{'tgpu.store_shared' op writes to shared memory (memory space 3)}}
  tgpu.store_shared %p, %b : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 1>
  return
}

// -----

// Only the mma layout says which elements each thread holds.
func.func @store_shared_rows_layout(%l: tensor<64xf32, #tgpu.rows<warps = 4>>) {
  %b = tgpu.shared_alloc offset 0 : memref<64xf32, 3>
  // expected-error @+1 {{'tgpu.store_shared' op stores #tgpu.mma register tiles}}
  tgpu.store_shared %l, %b : tensor<64xf32, #tgpu.rows<warps = 4>>, memref<64xf32, 3>
  return
}

// -----

func.func @store_shared_no_encoding(%p: tensor<64x64xbf16>) {
  %b = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.store_shared' op stores #tgpu.mma register tiles}}
  tgpu.store_shared %p, %b : tensor<64x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  return
}

// -----

// The store does not transpose: a 64 x 128 tile needs a 64 x 128 buffer.
func.func @store_shared_transposed_shape(%p: tensor<64x128xbf16, #tgpu.mma<warps = 4>>) {
  %b = tgpu.shared_alloc offset 0 : memref<128x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.store_shared' op the buffer must have the tile's shape and element type, got 'tensor<64x128xbf16, #tgpu.mma<warps = 4>>' into 'memref<128x64xbf16, strided<[72, 1]>, 3>'}}
  tgpu.store_shared %p, %b : tensor<64x128xbf16, #tgpu.mma<warps = 4>>, memref<128x64xbf16, strided<[72, 1]>, 3>
  return
}

// -----

// Nor does it convert: an f32 tile (P before rounding) into a bf16 buffer.
func.func @store_shared_element_type(%p: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %b = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{'tgpu.store_shared' op the buffer must have the tile's shape and element type, got 'tensor<64x64xf32, #tgpu.mma<warps = 4>>' into 'memref<64x64xbf16, strided<[72, 1]>, 3>'}}
  tgpu.store_shared %p, %b : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>
  return
}

// -----

func.func @store_shared_dynamic_dest(%p: tensor<64x64xbf16, #tgpu.mma<warps = 4>>,
                                     %b: memref<?x64xbf16, 3>) {
  // expected-error @+1 {{'tgpu.store_shared' op operand #1 must be statically shaped memref of any type values, but got 'memref<?x64xbf16, 3>'}}
  tgpu.store_shared %p, %b : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<?x64xbf16, 3>
  return
}

// -----

func.func @store_shared_value_memref(%a: memref<64x64xbf16, 3>) {
  %b = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  // expected-error @+1 {{custom op 'tgpu.store_shared' invalid kind of type specified: expected builtin.tensor, but found 'memref<64x64xbf16, 3>'}}
  tgpu.store_shared %a, %b : memref<64x64xbf16, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>
  return
}

//===----------------------------------------------------------------------===//
// tgpu.copy_async, tgpu.async_wait
//===----------------------------------------------------------------------===//

// -----

func.func @copy_async_dynamic_dest(%d: !tile.desc<?x64xbf16>, %i: index,
                                   %b: memref<?x64xbf16, 3>) {
  // expected-error @+1 {{'tgpu.copy_async' op operand #3 must be statically shaped memref of any type values, but got 'memref<?x64xbf16, 3>'}}
  tgpu.copy_async %d[%i, %i], %b : !tile.desc<?x64xbf16>, memref<?x64xbf16, 3>
  return
}

// -----

func.func @async_wait_not_integer() {
  // expected-error @+1 {{'tgpu.async_wait' op attribute 'pending' failed to satisfy constraint: 64-bit signless integer attribute}}
  "tgpu.async_wait"() {pending = 1.0 : f32} : () -> ()
  return
}

//===----------------------------------------------------------------------===//
// Layout attributes
//===----------------------------------------------------------------------===//

// -----

// expected-error @+2 {{expected valid keyword}}
// expected-error @+1 {{expected a parameter name in struct}}
func.func private @mma_layout_no_warps(tensor<64x64xf32, #tgpu.mma<>>)

// -----

// expected-error @+1 {{duplicate or unknown struct parameter name: lanes}}
func.func private @rows_layout_bad_key(tensor<64xf32, #tgpu.rows<lanes = 4>>)

//===----------------------------------------------------------------------===//
// #tgpu.swizzle and tgpu.warpgroup_mma
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{swizzle bytes must be 32, 64 or 128, got 16}}
func.func private @swizzle_bytes(memref<64x64xbf16, #tgpu.swizzle<bytes = 16>, 3>)

// -----

// expected-error @+1 {{a #tgpu.swizzle buffer has a multiple of 8 rows (one swizzle atom), got 12}}
func.func private @swizzle_rows(memref<12x64xbf16, #tgpu.swizzle<bytes = 128>, 3>)

// -----

func.func @swizzle_row_bytes() {
  // expected-error @+1 {{'tgpu.shared_alloc' op a row of 96 bytes does not split into 128-byte swizzle columns}}
  %b = tgpu.shared_alloc offset 0 : memref<64x48xbf16, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

func.func @swizzle_offset() {
  // expected-error @+1 {{'tgpu.shared_alloc' op a swizzled buffer starts 1024-byte aligned (the swizzle pattern repeats every 1024 bytes), got offset 512}}
  %b = tgpu.shared_alloc offset 512 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

func.func @wgmma_rows_per_warp(%a: memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                               %b: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                               %c: tensor<128x64xf32, #tgpu.mma<warps = 4>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op needs whole warpgroups with one m16 tile per warp (64 rows per 4 warps of a column group); the accumulator has 128 rows over 4 warps in 1 column groups}}
  %r = tgpu.warpgroup_mma %a, %b, %c {transpose_rhs} : memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

// Column groups: 8 warps in two groups of one warpgroup, each group all 64
// rows of its half of the columns; 2 groups of 2 warps are not warpgroups.
func.func @wgmma_column_group_warps(%a: memref<128x32xbf16, #tgpu.swizzle<bytes = 64>, 3>,
                                    %b: memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                                    %c: tensor<32x128xf32, #tgpu.mma<warps = 4, col_groups = 2>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op needs whole warpgroups with one m16 tile per warp (64 rows per 4 warps of a column group); the accumulator has 32 rows over 4 warps in 2 column groups}}
  %r = tgpu.warpgroup_mma %a, %b, %c {transpose_lhs} : memref<128x32xbf16, #tgpu.swizzle<bytes = 64>, 3>, memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<32x128xf32, #tgpu.mma<warps = 4, col_groups = 2>> -> tensor<32x128xf32, #tgpu.mma<warps = 4, col_groups = 2>>
  return
}

// -----

// A group's 32 columns start halfway into a 128-byte swizzle column of an
// MN-major rhs (D = 64's K tile must be swizzled by 64 bytes for dS K).
func.func @wgmma_column_group_swizzle(%a: memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                                      %b: memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                                      %c: tensor<64x64xf32, #tgpu.mma<warps = 8, col_groups = 2>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op a column group's 32 columns of an MN-major rhs must be whole 128-byte swizzle columns}}
  %r = tgpu.warpgroup_mma %a, %b, %c {transpose_lhs} : memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 8, col_groups = 2>> -> tensor<64x64xf32, #tgpu.mma<warps = 8, col_groups = 2>>
  return
}

// -----

func.func @wgmma_column_group_register_lhs(%a: tensor<64x128xbf16, #tgpu.mma<warps = 8, col_groups = 2>>,
                                           %b: memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                                           %c: tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op a register lhs holds whole rows per warp; an accumulator in column groups reads its lhs from shared memory}}
  %r = tgpu.warpgroup_mma %a, %b, %c : tensor<64x128xbf16, #tgpu.mma<warps = 8, col_groups = 2>>, memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>> -> tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
  return
}

// -----

// expected-error @+1 {{#tgpu.mma splits 8 warps into column groups of whole warps, got 3 groups}}
func.func @mma_layout_groups(%t: tensor<64x96xf32, #tgpu.mma<warps = 8, col_groups = 3>>) {
  return
}

// -----

func.func @wgmma_padded_rhs(%a: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                            %b: memref<64x64xbf16, strided<[72, 1]>, 3>,
                            %c: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op reads rhs from a #tgpu.swizzle shared buffer}}
  %r = tgpu.warpgroup_mma %a, %b, %c {transpose_rhs} : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @wgmma_padded_lhs(%a: memref<64x64xbf16, strided<[72, 1]>, 3>,
                            %b: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                            %c: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op lhs must be a #tgpu.swizzle shared buffer or a register tile}}
  %r = tgpu.warpgroup_mma %a, %b, %c {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @wgmma_shapes(%a: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                        %b: memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                        %c: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op shapes do not multiply: op(lhs) is 64x64, op(rhs) 128x64, accumulator 64x64}}
  %r = tgpu.warpgroup_mma %a, %b, %c {transpose_rhs} : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @wgmma_register_lhs_layout(%a: tensor<64x64xbf16, #tgpu.mma<warps = 8>>,
                                     %b: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                                     %c: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op a register lhs must be in the accumulator's #tgpu.mma layout}}
  %r = tgpu.warpgroup_mma %a, %b, %c : tensor<64x64xbf16, #tgpu.mma<warps = 8>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @wgmma_f32(%a: tensor<64x64xf32, #tgpu.mma<warps = 4>>,
                     %b: memref<64x64xf32, #tgpu.swizzle<bytes = 128>, 3>,
                     %c: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op multiplies bf16 or f16, got 'f32'}}
  %r = tgpu.warpgroup_mma %a, %b, %c : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @wait_for_sync_product(%a: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                                 %b: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                                 %c: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %r = tgpu.warpgroup_mma %a, %b, %c {transpose_rhs} : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  // expected-error @+1 {{'tgpu.warpgroup_wait' op waits for the result of an async tgpu.warpgroup_mma}}
  %w = tgpu.warpgroup_wait %r : tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @async_read_directly(%a: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                               %b: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                               %c: tensor<64x64xf32, #tgpu.mma<warps = 4>>) -> tensor<64x64xf32, #tgpu.mma<warps = 4>> {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op an async product is read only through tgpu.warpgroup_wait}}
  %r = tgpu.warpgroup_mma %a, %b, %c {async, transpose_rhs} : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return %r : tensor<64x64xf32, #tgpu.mma<warps = 4>>
}

// -----

func.func @wgmma_lhs_rank(%a: tensor<64xbf16, #tgpu.mma<warps = 4>>,
                          %b: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                          %c: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op multiplies 2-D tiles}}
  %r = tgpu.warpgroup_mma %a, %b, %c : tensor<64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @mma_swizzled(%a: memref<64x64xbf16, strided<[72, 1]>, 3>,
                        %b: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                        %c: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  // expected-error @+1 {{'tgpu.mma' op reads padded shared tiles with ldmatrix; #tgpu.swizzle tiles are read by tgpu.warpgroup_mma}}
  %r = tgpu.mma %a, %b, %c {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @wgmma_transposed_register_lhs(%a: tensor<64x64xbf16, #tgpu.mma<warps = 4>>,
                                         %b: memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                                         %c: tensor<64x128xf32, #tgpu.mma<warps = 4>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op a transposed lhs is read from a #tgpu.swizzle shared buffer; store the register tile with tgpu.store_shared first}}
  %r = tgpu.warpgroup_mma %a, %b, %c {transpose_lhs} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 4>> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
  return
}

// -----

func.func @wgmma_transposed_shapes(%a: memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                                   %b: memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                                   %c: tensor<64x128xf32, #tgpu.mma<warps = 4>>) {
  // expected-error @+1 {{'tgpu.warpgroup_mma' op shapes do not multiply: op(lhs) is 64x128, op(rhs) 64x128, accumulator 64x128}}
  %r = tgpu.warpgroup_mma %a, %b, %c {transpose_lhs} : memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 4>> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
  return
}

//===----------------------------------------------------------------------===//
// mbarriers, tgpu.tma_load, tgpu.warp_specialize
//===----------------------------------------------------------------------===//

// -----

func.func @mbarrier_no_arrivals(%bars: memref<4xi64, 3>, %i: index) {
  // expected-error @+1 {{'tgpu.mbarrier_init' op an mbarrier counts 1 to 2^20 - 1 arrivals, got 0}}
  tgpu.mbarrier_init %bars[%i] count 0 : memref<4xi64, 3>
  return
}

// -----

func.func @mbarrier_global(%bars: memref<4xi64>, %i: index) {
  // expected-error @+1 {{'tgpu.mbarrier_arrive' op mbarriers live in a static shared buffer: the memref needs a static shape and memory space 3}}
  tgpu.mbarrier_arrive %bars[%i] : memref<4xi64>
  return
}

// -----

func.func @mbarrier_outside(%bars: memref<4xi64, 3>, %parity: index) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'tgpu.mbarrier_wait' op mbarrier 4 is outside the 4 of the buffer}}
  tgpu.mbarrier_wait %bars[%c4], %parity : memref<4xi64, 3>
  return
}

// -----

func.func @mbarrier_frees_global(%bars: memref<4xi64, 3>, %buf: memref<64x64xbf16>, %i: index) {
  // expected-error @+1 {{'tgpu.mbarrier_arrive' op frees a shared buffer (memory space 3), got 'memref<64x64xbf16>'}}
  tgpu.mbarrier_arrive %bars[%i] frees %buf : memref<64x64xbf16> : memref<4xi64, 3>
  return
}

// -----

func.func @mbarrier_wrong_type(%bars: memref<4xi32, 3>, %i: index) {
  // expected-error @+1 {{'tgpu.mbarrier_arrive' op operand #0 must be 1D memref of 64-bit signless integer values}}
  tgpu.mbarrier_arrive %bars[%i] : memref<4xi32, 3>
  return
}

// -----

func.func @tma_padded(%map: !tgpu.tensor_map, %dst: memref<64x64xbf16, strided<[72, 1]>, 3>,
                      %bars: memref<4xi64, 3>, %i: index) {
  // expected-error @+1 {{'tgpu.tma_load' op loads into a #tgpu.swizzle shared buffer (the layout a swizzled TMA box writes)}}
  tgpu.tma_load %map[%i, %i, %i, %i], %dst, %bars[%i] : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<4xi64, 3>
  return
}

// -----

func.func @tma_coords(%map: !tgpu.tensor_map, %dst: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                      %bars: memref<4xi64, 3>, %i: index) {
  // expected-error @+1 {{'tgpu.tma_load' op takes 4 coordinates (column, row, head, batch: a [B, N, H, D] tensor innermost first) or 3 (a packed [T, H, D] one), got 2}}
  tgpu.tma_load %map[%i, %i], %dst, %bars[%i] : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<4xi64, 3>
  return
}

// -----

func.func @tma_tall(%map: !tgpu.tensor_map, %dst: memref<512x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                    %bars: memref<4xi64, 3>, %i: index) {
  // expected-error @+1 {{'tgpu.tma_load' op a TMA box holds at most 256 rows, the buffer 512}}
  tgpu.tma_load %map[%i, %i, %i, %i], %dst, %bars[%i] : memref<512x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<4xi64, 3>
  return
}

// -----

func.func @bulk_load_odd_bytes(%d: !tile.desc<?xf32>, %dst: memref<6xf32, 3>,
                               %bars: memref<4xi64, 3>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_load' op copies into a 1-D shared vector of whole 16-byte chunks (a bulk copy's unit), got 'memref<6xf32, 3>'}}
  tgpu.bulk_load %d[%i], %dst, %bars[%i] : !tile.desc<?xf32>, memref<6xf32, 3>, memref<4xi64, 3>
  return
}

// -----

func.func @bulk_load_matrix(%d: !tile.desc<?x64xf32>, %dst: memref<64xf32, 3>,
                            %bars: memref<4xi64, 3>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_load' op copies from a plain 1-D descriptor of the vector's element type}}
  tgpu.bulk_load %d[%i], %dst, %bars[%i] : !tile.desc<?x64xf32>, memref<64xf32, 3>, memref<4xi64, 3>
  return
}

// -----

func.func @bulk_load_by_consumers(%d: !tile.desc<?xf32>, %dst: memref<64xf32, 3>,
                                  %bars: memref<4xi64, 3>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_load' op is issued by the producer's one thread: it sits in a tgpu.warp_specialize producer region}}
  tgpu.bulk_load %d[%i], %dst, %bars[%i] : !tile.desc<?xf32>, memref<64xf32, 3>, memref<4xi64, 3>
  return
}

// -----

func.func @load_shared_mma(%src: memref<64xf32, 3>, %n: index) {
  // expected-error @+1 {{'tgpu.load_shared' op reads the vector whole into a #tgpu.rows or #tgpu.cols tile of its shape}}
  %v = tgpu.load_shared %src[%n] fill 0.0 : memref<64xf32, 3> -> tensor<32xf32, #tgpu.cols<warps = 4>>
  return
}

// -----

func.func @load_shared_global(%src: memref<64xf32>, %n: index) {
  // expected-error @+1 {{'tgpu.load_shared' op reads a 1-D f32 shared vector, got 'memref<64xf32>'}}
  %v = tgpu.load_shared %src[%n] fill 0.0 : memref<64xf32> -> tensor<64xf32, #tgpu.cols<warps = 4>>
  return
}

// -----

func.func @ws_half_warpgroup() attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64} {
  // expected-error @+1 {{'tgpu.warp_specialize' op the producer is whole warpgroups (a multiple of 4 warps: setmaxnreg acts per warpgroup), got 2}}
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 2 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %c = arith.constant 0 : index
  }
  return
}

// -----

func.func @ws_registers() attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64} {
  // expected-error @+1 {{'tgpu.warp_specialize' op setmaxnreg takes a multiple of 8 from 24 to 256 registers, got 20}}
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 20 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %c = arith.constant 0 : index
  }
  return
}

// -----

func.func @ws_budget() attributes {tgpu.num_warps = 12 : i64, tgpu.producer_warps = 4 : i64} {
  // expected-error @+1 {{'tgpu.warp_specialize' op the two budgets need 95232 registers; a CTA has 65536 (128 for each of its 512 threads at entry, 1 per multiprocessor of 65536)}}
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %c = arith.constant 0 : index
  }
  return
}

// -----

// Two CTAs per multiprocessor halve the registers the budgets share.
func.func @ws_budget_two_ctas() attributes {tgpu.num_warps = 4 : i64, tgpu.producer_warps = 4 : i64, tgpu.ctas_per_sm = 2 : i64} {
  // expected-error @+1 {{'tgpu.warp_specialize' op the two budgets need 35840 registers; a CTA has 32768 (128 for each of its 256 threads at entry, 2 per multiprocessor of 65536)}}
  tgpu.warp_specialize {consumer_registers = 256 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %c = arith.constant 0 : index
  }
  return
}

// -----

// Three CTAs of 256 threads start at 80 registers each (85 rounded down to
// a multiple of 8), not a third of the file: a raise to 144 would wait
// forever for the 1024 registers the pool lacks.
func.func @ws_budget_three_ctas() attributes {tgpu.num_warps = 4 : i64, tgpu.producer_warps = 4 : i64, tgpu.ctas_per_sm = 3 : i64} {
  // expected-error @+1 {{'tgpu.warp_specialize' op the two budgets need 21504 registers; a CTA has 20480 (80 for each of its 256 threads at entry, 3 per multiprocessor of 65536)}}
  tgpu.warp_specialize {consumer_registers = 144 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %c = arith.constant 0 : index
  }
  return
}

// -----

func.func @ws_unscheduled() {
  // expected-error @+1 {{'tgpu.warp_specialize' op splits a scheduled kernel: it sits directly in a function with tgpu.num_warps}}
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %c = arith.constant 0 : index
  }
  return
}

// -----

func.func @ws_odd_consumers() attributes {tgpu.num_warps = 6 : i64, tgpu.producer_warps = 4 : i64} {
  // expected-error @+1 {{'tgpu.warp_specialize' op the consumers are whole warpgroups, but the kernel has 6 warps}}
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %c = arith.constant 0 : index
  }
  return
}

// -----

func.func @turn_kind() attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64} {
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    // expected-error @+1 {{'tgpu.warpgroup_turn' op kind is start, wait, pass or end, got 'give'}}
    tgpu.warpgroup_turn "give"
  }
  return
}

// -----

func.func @turn_outside() {
  // expected-error @+1 {{'tgpu.warpgroup_turn' op passes turns among consumer warpgroups: it sits in a tgpu.warp_specialize consumer region}}
  tgpu.warpgroup_turn "wait"
  return
}

// -----

func.func @ws_not_launched() attributes {tgpu.num_warps = 8 : i64} {
  // expected-error @+1 {{'tgpu.warp_specialize' op needs its kernel to launch the 4 producer warps: tgpu.producer_warps = 4 on the function}}
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %c = arith.constant 0 : index
  }
  return
}

// -----

func.func @ws_lowers_consumers() attributes {tgpu.num_warps = 4 : i64, tgpu.producer_warps = 4 : i64} {
  // expected-error @+1 {{'tgpu.warp_specialize' op the consumers' 160 registers are below the 248 the kernel may start with; setmaxnreg.inc cannot lower them}}
  tgpu.warp_specialize {consumer_registers = 160 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %c = arith.constant 0 : index
  }
  return
}

// -----

func.func @tma_by_consumers(%map: !tgpu.tensor_map, %dst: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>,
                            %bars: memref<4xi64, 3>, %i: index) attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64} {
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    // expected-error @+1 {{'tgpu.tma_load' op is issued by the producer's one thread: it sits in a tgpu.warp_specialize producer region}}
    tgpu.tma_load %map[%i, %i, %i, %i], %dst, %bars[%i] : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<4xi64, 3>
  }
  return
}

// -----

func.func @barrier_in_producer() attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64} {
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    // expected-error @+1 {{'tgpu.barrier' op would wait for warps that never reach it: the producer region runs on one thread}}
    tgpu.barrier
  } consumer {
    %c = arith.constant 0 : index
  }
  return
}

// -----

func.func @init_after_split(%bars: memref<4xi64, 3>, %i: index) attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64} {
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    // expected-error @+1 {{'tgpu.mbarrier_init' op initialises barriers before the warps split (thread 0 of the CTA runs it)}}
    tgpu.mbarrier_init %bars[%i] count 1 : memref<4xi64, 3>
  }
  return
}

//===----------------------------------------------------------------------===//
// tgpu.core_reduce_add, tgpu.core_load
//===----------------------------------------------------------------------===//

func.func @core_swizzled(%t: tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, %b: memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>, %d: !tile.desc<?x128xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.core_reduce_add' op stages through an unswizzled shared buffer of the tile's shape and type (the tile in core order)}}
  tgpu.core_reduce_add %t, %b, %d[%i, %i] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>, !tile.desc<?x128xf32>
  return
}

// -----

func.func @core_row(%t: tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, %b: memref<64x128xf32, 3>, %d: !tile.desc<?x128xf32>, %i: index) {
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{'tgpu.core_reduce_add' op core blocks are 16 rows by 8 columns: the offset 8 is not a multiple of 16}}
  tgpu.core_reduce_add %t, %b, %d[%c8, %i] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>, !tile.desc<?x128xf32>
  return
}

// -----

func.func @core_stage_bf16(%t: tensor<64x128xbf16, #tgpu.mma<warps = 8>>, %b: memref<64x128xbf16, 3>) {
  // expected-error @+1 {{'tgpu.core_stage' op takes 2-D f32 #tgpu.mma tiles}}
  tgpu.core_stage %t, %b : tensor<64x128xbf16, #tgpu.mma<warps = 8>>, memref<64x128xbf16, 3>
  return
}

// -----

func.func @core_stage_shape(%t: tensor<64x128xf32, #tgpu.mma<warps = 8>>, %b: memref<64x64xf32, 3>) {
  // expected-error @+1 {{'tgpu.core_stage' op stages through an unswizzled shared buffer of the tile's shape and type}}
  tgpu.core_stage %t, %b : tensor<64x128xf32, #tgpu.mma<warps = 8>>, memref<64x64xf32, 3>
  return
}

// -----

func.func @core_add_staged_consumers(%b: memref<64x128xf32, 3>, %d: !tile.desc<?x128xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.core_add_staged' op is issued by a lane of the producer's warp: it sits in a tgpu.warp_specialize producer region}}
  tgpu.core_add_staged %b, %d[%i, %i] : memref<64x128xf32, 3>, !tile.desc<?x128xf32>
  return
}

// -----

func.func @core_add_staged_bands(%b: memref<40x128xf32, 3>, %d: !tile.desc<?x128xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.core_add_staged' op adds an unswizzled 2-D f32 shared tile of whole 16 x 8 core blocks, got 'memref<40x128xf32, 3>'}}
  tgpu.core_add_staged %b, %d[%i, %i] : memref<40x128xf32, 3>, !tile.desc<?x128xf32>
  return
}

// -----

func.func @core_add_staged_wide(%b: memref<64x128xf32, 3>, %d: !tile.desc<?x64xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.core_add_staged' op the tile's 128 columns are wider than the descriptor's 64}}
  tgpu.core_add_staged %b, %d[%i, %i] : memref<64x128xf32, 3>, !tile.desc<?x64xf32>
  return
}

// -----

func.func @bulk_wait_read_pending() {
  // expected-error @+1 {{'tgpu.bulk_wait_read' op leaves 0 to 7 bulk groups pending}}
  tgpu.bulk_wait_read 9
  return
}

// -----

func.func @core_flush_column(%b: memref<64x128xf32, 3>, %d: !tile.desc<?x128xf32>, %i: index) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'tgpu.core_flush' op core blocks are 16 rows by 8 columns: the offset 4 is not a multiple of 8}}
  tgpu.core_flush %b, %d[%i, %c4] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>, !tile.desc<?x128xf32>
  return
}

// -----

func.func @core_flush_not_tile(%b: memref<64x128xf32, 3>, %d: !tile.desc<?x128xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.core_flush' op names the staged tile's type, got 'memref<64x128xf32, 3>'}}
  tgpu.core_flush %b, %d[%i, %i] : memref<64x128xf32, 3>, memref<64x128xf32, 3>, !tile.desc<?x128xf32>
  return
}

// -----

func.func @core_flush_staging(%b: memref<64x64xf32, 3>, %d: !tile.desc<?x128xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.core_flush' op stages through an unswizzled shared buffer of the tile's shape and type}}
  tgpu.core_flush %b, %d[%i, %i] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x64xf32, 3>, !tile.desc<?x128xf32>
  return
}

// -----

func.func @core_load_bf16(%d: !tile.desc<?x64xbf16>, %i: index) -> tensor<64x64xbf16, #tgpu.mma<warps = 4>> {
  // expected-error @+1 {{'tgpu.core_load' op takes 2-D f32 #tgpu.mma tiles}}
  %v = tgpu.core_load %d[%i, %i] fill 0.0 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16, #tgpu.mma<warps = 4>>
  return %v : tensor<64x64xbf16, #tgpu.mma<warps = 4>>
}

// -----

func.func @core_load_wide(%d: !tile.desc<?x64xf32>, %i: index) -> tensor<64x128xf32, #tgpu.mma<warps = 4>> {
  // expected-error @+1 {{'tgpu.core_load' op the tile's 128 columns are wider than the descriptor's 64}}
  %v = tgpu.core_load %d[%i, %i] fill 0.0 : !tile.desc<?x64xf32> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
  return %v : tensor<64x128xf32, #tgpu.mma<warps = 4>>
}

// -----

//===----------------------------------------------------------------------===//
// tgpu.bulk_reduce_add
//===----------------------------------------------------------------------===//

func.func @bulk_bf16(%t: tensor<64x64xbf16, #tgpu.mma<warps = 4>>, %b: memref<64x64xbf16, 3>, %d: !tile.desc<?x64xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op adds 2-D f32 #tgpu.mma tiles whose rows are whole 16-byte chunks}}
  tgpu.bulk_reduce_add %t, %b, %d[%i, %i] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, 3>, !tile.desc<?x64xf32>
  return
}

// -----

func.func @bulk_column_groups(%t: tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, %b: memref<64x128xf32, 3>, %d: !tile.desc<?x128xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op stages whole rows per warp; a tile in column groups is added with tgpu.tma_reduce_add}}
  tgpu.bulk_reduce_add %t, %b, %d[%i, %i] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>, !tile.desc<?x128xf32>
  return
}

// -----

func.func @bulk_narrow(%t: tensor<64x2xf32, #tgpu.mma<warps = 4>>, %b: memref<64x2xf32, 3>, %d: !tile.desc<?x2xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op adds 2-D f32 #tgpu.mma tiles whose rows are whole 16-byte chunks}}
  tgpu.bulk_reduce_add %t, %b, %d[%i, %i] : tensor<64x2xf32, #tgpu.mma<warps = 4>>, memref<64x2xf32, 3>, !tile.desc<?x2xf32>
  return
}

// -----

func.func @bulk_padded(%t: tensor<64x64xf32, #tgpu.mma<warps = 4>>, %b: memref<64x64xf32, strided<[72, 1]>, 3>, %d: !tile.desc<?x64xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op stages through an unpadded, unswizzled shared buffer of the tile's shape}}
  tgpu.bulk_reduce_add %t, %b, %d[%i, %i] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, strided<[72, 1]>, 3>, !tile.desc<?x64xf32>
  return
}

// -----

func.func @bulk_global(%t: tensor<64x64xf32, #tgpu.mma<warps = 4>>, %b: memref<64x64xf32>, %d: !tile.desc<?x64xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op stages through an unpadded, unswizzled shared buffer of the tile's shape}}
  tgpu.bulk_reduce_add %t, %b, %d[%i, %i] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

func.func @bulk_into_bf16(%t: tensor<64x64xf32, #tgpu.mma<warps = 4>>, %b: memref<64x64xf32, 3>, %d: !tile.desc<?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op adds into a plain 2-D f32 descriptor at a row and a column}}
  tgpu.bulk_reduce_add %t, %b, %d[%i, %i] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, 3>, !tile.desc<?x64xbf16>
  return
}

// -----

func.func @bulk_one_offset(%t: tensor<64x64xf32, #tgpu.mma<warps = 4>>, %b: memref<64x64xf32, 3>, %d: !tile.desc<?x64xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op adds into a plain 2-D f32 descriptor at a row and a column}}
  tgpu.bulk_reduce_add %t, %b, %d[%i] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, 3>, !tile.desc<?x64xf32>
  return
}

// -----

func.func @bulk_wider(%t: tensor<64x64xf32, #tgpu.mma<warps = 4>>, %b: memref<64x64xf32, 3>, %d: !tile.desc<?x32xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op the tile's 64 columns are wider than the descriptor's 32}}
  tgpu.bulk_reduce_add %t, %b, %d[%i, %i] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, 3>, !tile.desc<?x32xf32>
  return
}

// -----

func.func @bulk_not_mma(%t: tensor<64x64xf32>, %b: memref<64x64xf32, 3>, %d: !tile.desc<?x64xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op adds 2-D f32 #tgpu.mma tiles whose rows are whole 16-byte chunks}}
  tgpu.bulk_reduce_add %t, %b, %d[%i, %i] : tensor<64x64xf32>, memref<64x64xf32, 3>, !tile.desc<?x64xf32>
  return
}

// -----

func.func @bulk_swizzled(%t: tensor<64x64xf32, #tgpu.mma<warps = 4>>, %b: memref<64x64xf32, #tgpu.swizzle<bytes = 128>, 3>, %d: !tile.desc<?x64xf32>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op stages through an unpadded, unswizzled shared buffer of the tile's shape}}
  tgpu.bulk_reduce_add %t, %b, %d[%i, %i] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, #tgpu.swizzle<bytes = 128>, 3>, !tile.desc<?x64xf32>
  return
}

// -----

func.func @bulk_grouped(%t: tensor<64x64xf32, #tgpu.mma<warps = 4>>, %b: memref<64x64xf32, 3>, %d: !tile.desc<?x64xf32, group 4>, %i: index) {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op adds into a plain 2-D f32 descriptor at a row and a column}}
  tgpu.bulk_reduce_add %t, %b, %d[%i, %i] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, 3>, !tile.desc<?x64xf32, group 4>
  return
}

// -----

func.func @bulk_warps(%t: tensor<64x64xf32, #tgpu.mma<warps = 4>>, %b: memref<64x64xf32, 3>, %d: !tile.desc<?x64xf32>, %i: index) attributes {tgpu.num_warps = 8 : i64} {
  // expected-error @+1 {{'tgpu.bulk_reduce_add' op the tile's layout spreads it over 4 warps, the kernel runs 8}}
  tgpu.bulk_reduce_add %t, %b, %d[%i, %i] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, 3>, !tile.desc<?x64xf32>
  return
}

// -----

// tgpu.tma_store
func.func @tma_store_f32(%t: tensor<128x64xf32, #tgpu.mma<warps = 8>>, %b: memref<128x64xf32, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map, %i: index) {
  // expected-error @+1 {{'tgpu.tma_store' op stores 2-D bf16 or f16 #tgpu.mma tiles}}
  tgpu.tma_store %t, %b, %m[%i, %i] : tensor<128x64xf32, #tgpu.mma<warps = 8>>, memref<128x64xf32, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

func.func @tma_store_unswizzled(%t: tensor<128x64xbf16, #tgpu.mma<warps = 8>>, %b: memref<128x64xbf16, 3>, %m: !tgpu.tensor_map, %i: index) {
  // expected-error @+1 {{'tgpu.tma_store' op stages through a swizzled shared buffer of the tile's shape and type whose swizzle spans divide a column group's rows (a box per span)}}
  tgpu.tma_store %t, %b, %m[%i, %i] : tensor<128x64xbf16, #tgpu.mma<warps = 8>>, memref<128x64xbf16, 3>
  return
}

// -----

// A warp's rows are whole m16 tiles (kiln::Frag's layout).
func.func @tma_store_rows(%t: tensor<64x64xbf16, #tgpu.mma<warps = 8>>, %b: memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map, %i: index) {
  // expected-error @+1 {{'tgpu.tma_store' op a warp's 8 rows are not whole m16 tiles of a TMA box}}
  tgpu.tma_store %t, %b, %m[%i, %i] : tensor<64x64xbf16, #tgpu.mma<warps = 8>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

func.func @tma_store_coords(%t: tensor<128x64xbf16, #tgpu.mma<warps = 8>>, %b: memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map, %i: index) {
  // expected-error @+1 {{'tgpu.tma_store' op takes 2 to 5 coordinates (column, row, then the map's other dimensions), got 6}}
  tgpu.tma_store %t, %b, %m[%i, %i, %i, %i, %i, %i] : tensor<128x64xbf16, #tgpu.mma<warps = 8>>, memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

// The kernel's map has a warp's block of one span as its box.
func.func @tma_store_box(%t: tensor<128x64xbf16, #tgpu.mma<warps = 8>>, %b: memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map {tgpu.tensor_map = {box = array<i64: 64, 128, 1, 1>, dims = array<i64: 3, 1, 2, 0>, swizzle = 128 : i64, tensor = 0 : i64}}, %i: index) {
  // expected-error @+1 {{'tgpu.tma_store' op stores through a map of 4 dimensions whose box is a warp's 16 rows of 64 columns, swizzled 128 bytes; the map has dims array<i64: 3, 1, 2, 0>, box array<i64: 64, 128, 1, 1>, swizzle 128}}
  tgpu.tma_store %t, %b, %m[%i, %i, %i, %i] : tensor<128x64xbf16, #tgpu.mma<warps = 8>>, memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

// The map describes an array of the tile's element type.
func.func @tma_store_f16_map(%a: memref<?x?x?x64xf16>, %t: tensor<128x64xbf16, #tgpu.mma<warps = 8>>, %b: memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map {tgpu.tensor_map = {box = array<i64: 64, 16, 1, 1>, dims = array<i64: 3, 1, 2, 0>, swizzle = 128 : i64, tensor = 0 : i64}}, %i: index) {
  // expected-error @+1 {{'tgpu.tma_store' op stores 'bf16' through a map of a rank-4 array of it, but the map describes 'memref<?x?x?x64xf16>'}}
  tgpu.tma_store %t, %b, %m[%i, %i, %i, %i] : tensor<128x64xbf16, #tgpu.mma<warps = 8>>, memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

// tgpu.tma_reduce_add
!cg = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
func.func @tma_reduce_unswizzled(%t: !cg, %b: memref<64x128xf32, 3>, %m: !tgpu.tensor_map, %i: index) {
  // expected-error @+1 {{'tgpu.tma_reduce_add' op stages through a swizzled shared buffer of the tile's shape and type whose swizzle spans divide a column group's rows (a box per span)}}
  tgpu.tma_reduce_add %t, %b, %m[%i, %i, %i, %i] : !cg, memref<64x128xf32, 3>
  return
}

// -----

!cg = tensor<64x96xf32, #tgpu.mma<warps = 8, col_groups = 2>>
func.func @tma_reduce_span(%t: !cg, %b: memref<64x96xf32, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map, %i: index) {
  // expected-error @+1 {{'tgpu.tma_reduce_add' op stages through a swizzled shared buffer of the tile's shape and type whose swizzle spans divide a column group's rows}}
  tgpu.tma_reduce_add %t, %b, %m[%i, %i, %i, %i] : !cg, memref<64x96xf32, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

func.func @tma_reduce_bf16(%t: tensor<64x128xbf16, #tgpu.mma<warps = 8, col_groups = 2>>, %b: memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map, %i: index) {
  // expected-error @+1 {{'tgpu.tma_reduce_add' op adds 2-D f32 #tgpu.mma tiles}}
  tgpu.tma_reduce_add %t, %b, %m[%i, %i] : tensor<64x128xbf16, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

!cg = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
func.func @tma_reduce_coords(%t: !cg, %b: memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map, %i: index) {
  // expected-error @+1 {{'tgpu.tma_reduce_add' op takes 2 to 5 coordinates (column, row, then the tensor's outer dimensions), got 1}}
  tgpu.tma_reduce_add %t, %b, %m[%i] : !cg, memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

!cg = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
func.func @tma_reduce_warps(%t: !cg, %b: memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map, %i: index) attributes {tgpu.num_warps = 4 : i64} {
  // expected-error @+1 {{'tgpu.tma_reduce_add' op the tile's layout spreads it over 8 warps, the kernel runs 4}}
  tgpu.tma_reduce_add %t, %b, %m[%i, %i, %i, %i] : !cg, memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

// The kernel's map must have a warp's block of one span as its box.
!cg = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
func.func @tma_reduce_box(%t: !cg, %b: memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map {tgpu.tensor_map = {box = array<i64: 32, 64, 1, 1>, dims = array<i64: 3, 2, 1, 0>, swizzle = 128 : i64, tensor = 0 : i64}}, %i: index) {
  // expected-error @+1 {{'tgpu.tma_reduce_add' op adds through a map walking its 4 dimensions last to first whose box is a warp's 16 rows of 32 columns, swizzled 128 bytes; the map has dims array<i64: 3, 2, 1, 0>, box array<i64: 32, 64, 1, 1>, swizzle 128}}
  tgpu.tma_reduce_add %t, %b, %m[%i, %i, %i, %i] : !cg, memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

// The map walks the dimensions last to first (the coordinates' order).
!cg = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
func.func @tma_reduce_dims(%t: !cg, %b: memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map {tgpu.tensor_map = {box = array<i64: 32, 16, 1, 1>, dims = array<i64: 3, 1, 2, 0>, swizzle = 128 : i64, tensor = 0 : i64}}, %i: index) {
  // expected-error @+1 {{'tgpu.tma_reduce_add' op adds through a map walking its 4 dimensions last to first}}
  tgpu.tma_reduce_add %t, %b, %m[%i, %i, %i, %i] : !cg, memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

// The map describes an f32 array of as many dimensions as coordinates.
!cg = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
func.func @tma_reduce_bf16_map(%a: memref<?x?x?x128xbf16>, %t: !cg, %b: memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map {tgpu.tensor_map = {box = array<i64: 32, 16, 1, 1>, dims = array<i64: 3, 2, 1, 0>, swizzle = 128 : i64, tensor = 0 : i64}}, %i: index) {
  // expected-error @+1 {{'tgpu.tma_reduce_add' op adds f32 through a map of a rank-4 f32 array, but the map describes 'memref<?x?x?x128xbf16>'}}
  tgpu.tma_reduce_add %t, %b, %m[%i, %i, %i, %i] : !cg, memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

// A warp's rows are whole m16 tiles (kiln::Frag's layout).
!cg = tensor<32x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
func.func @tma_reduce_rows(%t: !cg, %b: memref<32x128xf32, #tgpu.swizzle<bytes = 128>, 3>, %m: !tgpu.tensor_map, %i: index) {
  // expected-error @+1 {{'tgpu.tma_reduce_add' op a warp's 8 rows are not whole m16 tiles of a TMA box (at most 256 rows)}}
  tgpu.tma_reduce_add %t, %b, %m[%i, %i, %i, %i] : !cg, memref<32x128xf32, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

// tgpu.scale_rows scales f32 tiles whose warps hold whole rows, by factors
// in the matching rows layout.
func.func @scale_rows_bf16(%t: tensor<64x128xbf16, #tgpu.mma<warps = 4>>, %f: tensor<64xbf16, #tgpu.rows<warps = 4>>) {
  // expected-error @+1 {{'tgpu.scale_rows' op scales f32 #tgpu.mma register tiles whose warps hold whole rows, got 'tensor<64x128xbf16, #tgpu.mma<warps = 4>>'}}
  %s = tgpu.scale_rows %t, %f : tensor<64x128xbf16, #tgpu.mma<warps = 4>>, tensor<64xbf16, #tgpu.rows<warps = 4>>
  return
}

// -----

func.func @scale_rows_col_groups(%t: tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, %f: tensor<64xf32, #tgpu.rows<warps = 8>>) {
  // expected-error @+1 {{'tgpu.scale_rows' op scales f32 #tgpu.mma register tiles whose warps hold whole rows}}
  %s = tgpu.scale_rows %t, %f : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, tensor<64xf32, #tgpu.rows<warps = 8>>
  return
}

// -----

func.func @scale_rows_warps(%t: tensor<64x128xf32, #tgpu.mma<warps = 4>>, %f: tensor<64xf32, #tgpu.rows<warps = 8>>) {
  // expected-error @+1 {{'tgpu.scale_rows' op takes one factor per row in the matching #tgpu.rows layout, got 'tensor<64xf32, #tgpu.rows<warps = 8>>' for 'tensor<64x128xf32, #tgpu.mma<warps = 4>>'}}
  %s = tgpu.scale_rows %t, %f : tensor<64x128xf32, #tgpu.mma<warps = 4>>, tensor<64xf32, #tgpu.rows<warps = 8>>
  return
}

// -----

func.func @scale_rows_cols(%t: tensor<64x128xf32, #tgpu.mma<warps = 4>>, %f: tensor<128xf32, #tgpu.cols<warps = 4>>) {
  // expected-error @+1 {{'tgpu.scale_rows' op takes one factor per row in the matching #tgpu.rows layout}}
  %s = tgpu.scale_rows %t, %f : tensor<64x128xf32, #tgpu.mma<warps = 4>>, tensor<128xf32, #tgpu.cols<warps = 4>>
  return
}

// -----

func.func @scale_rows_count(%t: tensor<64x128xf32, #tgpu.mma<warps = 4>>, %f: tensor<128xf32, #tgpu.rows<warps = 4>>) {
  // expected-error @+1 {{'tgpu.scale_rows' op takes one factor per row in the matching #tgpu.rows layout, got 'tensor<128xf32, #tgpu.rows<warps = 4>>'}}
  %s = tgpu.scale_rows %t, %f : tensor<64x128xf32, #tgpu.mma<warps = 4>>, tensor<128xf32, #tgpu.rows<warps = 4>>
  return
}

// -----

func.func @scale_rows_factor_type(%t: tensor<64x128xf32, #tgpu.mma<warps = 4>>, %f: tensor<64xbf16, #tgpu.rows<warps = 4>>) {
  // expected-error @+1 {{'tgpu.scale_rows' op takes one factor per row in the matching #tgpu.rows layout}}
  %s = tgpu.scale_rows %t, %f : tensor<64x128xf32, #tgpu.mma<warps = 4>>, tensor<64xbf16, #tgpu.rows<warps = 4>>
  return
}

// -----

func.func @load_keep_bits_slot(%seed: i64, %off: i64, %i: index, %s: memref<256xi32, 3>) {
  // expected-error @+1 {{'tgpu.load_keep_bits' op needs a shared memref<512xi32> slot, got 'memref<256xi32, 3>'}}
  %k = tgpu.load_keep_bits %s, %seed, %off, %i, %i, %i, %i below 100 patches 8 : memref<256xi32, 3> -> tensor<128x128xi1, #tgpu.mma<warps = 8>>
  return
}

// -----

func.func @load_keep_bits_type(%seed: i64, %off: i64, %i: index, %s: memref<512xi32, 3>) {
  // expected-error @+1 {{'tgpu.load_keep_bits' op draws the keep bits of a 2-D i1 #tgpu.mma tile of one column group in m16 x n16 patches}}
  %k = tgpu.load_keep_bits %s, %seed, %off, %i, %i, %i, %i below 100 patches 8 : memref<512xi32, 3> -> tensor<128x128xi32, #tgpu.mma<warps = 8>>
  return
}

// -----

func.func @load_keep_bits_patches(%seed: i64, %off: i64, %i: index, %s: memref<512xi32, 3>) {
  // expected-error @+1 {{'tgpu.load_keep_bits' op draws 1 to 8 patches of 8 elements per thread, got 9}}
  %k = tgpu.load_keep_bits %s, %seed, %off, %i, %i, %i, %i below 100 patches 9 : memref<512xi32, 3> -> tensor<128x128xi1, #tgpu.mma<warps = 8>>
  return
}

// -----

func.func @draw_keep_bits_threshold(%seed: i64, %off: i64, %i: index, %s: memref<512xi32, 3>) {
  // expected-error @+1 {{'tgpu.draw_keep_bits' op keeps 16-bit uniforms below a threshold in [0, 65536], got 70000}}
  tgpu.draw_keep_bits %seed, %off, %i, %i, %i, %i below 70000 patches 8 into %s as tensor<128x128xi1, #tgpu.mma<warps = 8>> : memref<512xi32, 3>
  return
}

// -----

func.func @draw_keep_bits_groups(%seed: i64, %off: i64, %i: index, %s: memref<512xi32, 3>) {
  // expected-error @+1 {{'tgpu.draw_keep_bits' op draws the keep bits of a 2-D i1 #tgpu.mma tile of one column group}}
  tgpu.draw_keep_bits %seed, %off, %i, %i, %i, %i below 100 patches 8 into %s as tensor<128x128xi1, #tgpu.mma<warps = 8, col_groups = 2>> : memref<512xi32, 3>
  return
}

// -----

func.func @next_tile_words(%counter: memref<1xi32>, %i: index, %words: memref<4xi32, 3>) {
  // expected-error @+1 {{'tgpu.next_tile' op shares the tile through two shared i32 words, got 'memref<4xi32, 3>'}}
  %t = tgpu.next_tile %counter, %i, %i shares %words : memref<1xi32>, memref<4xi32, 3>
  return
}
