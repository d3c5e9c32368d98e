// RUN: kiln-opt %s -split-input-file -tile-row-terms-after-max | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tile-row-terms-after-max | kiln-opt -split-input-file | FileCheck %s --check-prefix=VALID
// RUN: kiln-opt %s -split-input-file -tile-row-terms-after-max="min-head-dim=128" | FileCheck %s --check-prefix=MINROWS

// ALiBi's unmasked step after tile-reassociate-low-rank: the scaled score
// plus (the row's term plus the column's). The row's term (a splat minus
// float(iota dim 0), times a splat) is built again over the rows, added to
// the maximum of the rest and subtracted from the exponent's maximum.

// CHECK-LABEL: func.func @unmasked
// CHECK-SAME: (%[[S:.*]]: tensor<4x8xf32>, %[[D:.*]]: f32, %[[SLOPE:.*]]: f32, %[[COL:.*]]: tensor<4x8xf32>, %[[OLD:.*]]: tensor<4xf32>)
// CHECK: %[[D1:.*]] = tile.splat %[[D]] : f32 -> tensor<4xf32>
// CHECK: %[[I1:.*]] = tile.iota dim 0 : tensor<4xindex>
// CHECK: %[[C1:.*]] = arith.index_cast %[[I1]] : tensor<4xindex> to tensor<4xi64>
// CHECK: %[[F1:.*]] = arith.sitofp %[[C1]] : tensor<4xi64> to tensor<4xf32>
// CHECK: %[[DIFF1:.*]] = arith.subf %[[D1]], %[[F1]] fastmath<contract> : tensor<4xf32>
// CHECK: %[[SL1:.*]] = tile.splat %[[SLOPE]] : f32 -> tensor<4xf32>
// CHECK: %[[ROW1:.*]] = arith.mulf %[[DIFF1]], %[[SL1]] : tensor<4xf32>
// CHECK: %[[REST:.*]] = arith.addf %{{.*}}, %[[COL]] fastmath<contract> : tensor<4x8xf32>
// CHECK: %[[MAX:.*]] = tile.reduce max %[[REST]] dim 1 : tensor<4x8xf32> -> tensor<4xf32>
// CHECK: %[[MAXR:.*]] = arith.addf %[[MAX]], %[[ROW1]] fastmath<contract> : tensor<4xf32>
// CHECK: %[[M:.*]] = arith.maximumf %[[OLD]], %[[MAXR]]
// CHECK: %[[SHIFT:.*]] = arith.subf %[[M]], %[[ROW1]] fastmath<contract> : tensor<4xf32>
// CHECK: %[[B:.*]] = tile.broadcast %[[SHIFT]] dim 1 : tensor<4xf32> -> tensor<4x8xf32>
// CHECK: %[[E:.*]] = arith.subf %[[REST]], %[[B]] : tensor<4x8xf32>
// CHECK: math.exp2 %[[E]]
// VALID-LABEL: func.func @unmasked
func.func @unmasked(%s: tensor<4x8xf32>, %d: f32, %slope: f32, %col: tensor<4x8xf32>, %run: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %k = arith.constant 0.125 : f32
  %ks = tile.splat %k : f32 -> tensor<4x8xf32>
  %x = arith.mulf %s, %ks : tensor<4x8xf32>
  %ds = tile.splat %d : f32 -> tensor<4x8xf32>
  %iota = tile.iota dim 0 : tensor<4x8xindex>
  %wide = arith.index_cast %iota : tensor<4x8xindex> to tensor<4x8xi64>
  %rowf = arith.sitofp %wide : tensor<4x8xi64> to tensor<4x8xf32>
  %diff = arith.subf %ds, %rowf fastmath<contract> : tensor<4x8xf32>
  %slopes = tile.splat %slope : f32 -> tensor<4x8xf32>
  %row = arith.mulf %diff, %slopes : tensor<4x8xf32>
  %bias = arith.addf %row, %col fastmath<contract> : tensor<4x8xf32>
  %t = arith.addf %x, %bias fastmath<contract> : tensor<4x8xf32>
  %max = tile.reduce max %t dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %m = arith.maximumf %run, %max : tensor<4xf32>
  %mb = tile.broadcast %m dim 1 : tensor<4xf32> -> tensor<4x8xf32>
  %e = arith.subf %t, %mb : tensor<4x8xf32>
  %p = math.exp2 %e : tensor<4x8xf32>
  return %m, %p : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// A masked step: the select against -inf takes the rest; the row term,
// here a 1-D tile repeated along the columns, is that 1-D tile itself.

// CHECK-LABEL: func.func @masked
// CHECK-SAME: (%[[S:.*]]: tensor<4x8xf32>, %[[R:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4x8xi1>, %[[OLD:.*]]: tensor<4xf32>)
// CHECK: %[[SEL:.*]] = arith.select %[[C]], %[[S]], %{{.*}} : tensor<4x8xi1>, tensor<4x8xf32>
// CHECK: %[[MAX:.*]] = tile.reduce max %[[SEL]] dim 1
// CHECK: %[[MAXR:.*]] = arith.addf %[[MAX]], %[[R]] : tensor<4xf32>
// CHECK: %[[M:.*]] = arith.maximumf %[[OLD]], %[[MAXR]]
// CHECK: %[[SHIFT:.*]] = arith.subf %[[M]], %[[R]] : tensor<4xf32>
// CHECK: %[[B:.*]] = tile.broadcast %[[SHIFT]] dim 1
// CHECK: arith.subf %[[SEL]], %[[B]] : tensor<4x8xf32>
// VALID-LABEL: func.func @masked
func.func @masked(%s: tensor<4x8xf32>, %r: tensor<4xf32>, %c: tensor<4x8xi1>, %run: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %rb = tile.broadcast %r dim 1 : tensor<4xf32> -> tensor<4x8xf32>
  %t = arith.addf %rb, %s : tensor<4x8xf32>
  %n = tile.splat %ninf : f32 -> tensor<4x8xf32>
  %sel = arith.select %c, %t, %n : tensor<4x8xi1>, tensor<4x8xf32>
  %max = tile.reduce max %sel dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %m = arith.maximumf %run, %max : tensor<4xf32>
  %mb = tile.broadcast %m dim 1 : tensor<4xf32> -> tensor<4x8xf32>
  %e = arith.subf %sel, %mb : tensor<4x8xf32>
  return %m, %e : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// A backward step's P = exp2(s + r - lse): the row term moves onto the
// log-sum-exp.

// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[S:.*]]: tensor<4x8xf32>, %[[R:.*]]: tensor<4xf32>, %[[LSE:.*]]: tensor<4xf32>)
// CHECK: %[[SHIFT:.*]] = arith.subf %[[LSE]], %[[R]] : tensor<4xf32>
// CHECK: %[[B:.*]] = tile.broadcast %[[SHIFT]] dim 1
// CHECK: %[[E:.*]] = arith.subf %[[S]], %[[B]] : tensor<4x8xf32>
// CHECK: math.exp2 %[[E]]
// VALID-LABEL: func.func @backward
func.func @backward(%s: tensor<4x8xf32>, %r: tensor<4xf32>, %lse: tensor<4xf32>) -> tensor<4x8xf32> {
  %rb = tile.broadcast %r dim 1 : tensor<4xf32> -> tensor<4x8xf32>
  %t = arith.addf %s, %rb : tensor<4x8xf32>
  %lb = tile.broadcast %lse dim 1 : tensor<4xf32> -> tensor<4x8xf32>
  %e = arith.subf %t, %lb : tensor<4x8xf32>
  %p = math.exp2 %e : tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

// Left alone: a sum read by something else too (its elements are needed
// anyway), a column's term (it varies along the reduced dimension), a
// maximum along the columns, a select against a value other than -inf, and
// a sum of row terms only (nothing per element to save).

// CHECK-LABEL: func.func @untouched
// CHECK-COUNT-5: arith.addf %{{.*}}, %{{.*}} : tensor<4x8xf32>
// CHECK-NOT: tensor<4xf32>, tensor<4xf32>
// CHECK: return
func.func @untouched(%s: tensor<4x8xf32>, %r: tensor<4xf32>, %c: tensor<8xf32>, %m: tensor<4xf32>, %mask: tensor<4x8xi1>) -> (tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %rb = tile.broadcast %r dim 1 : tensor<4xf32> -> tensor<4x8xf32>
  %t1 = arith.addf %s, %rb : tensor<4x8xf32>
  %max1 = tile.reduce max %t1 dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %cb = tile.broadcast %c dim 0 : tensor<8xf32> -> tensor<4x8xf32>
  %t2 = arith.addf %s, %cb : tensor<4x8xf32>
  %max2 = tile.reduce max %t2 dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %t3 = arith.addf %s, %rb : tensor<4x8xf32>
  %max3 = tile.reduce max %t3 dim 0 : tensor<4x8xf32> -> tensor<8xf32>
  %t4 = arith.addf %rb, %s : tensor<4x8xf32>
  %zs = tile.splat %zero : f32 -> tensor<4x8xf32>
  %sel = arith.select %mask, %t4, %zs : tensor<4x8xi1>, tensor<4x8xf32>
  %max4 = tile.reduce max %sel dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %t5 = arith.addf %rb, %rb : tensor<4x8xf32>
  %max5 = tile.reduce max %t5 dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  return %max1, %t1, %max2, %max3, %max4, %max5 : tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A backward kernel on Sᵀ (keys by queries): the maximum's rows are the
// columns, the log-sum-exp is repeated along dimension 0, and the query's
// term varies along dimension 1; it moves onto the log-sum-exp as a 1-D
// tile. min-head-dim=128 leaves the kernel (queries of 64 columns) alone.

// CHECK-LABEL: func.func @keys_by_queries
// CHECK: %[[I:.*]] = tile.iota dim 0 : tensor<8xindex>
// CHECK: %[[C:.*]] = arith.index_cast %[[I]] : tensor<8xindex> to tensor<8xi64>
// CHECK: %[[F:.*]] = arith.sitofp %[[C]] : tensor<8xi64> to tensor<8xf32>
// CHECK: %[[SHIFT:.*]] = arith.subf %{{.*}}, %[[F]] : tensor<8xf32>
// CHECK: %[[B:.*]] = tile.broadcast %[[SHIFT]] dim 0 : tensor<8xf32> -> tensor<4x8xf32>
// CHECK: arith.subf %{{.*}}, %[[B]] : tensor<4x8xf32>
// MINROWS-LABEL: func.func @keys_by_queries
// MINROWS-NOT: tensor<8xindex>
// VALID-LABEL: func.func @keys_by_queries
func.func @keys_by_queries(%q: memref<?x?x?x64xbf16> {tile.tensor = "q", tile.shape = ["batch", "seq_q", "heads", 64]}, %s: tensor<4x8xf32>, %lse: tensor<8xf32>) -> tensor<4x8xf32> {
  %iota = tile.iota dim 1 : tensor<4x8xindex>
  %wide = arith.index_cast %iota : tensor<4x8xindex> to tensor<4x8xi64>
  %colf = arith.sitofp %wide : tensor<4x8xi64> to tensor<4x8xf32>
  %t = arith.addf %s, %colf : tensor<4x8xf32>
  %lb = tile.broadcast %lse dim 0 : tensor<8xf32> -> tensor<4x8xf32>
  %e = arith.subf %t, %lb : tensor<4x8xf32>
  %p = math.exp2 %e : tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

// A maximum along dimension 0 (a dK/dV kernel's rows are keys) with -inf on
// the select's true side, and a sum under fast math: the new per-row add
// drops nnan and ninf (it meets a masked row's maximum, -inf).

// CHECK-LABEL: func.func @along_rows
// CHECK-SAME: (%[[S:.*]]: tensor<4x8xf32>, %[[C:.*]]: tensor<8xf32>, %[[M:.*]]: tensor<4x8xi1>)
// CHECK: %[[SEL:.*]] = arith.select %[[M]], %{{.*}}, %[[S]] : tensor<4x8xi1>, tensor<4x8xf32>
// CHECK: %[[MAX:.*]] = tile.reduce max %[[SEL]] dim 0 : tensor<4x8xf32> -> tensor<8xf32>
// CHECK: arith.addf %[[MAX]], %[[C]] fastmath<reassoc,nsz,arcp,contract,afn> : tensor<8xf32>
// VALID-LABEL: func.func @along_rows
func.func @along_rows(%s: tensor<4x8xf32>, %c: tensor<8xf32>, %mask: tensor<4x8xi1>) -> tensor<8xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<4x8xf32>
  %cb = tile.broadcast %c dim 0 : tensor<8xf32> -> tensor<4x8xf32>
  %t = arith.addf %s, %cb fastmath<fast> : tensor<4x8xf32>
  %sel = arith.select %mask, %ninf, %t : tensor<4x8xi1>, tensor<4x8xf32>
  %max = tile.reduce max %sel dim 0 : tensor<4x8xf32> -> tensor<8xf32>
  return %max : tensor<8xf32>
}

// -----

// Left alone: uses whose rows' values differ in type (here in encoding).

// CHECK-LABEL: func.func @two_row_types
// CHECK: %[[T:.*]] = arith.addf
// CHECK: tile.reduce max %[[T]] dim 1
// CHECK: arith.subf %[[T]], %{{.*}} : tensor<4x8xf32>
func.func @two_row_types(%s: tensor<4x8xf32>, %r: tensor<4xf32>, %m: tensor<4xf32, "other">) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %rb = tile.broadcast %r dim 1 : tensor<4xf32> -> tensor<4x8xf32>
  %t = arith.addf %s, %rb : tensor<4x8xf32>
  %max = tile.reduce max %t dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %mb = tile.broadcast %m dim 1 : tensor<4xf32, "other"> -> tensor<4x8xf32>
  %e = arith.subf %t, %mb : tensor<4x8xf32>
  return %max, %e : tensor<4xf32>, tensor<4x8xf32>
}
