// RUN: kiln-opt %s -split-input-file -tgpu-bulk-reductions=shared-memory-bytes=232448 | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tgpu-bulk-reductions="shared-memory-bytes=232448 core-order=false" | FileCheck %s --check-prefix=ROWS

// A workspace that only staged adds write, and that is otherwise only loaded
// as mma tiles or filled with one value, every access on core-block
// boundaries, is kept in core order: the adds become tgpu.core_reduce_add
// (an unswizzled staging buffer, no tensor map even in column groups), the
// loads tgpu.core_load, and its rows are padded to whole 16-row bands in
// every kernel that declares it (the launch plan's shapes must agree).
!m = memref<?x?x?x128xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK-LABEL: func.func @zero(
// CHECK-SAME: tile.shape = ["batch", "heads", ["mul", ["ceildiv", "seq_q", 16], 16], 128], tile.workspace = "acc"
// CHECK: tile.store
// CHECK-LABEL: func.func @writer(
// CHECK-SAME: tile.shape = ["batch", "heads", ["mul", ["ceildiv", "seq_q", 16], 16], 128], tile.workspace = "acc"
// CHECK-NOT: tensor_map
// CHECK: [[S:%.+]] = tgpu.shared_alloc offset 8320 : memref<64x128xf32, 3>
// CHECK: scf.for [[I:%.+]] =
// CHECK-NEXT: tgpu.core_reduce_add %arg1, [[S]], %{{.+}}{{\[}}[[I]], %c0] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>, <?x128xf32>
// CHECK: tgpu.bulk_wait
// CHECK-LABEL: func.func @reader(
// CHECK-SAME: tile.shape = ["batch", "heads", ["mul", ["ceildiv", "seq_q", 16], 16], 128], tile.workspace = "acc"
// CHECK: tgpu.core_load %{{.+}}{{\[}}%{{.+}}, %c0] fill 0.000000e+00 : <?x128xf32> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
// CHECK-NOT: tile.load
// The ablation keeps the rows and the tensor reductions.
// ROWS-LABEL: func.func @zero(
// ROWS-SAME: tile.shape = ["batch", "heads", "seq_q", 128]
// ROWS-LABEL: func.func @writer(
// ROWS: tgpu.tma_reduce_add
// ROWS-LABEL: func.func @reader(
// ROWS: tile.load
// ROWS-NOT: tgpu.core_load
func.func @zero(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}, %p: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.0 : f32
  %r = arith.muli %p, %c64 : index
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  %z = tile.splat %cst : f32 -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
  tile.store %z, %d[%r, %c0] : tensor<64x128xf32, #tgpu.mma<warps = 4>>, !tile.desc<?x128xf32>
  return
}
func.func @writer(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}, %t: !acc, %n: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.shared_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %b = tgpu.shared_alloc offset 8192 : memref<4xi64, 3>
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  scf.for %i = %c0 to %n step %c64 {
    tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x128xf32>
  }
  return
}
func.func @reader(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}, %p: index) -> tensor<64x128xf32, #tgpu.mma<warps = 4>> attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %r = arith.muli %p, %c64 : index
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  %v = tile.load %d[%r, %c0] fill 0.0 : f32 : !tile.desc<?x128xf32> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
  return %v : tensor<64x128xf32, #tgpu.mma<warps = 4>>
}

// -----

// A load at a row not known to start a band (an argument) keeps the
// workspace row-major, and its adds keep their tensor reductions.
!m = memref<?x?x?x128xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK-LABEL: func.func @writer2(
// CHECK-SAME: tile.shape = ["batch", "heads", "seq_q", 128]
// CHECK: tgpu.tma_reduce_add
// CHECK-NOT: tgpu.core_reduce_add
// CHECK-LABEL: func.func @unaligned_reader(
// CHECK: tile.load
// CHECK-NOT: tgpu.core_load
func.func @writer2(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}, %t: !acc, %n: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.shared_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  scf.for %i = %c0 to %n step %c64 {
    tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x128xf32>
  }
  return
}
func.func @unaligned_reader(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}, %r: index) -> tensor<64x128xf32, #tgpu.mma<warps = 4>> attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  %v = tile.load %d[%r, %c0] fill 0.0 : f32 : !tile.desc<?x128xf32> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
  return %v : tensor<64x128xf32, #tgpu.mma<warps = 4>>
}

// -----

// A workspace added into from two kernels keeps its rows (each writer would
// have to stage; one that could not would add row-major).
!m = memref<?x?x?x128xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK-LABEL: func.func @first(
// CHECK-NOT: tgpu.core_reduce_add
// CHECK-LABEL: func.func @second(
// CHECK-NOT: tgpu.core_reduce_add
func.func @first(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}, %t: !acc) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.shared_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : index
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  tile.atomic_add %t, %d[%c0, %c0] : !acc, !tile.desc<?x128xf32>
  return
}
func.func @second(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}, %t: !acc) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.shared_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : index
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  tile.atomic_add %t, %d[%c0, %c0] : !acc, !tile.desc<?x128xf32>
  return
}

// -----

// A fill of some columns only (not whole rows) is not the same elements in
// core order: the workspace keeps its rows.
!m = memref<?x?x?x128xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK-LABEL: func.func @half_zero(
// CHECK-SAME: tile.shape = ["batch", "heads", "seq_q", 128]
// CHECK-LABEL: func.func @writer3(
// CHECK-NOT: tgpu.core_reduce_add
func.func @half_zero(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  %z = tile.splat %cst : f32 -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  tile.store %z, %d[%c0, %c0] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, !tile.desc<?x128xf32>
  return
}
func.func @writer3(%a: !m {tile.workspace = "acc", tile.shape = ["batch", "heads", "seq_q", 128]}, %t: !acc) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.shared_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : index
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x128xf32>
  tile.atomic_add %t, %d[%c0, %c0] : !acc, !tile.desc<?x128xf32>
  return
}
