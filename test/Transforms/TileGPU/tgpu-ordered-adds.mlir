// RUN: kiln-opt %s -split-input-file -tgpu-ordered-adds -verify-diagnostics | FileCheck %s

// Each staged add into the marked accumulator waits for its turn on the
// (batch, head, row / rows) counter and passes it on after the add; an add
// into another array is left alone.
// CHECK-LABEL: func.func @ordered(
// CHECK-SAME: %[[ACC:[a-z0-9]+]]: memref<?x?x?x64xf32>
// CHECK-SAME: %[[TURNS:[a-z0-9]+]]: memref<?x?x?xi32>
// CHECK-SAME: %[[B:[a-z0-9]+]]: index, %[[H:[a-z0-9]+]]: index, %[[ROW:[a-z0-9]+]]: index, %[[TURN:[a-z0-9]+]]: index
// CHECK: [[VIEW:%[0-9]+]] = tile.view %[[ACC]][%[[B]], %[[H]]] keep [2, 3]
// CHECK: [[COUNTERS:%[0-9]+]] = tile.view %[[TURNS]][%[[B]], %[[H]]] keep [2] : memref<?x?x?xi32> -> <?xi32>
// CHECK: [[BLOCK:%[0-9]+]] = arith.divui %[[ROW]], %c64 : index
// CHECK-NEXT: tgpu.turn_wait [[COUNTERS]][[[BLOCK]]], %[[TURN]] : <?xi32>
// CHECK-NEXT: tgpu.core_add_staged %{{[0-9]+}}, [[VIEW]][%[[ROW]], %c0] turn %[[TURN]]
// CHECK-NEXT: tgpu.turn_signal [[COUNTERS]][[[BLOCK]]] : <?xi32>
// CHECK: tgpu.core_add_staged
// CHECK-NEXT: } consumer {
// CHECK-NEXT: tgpu.barrier
// CHECK-NOT: tgpu.turn_
func.func @ordered(%acc: memref<?x?x?x64xf32> {tile.workspace = "dq_accum"},
                   %turns: memref<?x?x?xi32> {tile.workspace = "dq_turns"},
                   %other: memref<?x?x?x64xf32> {tile.workspace = "other"},
                   %b: index, %h: index, %row: index, %turn: index)
    attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64, tile.ordered_adds = {accumulator = "dq_accum", rows = 64 : i64, turns = "dq_turns"}} {
  %c0 = arith.constant 0 : index
  %staging = tgpu.shared_alloc offset 0 : memref<64x64xf32, 3>
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %view = tile.view %acc[%b, %h] keep [2, 3] : memref<?x?x?x64xf32> -> <?x64xf32>
    tgpu.core_add_staged %staging, %view[%row, %c0] turn %turn : memref<64x64xf32, 3>, <?x64xf32>
    %view2 = tile.view %other[%b, %h] keep [2, 3] : memref<?x?x?x64xf32> -> <?x64xf32>
    tgpu.core_add_staged %staging, %view2[%row, %c0] : memref<64x64xf32, 3>, <?x64xf32>
  } consumer {
    tgpu.barrier
  }
  return
}

// -----

func.func @no_turn(%acc: memref<?x?x?x64xf32> {tile.workspace = "dq_accum"},
                   %turns: memref<?x?x?xi32> {tile.workspace = "dq_turns"},
                   %b: index, %h: index, %row: index)
    attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64, tile.ordered_adds = {accumulator = "dq_accum", rows = 64 : i64, turns = "dq_turns"}} {
  %c0 = arith.constant 0 : index
  %staging = tgpu.shared_alloc offset 0 : memref<64x64xf32, 3>
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %view = tile.view %acc[%b, %h] keep [2, 3] : memref<?x?x?x64xf32> -> <?x64xf32>
    // expected-error @+1 {{adds into 'dq_accum', whose adds are to be ordered, without a turn}}
    tgpu.core_add_staged %staging, %view[%row, %c0] : memref<64x64xf32, 3>, <?x64xf32>
  } consumer {
    tgpu.barrier
  }
  return
}

// -----

func.func @half_rows(%acc: memref<?x?x?x64xf32> {tile.workspace = "dq_accum"},
                     %turns: memref<?x?x?xi32> {tile.workspace = "dq_turns"},
                     %b: index, %h: index, %row: index, %turn: index)
    attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64, tile.ordered_adds = {accumulator = "dq_accum", rows = 64 : i64, turns = "dq_turns"}} {
  %c32 = arith.constant 32 : index
  %staging = tgpu.shared_alloc offset 0 : memref<64x32xf32, 3>
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %view = tile.view %acc[%b, %h] keep [2, 3] : memref<?x?x?x64xf32> -> <?x64xf32>
    // expected-error @+1 {{cannot take turns: an ordered add must add a whole 64-row block of a [batch, head] view at column 0}}
    tgpu.core_add_staged %staging, %view[%row, %c32] turn %turn : memref<64x32xf32, 3>, <?x64xf32>
  } consumer {
    tgpu.barrier
  }
  return
}

// -----

// expected-error @+1 {{has a malformed tile.ordered_adds}}
func.func @no_turns_workspace(%acc: memref<?x?x?x64xf32> {tile.workspace = "dq_accum"})
    attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64, tile.ordered_adds = {accumulator = "dq_accum", rows = 64 : i64, turns = "dq_turns"}} {
  return
}

// -----

// expected-error @+1 {{ordered adds need one program per CTA}}
func.func @persistent(%acc: memref<?x?x?x64xf32> {tile.workspace = "dq_accum"},
                      %turns: memref<?x?x?xi32> {tile.workspace = "dq_turns"})
    attributes {tgpu.persistent, tile.ordered_adds = {accumulator = "dq_accum", rows = 64 : i64, turns = "dq_turns"}} {
  return
}
