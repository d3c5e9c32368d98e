// RUN: kiln-opt %s -split-input-file -tile-hoist-invariant-reads | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tile-hoist-invariant-reads="min-head-dim=128" | FileCheck %s --check-prefix=MIN

!m = memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
!q = memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>

// A mod's capture read at the head's index in a KV loop that writes
// nothing (the forward), and in one that adds to another argument (the
// backward's dQ): both move before the loop, with what is computed from them.
// min-head-dim=128 leaves a kernel whose queries have 64 columns alone.

// CHECK-LABEL: func.func @reads
// CHECK-SAME: %[[SLOPES:arg[0-9]+]]: memref<?xf32>
// CHECK-SAME: %[[H:arg[0-9]+]]: index, %{{arg[0-9]+}}: index, %{{arg[0-9]+}}: tensor
// CHECK: %[[S0:.*]] = memref.load %[[SLOPES]][%[[H]]]
// CHECK-NEXT: tile.splat %[[S0]]
// CHECK: scf.for
// CHECK-NOT: memref.load
// CHECK: scf.yield
// CHECK: %[[S1:.*]] = memref.load %[[SLOPES]][%[[H]]]
// CHECK-NEXT: tile.splat %[[S1]]
// CHECK: scf.for
// CHECK-NEXT: tile.atomic_add
// MIN-LABEL: func.func @reads
// MIN: scf.for
// MIN-NEXT: memref.load
// MIN: scf.for
// MIN-NEXT: memref.load
func.func @reads(%qarg: !q {tile.tensor = "q", tile.shape = ["batch", "seq_q", "heads", 64]}, %slopes: memref<?xf32>, %acc: !m, %h: index, %n: index, %s: tensor<4x8xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = tile.splat %c0 : index -> tensor<4xindex>
  %init = arith.constant dense<0.0> : tensor<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %init) -> tensor<4xf32> {
    %slope = memref.load %slopes[%h] : memref<?xf32>
    %sl = tile.splat %slope : f32 -> tensor<4x8xf32>
    %x = arith.mulf %s, %sl : tensor<4x8xf32>
    %row = tile.reduce max %x dim 1 : tensor<4x8xf32> -> tensor<4xf32>
    %next = arith.maximumf %m, %row : tensor<4xf32>
    scf.yield %next : tensor<4xf32>
  }
  %d = tile.view %acc[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x64xf32>
  scf.for %i = %c0 to %n step %c1 {
    %slope = memref.load %slopes[%h] : memref<?xf32>
    %sl = tile.splat %slope : f32 -> tensor<4x8xf32>
    %x = arith.mulf %s, %sl : tensor<4x8xf32>
    %t = tile.dot %x, %x {transpose_rhs} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
    tile.atomic_add %t, %d[%i, %c0] : tensor<4x4xf32>, !tile.desc<?x64xf32>
  }
  return %r : tensor<4xf32>
}

// -----

!m = memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>

// Left in the loop: a read of the buffer the loop adds to (through its
// view), a read at an index the loop computes, a read of memory the kernel
// allocated (not an argument), a read in a loop with an op whose effects
// name no buffer, and reads in loops that write through a descriptor the
// loop carries or a memref a select chose (either could be the read one).

// CHECK-LABEL: func.func @kept
// CHECK: scf.for
// CHECK-NEXT: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<?x?x?x64xf32
// CHECK: scf.for
// CHECK-NEXT: arith.addi
// CHECK-NEXT: memref.load
// CHECK: scf.for
// CHECK-NEXT: memref.load
// CHECK: scf.for
// CHECK-NEXT: memref.load
// CHECK: scf.for
// CHECK-NEXT: memref.load
// CHECK: scf.for
// CHECK-NEXT: memref.load
func.func @kept(%acc: !m, %slopes: memref<?xf32>, %h: index, %n: index, %t: tensor<4x4xf32>, %other: memref<?xf32>, %pick: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = tile.view %acc[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x64xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %acc[%c0, %c0, %c0, %c0] : !m
    %vs = tile.splat %v : f32 -> tensor<4x4xf32>
    %x = arith.addf %t, %vs : tensor<4x4xf32>
    tile.atomic_add %x, %d[%i, %c0] : tensor<4x4xf32>, !tile.desc<?x64xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %j = arith.addi %i, %h : index
    %v = memref.load %slopes[%j] : memref<?xf32>
    %vs = tile.splat %v : f32 -> tensor<4x4xf32>
    %x = arith.addf %t, %vs : tensor<4x4xf32>
    tile.atomic_add %x, %d[%i, %c0] : tensor<4x4xf32>, !tile.desc<?x64xf32>
  }
  %buf = memref.alloca() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %buf[%h] : memref<4xf32>
    %vs = tile.splat %v : f32 -> tensor<4x4xf32>
    %x = arith.addf %t, %vs : tensor<4x4xf32>
    tile.atomic_add %x, %d[%i, %c0] : tensor<4x4xf32>, !tile.desc<?x64xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %slopes[%h] : memref<?xf32>
    func.call @opaque(%v) : (f32) -> ()
  }
  %carried = scf.for %i = %c0 to %n step %c1 iter_args(%dd = %d) -> !tile.desc<?x64xf32> {
    %v = memref.load %acc[%c0, %c0, %c0, %c0] : !m
    %vs = tile.splat %v : f32 -> tensor<4x4xf32>
    %x = arith.addf %t, %vs : tensor<4x4xf32>
    tile.store %x, %dd[%i, %c0] : tensor<4x4xf32>, !tile.desc<?x64xf32>
    scf.yield %dd : !tile.desc<?x64xf32>
  }
  %either = arith.select %pick, %slopes, %other : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %slopes[%h] : memref<?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %either[%h] : memref<?xf32>
  }
  return
}
func.func private @opaque(f32)

// -----

!m = memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>

// Nested loops that store to another argument: the read moves out of the
// inner loop, then out of the outer one.

// CHECK-LABEL: func.func @nested
// CHECK: memref.load
// CHECK-NEXT: tile.splat
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: memref.load
// CHECK: tile.store
func.func @nested(%out: !m, %slopes: memref<?xf32>, %h: index, %n: index, %t: tensor<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = tile.view %out[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x64xf32>
  scf.for %j = %c0 to %n step %c1 {
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %slopes[%h] : memref<?xf32>
      %vs = tile.splat %v : f32 -> tensor<4x4xf32>
      %x = arith.addf %t, %vs : tensor<4x4xf32>
      tile.store %x, %d[%i, %j] : tensor<4x4xf32>, !tile.desc<?x64xf32>
    }
  }
  return
}
