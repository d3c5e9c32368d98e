// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of the tile ops' verifiers (TileOps.cpp), the ODS
// constraints they rely on, and DescType::verify (TileDialect.cpp).

//===----------------------------------------------------------------------===//
// !tile.desc
//===----------------------------------------------------------------------===//

// expected-error @+1 {{descriptors are 1-D or 2-D, got rank 0}}
func.func private @desc_rank_0(!tile.desc<f32>)

// -----

// expected-error @+1 {{descriptors are 1-D or 2-D, got rank 3}}
func.func private @desc_rank_3(!tile.desc<?x64x64xbf16>)

// -----

// expected-error @+1 {{descriptor dimensions must be positive or ?}}
func.func private @desc_zero_dim(!tile.desc<?x0xbf16>)

// -----

// expected-error @+1 {{descriptor elements must be scalars, got 'vector<4xf32>'}}
func.func private @desc_vector_elements(!tile.desc<?xvector<4xf32>>)

// -----

// expected-error @+1 {{descriptor elements must be scalars, got 'tensor<4xf32>'}}
func.func private @desc_tensor_elements(!tile.desc<?x4xtensor<4xf32>>)

//===----------------------------------------------------------------------===//
// tile.program_id
//===----------------------------------------------------------------------===//

// -----

func.func @program_id_axis_3() -> index {
  // expected-error @+1 {{'tile.program_id' op attribute 'axis' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 0 whose maximum value is 2}}
  %0 = tile.program_id 3
  return %0 : index
}

// -----

func.func @program_id_negative_axis() -> index {
  // expected-error @+1 {{'tile.program_id' op attribute 'axis' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 0 whose maximum value is 2}}
  %0 = tile.program_id -1
  return %0 : index
}

//===----------------------------------------------------------------------===//
// tile.view
//===----------------------------------------------------------------------===//

// -----

func.func @view_keep_vs_rank(%m: memref<?x?x?x64xbf16>, %b: index, %h: index, %x: index) {
  // expected-error @+1 {{'tile.view' op keeps 1 dimensions but the descriptor has rank 2}}
  %v = tile.view %m[%b, %h, %x] keep [3] : memref<?x?x?x64xbf16> -> !tile.desc<?x64xbf16>
  return
}

// -----

func.func @view_too_few_indices(%m: memref<?x?x?x64xbf16>, %b: index) {
  // expected-error @+1 {{'tile.view' op needs one index per dimension not kept: base has rank 4, keeps 2, got 1 indices}}
  %v = tile.view %m[%b] keep [1, 3] : memref<?x?x?x64xbf16> -> !tile.desc<?x64xbf16>
  return
}

// -----

func.func @view_too_many_indices(%m: memref<?x64xf32>, %b: index) {
  // expected-error @+1 {{'tile.view' op needs one index per dimension not kept: base has rank 2, keeps 2, got 1 indices}}
  %v = tile.view %m[%b] keep [0, 1] : memref<?x64xf32> -> !tile.desc<?x64xf32>
  return
}

// -----

func.func @view_packed_keep_decreasing(%m: memref<?x?x?x64xbf16>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op a packed view keeps increasing dimensions, got 1 at position 1}}
  %v = tile.view %m[%b, %h] keep [3, 1] packed 2 : memref<?x?x?x64xbf16> -> !tile.desc<?x?xbf16, group 4>
  return
}

// -----

func.func @view_keep_repeated(%m: memref<?x?x?x64xbf16>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op keep must list distinct dimensions of the base, got 1 at position 1}}
  %v = tile.view %m[%b, %h] keep [1, 1] : memref<?x?x?x64xbf16> -> !tile.desc<?x?xbf16>
  return
}

// -----

func.func @view_keep_out_of_range(%m: memref<?x?x?x64xbf16>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op keep must list distinct dimensions of the base, got 4 at position 1}}
  %v = tile.view %m[%b, %h] keep [1, 4] : memref<?x?x?x64xbf16> -> !tile.desc<?x?xbf16>
  return
}

// -----

func.func @view_keep_negative(%m: memref<?x?x?x64xbf16>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op keep must list distinct dimensions of the base, got -1 at position 0}}
  %v = tile.view %m[%b, %h] keep [-1, 3] : memref<?x?x?x64xbf16> -> !tile.desc<?x64xbf16>
  return
}

// -----

func.func @view_static_size_mismatch(%m: memref<?x?x?x64xbf16>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op descriptor dimension 1 is 128 but base dimension 3 is 64}}
  %v = tile.view %m[%b, %h] keep [1, 3] : memref<?x?x?x64xbf16> -> !tile.desc<?x128xbf16>
  return
}

// -----

func.func @view_element_type(%m: memref<?x?x?x64xbf16>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op element type 'f16' differs from the base's 'bf16'}}
  %v = tile.view %m[%b, %h] keep [1, 3] : memref<?x?x?x64xbf16> -> !tile.desc<?x64xf16>
  return
}

// -----

func.func @view_non_strided(%m: memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>) {
  // expected-error @+1 {{'tile.view' op operand #0 must be strided memref of any type values}}
  %v = tile.view %m[] keep [0, 1] : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>> -> !tile.desc<4x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// tile.dim
//===----------------------------------------------------------------------===//

// -----

func.func @dim_out_of_range(%d: !tile.desc<?x64xbf16>) -> index {
  // expected-error @+1 {{'tile.dim' op dimension 2 is out of range for rank 2}}
  %n = tile.dim %d, 2 : !tile.desc<?x64xbf16>
  return %n : index
}

// -----

func.func @dim_out_of_range_1d(%d: !tile.desc<?xf32>) -> index {
  // expected-error @+1 {{'tile.dim' op dimension 1 is out of range for rank 1}}
  %n = tile.dim %d, 1 : !tile.desc<?xf32>
  return %n : index
}

//===----------------------------------------------------------------------===//
// tile.load
//===----------------------------------------------------------------------===//

// -----

func.func @load_rank_mismatch(%d: !tile.desc<?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tile.load' op tile rank 1 differs from descriptor rank 2}}
  %t = tile.load %d[%i, %i] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64xbf16>
  return
}

// -----

func.func @load_offset_count(%d: !tile.desc<?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tile.load' op needs 2 offsets, got 1}}
  %t = tile.load %d[%i] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  return
}

// -----

func.func @load_element_type(%d: !tile.desc<?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tile.load' op tile element type 'f32' differs from descriptor element type 'bf16'}}
  %t = tile.load %d[%i, %i] fill 0.0 : f32 : !tile.desc<?x64xbf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @load_fill_type(%d: !tile.desc<?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tile.load' op fill value type 'f32' differs from the tile element type 'bf16'}}
  %t = tile.load %d[%i, %i] fill 0.0 : f32 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  return
}

// -----

func.func @load_dynamic_tile(%d: !tile.desc<?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tile.load' op result #0 must be ranked tensor of any type values, but got 'tensor<?x64xbf16>'}}
  %t = tile.load %d[%i, %i] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<?x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// tile.store
//===----------------------------------------------------------------------===//

// -----

func.func @store_rank_mismatch(%t: tensor<64x64xf32>, %d: !tile.desc<?xf32>, %i: index) {
  // expected-error @+1 {{'tile.store' op tile rank 2 differs from descriptor rank 1}}
  tile.store %t, %d[%i] : tensor<64x64xf32>, !tile.desc<?xf32>
  return
}

// -----

func.func @store_offset_count(%t: tensor<64xf32>, %d: !tile.desc<?xf32>, %i: index) {
  // expected-error @+1 {{'tile.store' op needs 1 offsets, got 2}}
  tile.store %t, %d[%i, %i] : tensor<64xf32>, !tile.desc<?xf32>
  return
}

// -----

func.func @store_mask_shape(%t: tensor<64xf32>, %d: !tile.desc<?xf32>, %i: index, %m: tensor<32xi1>) {
  // expected-error @+1 {{'tile.store' op mask must be an i1 tile of the tile's shape 64, got 'tensor<32xi1>'}}
  tile.store %t, %d[%i] mask %m : tensor<64xf32>, !tile.desc<?xf32>, tensor<32xi1>
  return
}

// -----

func.func @load_mask_shape(%d: !tile.desc<?x64xf32>, %i: index, %m: tensor<64x32xi1>) {
  // expected-error @+1 {{'tile.load' op mask must be an i1 tile of the tile's shape 64, 64, got 'tensor<64x32xi1>'}}
  %t = tile.load %d[%i, %i] mask %m fill 0.0 : f32 : !tile.desc<?x64xf32>, tensor<64x32xi1> -> tensor<64x64xf32>
  return
}

// -----

func.func @store_mask_type(%t: tensor<64xf32>, %d: !tile.desc<?xf32>, %i: index, %m: tensor<64xf32>) {
  // expected-error @+1 {{'tile.store' op mask must be an i1 tile of the tile's shape 64, got 'tensor<64xf32>'}}
  tile.store %t, %d[%i] mask %m : tensor<64xf32>, !tile.desc<?xf32>, tensor<64xf32>
  return
}

// -----

func.func @store_element_type(%t: tensor<64x64xf32>, %d: !tile.desc<?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tile.store' op tile element type 'f32' differs from descriptor element type 'bf16'}}
  tile.store %t, %d[%i, %i] : tensor<64x64xf32>, !tile.desc<?x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// tile.dot
//===----------------------------------------------------------------------===//

// -----

func.func @dot_not_2d(%a: tensor<64xbf16>, %b: tensor<64x64xbf16>) {
  // expected-error @+1 {{'tile.dot' op operands and result must be 2-D tiles}}
  %r = tile.dot %a, %b : tensor<64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @dot_result_not_2d(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) {
  // expected-error @+1 {{'tile.dot' op operands and result must be 2-D tiles}}
  %r = tile.dot %a, %b : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<1x64x64xf32>
  return
}

// -----

func.func @dot_contraction(%a: tensor<64x32xbf16>, %b: tensor<64x64xbf16>) {
  // expected-error @+1 {{'tile.dot' op contraction sizes differ: lhs has 32, rhs has 64}}
  %r = tile.dot %a, %b : tensor<64x32xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  return
}

// -----

// With transpose_rhs the contraction runs over the rhs' columns.
func.func @dot_contraction_transposed(%a: tensor<64x32xbf16>, %b: tensor<32x64xbf16>) {
  // expected-error @+1 {{'tile.dot' op contraction sizes differ: lhs has 32, rhs has 64 (transposed)}}
  %r = tile.dot %a, %b {transpose_rhs} : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x32xf32>
  return
}

// -----

func.func @dot_result_shape(%a: tensor<64x32xbf16>, %b: tensor<32x16xbf16>) {
  // expected-error @+1 {{'tile.dot' op result must be 64x16, got 'tensor<64x32xf32>'}}
  %r = tile.dot %a, %b : tensor<64x32xbf16>, tensor<32x16xbf16> -> tensor<64x32xf32>
  return
}

// -----

func.func @dot_result_shape_transposed(%a: tensor<64x32xbf16>, %b: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tile.dot' op result must be 64x16, got 'tensor<16x64xf32>'}}
  %r = tile.dot %a, %b {transpose_rhs} : tensor<64x32xbf16>, tensor<16x32xbf16> -> tensor<16x64xf32>
  return
}

// -----

func.func @dot_integers(%a: tensor<16x16xi8>, %b: tensor<16x16xi8>) {
  // expected-error @+1 {{'tile.dot' op operates on floating-point tiles}}
  %r = tile.dot %a, %b : tensor<16x16xi8>, tensor<16x16xi8> -> tensor<16x16xi32>
  return
}

// -----

func.func @dot_integer_result(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>) {
  // expected-error @+1 {{'tile.dot' op operates on floating-point tiles}}
  %r = tile.dot %a, %b : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xi32>
  return
}

// -----

func.func @dot_narrow_accumulator(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>) {
  // expected-error @+1 {{'tile.dot' op accumulator 'f16' is narrower than the inputs}}
  %r = tile.dot %a, %b : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf16>
  return
}

// -----

func.func @dot_acc_type(%a: tensor<16x8xbf16>, %b: tensor<8x16xbf16>, %acc: tensor<16x16xf64>) {
  // expected-error @+1 {{'tile.dot' op accumulator type 'tensor<16x16xf64>' differs from the result type 'tensor<16x16xf32>'}}
  %r = tile.dot %a, %b, %acc : tensor<16x8xbf16>, tensor<8x16xbf16>, tensor<16x16xf64> -> tensor<16x16xf32>
  return
}

// -----

func.func @dot_acc_shape(%a: tensor<16x8xbf16>, %b: tensor<8x16xbf16>, %acc: tensor<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op accumulator type 'tensor<16x8xf32>' differs from the result type 'tensor<16x16xf32>'}}
  %r = tile.dot %a, %b, %acc : tensor<16x8xbf16>, tensor<8x16xbf16>, tensor<16x8xf32> -> tensor<16x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// tile.reduce
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_1d_source(%x: tensor<64xf32>) {
  // expected-error @+1 {{'tile.reduce' op reduces a 2-D tile to a 1-D tile}}
  %r = tile.reduce max %x dim 0 : tensor<64xf32> -> tensor<64xf32>
  return
}

// -----

func.func @reduce_all_2d(%x: tensor<64x32xf32>) {
  // expected-error @+1 {{'tile.reduce_all' op reduces a 1-D tile to a scalar}}
  %r = tile.reduce_all sum %x : tensor<64x32xf32> -> f32
  return
}

// -----

func.func @reduce_all_type(%x: tensor<64xf32>) {
  // expected-error @+1 {{'tile.reduce_all' op result must be 'f32'}}
  %r = tile.reduce_all sum %x : tensor<64xf32> -> f16
  return
}

// -----

func.func @reduce_2d_result(%x: tensor<64x32xf32>) {
  // expected-error @+1 {{'tile.reduce' op reduces a 2-D tile to a 1-D tile}}
  %r = tile.reduce sum %x dim 1 : tensor<64x32xf32> -> tensor<64x1xf32>
  return
}

// -----

func.func @reduce_dim_out_of_range(%x: tensor<64x32xf32>) {
  // expected-error @+1 {{'tile.reduce' op dimension must be 0 or 1, got 2}}
  %r = tile.reduce max %x dim 2 : tensor<64x32xf32> -> tensor<64xf32>
  return
}

// -----

// Reducing dim 1 keeps dim 0 (64), not dim 1 (32).
func.func @reduce_result_size(%x: tensor<64x32xf32>) {
  // expected-error @+1 {{'tile.reduce' op result must be tensor<64x}}
  %r = tile.reduce max %x dim 1 : tensor<64x32xf32> -> tensor<32xf32>
  return
}

// -----

func.func @reduce_result_element_type(%x: tensor<64x32xf16>) {
  // expected-error @+1 {{'tile.reduce' op result must be tensor<32x}}
  %r = tile.reduce sum %x dim 0 : tensor<64x32xf16> -> tensor<32xf32>
  return
}

// -----

func.func @reduce_integers(%x: tensor<64x32xi32>) {
  // expected-error @+1 {{'tile.reduce' op reduces floating-point tiles}}
  %r = tile.reduce sum %x dim 1 : tensor<64x32xi32> -> tensor<64xi32>
  return
}

// -----

func.func @reduce_unknown_kind(%x: tensor<64x32xf32>) {
  // expected-error @+2 {{expected ::kiln::tile::ReduceKind to be one of: max, sum}}
  // expected-error @+1 {{failed to parse Tile_ReduceKindAttr parameter 'value'}}
  %r = tile.reduce min %x dim 1 : tensor<64x32xf32> -> tensor<64xf32>
  return
}

//===----------------------------------------------------------------------===//
// tile.broadcast
//===----------------------------------------------------------------------===//

// -----

func.func @broadcast_2d_source(%x: tensor<64x1xf32>) {
  // expected-error @+1 {{'tile.broadcast' op broadcasts a 1-D tile to a 2-D tile}}
  %r = tile.broadcast %x dim 1 : tensor<64x1xf32> -> tensor<64x32xf32>
  return
}

// -----

func.func @broadcast_1d_result(%x: tensor<64xf32>) {
  // expected-error @+1 {{'tile.broadcast' op broadcasts a 1-D tile to a 2-D tile}}
  %r = tile.broadcast %x dim 0 : tensor<64xf32> -> tensor<64xf32>
  return
}

// -----

func.func @broadcast_dim_out_of_range(%x: tensor<64xf32>) {
  // expected-error @+1 {{'tile.broadcast' op dimension must be 0 or 1, got 2}}
  %r = tile.broadcast %x dim 2 : tensor<64xf32> -> tensor<64x32xf32>
  return
}

// -----

// Broadcasting along dim 1 keeps the source as dim 0.
func.func @broadcast_size(%x: tensor<64xf32>) {
  // expected-error @+1 {{'tile.broadcast' op source 'tensor<64xf32>' does not fit result 'tensor<32x64xf32>' along dimension 0}}
  %r = tile.broadcast %x dim 1 : tensor<64xf32> -> tensor<32x64xf32>
  return
}

// -----

func.func @broadcast_element_type(%x: tensor<64xf32>) {
  // expected-error @+1 {{'tile.broadcast' op source 'tensor<64xf32>' does not fit result 'tensor<32x64xf16>' along dimension 1}}
  %r = tile.broadcast %x dim 0 : tensor<64xf32> -> tensor<32x64xf16>
  return
}

//===----------------------------------------------------------------------===//
// tile.splat
//===----------------------------------------------------------------------===//

// -----

func.func @splat_element_type(%x: f32) {
  // expected-error @+1 {{'tile.splat' op result elements must be 'f32'}}
  %r = tile.splat %x : f32 -> tensor<64x64xbf16>
  return
}

// -----

func.func @splat_index_into_i64(%x: index) {
  // expected-error @+1 {{'tile.splat' op result elements must be 'index'}}
  %r = tile.splat %x : index -> tensor<64xi64>
  return
}

// -----

func.func @splat_vector(%x: vector<4xf32>) {
  // expected-error @+1 {{'tile.splat' op operand #0 must be integer or index or floating-point, but got 'vector<4xf32>'}}
  %r = tile.splat %x : vector<4xf32> -> tensor<4xvector<4xf32>>
  return
}

//===----------------------------------------------------------------------===//
// tile.philox
//===----------------------------------------------------------------------===//

// -----

func.func @philox_not_i32(%s: i64, %x: index) {
  // expected-error @+1 {{'tile.philox' op produces a 2-D tile of i32, got 'tensor<64x64xi16>'}}
  %r = tile.philox %s, %s, %x, %x, %x, %x : tensor<64x64xi16>
  return
}

// -----

func.func @philox_bits(%s: i64, %x: index) {
  // expected-error @+1 {{'tile.philox' op draws 16- or 8-bit uniforms, got bits = 12}}
  %r = tile.philox %s, %s, %x, %x, %x, %x {bits = 12} : tensor<64x64xi32>
  return
}

// -----

func.func @philox_1d(%s: i64, %x: index) {
  // expected-error @+1 {{'tile.philox' op produces a 2-D tile of i32, got 'tensor<64xi32>'}}
  %r = tile.philox %s, %s, %x, %x, %x, %x : tensor<64xi32>
  return
}

//===----------------------------------------------------------------------===//
// tile.scatter_add
//===----------------------------------------------------------------------===//

// -----

func.func @scatter_add_int(%v: tensor<4x4xi32>, %g: memref<?xi32>, %i: tensor<4x4xindex>) {
  // expected-error @+1 {{'tile.scatter_add' op adds float values into a memref of their type, got 'tensor<4x4xi32>' into 'memref<?xi32>'}}
  tile.scatter_add %v, %g[%i] : tensor<4x4xi32>, memref<?xi32>, tensor<4x4xindex>
  return
}

// -----

func.func @scatter_add_rank(%v: tensor<4x4xf32>, %g: memref<?x?xf32>, %i: tensor<4x4xindex>) {
  // expected-error @+1 {{'tile.scatter_add' op needs one index tile per dimension of the destination (2), got 1}}
  tile.scatter_add %v, %g[%i] : tensor<4x4xf32>, memref<?x?xf32>, tensor<4x4xindex>
  return
}

// -----

func.func @scatter_add_shape(%v: tensor<4x4xf32>, %g: memref<?xf32>, %i: tensor<4x8xindex>) {
  // expected-error @+1 {{'tile.scatter_add' op index tiles are index tiles shaped like the values, got 'tensor<4x8xindex>'}}
  tile.scatter_add %v, %g[%i] : tensor<4x4xf32>, memref<?xf32>, tensor<4x8xindex>
  return
}

// -----

func.func @scatter_add_fixed_point_f32(%v: tensor<4x4xf32>, %g: memref<?x3xf32>, %i: tensor<4x4xindex>) {
  // expected-error @+1 {{'tile.scatter_add' op with fixed_point adds f32 values into an i64 memref whose last dimension is 3, got 'tensor<4x4xf32>' into 'memref<?x3xf32>'}}
  tile.scatter_add %v, %g[%i] {fixed_point} : tensor<4x4xf32>, memref<?x3xf32>, tensor<4x4xindex>
  return
}

// -----

func.func @scatter_add_fixed_point_parts(%v: tensor<4x4xf32>, %g: memref<?x2xi64>, %i: tensor<4x4xindex>) {
  // expected-error @+1 {{'tile.scatter_add' op with fixed_point adds f32 values into an i64 memref whose last dimension is 3, got 'tensor<4x4xf32>' into 'memref<?x2xi64>'}}
  tile.scatter_add %v, %g[%i] {fixed_point} : tensor<4x4xf32>, memref<?x2xi64>, tensor<4x4xindex>
  return
}

// -----

func.func @scatter_add_fixed_point_rank(%v: tensor<4x4xf32>, %g: memref<?x?x3xi64>, %i: tensor<4x4xindex>) {
  // expected-error @+1 {{'tile.scatter_add' op needs one index tile per dimension of the destination but the last (2), got 1}}
  tile.scatter_add %v, %g[%i] {fixed_point} : tensor<4x4xf32>, memref<?x?x3xi64>, tensor<4x4xindex>
  return
}

//===----------------------------------------------------------------------===//
// tile.iota
//===----------------------------------------------------------------------===//

// -----

func.func @iota_not_index() {
  // expected-error @+1 {{'tile.iota' op produces an index tile}}
  %r = tile.iota dim 0 : tensor<64x64xi32>
  return
}

// -----

func.func @iota_dim_out_of_range() {
  // expected-error @+1 {{'tile.iota' op dimension 2 is out of range for rank 2}}
  %r = tile.iota dim 2 : tensor<64x64xindex>
  return
}

// -----

func.func @iota_dim_out_of_range_1d() {
  // expected-error @+1 {{'tile.iota' op dimension 1 is out of range for rank 1}}
  %r = tile.iota dim 1 : tensor<64xindex>
  return
}

//===----------------------------------------------------------------------===//
// tile.gather
//===----------------------------------------------------------------------===//

// -----

func.func @gather_index_count(%m: memref<?x?xi32>, %i: tensor<64x64xindex>) {
  // expected-error @+1 {{'tile.gather' op needs 2 index tiles, got 1}}
  %g = tile.gather %m[%i] : memref<?x?xi32>, tensor<64x64xindex> -> tensor<64x64xi32>
  return
}

// -----

func.func @gather_index_shape(%m: memref<?xf32>, %i: tensor<64xindex>) {
  // expected-error @+1 {{'tile.gather' op index tiles must be index tiles shaped like the result}}
  %g = tile.gather %m[%i] : memref<?xf32>, tensor<64xindex> -> tensor<64x64xf32>
  return
}

// -----

func.func @gather_index_element_type(%m: memref<?xf32>, %i: tensor<64x64xi64>) {
  // expected-error @+1 {{'tile.gather' op index tiles must be index tiles shaped like the result}}
  %g = tile.gather %m[%i] : memref<?xf32>, tensor<64x64xi64> -> tensor<64x64xf32>
  return
}

// -----

func.func @gather_result_element_type(%m: memref<?xf32>, %i: tensor<64x64xindex>) {
  // expected-error @+1 {{'tile.gather' op result elements must be 'f32'}}
  %g = tile.gather %m[%i] : memref<?xf32>, tensor<64x64xindex> -> tensor<64x64xbf16>
  return
}

// -----

func.func @atomic_add_bf16(%t: tensor<64x32xbf16>, %d: !tile.desc<?x32xbf16>, %r: index) {
  // expected-error @+1 {{'tile.atomic_add' op adds f32 tiles (the accumulation precision), got 'bf16'}}
  tile.atomic_add %t, %d[%r, %r] : tensor<64x32xbf16>, !tile.desc<?x32xbf16>
  return
}

//===----------------------------------------------------------------------===//
// Launch attributes (TileAttrNames.h, TileDialect.cpp): the grid on kernels,
// the role and shape of each argument.
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'tile.grid' must be an array of 3 size expressions (x, y, z)}}
func.func @grid_two_axes() attributes {tile.grid = ["heads", "batch"]} {
  return
}

// -----

// expected-error @+1 {{size expression names 'seqlen'; expected batch, heads, kv_heads, seq_q, seq_kv, pages, max_pages, total_q, total_kv, num_sms, ctas_per_sm.<kernel> (the kernel's 'tile.symbols' declares derived ones)}}
func.func @grid_unknown_symbol() attributes {tile.grid = [["ceildiv", "seqlen", 64], "heads", "batch"]} {
  return
}

// -----

// expected-error @+1 {{size expression operator 'div' is not add, sub, mul, ceildiv, max or min}}
func.func @grid_unknown_op() attributes {tile.grid = [["div", "seq_q", 64], "heads", "batch"]} {
  return
}

// -----

// Derived symbols (tile.symbols) are over the problem's symbols; the kernel's
// other size expressions may name them, and nothing else may.
// expected-error @+1 {{size expression names 'splits'; expected batch, heads, kv_heads, seq_q, seq_kv, pages, max_pages, total_q, total_kv, num_sms, ctas_per_sm.<kernel>, kv_splits (the kernel's 'tile.symbols' declares derived ones)}}
func.func @grid_undeclared_derived() attributes {tile.symbols = {kv_splits = ["ceildiv", "num_sms", "batch"]}, tile.grid = [1, "heads", ["mul", "batch", "splits"]]} {
  return
}

// -----

// expected-error @+1 {{size expression names 'kv_splits'; expected batch, heads, kv_heads, seq_q, seq_kv, pages, max_pages, total_q, total_kv, num_sms, ctas_per_sm.<kernel> (the kernel's 'tile.symbols' declares derived ones)}}
func.func @derived_from_derived() attributes {tile.symbols = {kv_splits = ["ceildiv", "num_sms", "batch"], more = ["mul", "kv_splits", 2]}} {
  return
}

// -----

// expected-error @+1 {{'tile.symbols' redefines 'batch', a problem symbol}}
func.func @derived_redefines() attributes {tile.symbols = {batch = 2}} {
  return
}

// -----

// expected-error @+1 {{'tile.symbols' must be a dictionary of size expressions}}
func.func @derived_not_dictionary() attributes {tile.symbols = ["kv_splits", 2]} {
  return
}

// -----

// expected-error @+1 {{size expression names 'splits'; expected batch, heads, kv_heads, seq_q, seq_kv, pages, max_pages, total_q, total_kv, num_sms, ctas_per_sm.<kernel> (the kernel's 'tile.symbols' declares derived ones)}}
func.func @when_unknown() attributes {tile.when = ["sub", "splits", 1]} {
  return
}

// -----

// expected-error @+1 {{argument 0: 'tile.scalar' marks an i64 argument, got 'index'}}
func.func @scalar_index(%s: index {tile.scalar = "seq_q"}) {
  return
}

// -----

// expected-error @+1 {{argument 0: size expression names 'kv_splits'}}
func.func @scalar_undeclared(%s: i64 {tile.scalar = "kv_splits"}) {
  return
}

// -----

// expected-error @+1 {{'ceildiv' has 3 operands}}
func.func @grid_ceildiv_arity() attributes {tile.grid = [["ceildiv", "seq_q", 64, 2], "heads", "batch"]} {
  return
}

// -----

// expected-error @+1 {{a size expression is an integer, a symbol or ["op", operands...], got 1.000000e+00 : f32}}
func.func @grid_float() attributes {tile.grid = [1.0 : f32, "heads", "batch"]} {
  return
}

// -----

// expected-error @+1 {{argument 0: 'tile.shape' has 3 dimensions; the argument's type is 'memref<?x?x?x64xbf16>'}}
func.func @shape_rank(%q: memref<?x?x?x64xbf16> {tile.tensor = "q", tile.shape = ["batch", "seq_q", "heads"]}) {
  return
}

// -----

// expected-error @+1 {{argument 0: dimension 3 is 64 in the type but "seq_kv" in 'tile.shape'}}
func.func @shape_static_dim(%q: memref<?x?x?x64xbf16> {tile.tensor = "q", tile.shape = ["batch", "seq_q", "heads", "seq_kv"]}) {
  return
}

// -----

// expected-error @+1 {{argument 0: dimension 3 is 64 in the type but 128 : i64 in 'tile.shape'}}
func.func @shape_wrong_constant(%q: memref<?x?x?x64xbf16> {tile.tensor = "q", tile.shape = ["batch", "seq_q", "heads", 128]}) {
  return
}

// -----

// expected-error @+1 {{argument 0: 'tile.tensor' must be a string}}
func.func @tensor_name(%q: memref<?xf32> {tile.tensor = 1}) {
  return
}

// -----

// expected-error @+1 {{argument 0: 'tile.workspace' marks a memref argument}}
func.func @workspace_scalar(%d: index {tile.workspace = "delta"}) {
  return
}

// -----

// expected-error @+1 {{argument 0: 'tile.capture' must be a non-negative capture index}}
func.func @capture_index(%c: memref<?xf32> {tile.capture = -1}) {
  return
}

// -----

// expected-error @+1 {{argument 0: unknown tile argument attribute 'tile.role'}}
func.func @unknown_arg_attr(%c: memref<?xf32> {tile.role = "q"}) {
  return
}

// -----

// Declarations without a body are checked too.
// expected-error @+1 {{argument 0: 'tile.shape' has 2 dimensions; the argument's type is 'memref<?xf32>'}}
func.func private @declared(%q: memref<?xf32> {tile.tensor = "q", tile.shape = ["batch", "seq_q"]})

// -----

func.func @view_group_without_packed(%m: memref<?x?x?x64xbf16>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op a descriptor of group 4 needs the dimension it packs (`packed`)}}
  %v = tile.view %m[%b, %h] keep [1, 3] : memref<?x?x?x64xbf16> -> !tile.desc<?x64xbf16, group 4>
  return
}

// -----

func.func @view_packed_without_group(%m: memref<?x?x?x64xbf16>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op a descriptor of group 1 cannot pack a dimension}}
  %v = tile.view %m[%b, %h] keep [1, 3] packed 2 : memref<?x?x?x64xbf16> -> !tile.desc<?x64xbf16>
  return
}

// -----

func.func @view_packs_kept_dim(%m: memref<?x?x?x64xbf16>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op packs dimension 1, which must be a dimension of the base that is not kept}}
  %v = tile.view %m[%b, %h] keep [1, 3] packed 1 : memref<?x?x?x64xbf16> -> !tile.desc<?x64xbf16, group 4>
  return
}

// -----

func.func @view_packs_too_many(%m: memref<?x?x2x64xbf16>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op packs 4 positions of dimension 2, which has 2}}
  %v = tile.view %m[%b, %h] keep [1, 3] packed 2 : memref<?x?x2x64xbf16> -> !tile.desc<?x64xbf16, group 4>
  return
}

// -----

// expected-error @+1 {{a descriptor's group must be positive, got 0}}
func.func private @desc_group_zero(!tile.desc<?x64xbf16, group 0>)

// -----

//===----------------------------------------------------------------------===//
// Paged views (a KV cache's pool through a block table)
//===----------------------------------------------------------------------===//

// expected-error @+1 {{a paged descriptor is 2-D and not packed}}
func.func private @paged_desc_rank_1(!tile.desc<?xbf16, pages 16>)

// -----

// expected-error @+1 {{expected 'group' or 'pages', got 'rows'}}
func.func private @desc_unknown_keyword(!tile.desc<?x64xbf16, rows 16>)

// -----

func.func @paged_view_dynamic_page(%pool: memref<?x?x?x128xbf16>, %t: memref<?x?xi32>, %l: memref<?xi32>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op pages need a [pages, page_size, heads, cols] base with a static page size, kept [1, 3] and not packed}}
  %v = tile.view %pool[%b, %h] keep [1, 3] pages %t, %l : memref<?x?x?x128xbf16>, memref<?x?xi32>, memref<?xi32> -> !tile.desc<?x128xbf16, pages 16>
  return
}

// -----

func.func @paged_view_other_page_size(%pool: memref<?x16x?x128xbf16>, %t: memref<?x?xi32>, %l: memref<?xi32>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op the descriptor's page size 32 is not the base's 16}}
  %v = tile.view %pool[%b, %h] keep [1, 3] pages %t, %l : memref<?x16x?x128xbf16>, memref<?x?xi32>, memref<?xi32> -> !tile.desc<?x128xbf16, pages 32>
  return
}

// -----

func.func @paged_view_table_i64(%pool: memref<?x16x?x128xbf16>, %t: memref<?x?xi64>, %l: memref<?xi32>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op the block table must be a [sequences, pages] array of i32, got 'memref<?x?xi64>'}}
  %v = tile.view %pool[%b, %h] keep [1, 3] pages %t, %l : memref<?x16x?x128xbf16>, memref<?x?xi64>, memref<?xi32> -> !tile.desc<?x128xbf16, pages 16>
  return
}

// -----

func.func @paged_view_lengths_2d(%pool: memref<?x16x?x128xbf16>, %t: memref<?x?xi32>, %l: memref<?x?xi32>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op the lengths must be a [sequences] array of i32, got 'memref<?x?xi32>'}}
  %v = tile.view %pool[%b, %h] keep [1, 3] pages %t, %l : memref<?x16x?x128xbf16>, memref<?x?xi32>, memref<?x?xi32> -> !tile.desc<?x128xbf16, pages 16>
  return
}

// -----

func.func @paged_desc_without_pages(%pool: memref<?x16x?x128xbf16>, %b: index, %h: index) {
  // expected-error @+1 {{'tile.view' op a paged descriptor needs `pages`}}
  %v = tile.view %pool[%b, %h] keep [1, 3] : memref<?x16x?x128xbf16> -> !tile.desc<?x128xbf16, pages 16>
  return
}

// -----

func.func @store_into_pages(%v: !tile.desc<?x128xbf16, pages 16>, %x: tensor<64x128xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.store' op stores into a paged descriptor (a KV cache's pool is read, never written, by attention)}}
  tile.store %x, %v[%c0, %c0] : tensor<64x128xbf16>, !tile.desc<?x128xbf16, pages 16>
  return
}

// -----

func.func @ragged_offsets_i64(%q: memref<?x?x128xbf16>, %cu: memref<?xi64>, %s: index, %h: index) {
  // expected-error @+1 {{'tile.view' op the sequence offsets must be a [sequences + 1] array of i32, got 'memref<?xi64>'}}
  %v = tile.view %q[%h] keep [0, 2] ragged %cu[%s] : memref<?x?x128xbf16> ragged memref<?xi64> -> !tile.desc<?x128xbf16>
  return
}

// -----

func.func @ragged_block_2d(%cu: memref<?x?xi32>, %pid: index) {
  // expected-error @+1 {{'tile.ragged_block' op the sequence offsets must be a [sequences + 1] array of i32, got 'memref<?x?xi32>'}}
  %s, %j = tile.ragged_block %cu[%pid] block 64 : memref<?x?xi32>
  return
}

// -----

func.func @ragged_block_zero(%cu: memref<?xi32>, %pid: index) {
  // expected-error @+1 {{'tile.ragged_block' op attribute 'block' failed to satisfy constraint}}
  %s, %j = tile.ragged_block %cu[%pid] block 0 : memref<?xi32>
  return
}
