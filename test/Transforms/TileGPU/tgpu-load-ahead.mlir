// RUN: kiln-opt %s -split-input-file -tgpu-load-ahead -allow-unregistered-dialect | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tgpu-load-ahead -allow-unregistered-dialect | kiln-opt -split-input-file -allow-unregistered-dialect | FileCheck %s --check-prefix=VALID

// The dK/dV kernel's shape: in the consumers' loop over query blocks, the
// step's LSE and D (1-D tiles of read-only arrays, viewed before the loop)
// are loaded for the next step at the top of the body and carried; the
// first step's are loaded before the loop. The offset's own arithmetic
// moves with the load and leaves the body when nothing else reads it.
!m = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!cols = tensor<64xf32, #tgpu.cols<warps = 4>>
// CHECK-LABEL: func.func @ahead
// CHECK: consumer {
// CHECK: [[L:%.+]] = tile.view %arg0
// CHECK: [[D:%.+]] = tile.view %arg1
// CHECK: [[O0:%.+]] = arith.addi %arg3, %c1
// CHECK-NEXT: [[L0:%.+]] = tile.load [[L]]{{\[}}[[O0]]] fill 0x7F800000
// CHECK-NEXT: [[D0:%.+]] = tile.load [[D]]{{\[}}%arg3] fill 0.0
// CHECK-NEXT: scf.for [[I:%.+]] = %arg3 to %arg4 step %c64 iter_args([[A:%.+]] = %arg2, [[LC:%.+]] = [[L0]], [[DC:%.+]] = [[D0]])
// CHECK-NEXT: [[N:%.+]] = arith.addi [[I]], %c64
// CHECK-NEXT: [[ON:%.+]] = arith.addi [[N]], %c1
// CHECK-NEXT: [[LN:%.+]] = tile.load [[L]]{{\[}}[[ON]]]
// CHECK-NEXT: [[DN:%.+]] = tile.load [[D]]{{\[}}[[N]]]
// CHECK-NOT: tile.load
// CHECK: tile.broadcast [[LC]] dim 0
// CHECK: tile.broadcast [[DC]] dim 0
// CHECK: scf.yield %{{.+}}, [[LN]], [[DN]] :
// VALID-LABEL: func.func @ahead
func.func @ahead(%lse: !m, %delta: !m, %init: !acc, %lo: index, %hi: index)
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.producer_warps = 4 : i64, tgpu.ctas_per_sm = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tgpu.warp_specialize {consumer_registers = 232 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %l = tile.view %lse[%c0, %c0] keep [2] : !m -> !tile.desc<?xf32>
    %d = tile.view %delta[%c0, %c0] keep [2] : !m -> !tile.desc<?xf32>
    %r = scf.for %i = %lo to %hi step %c64 iter_args(%acc = %init) -> (!acc) {
      %o = arith.addi %i, %c1 : index
      %lv = tile.load %l[%o] fill 0x7F800000 : f32 : !tile.desc<?xf32> -> !cols
      %dv = tile.load %d[%i] fill 0.0 : f32 : !tile.desc<?xf32> -> !cols
      %lb = tile.broadcast %lv dim 0 : !cols -> !acc
      %db = tile.broadcast %dv dim 0 : !cols -> !acc
      %s = arith.subf %acc, %lb : !acc
      %t = arith.mulf %s, %db : !acc
      scf.yield %t : !acc
    }
  }
  return
}

// -----

// Left where they are: a load outside a warp-specialized kernel's
// consumers; from an array the kernel writes; through a view made in the
// step (GQA's head by head: the next step's head could lie past the
// array); of a 2-D tile; at an offset read from memory; at an offset
// divided by the induction variable (not speculatable: for the step past
// the last it could divide by 0); the same in every step; and where the
// loop's carried tiles leave no room (two 64 x 128 f32 accumulators, 128
// of 232 registers per thread).
!m = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!m2 = memref<?x?x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!big = tensor<64x128xf32, #tgpu.mma<warps = 4>>
!cols = tensor<64xf32, #tgpu.cols<warps = 4>>
// CHECK-LABEL: func.func @untouched
// CHECK: scf.for {{.*}} iter_args(%{{[a-z0-9_]+}} = %arg{{[0-9]+}}) -> (tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
// CHECK: consumer {
// CHECK: scf.for {{.*}} iter_args(%{{[a-z0-9_]+}} = %arg{{[0-9]+}}) -> (tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
// CHECK: scf.for {{.*}} iter_args(%{{[a-z0-9_]+}} = %arg{{[0-9]+}}, %{{[a-z0-9_]+}} = %arg{{[0-9]+}}) -> (tensor<64x64xf32, #tgpu.mma<warps = 4>>, tensor<64x128xf32, #tgpu.mma<warps = 4>>) {
// CHECK: return
func.func @untouched(%lse: !m, %out: !m, %t2: !m2, %o2: !m2, %idx: memref<?xindex>, %init: !acc,
                     %big: !big, %lo: index, %hi: index)
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.producer_warps = 4 : i64, tgpu.ctas_per_sm = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %l = tile.view %lse[%c0, %c0] keep [2] : !m -> !tile.desc<?xf32>
  %outside = scf.for %i = %lo to %hi step %c64 iter_args(%acc = %init) -> (!acc) {
    %lv = tile.load %l[%i] fill 0.0 : f32 : !tile.desc<?xf32> -> !cols
    %b = tile.broadcast %lv dim 0 : !cols -> !acc
    %s = arith.addf %acc, %b : !acc
    scf.yield %s : !acc
  }
  tgpu.warp_specialize {consumer_registers = 232 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %w = tile.view %out[%c0, %c0] keep [2] : !m -> !tile.desc<?xf32>
    %v2 = tile.view %t2[%c0, %c0] keep [1, 3] : !m2 -> !tile.desc<?x64xf32>
    %vo = tile.view %o2[%c0, %c0] keep [1, 3] : !m2 -> !tile.desc<?x64xf32>
    %r = scf.for %i = %lo to %hi step %c64 iter_args(%acc = %init) -> (!acc) {
      %wv = tile.load %w[%i] fill 0.0 : f32 : !tile.desc<?xf32> -> !cols
      %h = arith.divui %i, %c64 : index
      %sv = tile.view %lse[%c0, %h] keep [2] : !m -> !tile.desc<?xf32>
      %svv = tile.load %sv[%i] fill 0.0 : f32 : !tile.desc<?xf32> -> !cols
      %t = tile.load %v2[%i, %c0] fill 0.0 : f32 : !tile.desc<?x64xf32> -> !acc
      %k = memref.load %idx[%h] : memref<?xindex>
      %kv = tile.load %l[%k] fill 0.0 : f32 : !tile.desc<?xf32> -> !cols
      %q = arith.divui %hi, %i : index
      %qv = tile.load %l[%q] fill 0.0 : f32 : !tile.desc<?xf32> -> !cols
      %iv = tile.load %l[%lo] fill 0.0 : f32 : !tile.desc<?xf32> -> !cols
      %b1 = tile.broadcast %wv dim 0 : !cols -> !acc
      %b2 = tile.broadcast %svv dim 0 : !cols -> !acc
      %b3 = tile.broadcast %kv dim 0 : !cols -> !acc
      %s1 = arith.addf %acc, %b1 : !acc
      %s2 = arith.addf %s1, %b2 : !acc
      %s3 = arith.addf %s2, %b3 : !acc
      %s4 = arith.addf %s3, %t : !acc
      %b4 = tile.broadcast %qv dim 0 : !cols -> !acc
      %b5 = tile.broadcast %iv dim 0 : !cols -> !acc
      %s5 = arith.addf %s4, %b4 : !acc
      %s6 = arith.addf %s5, %b5 : !acc
      scf.yield %s6 : !acc
    }
    tile.store %r, %vo[%lo, %c0] : !acc, !tile.desc<?x64xf32>
    %st = tile.load %w[%lo] fill 0.0 : f32 : !tile.desc<?xf32> -> !cols
    tile.store %st, %w[%hi] : !cols, !tile.desc<?xf32>
    %r2:2 = scf.for %i = %lo to %hi step %c64 iter_args(%acc = %init, %bb = %big) -> (!acc, !big) {
      %lv = tile.load %l[%i] fill 0.0 : f32 : !tile.desc<?xf32> -> !cols
      %b = tile.broadcast %lv dim 0 : !cols -> !acc
      %s = arith.addf %acc, %b : !acc
      %bb2 = arith.addf %bb, %bb : !big
      scf.yield %s, %bb2 : !acc, !big
    }
  }
  return
}

// -----

// An array written through a tensor map (a TMA store or reduction names
// its array by the map's `tensor`): its loads stay.
!m = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!cols = tensor<64xf32, #tgpu.cols<warps = 4>>
// CHECK-LABEL: func.func @mapped
// CHECK: scf.for {{.*}} iter_args(%{{[a-z0-9_]+}} = %arg{{[0-9]+}}) -> (tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
// CHECK-NEXT: tile.load
func.func @mapped(%lse: !m, %map: !tgpu.tensor_map {tgpu.tensor_map = {box = array<i64: 64, 1>, dims = array<i64: 2, 1, 0>, swizzle = 0 : i64, tensor = 0 : i64}},
                  %init: !acc, %lo: index, %hi: index)
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.producer_warps = 4 : i64, tgpu.ctas_per_sm = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  tgpu.warp_specialize {consumer_registers = 232 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %l = tile.view %lse[%c0, %c0] keep [2] : !m -> !tile.desc<?xf32>
    %r = scf.for %i = %lo to %hi step %c64 iter_args(%acc = %init) -> (!acc) {
      %lv = tile.load %l[%i] fill 0.0 : f32 : !tile.desc<?xf32> -> !cols
      %b = tile.broadcast %lv dim 0 : !cols -> !acc
      %s = arith.addf %acc, %b : !acc
      scf.yield %s : !acc
    }
    "test.write"(%map) : (!tgpu.tensor_map) -> ()
  }
  return
}
