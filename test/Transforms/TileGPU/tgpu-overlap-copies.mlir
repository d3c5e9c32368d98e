// RUN: kiln-opt %s -split-input-file -tgpu-overlap-copies | FileCheck %s --enable-var-scope

// tgpu-overlap-copies issues the second of two staged copies (barrier,
// copy_async, async_wait, barrier) of a block right after the first, waits
// for the first alone, and drops the second's leading barrier.

// A KV step as convert-tile-to-tgpu stages it: V's copy joins K's, K's wait
// lets one group (V's) stay in flight, and V's own wait and barrier stay in
// front of P * V.
// CHECK-LABEL: func.func @kv_step
// CHECK-SAME: ([[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[VD:%[^:]+]]: !tile.desc<?x64xbf16>, [[N:%[^:]+]]: index)
// CHECK-DAG: [[VB:%.+]] = tgpu.shared_alloc offset 18432
// CHECK-DAG: [[KB:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-DAG: [[QB:%.+]] = tgpu.shared_alloc offset 0
// CHECK-DAG: [[C0:%.+]] = arith.constant 0 : index
// CHECK: scf.for [[J:%[^ ]+]] = {{.*}} iter_args([[ACC:%[^ ]+]] = {{.*}}) -> (tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J]], [[C0]]{{\]}}, [[KB]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.copy_async [[VD]]{{\[}}[[J]], [[C0]]{{\]}}, [[VB]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.async_wait {pending = 1 : i64}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[Z:%.+]] = tile.splat
// CHECK-NEXT: [[S:%.+]] = tgpu.mma [[QB]], [[KB]], [[Z]] {transpose_rhs}
// CHECK-NEXT: [[E:%.+]] = math.exp2 [[S]]
// CHECK-NEXT: [[P:%.+]] = arith.truncf [[E]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[O:%.+]] = tgpu.mma [[P]], [[VB]], [[ACC]] :
// CHECK-NEXT: scf.yield [[O]]
// CHECK-NOT: tgpu.copy_async
// CHECK: return
func.func @kv_step(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %n: index)
    -> tensor<64x64xf32, #tgpu.mma<warps = 4>> {
  %vb = tgpu.shared_alloc offset 18432 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %kb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %qb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %o0 = tile.splat %zero : f32 -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %o0) -> (tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
    tgpu.async_wait
    tgpu.barrier
    %z = tile.splat %zero : f32 -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
    %s = tgpu.mma %qb, %kb, %z {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
    %e = math.exp2 %s : tensor<64x64xf32, #tgpu.mma<warps = 4>>
    %p = arith.truncf %e : tensor<64x64xf32, #tgpu.mma<warps = 4>> to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
    tgpu.barrier
    tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
    tgpu.async_wait
    tgpu.barrier
    %o = tgpu.mma %p, %vb, %acc : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
    scf.yield %o : tensor<64x64xf32, #tgpu.mma<warps = 4>>
  }
  return %r : tensor<64x64xf32, #tgpu.mma<warps = 4>>
}

// -----

// Copies pair up two by two in order: of four staged copies in one block,
// B's copy joins A's and D's joins C's.
// CHECK-LABEL: func.func @four_copies
// CHECK-SAME: ([[D:%[^:]+]]: !tile.desc<?x64xbf16>, [[I:%[^:]+]]: index)
// CHECK: [[A:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-NEXT: [[C:%.+]] = tgpu.shared_alloc offset 18432
// CHECK-NEXT: [[DB:%.+]] = tgpu.shared_alloc offset 27648
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[A]]
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[B]]
// CHECK-NEXT: tgpu.async_wait {pending = 1 : i64}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[C]]
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[DB]]
// CHECK-NEXT: tgpu.async_wait {pending = 1 : i64}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @four_copies(%d: !tile.desc<?x64xbf16>, %i: index) {
  %a = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %b = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %c = tgpu.shared_alloc offset 18432 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %e = tgpu.shared_alloc offset 27648 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %a : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %b : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %c : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %e : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return
}

// -----

// Of three staged copies the first two pair up; the third is left alone.
// CHECK-LABEL: func.func @three_copies
// CHECK-SAME: ([[D:%[^:]+]]: !tile.desc<?x64xbf16>, [[I:%[^:]+]]: index)
// CHECK: [[A:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-NEXT: [[C:%.+]] = tgpu.shared_alloc offset 18432
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[A]]
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[B]]
// CHECK-NEXT: tgpu.async_wait {pending = 1 : i64}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[C]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @three_copies(%d: !tile.desc<?x64xbf16>, %i: index) {
  %a = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %b = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %c = tgpu.shared_alloc offset 18432 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %a : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %b : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %c : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return
}

// -----

//===----------------------------------------------------------------------===//
// Where the pass must not fire
//===----------------------------------------------------------------------===//

// V's buffer is read between the two copies (by an mma), so V's copy cannot
// start early.
// CHECK-LABEL: func.func @second_buffer_used_between
// CHECK-SAME: ([[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[VD:%[^:]+]]: !tile.desc<?x64xbf16>, [[J:%[^:]+]]: index, [[P:%[^:]+]]: tensor<64x64xbf16, #tgpu.mma<warps = 4>>, [[ACC:%[^:]+]]: tensor<64x64xf32, #tgpu.mma<warps = 4>>)
// CHECK: [[KB:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[VB:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J]], [[C0:%[^ ]+]]{{\]}}, [[KB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[O:%.+]] = tgpu.mma [[P]], [[VB]], [[ACC]]
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[VD]]{{\[}}[[J]], [[C0]]{{\]}}, [[VB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return [[O]]
func.func @second_buffer_used_between(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %j: index,
                                      %p: tensor<64x64xbf16, #tgpu.mma<warps = 4>>,
                                      %acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>)
    -> tensor<64x64xf32, #tgpu.mma<warps = 4>> {
  %c0 = arith.constant 0 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  %o = tgpu.mma %p, %vb, %acc : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  tgpu.barrier
  tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return %o : tensor<64x64xf32, #tgpu.mma<warps = 4>>
}

// -----

// A use nested in a region between the copies counts too.
// CHECK-LABEL: func.func @second_buffer_used_in_region
// CHECK: tgpu.copy_async %{{.+}}, [[KB:%[^ ]+]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: scf.if
// CHECK: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async %{{.+}}, [[VB:%[^ ]+]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NOT: pending
func.func @second_buffer_used_in_region(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %j: index,
                                        %cond: i1, %p: tensor<64x64xbf16, #tgpu.mma<warps = 4>>,
                                        %acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>)
    -> tensor<64x64xf32, #tgpu.mma<warps = 4>> {
  %c0 = arith.constant 0 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  %o = scf.if %cond -> (tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
    %m = tgpu.mma %p, %vb, %acc : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
    scf.yield %m : tensor<64x64xf32, #tgpu.mma<warps = 4>>
  } else {
    scf.yield %acc : tensor<64x64xf32, #tgpu.mma<warps = 4>>
  }
  tgpu.barrier
  tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return %o : tensor<64x64xf32, #tgpu.mma<warps = 4>>
}

// -----

// When the first pair cannot be formed the pass tries the second copy with
// the third: B's buffer is read between A and B, but nothing reads C's
// between B and C.
// CHECK-LABEL: func.func @skip_then_pair
// CHECK-SAME: ([[D:%[^:]+]]: !tile.desc<?x64xbf16>, [[I:%[^:]+]]: index, [[P:%[^:]+]]: tensor<64x64xbf16, #tgpu.mma<warps = 4>>, [[ACC:%[^:]+]]: tensor<64x64xf32, #tgpu.mma<warps = 4>>)
// CHECK: [[A:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-NEXT: [[C:%.+]] = tgpu.shared_alloc offset 18432
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[A]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[O:%.+]] = tgpu.mma [[P]], [[B]], [[ACC]]
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[B]]
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[C]]
// CHECK-NEXT: tgpu.async_wait {pending = 1 : i64}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return [[O]]
func.func @skip_then_pair(%d: !tile.desc<?x64xbf16>, %i: index,
                          %p: tensor<64x64xbf16, #tgpu.mma<warps = 4>>,
                          %acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>)
    -> tensor<64x64xf32, #tgpu.mma<warps = 4>> {
  %a = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %b = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %c = tgpu.shared_alloc offset 18432 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %a : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  %o = tgpu.mma %p, %b, %acc : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %b : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %c : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return %o : tensor<64x64xf32, #tgpu.mma<warps = 4>>
}

// -----

// Two staged copies into the same buffer (K tiles at two offsets): the
// second must wait until the first has been consumed.
// CHECK-LABEL: func.func @same_buffer_twice
// CHECK-SAME: ([[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[J:%[^:]+]]: index, [[J2:%[^:]+]]: index)
// CHECK: [[KB:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J]], [[C0:%[^ ]+]]{{\]}}, [[KB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J2]], [[C0]]{{\]}}, [[KB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @same_buffer_twice(%kd: !tile.desc<?x64xbf16>, %j: index, %j2: index) {
  %c0 = arith.constant 0 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  tgpu.barrier
  tgpu.copy_async %kd[%j2, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return
}

// -----

// V's row offset is computed after K's copy, so V's copy cannot move there.
// CHECK-LABEL: func.func @offset_defined_after_first
// CHECK-SAME: ([[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[VD:%[^:]+]]: !tile.desc<?x64xbf16>, [[J:%[^:]+]]: index)
// CHECK: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J]], [[C0:%[^ ]+]]{{\]}}, [[KB:%[^ ]+]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[JV:%.+]] = arith.addi [[J]], %{{.+}} : index
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[VD]]{{\[}}[[JV]], [[C0]]{{\]}}, [[VB:%[^ ]+]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @offset_defined_after_first(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %j: index) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  %jv = arith.addi %j, %c64 : index
  tgpu.barrier
  tgpu.copy_async %vd[%jv, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return
}

// -----

// The same with the descriptor: V's view is made after K's copy.
// CHECK-LABEL: func.func @desc_defined_after_first
// CHECK: tgpu.copy_async %{{.+}}, [[KB:%[^ ]+]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[VD:%.+]] = tile.view
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[VD]]
// CHECK-NEXT: tgpu.async_wait{{$}}
func.func @desc_defined_after_first(%kd: !tile.desc<?x64xbf16>, %v: memref<?x?x64xbf16>,
                                    %h: index, %j: index) {
  %c0 = arith.constant 0 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  %vd = tile.view %v[%h] keep [1, 2] : memref<?x?x64xbf16> -> !tile.desc<?x64xbf16>
  tgpu.barrier
  tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return
}

// -----

// Only the exact staged form is paired. Each function below has one staged
// copy and one that is not: its wait already leaves a group pending, it has
// no leading barrier, or no trailing barrier. Nothing changes.
// CHECK-LABEL: func.func @wait_pending
// CHECK-SAME: ([[D:%[^:]+]]: !tile.desc<?x64xbf16>, [[I:%[^:]+]]: index)
// CHECK: [[A:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[A]]
// CHECK-NEXT: tgpu.async_wait {pending = 1 : i64}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[B]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @wait_pending(%d: !tile.desc<?x64xbf16>, %i: index) {
  %a = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %b = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %a : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait {pending = 1 : i64}
  tgpu.barrier
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %b : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return
}

// CHECK-LABEL: func.func @no_leading_barrier
// CHECK-SAME: ([[D:%[^:]+]]: !tile.desc<?x64xbf16>, [[I:%[^:]+]]: index)
// CHECK: [[A:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[A]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: arith.addi
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[B]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @no_leading_barrier(%d: !tile.desc<?x64xbf16>, %i: index) -> index {
  %a = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %b = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.copy_async %d[%i, %i], %a : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  %x = arith.addi %i, %i : index
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %b : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return %x : index
}

// CHECK-LABEL: func.func @no_trailing_barrier
// CHECK-SAME: ([[D:%[^:]+]]: !tile.desc<?x64xbf16>, [[I:%[^:]+]]: index)
// CHECK: [[A:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[A]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]], [[I]]{{\]}}, [[B]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: arith.addi
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @no_trailing_barrier(%d: !tile.desc<?x64xbf16>, %i: index) -> index {
  %a = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %b = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %a : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  tgpu.copy_async %d[%i, %i], %b : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  %x = arith.addi %i, %i : index
  tgpu.barrier
  return %x : index
}

// -----

// Staged copies in different blocks are not paired: Q's copy before the loop
// stays where it is, and K's copy, alone in the loop body, too.
// CHECK-LABEL: func.func @different_blocks
// CHECK: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async %{{.+}}, [[QB:%[^ ]+]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: scf.for
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async %{{.+}}, [[KB:%[^ ]+]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.mma [[QB]], [[KB]]
// CHECK-NOT: pending
func.func @different_blocks(%qd: !tile.desc<?x64xbf16>, %kd: !tile.desc<?x64xbf16>, %n: index)
    -> tensor<64x64xf32, #tgpu.mma<warps = 4>> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %qb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %kb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %acc0 = tile.splat %zero : f32 -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  tgpu.barrier
  tgpu.copy_async %qd[%c0, %c0], %qb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %acc0) -> (tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
    tgpu.async_wait
    tgpu.barrier
    %s = tgpu.mma %qb, %kb, %acc {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
    scf.yield %s : tensor<64x64xf32, #tgpu.mma<warps = 4>>
  }
  return %r : tensor<64x64xf32, #tgpu.mma<warps = 4>>
}

// -----

// A write to memory between the copies (here a tile.store to global memory,
// which V's descriptor may alias) keeps V's copy after it.
// CHECK-LABEL: func.func @store_between
// CHECK-SAME: ([[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[VD:%[^:]+]]: !tile.desc<?x64xbf16>, [[OD:%[^:]+]]: !tile.desc<?x64xf32>, [[J:%[^:]+]]: index, [[T:%[^:]+]]: tensor<64x64xf32, #tgpu.mma<warps = 4>>)
// CHECK: [[KB:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[VB:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J]], [[C0:%[^ ]+]]{{\]}}, [[KB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tile.store [[T]], [[OD]]{{\[}}[[J]], [[C0]]{{\]}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[VD]]{{\[}}[[J]], [[C0]]{{\]}}, [[VB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @store_between(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %od: !tile.desc<?x64xf32>,
                         %j: index, %t: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %c0 = arith.constant 0 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  tile.store %t, %od[%j, %c0] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, !tile.desc<?x64xf32>
  tgpu.barrier
  tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return
}

// -----

// A write nested in a region counts too.
// CHECK-LABEL: func.func @store_between_in_region
// CHECK: tgpu.copy_async %{{.+}}, [[KB:%[^ ]+]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: scf.if
// CHECK-NEXT: tile.store
// CHECK-NEXT: }
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async %{{.+}}, [[VB:%[^ ]+]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NOT: pending
func.func @store_between_in_region(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %od: !tile.desc<?x64xf32>,
                                   %j: index, %cond: i1, %t: tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %c0 = arith.constant 0 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  scf.if %cond {
    tile.store %t, %od[%j, %c0] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, !tile.desc<?x64xf32>
  }
  tgpu.barrier
  tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return
}

// -----

// A read of global memory in the same place is no obstacle: the copies pair.
// CHECK-LABEL: func.func @load_between
// CHECK-SAME: ([[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[VD:%[^:]+]]: !tile.desc<?x64xbf16>, [[OD:%[^:]+]]: !tile.desc<?x64xf32>, [[J:%[^:]+]]: index)
// CHECK: [[KB:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[VB:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J]], [[C0:%[^ ]+]]{{\]}}, [[KB]]
// CHECK-NEXT: tgpu.copy_async [[VD]]{{\[}}[[J]], [[C0]]{{\]}}, [[VB]]
// CHECK-NEXT: tgpu.async_wait {pending = 1 : i64}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[T:%.+]] = tile.load [[OD]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return [[T]]
func.func @load_between(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %od: !tile.desc<?x64xf32>,
                        %j: index) -> tensor<64x64xf32, #tgpu.mma<warps = 4>> {
  %c0 = arith.constant 0 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  %t = tile.load %od[%j, %c0] fill 0.0 : f32 : !tile.desc<?x64xf32> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  tgpu.barrier
  tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return %t : tensor<64x64xf32, #tgpu.mma<warps = 4>>
}

// -----

// V's buffer has a view (a memref.subview) besides its copy and mma: reads
// through the view are not uses of the buffer itself, so the pass leaves such
// buffers alone.
// CHECK-LABEL: func.func @second_buffer_viewed
// CHECK-SAME: ([[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[VD:%[^:]+]]: !tile.desc<?x64xbf16>, [[J:%[^:]+]]: index)
// CHECK: [[KB:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[VB:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-NEXT: [[VS:%.+]] = memref.subview [[VB]]
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J]], [[C0:%[^ ]+]]{{\]}}, [[KB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[X:%.+]] = memref.load [[VS]]
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[VD]]{{\[}}[[J]], [[C0]]{{\]}}, [[VB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return [[X]]
func.func @second_buffer_viewed(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %j: index) -> bf16 {
  %c0 = arith.constant 0 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vs = memref.subview %vb[0, 0] [16, 64] [1, 1] : memref<64x64xbf16, strided<[72, 1]>, 3> to memref<16x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  %x = memref.load %vs[%c0, %c0] : memref<16x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return %x : bf16
}

// -----

// Two shared_allocs at the same offset are one piece of shared memory: V's
// copy would overwrite K's tile while it is still in flight.
// CHECK-LABEL: func.func @buffers_same_offset
// CHECK-SAME: ([[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[VD:%[^:]+]]: !tile.desc<?x64xbf16>, [[J:%[^:]+]]: index)
// CHECK: [[KB:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[VB:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J]], [[C0:%[^ ]+]]{{\]}}, [[KB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[VD]]{{\[}}[[J]], [[C0]]{{\]}}, [[VB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @buffers_same_offset(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %j: index) {
  %c0 = arith.constant 0 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  tgpu.barrier
  tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return
}

// -----

// A 16-byte overlap is enough: K's buffer takes 64 * 72 * 2 = 9216 bytes, V's
// starts at 9200. (At 9216, as in @kv_step, the copies pair.)
// CHECK-LABEL: func.func @buffers_partial_overlap
// CHECK: [[KB:%.+]] = tgpu.shared_alloc offset 0
// CHECK-NEXT: [[VB:%.+]] = tgpu.shared_alloc offset 9200
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async %{{.+}}, [[KB]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async %{{.+}}, [[VB]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @buffers_partial_overlap(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %j: index) {
  %c0 = arith.constant 0 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 9200 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  tgpu.barrier
  tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  tgpu.barrier
  return
}
