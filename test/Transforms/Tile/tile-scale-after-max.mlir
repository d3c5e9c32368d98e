// RUN: kiln-opt %s -split-input-file -tile-scale-after-max | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tile-scale-after-max | kiln-opt -split-input-file | FileCheck %s --check-prefix=VALID

// The softmax's row maximum of scaled scores, unmasked and masked: the
// maximum (and the masked select) move before the positive scale; the
// scaled scores stay for the exponent.

// CHECK-LABEL: func.func @softmax_max
// CHECK-SAME: (%[[S:.*]]: tensor<4x8xf32>, %[[C:.*]]: tensor<4x8xi1>)
// CHECK: %[[K:.*]] = arith.constant 1.250000e-01 : f32
// CHECK: %[[KS:.*]] = tile.splat %[[K]] : f32 -> tensor<4x8xf32>
// CHECK: %[[X:.*]] = arith.mulf %[[S]], %[[KS]]
// CHECK: %[[M:.*]] = tile.reduce max %[[S]] dim 1 : tensor<4x8xf32> -> tensor<4xf32>
// CHECK: %[[K1S:.*]] = tile.splat %[[K]] : f32 -> tensor<4xf32>
// CHECK: %[[MS:.*]] = arith.mulf %[[M]], %[[K1S]]
// CHECK: %[[SEL:.*]] = arith.select %[[C]], %[[S]], %{{.*}} : tensor<4x8xi1>, tensor<4x8xf32>
// CHECK: %[[MM:.*]] = tile.reduce max %[[SEL]] dim 1
// CHECK: %[[MMS:.*]] = arith.mulf %[[MM]], %{{.*}} : tensor<4xf32>
// CHECK: return %[[X]], %[[MS]], %[[MMS]]
// VALID-LABEL: func.func @softmax_max
func.func @softmax_max(%s: tensor<4x8xf32>, %c: tensor<4x8xi1>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %k = arith.constant 0.125 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ks = tile.splat %k : f32 -> tensor<4x8xf32>
  %x = arith.mulf %s, %ks : tensor<4x8xf32>
  %m = tile.reduce max %x dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %n = tile.splat %ninf : f32 -> tensor<4x8xf32>
  %sel = arith.select %c, %x, %n : tensor<4x8xi1>, tensor<4x8xf32>
  %mm = tile.reduce max %sel dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  return %x, %m, %mm : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Left alone: a negative or a non-constant scale (the maximum would be the
// minimum, or unknown), a sum, and a select against a value other than -inf.

// CHECK-LABEL: func.func @untouched
// CHECK: %[[XN:.*]] = arith.mulf
// CHECK: tile.reduce max %[[XN]]
// CHECK: %[[XV:.*]] = arith.mulf
// CHECK: tile.reduce max %[[XV]]
// CHECK: %[[SUM:.*]] = tile.reduce sum
// CHECK: %[[SEL:.*]] = arith.select
// CHECK: tile.reduce max %[[SEL]]
func.func @untouched(%s: tensor<4x8xf32>, %c: tensor<4x8xi1>, %v: f32) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %neg = arith.constant -0.5 : f32
  %k = arith.constant 0.125 : f32
  %zero = arith.constant 0.0 : f32
  %negs = tile.splat %neg : f32 -> tensor<4x8xf32>
  %xn = arith.mulf %s, %negs : tensor<4x8xf32>
  %mn = tile.reduce max %xn dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %vs = tile.splat %v : f32 -> tensor<4x8xf32>
  %xv = arith.mulf %s, %vs : tensor<4x8xf32>
  %mv = tile.reduce max %xv dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %ks = tile.splat %k : f32 -> tensor<4x8xf32>
  %x = arith.mulf %s, %ks : tensor<4x8xf32>
  %sum = tile.reduce sum %x dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %zs = tile.splat %zero : f32 -> tensor<4x8xf32>
  %sel = arith.select %c, %x, %zs : tensor<4x8xi1>, tensor<4x8xf32>
  %ms = tile.reduce max %sel dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  return %mn, %mv, %sum, %ms : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A reduction along dim 0 of f16 tiles with a dense constant scale; a select
// that no maximum reads (the backward's masked scores) and one with -inf
// as its true value stay as written.

// CHECK-LABEL: func.func @more
// CHECK: %[[M:.*]] = tile.reduce max %{{.*}} dim 0 : tensor<4x8xf16> -> tensor<8xf16>
// CHECK: %[[K:.*]] = tile.splat %{{.*}} : f16 -> tensor<8xf16>
// CHECK: %[[MS:.*]] = arith.mulf %[[M]], %[[K]] : tensor<8xf16>
// CHECK: %[[X:.*]] = arith.mulf %{{.*}}, %{{.*}} : tensor<4x8xf32>
// CHECK: %[[SEL:.*]] = arith.select %{{.*}}, %[[X]], %{{.*}}
// CHECK: %[[SW:.*]] = arith.select %{{.*}}, %{{.*}}, %[[X]]
// CHECK: tile.reduce max %[[SW]]
// CHECK: return %[[MS]], %[[SEL]]
func.func @more(%h: tensor<4x8xf16>, %s: tensor<4x8xf32>, %c: tensor<4x8xi1>)
    -> (tensor<8xf16>, tensor<4x8xf32>, tensor<4xf32>) {
  %kh = arith.constant dense<2.0> : tensor<4x8xf16>
  %xh = arith.mulf %h, %kh : tensor<4x8xf16>
  %mh = tile.reduce max %xh dim 0 : tensor<4x8xf16> -> tensor<8xf16>
  %k = arith.constant 0.125 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ks = tile.splat %k : f32 -> tensor<4x8xf32>
  %n = tile.splat %ninf : f32 -> tensor<4x8xf32>
  %x = arith.mulf %s, %ks : tensor<4x8xf32>
  %sel = arith.select %c, %x, %n : tensor<4x8xi1>, tensor<4x8xf32>
  %sw = arith.select %c, %n, %x : tensor<4x8xi1>, tensor<4x8xf32>
  %m = tile.reduce max %sw dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  return %mh, %sel, %m : tensor<8xf16>, tensor<4x8xf32>, tensor<4xf32>
}
