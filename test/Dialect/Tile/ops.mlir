// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s --enable-var-scope

// Round trips of every tile op and of !tile.desc. Where an op's format names
// a descriptor type, the printer drops the `!tile.desc` prefix (`<?x64xbf16>`);
// both spellings parse.

// The descriptor type: rank 1 and 2, static and dynamic sizes, float,
// integer and index elements.
// CHECK-LABEL: func.func private @desc_types
// CHECK-SAME: (!tile.desc<?x64xbf16>, !tile.desc<?x?xf16>, !tile.desc<128x64xf32>, !tile.desc<?xf32>, !tile.desc<16xi32>, !tile.desc<?x4xindex>)
// CHECK-SAME: -> !tile.desc<1xi8>
func.func private @desc_types(!tile.desc<?x64xbf16>, !tile.desc<?x?xf16>,
                              !tile.desc<128x64xf32>, !tile.desc<?xf32>,
                              !tile.desc<16xi32>, !tile.desc<?x4xindex>)
    -> !tile.desc<1xi8>

// -----

// A packed view (GQA rows): the group prints with the type, `packed` with
// the op.
// CHECK-LABEL: func.func @packed_view
// CHECK: tile.view %{{.*}}[%{{.*}}, %{{.*}}] keep [1, 3] packed 2 : memref<?x?x?x64xbf16> -> <?x64xbf16, group 4>
// CHECK: tile.view %{{.*}}[%{{.*}}, %{{.*}}] keep [2] packed 1 : memref<?x?x?xf32> -> <?xf32, group 4>
// CHECK: tile.load %{{.*}} fill 0.000000e+00 : bf16 : <?x64xbf16, group 4> -> tensor<64x64xbf16>
func.func @packed_view(%q: memref<?x?x?x64xbf16>, %lse: memref<?x?x?xf32>,
                       %b: index, %h: index, %r: index) -> tensor<64x64xbf16> {
  %v = tile.view %q[%b, %h] keep [1, 3] packed 2 : memref<?x?x?x64xbf16> -> !tile.desc<?x64xbf16, group 4>
  %l = tile.view %lse[%b, %h] keep [2] packed 1 : memref<?x?x?xf32> -> !tile.desc<?xf32, group 4>
  %c0 = arith.constant 0 : index
  %t = tile.load %v[%r, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16, group 4> -> tensor<64x64xbf16>
  return %t : tensor<64x64xbf16>
}

// -----

// A transposed view (keep in decreasing order) and a masked store.
// CHECK-LABEL: func.func @transposed_view_masked_store
// CHECK: tile.view %{{.*}}[%{{.*}}, %{{.*}}] keep [3, 0] : memref<?x?x?x128xf32> -> <128x?xf32>
// CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}] mask %{{.*}} : tensor<64xf32>, <?xf32>, tensor<64xi1>
// CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] mask %{{.*}} fill 0.000000e+00 : f32 : <128x?xf32>, tensor<128x32xi1> -> tensor<128x32xf32>
func.func @transposed_view_masked_store(%o: memref<?x?x?x128xf32>, %l: !tile.desc<?xf32>,
                                        %q: index, %h: index, %t: tensor<64xf32>,
                                        %m: tensor<64xi1>) {
  %v = tile.view %o[%q, %h] keep [3, 0] : memref<?x?x?x128xf32> -> !tile.desc<128x?xf32>
  tile.store %t, %l[%q] mask %m : tensor<64xf32>, !tile.desc<?xf32>, tensor<64xi1>
  %c0 = arith.constant 0 : index
  %m2 = arith.constant dense<true> : tensor<128x32xi1>
  %ot = tile.load %v[%c0, %q] mask %m2 fill 0.0 : f32 : !tile.desc<128x?xf32>, tensor<128x32xi1> -> tensor<128x32xf32>
  return
}

// -----

// CHECK-LABEL: func.func @program_id
// CHECK-NEXT: [[X:%.+]] = tile.program_id 0
// CHECK-NEXT: [[Y:%.+]] = tile.program_id 1
// CHECK-NEXT: [[Z:%.+]] = tile.program_id 2
// CHECK-NEXT: return [[X]], [[Y]], [[Z]] : index, index, index
func.func @program_id() -> (index, index, index) {
  %x = tile.program_id 0
  %y = tile.program_id 1
  %z = tile.program_id 2
  return %x, %y, %z : index, index, index
}

// -----

// tile.view of a strided 4-D array keeping one or two dimensions, of an
// identity-layout array, and keeping every dimension (no indices); tile.dim.
// CHECK-LABEL: func.func @view_and_dim
// CHECK-SAME: ([[Q:%[^:]+]]: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>, [[L:%[^:]+]]: memref<?x?x?xf32>, [[M:%[^:]+]]: memref<128x64xf16>, [[B:%[^:]+]]: index, [[H:%[^:]+]]: index)
// CHECK-NEXT: [[V:%.+]] = tile.view [[Q]]{{\[}}[[B]], [[H]]{{\]}} keep [1, 3] : memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>> -> <?x64xbf16>
// CHECK-NEXT: [[V1:%.+]] = tile.view [[L]]{{\[}}[[B]], [[H]]{{\]}} keep [2] : memref<?x?x?xf32> -> <?xf32>
// CHECK-NEXT: [[V2:%.+]] = tile.view [[M]][] keep [0, 1] : memref<128x64xf16> -> <128x64xf16>
// CHECK-NEXT: [[V3:%.+]] = tile.view [[Q]]{{\[}}[[B]], [[H]]{{\]}} keep [0, 1] : memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>> -> <?x?xbf16>
// CHECK-NEXT: [[D0:%.+]] = tile.dim [[V]], 0 : <?x64xbf16>
// CHECK-NEXT: [[D1:%.+]] = tile.dim [[V]], 1 : <?x64xbf16>
// CHECK-NEXT: [[D2:%.+]] = tile.dim [[V1]], 0 : <?xf32>
// CHECK-NEXT: [[D3:%.+]] = tile.dim [[V2]], 1 : <128x64xf16>
// CHECK-NEXT: return [[V]], [[V3]], [[D0]], [[D1]], [[D2]], [[D3]] : !tile.desc<?x64xbf16>, !tile.desc<?x?xbf16>, index, index, index, index
func.func @view_and_dim(%q: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>,
                        %lse: memref<?x?x?xf32>, %m: memref<128x64xf16>,
                        %b: index, %h: index)
    -> (!tile.desc<?x64xbf16>, !tile.desc<?x?xbf16>, index, index, index, index) {
  %v = tile.view %q[%b, %h] keep [1, 3]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>> -> !tile.desc<?x64xbf16>
  %v1 = tile.view %lse[%b, %h] keep [2] : memref<?x?x?xf32> -> !tile.desc<?xf32>
  %v2 = tile.view %m[] keep [0, 1] : memref<128x64xf16> -> !tile.desc<128x64xf16>
  // The short spelling of the result type parses too.
  %v3 = tile.view %q[%b, %h] keep [0, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>> -> <?x?xbf16>
  %d0 = tile.dim %v, 0 : !tile.desc<?x64xbf16>
  %d1 = tile.dim %v, 1 : !tile.desc<?x64xbf16>
  %d2 = tile.dim %v1, 0 : !tile.desc<?xf32>
  %d3 = tile.dim %v2, 1 : <128x64xf16>
  return %v, %v3, %d0, %d1, %d2, %d3
      : !tile.desc<?x64xbf16>, !tile.desc<?x?xbf16>, index, index, index, index
}

// -----

// tile.load with float, -inf, integer and index fill values; tile.store of
// 2-D and 1-D tiles.
// CHECK-LABEL: func.func @load_store
// CHECK-SAME: ([[D:%[^:]+]]: !tile.desc<?x64xbf16>, [[D1:%[^:]+]]: !tile.desc<?xf32>, [[DI:%[^:]+]]: !tile.desc<?x?xi32>, [[DX:%[^:]+]]: !tile.desc<16xindex>, [[R:%[^:]+]]: index, [[C:%[^:]+]]: index)
// CHECK-NEXT: [[T:%.+]] = tile.load [[D]]{{\[}}[[R]], [[C]]{{\]}} fill 0.000000e+00 : bf16 : <?x64xbf16> -> tensor<64x64xbf16>
// CHECK-NEXT: [[T1:%.+]] = tile.load [[D1]]{{\[}}[[R]]{{\]}} fill 0xFF800000 : f32 : <?xf32> -> tensor<64xf32>
// CHECK-NEXT: [[TI:%.+]] = tile.load [[DI]]{{\[}}[[R]], [[C]]{{\]}} fill -1 : i32 : <?x?xi32> -> tensor<32x16xi32>
// CHECK-NEXT: [[TX:%.+]] = tile.load [[DX]]{{\[}}[[R]]{{\]}} fill 0 : index : <16xindex> -> tensor<16xindex>
// CHECK-NEXT: tile.store [[T]], [[D]]{{\[}}[[C]], [[R]]{{\]}} : tensor<64x64xbf16>, <?x64xbf16>
// CHECK-NEXT: tile.store [[T1]], [[D1]]{{\[}}[[C]]{{\]}} : tensor<64xf32>, <?xf32>
// CHECK-NEXT: tile.store [[TI]], [[DI]]{{\[}}[[R]], [[R]]{{\]}} : tensor<32x16xi32>, <?x?xi32>
// CHECK-NEXT: return [[TX]] : tensor<16xindex>
func.func @load_store(%d: !tile.desc<?x64xbf16>, %d1: !tile.desc<?xf32>,
                      %di: !tile.desc<?x?xi32>, %dx: !tile.desc<16xindex>,
                      %r: index, %c: index) -> tensor<16xindex> {
  %t = tile.load %d[%r, %c] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %t1 = tile.load %d1[%r] fill 0xFF800000 : f32 : !tile.desc<?xf32> -> tensor<64xf32>
  %ti = tile.load %di[%r, %c] fill -1 : i32 : !tile.desc<?x?xi32> -> tensor<32x16xi32>
  %tx = tile.load %dx[%r] fill 0 : index : !tile.desc<16xindex> -> tensor<16xindex>
  tile.store %t, %d[%c, %r] : tensor<64x64xbf16>, !tile.desc<?x64xbf16>
  tile.store %t1, %d1[%c] : tensor<64xf32>, !tile.desc<?xf32>
  tile.store %ti, %di[%r, %r] : tensor<32x16xi32>, <?x?xi32>
  return %tx : tensor<16xindex>
}

// -----

// tile.dot: Q K^T (transpose_rhs, no accumulator), P V (accumulator), a
// non-square product, and both flags at once.
// CHECK-LABEL: func.func @dot
// CHECK-SAME: ([[Q:%[^:]+]]: tensor<64x128xbf16>, [[K:%[^:]+]]: tensor<32x128xbf16>, [[P:%[^:]+]]: tensor<64x32xbf16>, [[V:%[^:]+]]: tensor<32x64xbf16>, [[ACC:%[^:]+]]: tensor<64x64xf32>, [[A:%[^:]+]]: tensor<16x8xf32>, [[B:%[^:]+]]: tensor<8x4xf32>)
// CHECK-NEXT: [[S:%.+]] = tile.dot [[Q]], [[K]] {transpose_rhs} : tensor<64x128xbf16>, tensor<32x128xbf16> -> tensor<64x32xf32>
// CHECK-NEXT: [[O:%.+]] = tile.dot [[P]], [[V]], [[ACC]] : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// CHECK-NEXT: [[AB:%.+]] = tile.dot [[A]], [[B]] : tensor<16x8xf32>, tensor<8x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: [[QQ:%.+]] = tile.dot [[Q]], [[K]], [[S]] {transpose_rhs} : tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: return [[QQ]], [[O]], [[AB]]
func.func @dot(%q: tensor<64x128xbf16>, %k: tensor<32x128xbf16>,
               %p: tensor<64x32xbf16>, %v: tensor<32x64xbf16>,
               %acc: tensor<64x64xf32>, %a: tensor<16x8xf32>, %b: tensor<8x4xf32>)
    -> (tensor<64x32xf32>, tensor<64x64xf32>, tensor<16x4xf32>) {
  %s = tile.dot %q, %k {transpose_rhs}
      : tensor<64x128xbf16>, tensor<32x128xbf16> -> tensor<64x32xf32>
  %o = tile.dot %p, %v, %acc
      : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %ab = tile.dot %a, %b : tensor<16x8xf32>, tensor<8x4xf32> -> tensor<16x4xf32>
  %qq = tile.dot %q, %k, %s {transpose_rhs}
      : tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
  return %qq, %o, %ab : tensor<64x32xf32>, tensor<64x64xf32>, tensor<16x4xf32>
}

// -----

// A 1-D tile to a scalar.
// CHECK-LABEL: func.func @reduce_all
// CHECK-NEXT: tile.reduce_all sum %{{.*}} : tensor<64xf32> -> f32
// CHECK-NEXT: tile.reduce_all max %{{.*}} : tensor<64xf32> -> f32
func.func @reduce_all(%x: tensor<64xf32>) -> (f32, f32) {
  %s = tile.reduce_all sum %x : tensor<64xf32> -> f32
  %m = tile.reduce_all max %x : tensor<64xf32> -> f32
  return %s, %m : f32, f32
}

// -----

// Row and column reductions, broadcasts along either dimension.
// CHECK-LABEL: func.func @reduce_broadcast
// CHECK-SAME: ([[X:%[^:]+]]: tensor<64x32xf32>, [[H:%[^:]+]]: tensor<8x4xf16>)
// CHECK-NEXT: [[MX:%.+]] = tile.reduce max [[X]] dim 1 : tensor<64x32xf32> -> tensor<64xf32>
// CHECK-NEXT: [[SM:%.+]] = tile.reduce sum [[X]] dim 0 : tensor<64x32xf32> -> tensor<32xf32>
// CHECK-NEXT: [[HS:%.+]] = tile.reduce sum [[H]] dim 1 : tensor<8x4xf16> -> tensor<8xf16>
// CHECK-NEXT: [[BR:%.+]] = tile.broadcast [[MX]] dim 1 : tensor<64xf32> -> tensor<64x32xf32>
// CHECK-NEXT: [[BC:%.+]] = tile.broadcast [[SM]] dim 0 : tensor<32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: [[BH:%.+]] = tile.broadcast [[HS]] dim 1 : tensor<8xf16> -> tensor<8x5xf16>
// CHECK-NEXT: return [[BR]], [[BC]], [[BH]]
func.func @reduce_broadcast(%x: tensor<64x32xf32>, %h: tensor<8x4xf16>)
    -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<8x5xf16>) {
  %mx = tile.reduce max %x dim 1 : tensor<64x32xf32> -> tensor<64xf32>
  %sm = tile.reduce sum %x dim 0 : tensor<64x32xf32> -> tensor<32xf32>
  %hs = tile.reduce sum %h dim 1 : tensor<8x4xf16> -> tensor<8xf16>
  %br = tile.broadcast %mx dim 1 : tensor<64xf32> -> tensor<64x32xf32>
  %bc = tile.broadcast %sm dim 0 : tensor<32xf32> -> tensor<64x32xf32>
  %bh = tile.broadcast %hs dim 1 : tensor<8xf16> -> tensor<8x5xf16>
  return %br, %bc, %bh : tensor<64x32xf32>, tensor<64x32xf32>, tensor<8x5xf16>
}

// -----

// tile.splat of float, integer, i1 and index scalars (1-D and 2-D);
// tile.iota along each dimension, and of a 1-D tile.
// CHECK-LABEL: func.func @splat_iota
// CHECK-SAME: ([[F:%[^:]+]]: f32, [[I:%[^:]+]]: i32, [[P:%[^:]+]]: i1, [[X:%[^:]+]]: index)
// CHECK-NEXT: [[SF:%.+]] = tile.splat [[F]] : f32 -> tensor<64x64xf32>
// CHECK-NEXT: [[SF1:%.+]] = tile.splat [[F]] : f32 -> tensor<64xf32>
// CHECK-NEXT: [[SI:%.+]] = tile.splat [[I]] : i32 -> tensor<16x8xi32>
// CHECK-NEXT: [[SP:%.+]] = tile.splat [[P]] : i1 -> tensor<4x4xi1>
// CHECK-NEXT: [[SX:%.+]] = tile.splat [[X]] : index -> tensor<64x64xindex>
// CHECK-NEXT: [[IQ:%.+]] = tile.iota dim 0 : tensor<64x64xindex>
// CHECK-NEXT: [[IK:%.+]] = tile.iota dim 1 : tensor<64x64xindex>
// CHECK-NEXT: [[I1:%.+]] = tile.iota dim 0 : tensor<128xindex>
// CHECK-NEXT: [[Q:%.+]] = arith.addi [[IQ]], [[SX]] : tensor<64x64xindex>
// CHECK-NEXT: return [[SF]], [[SF1]], [[SI]], [[SP]], [[Q]], [[IK]], [[I1]]
func.func @splat_iota(%f: f32, %i: i32, %p: i1, %x: index)
    -> (tensor<64x64xf32>, tensor<64xf32>, tensor<16x8xi32>, tensor<4x4xi1>,
        tensor<64x64xindex>, tensor<64x64xindex>, tensor<128xindex>) {
  %sf = tile.splat %f : f32 -> tensor<64x64xf32>
  %sf1 = tile.splat %f : f32 -> tensor<64xf32>
  %si = tile.splat %i : i32 -> tensor<16x8xi32>
  %sp = tile.splat %p : i1 -> tensor<4x4xi1>
  %sx = tile.splat %x : index -> tensor<64x64xindex>
  %iq = tile.iota dim 0 : tensor<64x64xindex>
  %ik = tile.iota dim 1 : tensor<64x64xindex>
  %i1 = tile.iota dim 0 : tensor<128xindex>
  %q = arith.addi %iq, %sx : tensor<64x64xindex>
  return %sf, %sf1, %si, %sp, %q, %ik, %i1
      : tensor<64x64xf32>, tensor<64xf32>, tensor<16x8xi32>, tensor<4x4xi1>,
        tensor<64x64xindex>, tensor<64x64xindex>, tensor<128xindex>
}

// -----

// tile.gather from 1-D, 2-D and static-shaped captures, with 2-D and 1-D
// index tiles.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: ([[SL:%[^:]+]]: memref<?xf32>, [[DOC:%[^:]+]]: memref<?x?xi32>, [[TAB:%[^:]+]]: memref<8x16xf16>, [[B:%[^:]+]]: index)
// CHECK-NEXT: [[KV:%.+]] = tile.iota dim 1 : tensor<64x64xindex>
// CHECK-NEXT: [[BS:%.+]] = tile.splat [[B]] : index -> tensor<64x64xindex>
// CHECK-NEXT: [[G1:%.+]] = tile.gather [[SL]]{{\[}}[[KV]]{{\]}} : memref<?xf32>, tensor<64x64xindex> -> tensor<64x64xf32>
// CHECK-NEXT: [[G2:%.+]] = tile.gather [[DOC]]{{\[}}[[BS]], [[KV]]{{\]}} : memref<?x?xi32>, tensor<64x64xindex>, tensor<64x64xindex> -> tensor<64x64xi32>
// CHECK-NEXT: [[R:%.+]] = tile.iota dim 0 : tensor<16xindex>
// CHECK-NEXT: [[G3:%.+]] = tile.gather [[TAB]]{{\[}}[[R]], [[R]]{{\]}} : memref<8x16xf16>, tensor<16xindex>, tensor<16xindex> -> tensor<16xf16>
// CHECK-NEXT: return [[G1]], [[G2]], [[G3]]
func.func @gather(%slopes: memref<?xf32>, %doc: memref<?x?xi32>,
                  %table: memref<8x16xf16>, %b: index)
    -> (tensor<64x64xf32>, tensor<64x64xi32>, tensor<16xf16>) {
  %kv = tile.iota dim 1 : tensor<64x64xindex>
  %bs = tile.splat %b : index -> tensor<64x64xindex>
  %g1 = tile.gather %slopes[%kv] : memref<?xf32>, tensor<64x64xindex> -> tensor<64x64xf32>
  %g2 = tile.gather %doc[%bs, %kv]
      : memref<?x?xi32>, tensor<64x64xindex>, tensor<64x64xindex> -> tensor<64x64xi32>
  %r = tile.iota dim 0 : tensor<16xindex>
  %g3 = tile.gather %table[%r, %r] : memref<8x16xf16>, tensor<16xindex>, tensor<16xindex> -> tensor<16xf16>
  return %g1, %g2, %g3 : tensor<64x64xf32>, tensor<64x64xi32>, tensor<16xf16>
}

// -----

// A miniature forward kernel: every op together inside scf.for, as the
// attn -> tile lowering produces it.
// CHECK-LABEL: func.func @kernel
// CHECK-SAME: ([[QM:%[^:]+]]: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>, [[KM:%[^:]+]]: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>, [[OM:%[^:]+]]: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>)
// CHECK-SAME: attributes {tile.block_m = 64 : i64, tile.block_n = 64 : i64, tile.kernel}
// CHECK: [[M:%.+]] = tile.program_id 0
// CHECK: [[H:%.+]] = tile.program_id 1
// CHECK: [[B:%.+]] = tile.program_id 2
// CHECK: [[QD:%.+]] = tile.view [[QM]]{{\[}}[[B]], [[H]]{{\]}} keep [1, 3] : {{.*}} -> <?x64xbf16>
// CHECK: [[KD:%.+]] = tile.view [[KM]]{{\[}}[[B]], [[H]]{{\]}} keep [1, 3] : {{.*}} -> <?x64xbf16>
// CHECK: [[OD:%.+]] = tile.view [[OM]]{{\[}}[[B]], [[H]]{{\]}} keep [1, 3] : {{.*}} -> <?x64xbf16>
// CHECK: [[LK:%.+]] = tile.dim [[KD]], 0 : <?x64xbf16>
// CHECK: [[QT:%.+]] = tile.load [[QD]]{{\[}}[[Q0:%[a-zA-Z0-9_]+]], [[C0:%[a-zA-Z0-9_]+]]{{\]}} fill 0.000000e+00 : bf16 : <?x64xbf16> -> tensor<64x64xbf16>
// CHECK: [[ACC0:%.+]] = tile.splat {{%.+}} : f32 -> tensor<64x64xf32>
// CHECK: [[RES:%.+]] = scf.for [[K0:%.+]] = [[C0]] to [[LK]] step {{%.+}} iter_args([[ACC:%.+]] = [[ACC0]]) -> (tensor<64x64xf32>) {
// CHECK:   [[KT:%.+]] = tile.load [[KD]]{{\[}}[[K0]], [[C0]]{{\]}} fill 0.000000e+00 : bf16 : <?x64xbf16> -> tensor<64x64xbf16>
// CHECK:   [[S:%.+]] = tile.dot [[QT]], [[KT]] {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
// CHECK:   [[MX:%.+]] = tile.reduce max [[S]] dim 1 : tensor<64x64xf32> -> tensor<64xf32>
// CHECK:   [[MB:%.+]] = tile.broadcast [[MX]] dim 1 : tensor<64xf32> -> tensor<64x64xf32>
// CHECK:   [[SH:%.+]] = arith.subf [[S]], [[MB]] : tensor<64x64xf32>
// CHECK:   [[P:%.+]] = math.exp2 [[SH]] : tensor<64x64xf32>
// CHECK:   [[PB:%.+]] = arith.truncf [[P]] : tensor<64x64xf32> to tensor<64x64xbf16>
// CHECK:   [[NEW:%.+]] = tile.dot [[PB]], [[KT]], [[ACC]] : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// CHECK:   scf.yield [[NEW]] : tensor<64x64xf32>
// CHECK: }
// CHECK: [[OT:%.+]] = arith.truncf [[RES]] : tensor<64x64xf32> to tensor<64x64xbf16>
// CHECK: tile.store [[OT]], [[OD]]{{\[}}[[Q0]], [[C0]]{{\]}} : tensor<64x64xbf16>, <?x64xbf16>
func.func @kernel(%Q: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>,
                  %K: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>,
                  %O: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %m = tile.program_id 0
  %h = tile.program_id 1
  %b = tile.program_id 2
  %qd = tile.view %Q[%b, %h] keep [1, 3]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>> -> !tile.desc<?x64xbf16>
  %kd = tile.view %K[%b, %h] keep [1, 3]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>> -> !tile.desc<?x64xbf16>
  %od = tile.view %O[%b, %h] keep [1, 3]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>> -> !tile.desc<?x64xbf16>
  %lk = tile.dim %kd, 0 : !tile.desc<?x64xbf16>
  %q0 = arith.muli %m, %c64 : index
  %qt = tile.load %qd[%q0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %acc0 = tile.splat %zero : f32 -> tensor<64x64xf32>
  %res = scf.for %k0 = %c0 to %lk step %c64 iter_args(%acc = %acc0) -> (tensor<64x64xf32>) {
    %kt = tile.load %kd[%k0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %qt, %kt {transpose_rhs}
        : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %mx = tile.reduce max %s dim 1 : tensor<64x64xf32> -> tensor<64xf32>
    %mb = tile.broadcast %mx dim 1 : tensor<64xf32> -> tensor<64x64xf32>
    %sh = arith.subf %s, %mb : tensor<64x64xf32>
    %p = math.exp2 %sh : tensor<64x64xf32>
    %pb = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %new = tile.dot %pb, %kt, %acc
        : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %new : tensor<64x64xf32>
  }
  %ot = arith.truncf %res : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %ot, %od[%q0, %c0] : tensor<64x64xbf16>, !tile.desc<?x64xbf16>
  return
}

// -----

// CHECK-LABEL: func.func @atomic_add(
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<64x32xf32>, %[[D:[a-z0-9]+]]: !tile.desc<?x32xf32>, %[[R:[a-z0-9]+]]: index
// CHECK: tile.atomic_add %[[T]], %[[D]][%[[R]], %[[R]]] : tensor<64x32xf32>, <?x32xf32>
func.func @atomic_add(%t: tensor<64x32xf32>, %d: !tile.desc<?x32xf32>, %r: index) {
  tile.atomic_add %t, %d[%r, %r] : tensor<64x32xf32>, !tile.desc<?x32xf32>
  return
}

// -----

// A paged view (a KV cache's pool through a block table): the page size
// prints with the type, `pages` and the table and lengths with the op.
// CHECK-LABEL: func.func @paged_view
// CHECK: tile.view %{{.*}}[%{{.*}}, %{{.*}}] keep [1, 3] pages %{{.*}}, %{{.*}} : memref<?x16x?x128xbf16>, memref<?x?xi32>, memref<?xi32> -> <?x128xbf16, pages 16>
// CHECK: tile.dim %{{.*}}, 0 : <?x128xbf16, pages 16>
// CHECK: tile.load %{{.*}} fill 0.000000e+00 : bf16 : <?x128xbf16, pages 16> -> tensor<64x128xbf16>
func.func @paged_view(%pool: memref<?x16x?x128xbf16>, %table: memref<?x?xi32>,
                      %lens: memref<?xi32>, %b: index, %h: index,
                      %r: index) -> (index, tensor<64x128xbf16>) {
  %v = tile.view %pool[%b, %h] keep [1, 3] pages %table, %lens : memref<?x16x?x128xbf16>, memref<?x?xi32>, memref<?xi32> -> !tile.desc<?x128xbf16, pages 16>
  %n = tile.dim %v, 0 : !tile.desc<?x128xbf16, pages 16>
  %c0 = arith.constant 0 : index
  %t = tile.load %v[%r, %c0] fill 0.0 : bf16 : !tile.desc<?x128xbf16, pages 16> -> tensor<64x128xbf16>
  return %n, %t : index, tensor<64x128xbf16>
}

// -----

// A ragged view (one sequence of a packed varlen batch), the block a
// program of a varlen grid owns, and the view's first row in the array.
// CHECK-LABEL: func.func @ragged_view
// CHECK: %[[S:.*]], %[[J:.*]] = tile.ragged_block %{{.*}}[%{{.*}}] block 128 : memref<?xi32>
// CHECK: %[[V:.*]] = tile.view %{{.*}}[%{{.*}}] keep [0, 2] ragged %{{.*}}[%[[S]]] : memref<?x?x128xbf16> ragged memref<?xi32> -> <?x128xbf16>
// CHECK: tile.view %{{.*}}[%{{.*}}] keep [1] ragged %{{.*}}[%[[S]]] : memref<?x?xf32> ragged memref<?xi32> -> <?xf32>
// CHECK: tile.first_row %[[V]] : <?x128xbf16>
func.func @ragged_view(%q: memref<?x?x128xbf16>, %lse: memref<?x?xf32>,
                       %cu: memref<?xi32>, %pid: index,
                       %h: index) -> (index, index) {
  %s, %j = tile.ragged_block %cu[%pid] block 128 : memref<?xi32>
  %v = tile.view %q[%h] keep [0, 2] ragged %cu[%s] : memref<?x?x128xbf16> ragged memref<?xi32> -> !tile.desc<?x128xbf16>
  %r = tile.view %lse[%h] keep [1] ragged %cu[%s] : memref<?x?xf32> ragged memref<?xi32> -> !tile.desc<?xf32>
  %first = tile.first_row %v : !tile.desc<?x128xbf16>
  return %first, %j : index, index
}

// -----

// tile.philox in both orientations, 16-bit (the default, not printed) and
// 8-bit.
// CHECK-LABEL: func.func @philox
// CHECK-SAME: ([[S:%[^:]+]]: i64, [[O:%[^:]+]]: i64, [[B:%[^:]+]]: index, [[H:%[^:]+]]: index, [[Q:%[^:]+]]: index, [[K:%[^:]+]]: index)
// CHECK-NEXT: tile.philox [[S]], [[O]], [[B]], [[H]], [[Q]], [[K]] : tensor<64x32xi32>
// CHECK-NEXT: tile.philox [[S]], [[O]], [[B]], [[H]], [[Q]], [[K]] {keys_by_queries} : tensor<32x64xi32>
// CHECK-NEXT: tile.philox [[S]], [[O]], [[B]], [[H]], [[Q]], [[K]] {bits = 8 : i64, keys_by_queries} : tensor<32x64xi32>
// CHECK-NEXT: tile.philox [[S]], [[O]], [[B]], [[H]], [[Q]], [[K]] : tensor<64x32xi32>
func.func @philox(%seed: i64, %offset: i64, %b: index, %h: index, %q0: index,
                  %kv0: index) -> (tensor<64x32xi32>, tensor<32x64xi32>,
                                   tensor<32x64xi32>, tensor<64x32xi32>) {
  %u = tile.philox %seed, %offset, %b, %h, %q0, %kv0 : tensor<64x32xi32>
  %t = tile.philox %seed, %offset, %b, %h, %q0, %kv0 {keys_by_queries} : tensor<32x64xi32>
  %v = tile.philox %seed, %offset, %b, %h, %q0, %kv0 {keys_by_queries, bits = 8} : tensor<32x64xi32>
  %w = tile.philox %seed, %offset, %b, %h, %q0, %kv0 {bits = 16} : tensor<64x32xi32>
  return %u, %t, %v, %w : tensor<64x32xi32>, tensor<32x64xi32>, tensor<32x64xi32>, tensor<64x32xi32>
}

// -----

// tile.scatter_add into a 2-D capture gradient.
// CHECK-LABEL: func.func @scatter_add
// CHECK-SAME: ([[V:%[^:]+]]: tensor<64x64xf32>, [[G:%[^:]+]]: memref<?x?xf32>, [[H:%[^:]+]]: tensor<64x64xindex>, [[B:%[^:]+]]: tensor<64x64xindex>)
// CHECK-NEXT: tile.scatter_add [[V]], [[G]][[[H]], [[B]]] : tensor<64x64xf32>, memref<?x?xf32>, tensor<64x64xindex>, tensor<64x64xindex>
func.func @scatter_add(%v: tensor<64x64xf32>, %g: memref<?x?xf32>, %h: tensor<64x64xindex>,
                       %b: tensor<64x64xindex>) {
  tile.scatter_add %v, %g[%h, %b] : tensor<64x64xf32>, memref<?x?xf32>, tensor<64x64xindex>, tensor<64x64xindex>
  return
}

// -----

// tile.scatter_add's fixed-point form: an i64 accumulator with one more
// dimension, of the three parts.
// CHECK-LABEL: func.func @scatter_add_fixed_point
// CHECK-NEXT: tile.scatter_add {{%.+}}, {{%.+}}[{{%.+}}] {fixed_point} : tensor<64x64xf32>, memref<?x3xi64>, tensor<64x64xindex>
func.func @scatter_add_fixed_point(%v: tensor<64x64xf32>, %g: memref<?x3xi64>, %h: tensor<64x64xindex>) {
  tile.scatter_add %v, %g[%h] {fixed_point} : tensor<64x64xf32>, memref<?x3xi64>, tensor<64x64xindex>
  return
}
