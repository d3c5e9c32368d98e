// RUN: kiln-opt %s -split-input-file -tile-lazy-rescale | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tile-lazy-rescale="threshold=4" | FileCheck %s --check-prefix=T4
// RUN: kiln-opt %s -split-input-file -tile-lazy-rescale="threshold=0" | FileCheck %s --check-prefix=T0
// RUN: kiln-opt %s -split-input-file -tile-lazy-rescale | kiln-opt -split-input-file | FileCheck %s --check-prefix=VALID
// RUN: not kiln-opt %s -split-input-file -tile-lazy-rescale="threshold=16" 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not kiln-opt %s -split-input-file -tile-lazy-rescale="threshold=-1" 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: tile-lazy-rescale: threshold {{.*}} is outside [0, 15]

// The online softmax's KV loop as convert-attn-to-tile writes it: the new
// maximum is replaced by a reference that moves only when the maximum
// exceeds the old reference by more than the threshold (8 by default, in
// log2 units: a factor of 2^8), in the
// exponent, the correction factor, the -inf guard and the yield; the
// log-sum-exp after the loop reads the reference.

// CHECK-LABEL: func.func @softmax_loop
// CHECK: %[[T:.*]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[TS:.*]] = tile.splat %[[T]] : f32 -> tensor<4xf32>
// CHECK: scf.for {{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}})
// CHECK: %[[MX:.*]] = tile.reduce max
// CHECK: %[[NEW:.*]] = arith.maximumf %[[M]], %[[MX]]
// CHECK: %[[GROWTH:.*]] = arith.subf %[[NEW]], %[[M]]
// CHECK: %[[GROWS:.*]] = arith.cmpf ogt, %[[GROWTH]], %[[TS]]
// CHECK: %[[REF:.*]] = arith.select %[[GROWS]], %[[NEW]], %[[M]]
// CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[REF]], %{{.*}}
// CHECK: %[[SAFE:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[REF]]
// CHECK: tile.broadcast %[[SAFE]] dim 1
// CHECK: arith.subf %[[M]], %[[SAFE]]
// CHECK: scf.yield %[[REF]], %{{.*}}, %{{.*}}
// CHECK: } {tile.kv_loop}
// CHECK: arith.addf %{{.*}}#0, %{{.*}}
// T4-LABEL: func.func @softmax_loop
// T4: arith.constant 4.000000e+00 : f32
// T4: arith.cmpf ogt
// T0-LABEL: func.func @softmax_loop
// T0-NOT: arith.cmpf ogt
// T0: scf.yield %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}
// VALID-LABEL: func.func @softmax_loop
func.func @softmax_loop(%s: tensor<4x8xf32>, %n: index) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ninf4 = tile.splat %ninf : f32 -> tensor<4xf32>
  %zero4 = tile.splat %zero : f32 -> tensor<4xf32>
  %zero48 = tile.splat %zero : f32 -> tensor<4x8xf32>
  %r:3 = scf.for %i = %c0 to %n step %c1
      iter_args(%m = %ninf4, %l = %zero4, %acc = %zero48)
      -> (tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>) {
    %mx = tile.reduce max %s dim 1 : tensor<4x8xf32> -> tensor<4xf32>
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %empty = arith.cmpf oeq, %new, %ninf4 : tensor<4xf32>
    %safe = arith.select %empty, %zero4, %new : tensor<4xi1>, tensor<4xf32>
    %b = tile.broadcast %safe dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    %c = arith.subf %m, %safe : tensor<4xf32>
    %f = math.exp2 %c : tensor<4xf32>
    %ps = tile.reduce sum %p dim 1 : tensor<4x8xf32> -> tensor<4xf32>
    %l1 = arith.mulf %l, %f : tensor<4xf32>
    %l2 = arith.addf %l1, %ps : tensor<4xf32>
    %fb = tile.broadcast %f dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %a1 = arith.mulf %acc, %fb : tensor<4x8xf32>
    %a2 = arith.addf %a1, %p : tensor<4x8xf32>
    scf.yield %new, %l2, %a2 : tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>
  } {tile.kv_loop}
  %lg = math.log2 %r#1 : tensor<4xf32>
  %lse = arith.addf %r#0, %lg : tensor<4xf32>
  return %lse, %r#2 : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// Two KV loops in a row (full blocks, then the masked ones): the second
// starts from the first's reference, and each moves its own. Where the
// second loop's final maximum is read as a value, neither loop changes.

// CHECK-LABEL: func.func @two_loops
// CHECK: %[[R1:.*]] = scf.for {{.*}} iter_args(%[[M1:.*]] = %{{.*}})
// CHECK: %[[N1:.*]] = arith.maximumf %[[M1]]
// CHECK: %[[D1:.*]] = arith.subf %[[N1]], %[[M1]]
// CHECK: %[[G1:.*]] = arith.cmpf ogt, %[[D1]]
// CHECK: %[[REF1:.*]] = arith.select %[[G1]], %[[N1]], %[[M1]]
// CHECK: scf.yield %[[REF1]]
// CHECK: scf.for {{.*}} iter_args(%[[M2:.*]] = %[[R1]])
// CHECK: %[[N2:.*]] = arith.maximumf %{{.*}}, %[[M2]]
// CHECK: %[[D2:.*]] = arith.subf %[[N2]], %[[M2]]
// CHECK: %[[G2:.*]] = arith.cmpf ogt, %[[D2]]
// CHECK: %[[REF2:.*]] = arith.select %[[G2]], %[[N2]], %[[M2]]
// CHECK: scf.yield %[[REF2]]
// CHECK-LABEL: func.func @two_loops_value
// CHECK-NOT: 8.000000e+00
// CHECK: return
// CHECK-LABEL: func.func @next_loop_reads_value
// CHECK-NOT: 8.000000e+00
// CHECK: return
func.func @two_loops(%s: tensor<4x8xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %ninf4 = tile.splat %ninf : f32 -> tensor<4xf32>
  %r1 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %mx = tile.reduce max %s dim 1 : tensor<4x8xf32> -> tensor<4xf32>
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %r1) -> (tensor<4xf32>) {
    %mx = tile.reduce max %s dim 1 : tensor<4x8xf32> -> tensor<4xf32>
    %new = arith.maximumf %mx, %m : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %l = tile.reduce sum %s dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %lg = math.log2 %l : tensor<4xf32>
  %lse = arith.addf %r2, %lg : tensor<4xf32>
  %empty = arith.cmpf oeq, %r2, %ninf4 : tensor<4xf32>
  %out = arith.select %empty, %ninf4, %lse : tensor<4xi1>, tensor<4xf32>
  return %out : tensor<4xf32>
}

func.func @two_loops_value(%s: tensor<4x8xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %ninf4 = tile.splat %ninf : f32 -> tensor<4xf32>
  %r1 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %mx = tile.reduce max %s dim 1 : tensor<4x8xf32> -> tensor<4xf32>
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %r1) -> (tensor<4xf32>) {
    %mx = tile.reduce max %s dim 1 : tensor<4x8xf32> -> tensor<4xf32>
    %new = arith.maximumf %mx, %m : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  return %r2 : tensor<4xf32>
}

// The second loop reads its maximum as a value (2 m), so the first loop's
// reference, which lags its maximum, may not start it.
func.func @next_loop_reads_value(%s: tensor<4x8xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %ninf4 = tile.splat %ninf : f32 -> tensor<4xf32>
  %r1 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %mx = tile.reduce max %s dim 1 : tensor<4x8xf32> -> tensor<4xf32>
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %r1) -> (tensor<4xf32>) {
    %mx = tile.reduce max %s dim 1 : tensor<4x8xf32> -> tensor<4xf32>
    %new = arith.maximumf %mx, %m : tensor<4xf32>
    %twice = arith.addf %new, %new : tensor<4xf32>
    scf.yield %twice : tensor<4xf32>
  } {tile.kv_loop}
  %l = tile.reduce sum %s dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %lg = math.log2 %l : tensor<4xf32>
  %lse = arith.addf %r2, %lg : tensor<4xf32>
  return %lse : tensor<4xf32>
}

// -----

// Left alone: a loop that is not a KV loop; a maximum read as a value (a
// product, the minuend of a subtraction); a final maximum returned as it is
// (the caller may want the true maximum); a maximum that is not of the
// carried value; an f16 row vector; a carried maximum read as a value; a
// maximum compared with a finite constant; a difference that a product
// reads; a final maximum plus something other than a logarithm.

// CHECK-LABEL: func.func @untouched
// CHECK-NOT: 8.000000e+00
// CHECK: return
func.func @untouched(%s: tensor<4x8xf32>, %h: tensor<4xf16>, %n: index)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %ninf4 = tile.splat %ninf : f32 -> tensor<4xf32>
  %mx = tile.reduce max %s dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %r0 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    scf.yield %new : tensor<4xf32>
  }
  %r1 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %twice = arith.mulf %new, %new : tensor<4xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %d = arith.subf %new, %mx : tensor<4xf32>
    %p = math.exp2 %d : tensor<4xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %r3 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %r4 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %new = arith.maximumf %mx, %mx : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %r5 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %h) -> (tensor<4xf16>) {
    %new = arith.maximumf %m, %h : tensor<4xf16>
    %d = arith.subf %h, %new : tensor<4xf16>
    %p = math.exp2 %d : tensor<4xf16>
    scf.yield %new : tensor<4xf16>
  } {tile.kv_loop}
  %r6 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    %twice = arith.addf %m, %m : tensor<4xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %zero = arith.constant 0.0 : f32
  %zero4 = tile.splat %zero : f32 -> tensor<4xf32>
  %r7 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %pos = arith.cmpf ogt, %new, %zero4 : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %r8 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    %q = arith.mulf %d, %d : tensor<4x8xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %r9 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf4) -> (tensor<4xf32>) {
    %new = arith.maximumf %m, %mx : tensor<4xf32>
    %b = tile.broadcast %new dim 1 : tensor<4xf32> -> tensor<4x8xf32>
    %d = arith.subf %s, %b : tensor<4x8xf32>
    %p = math.exp2 %d : tensor<4x8xf32>
    scf.yield %new : tensor<4xf32>
  } {tile.kv_loop}
  %l = tile.reduce sum %s dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  %lg = math.log2 %l : tensor<4xf32>
  %lse6 = arith.addf %r6, %lg : tensor<4xf32>
  %lse7 = arith.addf %r7, %lg : tensor<4xf32>
  %lse8 = arith.addf %r8, %lg : tensor<4xf32>
  %plus = arith.addf %r9, %l : tensor<4xf32>
  return %r0, %r1, %r2, %r3, %r4, %r5, %lse6, %lse7, %lse8, %plus : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
