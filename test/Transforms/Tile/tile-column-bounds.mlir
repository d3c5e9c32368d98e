// RUN: kiln-opt %s -split-input-file -tile-column-bounds -canonicalize | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tile-column-bounds | kiln-opt -split-input-file | FileCheck %s --check-prefix=VALID

// A sliding window's masked step: kv = iota(1) + k0, q = iota(0) + q0;
// kv < n (the partial block), kv <= q and q - kv <= 128 become one interval
// of the column index per row: lo = q - 128 - k0, hi = min(n - 1 - k0,
// q - k0); the test col - lo < max(hi - lo + 1, 0), unsigned.

// CHECK-LABEL: func.func @window
// CHECK-SAME: (%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[S:.*]]: tensor<4x8xf32>)
// CHECK: %[[HI:.*]] = arith.minsi %{{.*}}, %{{.*}} : tensor<4x8xindex>
// CHECK: %[[COL:.*]] = tile.iota dim 1 : tensor<4x8xindex>
// CHECK: %[[SPAN:.*]] = arith.subi %[[HI]], %[[LO:[0-9]+]] :
// CHECK-NEXT: %[[COUNT:.*]] = arith.addi %[[SPAN]], %{{.*}}
// CHECK-NEXT: %[[CLAMP:.*]] = arith.maxsi %[[COUNT]], %{{.*}}
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[COL]], %[[LO]]
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[D]], %[[CLAMP]]
// CHECK: arith.select %[[IN]], %[[S]]
// VALID-LABEL: func.func @window
func.func @window(%k0: index, %q0: index, %n: index, %s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = arith.constant 128 : index
  %ninf = arith.constant 0xFF800000 : f32
  %col = tile.iota dim 1 : tensor<4x8xindex>
  %row = tile.iota dim 0 : tensor<4x8xindex>
  %k0s = tile.splat %k0 : index -> tensor<4x8xindex>
  %q0s = tile.splat %q0 : index -> tensor<4x8xindex>
  %ns = tile.splat %n : index -> tensor<4x8xindex>
  %ws = tile.splat %w : index -> tensor<4x8xindex>
  %kv = arith.addi %col, %k0s : tensor<4x8xindex>
  %q = arith.addi %row, %q0s : tensor<4x8xindex>
  %inside = arith.cmpi slt, %kv, %ns : tensor<4x8xindex>
  %dist = arith.subi %q, %kv : tensor<4x8xindex>
  %causal = arith.cmpi sle, %kv, %q : tensor<4x8xindex>
  %near = arith.cmpi sle, %dist, %ws : tensor<4x8xindex>
  %band = arith.andi %causal, %near : tensor<4x8xi1>
  %keep = arith.andi %inside, %band : tensor<4x8xi1>
  %ninfs = tile.splat %ninf : f32 -> tensor<4x8xf32>
  %r = arith.select %keep, %s, %ninfs : tensor<4x8xi1>, tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Bounded on one side only (the causal diagonal and the partial block; the
// transposed orientation below): left alone outside a KV loop, and in
// loops carrying more than one-sided-elements accumulator elements, since
// merged into one compare of the column index NVIDIA's compiler hoists a
// tile of column indices out of the KV loop (the 192-row kernel spilled).

// CHECK-LABEL: func.func @causal
// CHECK: %[[INSIDE:.*]] = arith.cmpi slt
// CHECK: %[[CAUSAL:.*]] = arith.cmpi sle
// CHECK: %[[KEEP:.*]] = arith.andi %[[INSIDE]], %[[CAUSAL]]
// CHECK: return %[[KEEP]]
// VALID-LABEL: func.func @causal
func.func @causal(%k0: index, %q0: index, %n: index) -> tensor<4x8xi1> {
  %col = tile.iota dim 1 : tensor<4x8xindex>
  %row = tile.iota dim 0 : tensor<4x8xindex>
  %k0s = tile.splat %k0 : index -> tensor<4x8xindex>
  %q0s = tile.splat %q0 : index -> tensor<4x8xindex>
  %ns = tile.splat %n : index -> tensor<4x8xindex>
  %kv = arith.addi %col, %k0s : tensor<4x8xindex>
  %q = arith.addi %row, %q0s : tensor<4x8xindex>
  %inside = arith.cmpi slt, %kv, %ns : tensor<4x8xindex>
  %causal = arith.cmpi sle, %kv, %q : tensor<4x8xindex>
  %keep = arith.andi %inside, %causal : tensor<4x8xi1>
  return %keep : tensor<4x8xi1>
}

// -----

// In a KV loop carrying at most one-sided-elements (128 x 128) f32
// accumulator elements, the two upper bounds merge into one per row:
// col <= min(n - 1 - k0, q - k0), one signed compare per element.

// CHECK-LABEL: func.func @causal_in_loop
// CHECK: scf.for
// CHECK: %[[HI:.*]] = arith.minsi %{{.*}}, %{{.*}} : tensor<4x8xindex>
// CHECK: %[[COL:.*]] = tile.iota dim 1 : tensor<4x8xindex>
// CHECK-NEXT: %[[KEEP:.*]] = arith.cmpi sle, %[[COL]], %[[HI]] : tensor<4x8xindex>
// CHECK: arith.select %[[KEEP]]
// VALID-LABEL: func.func @causal_in_loop
func.func @causal_in_loop(%k0: index, %q0: index, %n: index, %s: tensor<4x8xf32>,
                          %acc: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %acc, %b = %s) -> (tensor<64x128xf32>, tensor<4x8xf32>) {
    %col = tile.iota dim 1 : tensor<4x8xindex>
    %row = tile.iota dim 0 : tensor<4x8xindex>
    %k0s = tile.splat %k0 : index -> tensor<4x8xindex>
    %q0s = tile.splat %q0 : index -> tensor<4x8xindex>
    %ns = tile.splat %n : index -> tensor<4x8xindex>
    %kv = arith.addi %col, %k0s : tensor<4x8xindex>
    %q = arith.addi %row, %q0s : tensor<4x8xindex>
    %inside = arith.cmpi slt, %kv, %ns : tensor<4x8xindex>
    %causal = arith.cmpi sle, %kv, %q : tensor<4x8xindex>
    %keep = arith.andi %inside, %causal : tensor<4x8xi1>
    %m = tile.splat %ninf : f32 -> tensor<4x8xf32>
    %x = arith.select %keep, %b, %m : tensor<4x8xi1>, tensor<4x8xf32>
    scf.yield %a, %x : tensor<64x128xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<64x128xf32>, tensor<4x8xf32>
}

// -----

// The same in a loop carrying more (a 192 x 128 accumulator: the 192-row
// kernel at D = 128, where the hoisted column indices spilled): the
// compares stay.

// CHECK-LABEL: func.func @causal_large_loop
// CHECK: %[[INSIDE:.*]] = arith.cmpi slt
// CHECK: %[[CAUSAL:.*]] = arith.cmpi sle
// CHECK: %[[KEEP:.*]] = arith.andi %[[INSIDE]], %[[CAUSAL]]
// VALID-LABEL: func.func @causal_large_loop
func.func @causal_large_loop(%k0: index, %q0: index, %n: index, %s: tensor<4x8xf32>,
                             %acc: tensor<192x128xf32>) -> (tensor<192x128xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %acc, %b = %s) -> (tensor<192x128xf32>, tensor<4x8xf32>) {
    %col = tile.iota dim 1 : tensor<4x8xindex>
    %row = tile.iota dim 0 : tensor<4x8xindex>
    %k0s = tile.splat %k0 : index -> tensor<4x8xindex>
    %q0s = tile.splat %q0 : index -> tensor<4x8xindex>
    %ns = tile.splat %n : index -> tensor<4x8xindex>
    %kv = arith.addi %col, %k0s : tensor<4x8xindex>
    %q = arith.addi %row, %q0s : tensor<4x8xindex>
    %inside = arith.cmpi slt, %kv, %ns : tensor<4x8xindex>
    %causal = arith.cmpi sle, %kv, %q : tensor<4x8xindex>
    %keep = arith.andi %inside, %causal : tensor<4x8xi1>
    %m = tile.splat %ninf : f32 -> tensor<4x8xf32>
    %x = arith.select %keep, %b, %m : tensor<4x8xi1>, tensor<4x8xf32>
    scf.yield %a, %x : tensor<192x128xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<192x128xf32>, tensor<4x8xf32>
}

// -----

// The transposed orientation (keys by queries: rows are keys, columns
// queries) in a loop carrying dK and dV of 64 x 64: kv <= q is a lower
// bound on the column index, q0 + col >= k0 + row, one signed compare.

// CHECK-LABEL: func.func @transposed_in_loop
// CHECK: scf.for
// CHECK: %[[COL:.*]] = tile.iota dim 1 : tensor<4x8xindex>
// CHECK-NEXT: %[[KEEP:.*]] = arith.cmpi sge, %[[COL]], %{{.*}} : tensor<4x8xindex>
// CHECK: arith.select %[[KEEP]]
// VALID-LABEL: func.func @transposed_in_loop
func.func @transposed_in_loop(%k0: index, %q0: index, %n: index, %s: tensor<4x8xf32>,
                              %dk: tensor<64x64xf32>, %dv: tensor<64x64xf32>)
    -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %dk, %v = %dv, %b = %s)
      -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<4x8xf32>) {
    %col = tile.iota dim 1 : tensor<4x8xindex>
    %row = tile.iota dim 0 : tensor<4x8xindex>
    %k0s = tile.splat %k0 : index -> tensor<4x8xindex>
    %q0s = tile.splat %q0 : index -> tensor<4x8xindex>
    %kv = arith.addi %row, %k0s : tensor<4x8xindex>
    %q = arith.addi %col, %q0s : tensor<4x8xindex>
    %causal = arith.cmpi sle, %kv, %q : tensor<4x8xindex>
    %m = tile.splat %ninf : f32 -> tensor<4x8xf32>
    %x = arith.select %causal, %b, %m : tensor<4x8xi1>, tensor<4x8xf32>
    scf.yield %a, %v, %x : tensor<64x64xf32>, tensor<64x64xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<4x8xf32>
}

// -----

// The transposed orientation (keys by queries: rows are keys, columns
// queries), here one-sided too: kv <= q stays.

// CHECK-LABEL: func.func @transposed
// CHECK: %[[CAUSAL:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : tensor<4x8xindex>
// CHECK-NEXT: return %[[CAUSAL]]
// VALID-LABEL: func.func @transposed
func.func @transposed(%k0: index, %q0: index) -> tensor<4x8xi1> {
  %col = tile.iota dim 1 : tensor<4x8xindex>
  %row = tile.iota dim 0 : tensor<4x8xindex>
  %k0s = tile.splat %k0 : index -> tensor<4x8xindex>
  %q0s = tile.splat %q0 : index -> tensor<4x8xindex>
  %kv = arith.addi %row, %k0s : tensor<4x8xindex>
  %q = arith.addi %col, %q0s : tensor<4x8xindex>
  %causal = arith.cmpi sle, %kv, %q : tensor<4x8xindex>
  return %causal : tensor<4x8xi1>
}

// -----

// A conjunct the analysis cannot read (a document mask's gathered ids) stays,
// ANDed with the interval (here a windowed document mask, keys in
// [q - 16, q] of the same document).

// CHECK-LABEL: func.func @document
// CHECK-SAME: %[[SAME:[a-z0-9]+]]: tensor<4x8xi1>
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : tensor<4x8xindex>
// CHECK-NEXT: %[[KEEP:.*]] = arith.andi %[[IN]], %[[SAME]] : tensor<4x8xi1>
// CHECK-NEXT: return %[[KEEP]]
// VALID-LABEL: func.func @document
func.func @document(%k0: index, %q0: index, %n: index, %same: tensor<4x8xi1>) -> tensor<4x8xi1> {
  %w = arith.constant 16 : index
  %col = tile.iota dim 1 : tensor<4x8xindex>
  %row = tile.iota dim 0 : tensor<4x8xindex>
  %k0s = tile.splat %k0 : index -> tensor<4x8xindex>
  %q0s = tile.splat %q0 : index -> tensor<4x8xindex>
  %ws = tile.splat %w : index -> tensor<4x8xindex>
  %kv = arith.addi %col, %k0s : tensor<4x8xindex>
  %q = arith.addi %row, %q0s : tensor<4x8xindex>
  %causal = arith.cmpi sle, %kv, %q : tensor<4x8xindex>
  %ids = arith.andi %causal, %same : tensor<4x8xi1>
  %dist = arith.subi %q, %kv : tensor<4x8xindex>
  %near = arith.cmpi sle, %dist, %ws : tensor<4x8xindex>
  %keep = arith.andi %ids, %near : tensor<4x8xi1>
  return %keep : tensor<4x8xi1>
}

// -----

// Left alone: a compare already of the column index against a row-uniform
// tile, columns scaled (2 * col is not one column index), `ne` (not an
// interval), and unsigned predicates.

// CHECK-LABEL: func.func @untouched
// CHECK: %[[A:.*]] = arith.cmpi slt, %[[COL:.*]], %[[NS:.*]] : tensor<4x8xindex>
// CHECK: %[[TWICE:.*]] = arith.muli %[[COL]], %{{.*}} : tensor<4x8xindex>
// CHECK: %[[B:.*]] = arith.cmpi sle, %[[TWICE]], %[[NS]] : tensor<4x8xindex>
// CHECK: %[[C:.*]] = arith.cmpi ne, %[[COL]], %[[NS]] : tensor<4x8xindex>
// CHECK: %[[D:.*]] = arith.cmpi ult, %[[COL]], %[[NS]] : tensor<4x8xindex>
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
// VALID-LABEL: func.func @untouched
func.func @untouched(%n: index) -> (tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>) {
  %c2 = arith.constant 2 : index
  %col = tile.iota dim 1 : tensor<4x8xindex>
  %ns = tile.splat %n : index -> tensor<4x8xindex>
  %twos = tile.splat %c2 : index -> tensor<4x8xindex>
  %a = arith.cmpi slt, %col, %ns : tensor<4x8xindex>
  %twice = arith.muli %col, %twos : tensor<4x8xindex>
  %b = arith.cmpi sle, %twice, %ns : tensor<4x8xindex>
  %c = arith.cmpi ne, %col, %ns : tensor<4x8xindex>
  %d = arith.cmpi ult, %col, %ns : tensor<4x8xindex>
  return %a, %b, %c, %d : tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>
}

// -----

// Left alone: a window whose width is no position (INT64_MAX meaning "no
// window"): the bounds would subtract it from a query position, which the
// compares never did, and overflow.

// CHECK-LABEL: func.func @huge_window
// CHECK-NOT: arith.cmpi ult
// CHECK: return
// VALID-LABEL: func.func @huge_window
func.func @huge_window(%k0: index, %q0: index) -> tensor<4x8xi1> {
  %w = arith.constant 9223372036854775807 : index
  %col = tile.iota dim 1 : tensor<4x8xindex>
  %row = tile.iota dim 0 : tensor<4x8xindex>
  %k0s = tile.splat %k0 : index -> tensor<4x8xindex>
  %q0s = tile.splat %q0 : index -> tensor<4x8xindex>
  %ws = tile.splat %w : index -> tensor<4x8xindex>
  %kv = arith.addi %col, %k0s : tensor<4x8xindex>
  %q = arith.addi %row, %q0s : tensor<4x8xindex>
  %causal = arith.cmpi sle, %kv, %q : tensor<4x8xindex>
  %dist = arith.subi %q, %kv : tensor<4x8xindex>
  %near = arith.cmpi sle, %dist, %ws : tensor<4x8xindex>
  %keep = arith.andi %causal, %near : tensor<4x8xi1>
  return %keep : tensor<4x8xi1>
}

