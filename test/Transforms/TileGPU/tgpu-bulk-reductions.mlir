// RUN: kiln-opt %s -split-input-file -tgpu-bulk-reductions=shared-memory-bytes=232448 | FileCheck %s --enable-var-scope

// tgpu-bulk-reductions: each tile.atomic_add of an f32 accumulator tile into
// a view of an array's last two dimensions (a block of rows is one
// contiguous run) becomes a tgpu.bulk_reduce_add through one staging buffer
// (placed after the kernel's buffers); the sums are waited for at the
// kernel's end.
!m = memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @loop
// CHECK-SAME: tgpu.shared_bytes = 24704
// CHECK: [[Q:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK: [[S:%.+]] = tgpu.shared_alloc offset 8320 : memref<64x64xf32, 3>
// CHECK: [[D:%.+]] = tile.view
// CHECK: scf.for [[I:%.+]] =
// CHECK-NEXT: tgpu.bulk_reduce_add %arg1, [[S]], [[D]]{{\[}}[[I]], %c0] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, 3>, <?x64xf32>
// CHECK-NOT: tile.atomic_add
// CHECK: }
// CHECK-NEXT: tgpu.bulk_wait{{$}}
// CHECK-NEXT: return
func.func @loop(%a: !m, %t: !acc, %n: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %b = tgpu.shared_alloc offset 8192 : memref<4xi64, 3>
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x64xf32>
  scf.for %i = %c0 to %n step %c64 {
    tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x64xf32>
  }
  return
}

// -----

// In a warp-specialized kernel the consumers wait for their sums at the end
// of their region; two adds share the staging buffer.
!m = memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @consumers
// CHECK: [[S:%.+]] = tgpu.shared_alloc offset 128 : memref<64x64xf32, 3>
// CHECK: consumer {
// CHECK: tgpu.bulk_reduce_add %arg1, [[S]]
// CHECK: tgpu.bulk_reduce_add %arg1, [[S]]
// CHECK-NEXT: tgpu.bulk_wait{{$}}
// CHECK-NEXT: }
func.func @consumers(%a: !m, %t: !acc, %i: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.producer_warps = 4 : i64, tgpu.ctas_per_sm = 2 : i64, tgpu.shared_bytes = 128 : i64} {
  %c0 = arith.constant 0 : index
  %b = tgpu.shared_alloc offset 0 : memref<4xi64, 3>
  tgpu.warp_specialize {consumer_registers = 232 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x64xf32>
    tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x64xf32>
    tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x64xf32>
  }
  return
}

// -----

// Where the staging would cost a CTA per multiprocessor (two CTAs of
// 100,096 bytes fit 232,448; with 16 KiB more each they would not), the adds
// stay red.global and the layout is unchanged.
!m = memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @no_room
// CHECK-SAME: tgpu.shared_bytes = 100096
// CHECK-NOT: xf32, 3>
// CHECK: tile.atomic_add
// CHECK-NOT: tgpu.bulk
func.func @no_room(%a: !m, %t: !acc, %i: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.ctas_per_sm = 2 : i64, tgpu.shared_bytes = 100096 : i64} {
  %c0 = arith.constant 0 : index
  %b = tgpu.shared_alloc offset 0 : memref<12500xi64, 3>
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x64xf32>
  tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x64xf32>
  return
}

// -----

// Without a producer warpgroup the kernel runs as many CTAs as its shared
// memory and its registers (at least 128 per thread: four CTAs of four
// warps) allow: 70,016 bytes fit three on a multiprocessor, with the
// staging's 16 KiB only two, so the add stays; 120,064 bytes fit one either
// way: staged. (@loop above: 8,320 bytes fit 24, with the staging 9, both
// above the registers' four.)
!m = memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @no_producer_keeps
// CHECK-SAME: tgpu.shared_bytes = 70016
// CHECK-NOT: xf32, 3>
// CHECK: tile.atomic_add
// CHECK-NOT: tgpu.bulk
// CHECK: return
func.func @no_producer_keeps(%a: !m, %t: !acc, %i: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 70016 : i64} {
  %c0 = arith.constant 0 : index
  %b = tgpu.shared_alloc offset 0 : memref<8750xi64, 3>
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x64xf32>
  tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x64xf32>
  return
}
// CHECK-LABEL: func.func @no_producer_stages
// CHECK-SAME: tgpu.shared_bytes = 136448
// CHECK: tgpu.bulk_reduce_add
// CHECK-NEXT: tgpu.bulk_wait
func.func @no_producer_stages(%a: !m, %t: !acc, %i: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 120064 : i64} {
  %c0 = arith.constant 0 : index
  %b = tgpu.shared_alloc offset 0 : memref<15000xi64, 3>
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x64xf32>
  tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x64xf32>
  return
}

// -----

// A kernel without tgpu.shared_bytes (not laid out yet) is laid out.
!m = memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @not_laid_out
// CHECK-SAME: tgpu.shared_bytes = 16384
// CHECK: tgpu.bulk_reduce_add
func.func @not_laid_out(%a: !m, %t: !acc, %i: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x64xf32>
  tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x64xf32>
  return
}

// -----

// Left alone: sm_80 (no bulk reductions); rows strided in the array (Q's
// [B, N, H, D] layout: a bulk reduction per row); tiles narrower than
// their descriptor; rows that are not whole 16-byte chunks.
!m = memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
!m2 = memref<?x?x?x2xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!half = tensor<64x32xf32, #tgpu.mma<warps = 4>>
!narrow = tensor<64x2xf32, #tgpu.mma<warps = 4>>
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tgpu.bulk
// CHECK-COUNT-3: tile.atomic_add
// CHECK-NOT: tgpu.bulk
// CHECK: return
func.func @left_alone(%a: !m, %a2: !m2, %t: !acc, %h: !half, %n: !narrow, %i: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 0 : i64} {
  %c0 = arith.constant 0 : index
  %rows = tile.view %a[%c0, %c0] keep [1, 3] : !m -> !tile.desc<?x64xf32>
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x64xf32>
  %d2 = tile.view %a2[%c0, %c0] keep [2, 3] : !m2 -> !tile.desc<?x2xf32>
  tile.atomic_add %t, %rows[%i, %c0] : !acc, !tile.desc<?x64xf32>
  tile.atomic_add %h, %d[%i, %c0] : !half, !tile.desc<?x64xf32>
  tile.atomic_add %n, %d2[%i, %c0] : !narrow, !tile.desc<?x2xf32>
  return
}
// CHECK-LABEL: func.func @sm80
// CHECK-NOT: tgpu.bulk
// CHECK: tile.atomic_add
func.func @sm80(%a: !m, %t: !acc, %i: index) attributes {tgpu.arch = "sm_80", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 0 : i64} {
  %c0 = arith.constant 0 : index
  %d = tile.view %a[%c0, %c0] keep [2, 3] : !m -> !tile.desc<?x64xf32>
  tile.atomic_add %t, %d[%i, %c0] : !acc, !tile.desc<?x64xf32>
  return
}

// -----

// A tile in column groups: each warp holds 16 rows of its group's columns,
// a strided block of the [B, H, N, D] workspace. It goes through a tensor
// map of that argument, appended to the kernel's (dims innermost first, the
// box one 128-byte span by a warp's 16 rows), and a staging buffer swizzled
// by 128 bytes (1024-byte aligned): coordinates column, row, then the
// view's indices innermost first. Both adds share the map and the buffer.
!w = memref<?x?x?x128xf32, strided<[?, ?, ?, ?], offset: ?>>
!cg = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK-LABEL: func.func @column_groups
// CHECK-SAME: %arg0: memref<?x?x?x128xf32, {{.*}}> {tile.workspace = "acc"}
// CHECK-SAME: [[MAP:%arg[0-9]+]]: !tgpu.tensor_map {tgpu.tensor_map = {box = array<i64: 32, 16, 1, 1>, dims = array<i64: 3, 2, 1, 0>, swizzle = 128 : i64, tensor = 0 : i64}})
// CHECK-SAME: tgpu.shared_bytes = 33792
// CHECK: [[S:%.+]] = tgpu.shared_alloc offset 1024 : memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>
// CHECK: tgpu.tma_reduce_add %arg1, [[S]], [[MAP]][%c0, %arg3, %arg2, %c0] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-NEXT: tgpu.tma_reduce_add %arg1, [[S]], [[MAP]][%c0, %arg3, %arg2, %c0]
// CHECK-NEXT: tgpu.bulk_wait
func.func @column_groups(%a: !w {tile.workspace = "acc"}, %t: !cg, %h: index, %i: index) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.shared_bytes = 128 : i64} {
  %c0 = arith.constant 0 : index
  %b = tgpu.shared_alloc offset 0 : memref<16xi64, 3>
  %d = tile.view %a[%c0, %h] keep [2, 3] : !w -> !tile.desc<?x128xf32>
  tile.atomic_add %t, %d[%i, %c0] : !cg, !tile.desc<?x128xf32>
  tile.atomic_add %t, %d[%i, %c0] : !cg, !tile.desc<?x128xf32>
  return
}

// -----

// In column groups, left alone: a view of a value that is not the kernel's
// argument (no tensor map describes it), and an argument that is neither a
// tensor nor a workspace. A group's 48 columns (D = 96) are three 64-byte
// spans: swizzled by 64 bytes.
!w = memref<?x?x?x128xf32, strided<[?, ?, ?, ?], offset: ?>>
!w96 = memref<?x?x?x96xf32, strided<[?, ?, ?, ?], offset: ?>>
!cg = tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
!cg96 = tensor<64x96xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK-LABEL: func.func @column_groups_left_alone
// CHECK-NOT: tgpu.tma_reduce_add
// CHECK-COUNT-2: tile.atomic_add
// CHECK: tgpu.tma_reduce_add %arg4, {{%.+}}, %arg7[%c0, %arg5, %c0, %c0] : tensor<64x96xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x96xf32, #tgpu.swizzle<bytes = 64>, 3>
func.func @column_groups_left_alone(%a: !w {tile.workspace = "acc"}, %plain: !w, %t: !cg, %sel: i1, %t96: !cg96, %i: index, %a96: !w96 {tile.tensor = "dq"}) attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.shared_bytes = 0 : i64} {
  %c0 = arith.constant 0 : index
  %pick = arith.select %sel, %a, %plain : !w
  %d = tile.view %pick[%c0, %c0] keep [2, 3] : !w -> !tile.desc<?x128xf32>
  %e = tile.view %plain[%c0, %c0] keep [2, 3] : !w -> !tile.desc<?x128xf32>
  %f = tile.view %a96[%c0, %c0] keep [2, 3] : !w96 -> !tile.desc<?x96xf32>
  tile.atomic_add %t, %d[%i, %c0] : !cg, !tile.desc<?x128xf32>
  tile.atomic_add %t, %e[%i, %c0] : !cg, !tile.desc<?x128xf32>
  tile.atomic_add %t96, %f[%i, %c0] : !cg96, !tile.desc<?x96xf32>
  return
}
