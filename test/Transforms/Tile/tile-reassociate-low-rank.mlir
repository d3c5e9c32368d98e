// RUN: kiln-opt %s -split-input-file -tile-reassociate-low-rank | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tile-reassociate-low-rank | kiln-opt -split-input-file | FileCheck %s --check-prefix=VALID

// ALiBi's score_mod as convert-attn-to-tile lowers it after
// attn-split-position-differences: (s * scale + slope * (float(kv) -
// float(q))) * log2(e). The positions' difference becomes relative to the
// tile (float(kv0 - q0) - float(row) per row, float(col) per column), the
// multiplications by the slope and by log2(e) move onto those per-row and
// per-column terms as one product (slope · log2(e), a scalar), scale and
// log2(e) fold into one splat: per element one product of s and one add of
// the two cheap terms, one add of the two.

// CHECK-LABEL: func.func @alibi
// CHECK-SAME: (%[[S:.*]]: tensor<4x8xf32>, %[[Q0:.*]]: index, %[[KV0:.*]]: index, %[[SLOPE:.*]]: f32)
// CHECK: %[[C:.*]] = arith.constant 0.180336878 : f32
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[D:.*]] = arith.subi %[[KV0]], %[[Q0]] : index
// CHECK: %[[DI:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK: %[[DF:.*]] = arith.sitofp %[[DI]] : i64 to f32
// CHECK: %[[DS:.*]] = tile.splat %[[DF]] : f32 -> tensor<4x8xf32>
// CHECK: %[[ROW:.*]] = tile.iota dim 0
// CHECK: %[[ROWF:.*]] = arith.sitofp
// CHECK: %[[R:.*]] = arith.subf %[[DS]], %[[ROWF]]
// CHECK: %[[COL:.*]] = tile.iota dim 1
// CHECK: %[[COLF:.*]] = arith.sitofp
// CHECK-DAG: %[[CSPLAT:.*]] = tile.splat %[[C]] : f32 -> tensor<4x8xf32>
// CHECK-DAG: %[[SC:.*]] = arith.mulf %[[S]], %[[CSPLAT]]
// CHECK-DAG: %[[SLR:.*]] = arith.mulf %[[SLOPE]], %[[LOG2E]] : f32
// CHECK-DAG: %[[SLRS:.*]] = tile.splat %[[SLR]] : f32 -> tensor<4x8xf32>
// CHECK-DAG: %[[RL:.*]] = arith.mulf %[[R]], %[[SLRS]] : tensor<4x8xf32>
// CHECK-DAG: %[[SLC:.*]] = arith.mulf %[[SLOPE]], %[[LOG2E]] : f32
// CHECK-DAG: %[[SLCS:.*]] = tile.splat %[[SLC]] : f32 -> tensor<4x8xf32>
// CHECK-DAG: %[[CL:.*]] = arith.mulf %[[COLF]], %[[SLCS]] : tensor<4x8xf32>
// CHECK: %[[B:.*]] = arith.addf %[[RL]], %[[CL]]
// CHECK: %[[OUT:.*]] = arith.addf %[[SC]], %[[B]]
// CHECK: return %[[OUT]]
// VALID-LABEL: func.func @alibi
func.func @alibi(%s: tensor<4x8xf32>, %q0: index, %kv0: index, %slope: f32) -> tensor<4x8xf32> {
  %scale = arith.constant 0.125 : f32
  %log2e = arith.constant 1.44269502 : f32
  %qs = tile.splat %q0 : index -> tensor<4x8xindex>
  %qi = tile.iota dim 0 : tensor<4x8xindex>
  %q = arith.addi %qi, %qs : tensor<4x8xindex>
  %ks = tile.splat %kv0 : index -> tensor<4x8xindex>
  %ki = tile.iota dim 1 : tensor<4x8xindex>
  %k = arith.addi %ks, %ki : tensor<4x8xindex>
  %qc = arith.index_cast %q : tensor<4x8xindex> to tensor<4x8xi64>
  %qf = arith.sitofp %qc : tensor<4x8xi64> to tensor<4x8xf32>
  %kc = arith.index_cast %k : tensor<4x8xindex> to tensor<4x8xi64>
  %kf = arith.sitofp %kc : tensor<4x8xi64> to tensor<4x8xf32>
  %d = arith.subf %kf, %qf : tensor<4x8xf32>
  %sl = tile.splat %slope : f32 -> tensor<4x8xf32>
  %bias = arith.mulf %sl, %d : tensor<4x8xf32>
  %sc = tile.splat %scale : f32 -> tensor<4x8xf32>
  %scaled = arith.mulf %s, %sc : tensor<4x8xf32>
  %mod = arith.addf %scaled, %bias : tensor<4x8xf32>
  %l2 = tile.splat %log2e : f32 -> tensor<4x8xf32>
  %r = arith.mulf %mod, %l2 : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Without attn-split-position-differences: float((kv0 + col) - (q0 + row)),
// the keys-by-queries orientation (keys along rows), becomes the same
// relative form.

// CHECK-LABEL: func.func @converted_difference
// CHECK: %[[D:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: %[[DF:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK: %[[DS:.*]] = tile.splat %[[DF]]
// CHECK: tile.iota dim 1
// CHECK: %[[QF:.*]] = arith.sitofp %{{.*}} : tensor<4x8xi32> to tensor<4x8xf32>
// CHECK: %[[R:.*]] = arith.subf %[[DS]], %[[QF]]
// CHECK: tile.iota dim 0
// CHECK: %[[KF:.*]] = arith.sitofp %{{.*}} : tensor<4x8xi32> to tensor<4x8xf32>
// CHECK: %[[X:.*]] = arith.addf %[[R]], %[[KF]]
// CHECK: return %[[X]]
func.func @converted_difference(%q0: index, %kv0: index) -> tensor<4x8xf32> {
  %ks = tile.splat %kv0 : index -> tensor<4x8xindex>
  %ki = tile.iota dim 0 : tensor<4x8xindex>
  %k = arith.addi %ki, %ks : tensor<4x8xindex>
  %qs = tile.splat %q0 : index -> tensor<4x8xindex>
  %qi = tile.iota dim 1 : tensor<4x8xindex>
  %q = arith.addi %qi, %qs : tensor<4x8xindex>
  %d = arith.subi %k, %q : tensor<4x8xindex>
  %di = arith.index_cast %d : tensor<4x8xindex> to tensor<4x8xi32>
  %df = arith.sitofp %di : tensor<4x8xi32> to tensor<4x8xf32>
  return %df : tensor<4x8xf32>
}

// -----

// Left alone: positions along the same dimension (their difference is a
// splat already), converted values that vary along both dimensions (their
// difference is not a sum of cheap terms), a multiplier that varies along
// both dimensions, and a sum used twice.

// CHECK-LABEL: func.func @untouched
// CHECK: %[[PF:.*]] = arith.sitofp %{{.*}} : tensor<4x8xi64> to tensor<4x8xf32>
// CHECK: %[[QF:.*]] = arith.sitofp %{{.*}} : tensor<4x8xi64> to tensor<4x8xf32>
// CHECK: %[[SAME:.*]] = arith.subf %[[PF]], %[[QF]] : tensor<4x8xf32>
// CHECK: %[[D2:.*]] = arith.subf %{{.*}}, %{{.*}} : tensor<4x8xf32>
// CHECK: %[[M2:.*]] = arith.mulf %{{.*}}, %[[D2]] : tensor<4x8xf32>
// CHECK: %[[R:.*]] = arith.addf %[[PF]], %{{.*}}
// CHECK: %[[M3:.*]] = arith.mulf %{{.*}}, %[[R]]
// CHECK: %[[R2:.*]] = arith.addf
// CHECK: %[[M4:.*]] = arith.mulf %{{.*}}, %[[R2]]
// CHECK: %[[U4:.*]] = arith.addf %[[R2]], %[[M4]]
// CHECK: return %[[SAME]], %[[M2]], %[[M3]], %[[U4]]
func.func @untouched(%a: index, %b: index, %x: tensor<4x8xi32>, %y: tensor<4x8xi32>, %s: tensor<4x8xf32>,
                     %c: f32) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %as = tile.splat %a : index -> tensor<4x8xindex>
  %bs = tile.splat %b : index -> tensor<4x8xindex>
  %i = tile.iota dim 0 : tensor<4x8xindex>
  %p = arith.addi %i, %as : tensor<4x8xindex>
  %q = arith.addi %i, %bs : tensor<4x8xindex>
  %pc = arith.index_cast %p : tensor<4x8xindex> to tensor<4x8xi64>
  %qc = arith.index_cast %q : tensor<4x8xindex> to tensor<4x8xi64>
  %pf = arith.sitofp %pc : tensor<4x8xi64> to tensor<4x8xf32>
  %qf = arith.sitofp %qc : tensor<4x8xi64> to tensor<4x8xf32>
  %same = arith.subf %pf, %qf : tensor<4x8xf32>
  // Converted values that vary along both dimensions.
  %xf = arith.sitofp %x : tensor<4x8xi32> to tensor<4x8xf32>
  %yf = arith.sitofp %y : tensor<4x8xi32> to tensor<4x8xf32>
  %d2 = arith.subf %xf, %yf : tensor<4x8xf32>
  %cs = tile.splat %c : f32 -> tensor<4x8xf32>
  %m2 = arith.mulf %cs, %d2 : tensor<4x8xf32>
  // A per-element multiplier.
  %j = tile.iota dim 1 : tensor<4x8xindex>
  %jc = arith.index_cast %j : tensor<4x8xindex> to tensor<4x8xi64>
  %jf = arith.sitofp %jc : tensor<4x8xi64> to tensor<4x8xf32>
  %rc = arith.addf %pf, %jf : tensor<4x8xf32>
  %m3 = arith.mulf %s, %rc : tensor<4x8xf32>
  // A sum with two uses.
  %rowr = arith.subf %cs, %qf : tensor<4x8xf32>
  %rc2 = arith.addf %rowr, %jf : tensor<4x8xf32>
  %m4 = arith.mulf %cs, %rc2 : tensor<4x8xf32>
  %u4 = arith.addf %rc2, %m4 : tensor<4x8xf32>
  return %same, %m2, %m3, %u4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Broadcasts: a row vector repeated along dim 1 varies along rows, so with a
// column offset its sum is per element and a splat distributes over it,
// keeping the subtraction's order; a column vector repeated along dim 0
// plus a column offset stays per column (nothing to gain).

// CHECK-LABEL: func.func @broadcasts
// CHECK-SAME: (%[[ROWV:.*]]: tensor<4xf32>, %[[COLV:.*]]: tensor<8xf32>, %[[K:.*]]: f32)
// CHECK: %[[R:.*]] = tile.broadcast %[[ROWV]] dim 1
// CHECK: %[[COLF:.*]] = arith.sitofp
// CHECK: %[[KS:.*]] = tile.splat %[[K]]
// CHECK: %[[A:.*]] = arith.mulf %[[R]], %[[KS]]
// CHECK: %[[B:.*]] = arith.mulf %[[COLF]], %[[KS]]
// CHECK: %[[D:.*]] = arith.subf %[[A]], %[[B]]
// CHECK: %[[C:.*]] = tile.broadcast %[[COLV]] dim 0
// CHECK: %[[CS:.*]] = arith.subf %[[C]], %[[COLF]]
// CHECK: %[[CM:.*]] = arith.mulf %[[CS]], %[[KS]]
// CHECK: return %[[D]], %[[CM]]
func.func @broadcasts(%rowv: tensor<4xf32>, %colv: tensor<8xf32>, %k: f32) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %r = tile.broadcast %rowv dim 1 : tensor<4xf32> -> tensor<4x8xf32>
  %j = tile.iota dim 1 : tensor<4x8xindex>
  %jc = arith.index_cast %j : tensor<4x8xindex> to tensor<4x8xi32>
  %jf = arith.sitofp %jc : tensor<4x8xi32> to tensor<4x8xf32>
  %ks = tile.splat %k : f32 -> tensor<4x8xf32>
  %d = arith.subf %r, %jf : tensor<4x8xf32>
  %m = arith.mulf %d, %ks : tensor<4x8xf32>
  %c = tile.broadcast %colv dim 0 : tensor<8xf32> -> tensor<4x8xf32>
  %cs = arith.subf %c, %jf : tensor<4x8xf32>
  %cm = arith.mulf %cs, %ks : tensor<4x8xf32>
  return %m, %cm : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A splat over `cheap sum + score` (the mod written bias + score) and
// `score - cheap sum`: distributed, the score's scaling and the splat folded
// into one splat. A per-row factor times a per-column one stays where it is
// (their product would be per element again), and so does a slope times a
// difference of clamped positions (neither term bounded by the tile).

// CHECK-LABEL: func.func @orders
// CHECK-DAG: %[[C:.*]] = arith.constant 6.000000e+00 : f32
// CHECK-DAG: %[[CS:.*]] = tile.splat %[[C]] : f32 -> tensor<4x8xf32>
// CHECK-DAG: %[[S2:.*]] = arith.mulf %{{.*}}, %[[CS]]
// CHECK: %[[P:.*]] = arith.addf %{{.*}}, %[[S2]]
// CHECK: %[[S3:.*]] = arith.mulf %{{.*}}, %{{.*}} : tensor<4x8xf32>
// CHECK: %[[M:.*]] = arith.subf %[[S3]], %{{.*}}
// CHECK: %[[RC:.*]] = arith.mulf %{{.*}}, %{{.*}} : tensor<4x8xf32>
// CHECK-NEXT: %[[RCC:.*]] = arith.mulf %[[RC]], %{{.*}} : tensor<4x8xf32>
// CHECK: %[[QF:.*]] = arith.sitofp %{{.*}} : tensor<4x8xi64> to tensor<4x8xf32>
// CHECK: %[[KF:.*]] = arith.sitofp %{{.*}} : tensor<4x8xi64> to tensor<4x8xf32>
// CHECK: %[[DIFF:.*]] = arith.subf %[[KF]], %[[QF]]
// CHECK: %[[SLOPED:.*]] = arith.mulf %{{.*}}, %[[DIFF]]
// CHECK: return %[[P]], %[[M]], %[[RCC]], %[[SLOPED]]
func.func @orders(%s: tensor<4x8xf32>, %rowv: tensor<4xf32>, %colv: tensor<8xf32>, %q0: index, %kv0: index,
                  %n: index, %slope: f32) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %twos = tile.splat %two : f32 -> tensor<4x8xf32>
  %threes = tile.splat %three : f32 -> tensor<4x8xf32>
  %r = tile.broadcast %rowv dim 1 : tensor<4xf32> -> tensor<4x8xf32>
  %j = tile.iota dim 1 : tensor<4x8xindex>
  %jc = arith.index_cast %j : tensor<4x8xindex> to tensor<4x8xi32>
  %jf = arith.sitofp %jc : tensor<4x8xi32> to tensor<4x8xf32>
  %bias = arith.addf %r, %jf : tensor<4x8xf32>
  %scaled = arith.mulf %s, %twos : tensor<4x8xf32>
  %sum = arith.addf %bias, %scaled : tensor<4x8xf32>
  %p = arith.mulf %sum, %threes : tensor<4x8xf32>
  %bias2 = arith.addf %r, %jf : tensor<4x8xf32>
  %scaled2 = arith.mulf %s, %twos : tensor<4x8xf32>
  %diff = arith.subf %scaled2, %bias2 : tensor<4x8xf32>
  %m = arith.mulf %diff, %threes : tensor<4x8xf32>
  // Row times column.
  %c = tile.broadcast %colv dim 0 : tensor<8xf32> -> tensor<4x8xf32>
  %rs = arith.mulf %s, %r : tensor<4x8xf32>
  %rc = arith.mulf %rs, %c : tensor<4x8xf32>
  // Clamped positions: min(q0 + row, n) and kv0 + col, each converted.
  %qs = tile.splat %q0 : index -> tensor<4x8xindex>
  %i = tile.iota dim 0 : tensor<4x8xindex>
  %q = arith.addi %i, %qs : tensor<4x8xindex>
  %ns = tile.splat %n : index -> tensor<4x8xindex>
  %qc = arith.minsi %q, %ns : tensor<4x8xindex>
  %qi = arith.index_cast %qc : tensor<4x8xindex> to tensor<4x8xi64>
  %qf = arith.sitofp %qi : tensor<4x8xi64> to tensor<4x8xf32>
  %ks = tile.splat %kv0 : index -> tensor<4x8xindex>
  %k = arith.addi %j, %ks : tensor<4x8xindex>
  %ki = arith.index_cast %k : tensor<4x8xindex> to tensor<4x8xi64>
  %kf = arith.sitofp %ki : tensor<4x8xi64> to tensor<4x8xf32>
  %d = arith.subf %kf, %qf : tensor<4x8xf32>
  %sl = tile.splat %slope : f32 -> tensor<4x8xf32>
  %sloped = arith.mulf %sl, %d : tensor<4x8xf32>
  return %p, %m, %rc, %sloped : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Positions converted to f16 round above 2048, so their difference is left
// as written; splats added fold into one.

// CHECK-LABEL: func.func @narrow
// CHECK: arith.subf %{{.*}}, %{{.*}} : tensor<4x8xf16>
// CHECK: %[[A:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[AS:.*]] = tile.splat %[[A]] : f32 -> tensor<4x8xf32>
// CHECK: return %{{.*}}, %[[AS]]
func.func @narrow(%q0: index, %kv0: index, %x: f32, %y: f32) -> (tensor<4x8xf16>, tensor<4x8xf32>) {
  %qs = tile.splat %q0 : index -> tensor<4x8xindex>
  %i = tile.iota dim 0 : tensor<4x8xindex>
  %q = arith.addi %i, %qs : tensor<4x8xindex>
  %ks = tile.splat %kv0 : index -> tensor<4x8xindex>
  %j = tile.iota dim 1 : tensor<4x8xindex>
  %k = arith.addi %j, %ks : tensor<4x8xindex>
  %qi = arith.index_cast %q : tensor<4x8xindex> to tensor<4x8xi32>
  %qf = arith.sitofp %qi : tensor<4x8xi32> to tensor<4x8xf16>
  %ki = arith.index_cast %k : tensor<4x8xindex> to tensor<4x8xi32>
  %kf = arith.sitofp %ki : tensor<4x8xi32> to tensor<4x8xf16>
  %d = arith.subf %kf, %qf : tensor<4x8xf16>
  %xs = tile.splat %x : f32 -> tensor<4x8xf32>
  %ys = tile.splat %y : f32 -> tensor<4x8xf32>
  %sum = arith.addf %xs, %ys : tensor<4x8xf32>
  return %d, %sum : tensor<4x8xf16>, tensor<4x8xf32>
}
