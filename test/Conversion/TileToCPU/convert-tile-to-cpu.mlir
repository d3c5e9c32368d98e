// RUN: kiln-opt %s -split-input-file -convert-tile-to-cpu | FileCheck %s --enable-var-scope

// Program ids become trailing arguments; a C-callable launcher walks the grid
// with axis 0 innermost.
// CHECK-LABEL: func.func private @copy_rows(
// CHECK-SAME: %[[SRC:[a-z0-9]+]]: memref<?x?x8xf32, strided<[?, ?, ?], offset: ?>>, %[[DST:[a-z0-9]+]]: memref<?x?x8xf32, strided<[?, ?, ?], offset: ?>>, %[[X:[a-z0-9]+]]: index, %[[Y:[a-z0-9]+]]: index, %[[Z:[a-z0-9]+]]: index)
// CHECK: %[[ROW0:.*]] = arith.muli %[[X]], %{{.*}} : index
// CHECK: %[[SV:.*]] = memref.subview %[[SRC]][%[[Y]], 0, 0] [1, %{{.*}}, 8] [1, 1, 1] : {{.*}} to memref<?x8xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[DV:.*]] = memref.subview %[[DST]][%[[Y]], 0, 0]
// Loads read `fill` outside the descriptor.
// CHECK: %[[T:.*]] = tensor.generate  {
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK:   %[[R:.*]] = arith.addi %[[ROW0]], %[[I]] : index
// CHECK:   arith.cmpi ult, %[[R]], %{{.*}} : index
// CHECK:   scf.if %{{.*}} -> (f32) {
// CHECK:     memref.load %[[SV]][%[[R]], %{{.*}}]
// CHECK:   } else {
// CHECK:     arith.constant -1.000000e+00 : f32
// CHECK: } : tensor<4x8xf32>
// Stores drop what falls outside.
// CHECK: scf.for %[[SI:.*]] = %{{.*}} to %{{.*}} step
// CHECK:   scf.for %[[SJ:.*]] = %{{.*}} to %{{.*}} step
// CHECK:     scf.if
// CHECK:       %[[V:.*]] = tensor.extract %[[T]][%[[SI]], %[[SJ]]] : tensor<4x8xf32>
// CHECK:       memref.store %[[V]], %[[DV]]
// CHECK-NOT: tile.

// CHECK-LABEL: func.func @copy_rows_grid(
// CHECK-SAME: %[[GX:[a-z0-9]+]]: index, %[[GY:[a-z0-9]+]]: index, %[[GZ:[a-z0-9]+]]: index)
// CHECK-SAME: llvm.emit_c_interface
// CHECK: scf.for %[[IZ:.*]] = %{{.*}} to %[[GZ]]
// CHECK:   scf.for %[[IY:.*]] = %{{.*}} to %[[GY]]
// CHECK:     scf.for %[[IX:.*]] = %{{.*}} to %[[GX]]
// CHECK:       func.call @copy_rows(%{{.*}}, %{{.*}}, %[[IX]], %[[IY]], %[[IZ]])
func.func @copy_rows(%src: memref<?x?x8xf32, strided<[?, ?, ?], offset: ?>>,
                     %dst: memref<?x?x8xf32, strided<[?, ?, ?], offset: ?>>)
    attributes {tile.kernel} {
  %pid = tile.program_id 0
  %batch = tile.program_id 1
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  %row0 = arith.muli %pid, %c4 : index
  %s = tile.view %src[%batch] keep [1, 2] : memref<?x?x8xf32, strided<[?, ?, ?], offset: ?>> -> !tile.desc<?x8xf32>
  %d = tile.view %dst[%batch] keep [1, 2] : memref<?x?x8xf32, strided<[?, ?, ?], offset: ?>> -> !tile.desc<?x8xf32>
  %t = tile.load %s[%row0, %c0] fill -1.0 : f32 : !tile.desc<?x8xf32> -> tensor<4x8xf32>
  tile.store %t, %d[%row0, %c0] : tensor<4x8xf32>, !tile.desc<?x8xf32>
  return
}

// -----

// Compute ops become linalg: dot widens bf16 inputs in its body, reductions
// start from their identity, broadcasts and splats are linalg ops too.
// CHECK-DAG: #[[$LHS:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$RHST:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @compute(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<4x8xbf16>, %[[B:[a-z0-9]+]]: tensor<2x8xbf16>, %[[X:[a-z0-9]+]]: f32)
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHST]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[A]], %[[B]] : tensor<4x8xbf16>, tensor<2x8xbf16>) outs(%[[ZERO]] : tensor<4x2xf32>)
// CHECK:   arith.extf %{{.*}} : bf16 to f32
// CHECK:   arith.extf %{{.*}} : bf16 to f32
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[NI:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MI:.*]] = linalg.fill ins(%[[NI]] : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[M:.*]] = linalg.reduce ins(%[[S]] : tensor<4x2xf32>) outs(%[[MI]] : tensor<4xf32>) dimensions = [1]
// CHECK:   arith.maximumf
// CHECK: linalg.reduce ins(%[[S]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<4xf32>) dimensions = [1]
// CHECK:   arith.addf
// CHECK: linalg.broadcast ins(%[[M]] : tensor<4xf32>) outs(%{{.*}} : tensor<4x2xf32>) dimensions = [1]
// CHECK: linalg.fill ins(%[[X]] : f32) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK: tensor.generate
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK:   tensor.yield %[[J]] : index
// CHECK-NOT: tile.
func.func @compute(%a: tensor<4x8xbf16>, %b: tensor<2x8xbf16>, %x: f32)
    -> (tensor<4xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xindex>) {
  %s = tile.dot %a, %b {transpose_rhs} : tensor<4x8xbf16>, tensor<2x8xbf16> -> tensor<4x2xf32>
  %m = tile.reduce max %s dim 1 : tensor<4x2xf32> -> tensor<4xf32>
  %l = tile.reduce sum %s dim 1 : tensor<4x2xf32> -> tensor<4xf32>
  %mb = tile.broadcast %m dim 1 : tensor<4xf32> -> tensor<4x2xf32>
  %xs = tile.splat %x : f32 -> tensor<4x2xf32>
  %cols = tile.iota dim 1 : tensor<4x2xindex>
  return %l, %mb, %xs, %cols : tensor<4xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xindex>
}

// -----

// A gather reads the capture at each element's indices.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %[[T:[a-z0-9]+]]: memref<?x?xf32>, %[[R:[a-z0-9]+]]: tensor<2x2xindex>, %[[C:[a-z0-9]+]]: tensor<2x2xindex>)
// CHECK: tensor.generate
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK:   %[[RI:.*]] = tensor.extract %[[R]][%[[I]], %[[J]]]
// CHECK:   %[[CI:.*]] = tensor.extract %[[C]][%[[I]], %[[J]]]
// CHECK:   %[[V:.*]] = memref.load %[[T]][%[[RI]], %[[CI]]] : memref<?x?xf32>
// CHECK:   tensor.yield %[[V]] : f32
func.func @gather(%table: memref<?x?xf32>, %rows: tensor<2x2xindex>, %cols: tensor<2x2xindex>) -> tensor<2x2xf32> {
  %g = tile.gather %table[%rows, %cols] : memref<?x?xf32>, tensor<2x2xindex>, tensor<2x2xindex> -> tensor<2x2xf32>
  return %g : tensor<2x2xf32>
}

// -----

// Programs run one at a time on the CPU: an atomic add is read-add-write,
// guarded like a store.
// CHECK-LABEL: func.func @accumulate(
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<4x8xf32>, %[[M:[a-z0-9]+]]: memref<?x8xf32, strided<[?, ?], offset: ?>>, %[[R:[a-z0-9]+]]: index)
// CHECK: scf.for %[[I:.*]] =
// CHECK:   scf.for %[[J:.*]] =
// CHECK:     scf.if
// CHECK:       %[[V:.*]] = tensor.extract %[[T]][%[[I]], %[[J]]]
// CHECK:       %[[OLD:.*]] = memref.load %{{.*}}
// CHECK:       %[[SUM:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK:       memref.store %[[SUM]], %{{.*}}
func.func @accumulate(%t: tensor<4x8xf32>, %m: memref<?x8xf32, strided<[?, ?], offset: ?>>, %r: index) {
  %c0 = arith.constant 0 : index
  %d = tile.view %m[] keep [0, 1] : memref<?x8xf32, strided<[?, ?], offset: ?>> -> !tile.desc<?x8xf32>
  tile.atomic_add %t, %d[%r, %c0] : tensor<4x8xf32>, !tile.desc<?x8xf32>
  return
}

// -----

// tile.philox: each element's own Philox4x32-10 call, 10 rounds of two
// 32 x 32 -> 64-bit products, then the element's 16-bit half. Keys by
// queries, rows are keys: the row index adds to kv_start.
// CHECK-LABEL: func.func @philox(
// CHECK-SAME: %[[S:[a-z0-9]+]]: i64, %[[O:[a-z0-9]+]]: i64, %[[B:[a-z0-9]+]]: index, %[[H:[a-z0-9]+]]: index, %[[Q:[a-z0-9]+]]: index, %[[K:[a-z0-9]+]]: index)
// CHECK: tensor.generate
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK:   arith.addi %[[Q]], %[[I]] : index
// CHECK:   arith.addi %[[K]], %[[J]] : index
// CHECK-COUNT-20: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK:   tensor.yield %{{.+}} : i32
// CHECK: tensor.generate
// CHECK: ^bb0(%[[I2:.*]]: index, %[[J2:.*]]: index):
// CHECK:   arith.addi %[[K]], %[[I2]] : index
// CHECK:   arith.addi %[[Q]], %[[J2]] : index
// CHECK-NOT: tile.
func.func @philox(%seed: i64, %offset: i64, %b: index, %h: index, %q0: index,
                  %kv0: index) -> (tensor<16x16xi32>, tensor<16x16xi32>) {
  %u = tile.philox %seed, %offset, %b, %h, %q0, %kv0 : tensor<16x16xi32>
  %t = tile.philox %seed, %offset, %b, %h, %q0, %kv0 {keys_by_queries} : tensor<16x16xi32>
  return %u, %t : tensor<16x16xi32>, tensor<16x16xi32>
}

// -----

// tile.scatter_add: a loop nest adding each element at its indices (programs
// run one after another on the CPU: a plain read-add-write).
// CHECK-LABEL: func.func @scatter_add(
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<4x2xf32>, %[[G:[a-z0-9]+]]: memref<?xf32>, %[[I:[a-z0-9]+]]: tensor<4x2xindex>)
// CHECK: scf.for %[[R:.*]] =
// CHECK: scf.for %[[C:.*]] =
// CHECK: %[[AT:.*]] = tensor.extract %[[I]][%[[R]], %[[C]]]
// CHECK: %[[X:.*]] = tensor.extract %[[V]][%[[R]], %[[C]]]
// CHECK: %[[OLD:.*]] = memref.load %[[G]][%[[AT]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[X]]
// CHECK: memref.store %[[NEW]], %[[G]][%[[AT]]]
// CHECK-NOT: tile.
func.func @scatter_add(%v: tensor<4x2xf32>, %g: memref<?xf32>, %i: tensor<4x2xindex>) {
  tile.scatter_add %v, %g[%i] : tensor<4x2xf32>, memref<?xf32>, tensor<4x2xindex>
  return
}

// The fixed-point form adds three integers per element: round(x 2^16), the
// rest in units of 2^-40, and 1 when x is out of range (zeros added then).
// CHECK-LABEL: func.func @scatter_add_fixed_point(
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<4x2xf32>, %[[G:[a-z0-9]+]]: memref<?x3xi64>, %[[I:[a-z0-9]+]]: tensor<4x2xindex>)
// CHECK: %[[X:.*]] = tensor.extract %[[V]]
// CHECK: %[[W:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK: %[[ABS:.*]] = math.absf %[[W]] : f64
// CHECK: %[[LIMIT:.*]] = arith.constant 0x42D0000000000000 : f64
// CHECK: %[[OK:.*]] = arith.cmpf olt, %[[ABS]], %[[LIMIT]] : f64
// CHECK: %[[SCALE:.*]] = arith.constant 6.553600e+04 : f64
// CHECK: %[[S:.*]] = arith.mulf %[[W]], %[[SCALE]] : f64
// CHECK: %[[HI:.*]] = math.roundeven %[[S]] : f64
// CHECK: %[[D:.*]] = arith.subf %[[S]], %[[HI]] : f64
// CHECK: %[[REST:.*]] = arith.constant 0x4170000000000000 : f64
// CHECK: %[[L:.*]] = arith.mulf %[[D]], %[[REST]] : f64
// CHECK: %[[LO:.*]] = math.roundeven %[[L]] : f64
// CHECK: %[[BAD:.*]] = arith.xori %[[OK]]
// CHECK: %[[FLAG:.*]] = arith.extui %[[BAD]] : i1 to i64
// CHECK: %[[HIK:.*]] = arith.select %[[OK]], %[[HI]]
// CHECK: %[[HII:.*]] = arith.fptosi %[[HIK]] : f64 to i64
// CHECK: %[[LOK:.*]] = arith.select %[[OK]], %[[LO]]
// CHECK: %[[LOI:.*]] = arith.fptosi %[[LOK]] : f64 to i64
// CHECK: memref.load %[[G]][%[[AT:.*]], %{{.*}}]
// CHECK: arith.addi {{.*}}, %[[HII]] : i64
// CHECK: arith.addi {{.*}}, %[[LOI]] : i64
// CHECK: arith.addi {{.*}}, %[[FLAG]] : i64
// CHECK-NOT: arith.addf
func.func @scatter_add_fixed_point(%v: tensor<4x2xf32>, %g: memref<?x3xi64>, %i: tensor<4x2xindex>) {
  tile.scatter_add %v, %g[%i] {fixed_point} : tensor<4x2xf32>, memref<?x3xi64>, tensor<4x2xindex>
  return
}
