// RUN: kiln-opt %s -split-input-file -verify-diagnostics -convert-tile-to-tgpu=num-warps=4 | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -verify-diagnostics -convert-tile-to-tgpu=num-warps=4 | FileCheck %s --check-prefix=PLAIN
// Without num-warps, each kernel gets 16 rows per warp of its row block
// (tile.block_m; min(tile.block_m, tile.block_n) for backward kernels). The
// file's invalid kernels still fail, hence `not`.
// RUN: not kiln-opt %s -split-input-file -convert-tile-to-tgpu 2>/dev/null | FileCheck %s --check-prefix=DERIVED
// RUN: kiln-opt %s -split-input-file -verify-diagnostics -convert-tile-to-tgpu="arch=sm_80 num-warps=2" | FileCheck %s --check-prefix=SM80 --enable-var-scope
// RUN: kiln-opt %s -split-input-file -verify-diagnostics -convert-tile-to-tgpu="num-warps=4 atomic-product-columns=0" | FileCheck %s --check-prefix=WHOLE
//
// Pass options that are wrong for every kernel of this file:
// RUN: not kiln-opt %s -split-input-file -convert-tile-to-tgpu=arch=sm_70 2>&1 | FileCheck %s --check-prefix=BAD-ARCH
// RUN: not kiln-opt %s -split-input-file -convert-tile-to-tgpu=num-warps=-1 2>&1 | FileCheck %s --check-prefix=BAD-WARPS
// RUN: not kiln-opt %s -split-input-file -convert-tile-to-tgpu=num-warps=17 2>&1 | FileCheck %s --check-prefix=BAD-WARPS
// RUN: not kiln-opt %s -split-input-file -convert-tile-to-tgpu=num-warps=8 2>&1 | FileCheck %s --check-prefix=WARPS8
// RUN: not kiln-opt %s -split-input-file -convert-tile-to-tgpu=shared-memory-bytes=27647 2>&1 | FileCheck %s --check-prefix=SMEM

// BAD-ARCH: error: unsupported arch 'sm_70'; expected sm_80 or sm_90a
// BAD-WARPS: error: num-warps must be in [0, 16]
// WARPS8: error: block_m 64 must be a multiple of 16 * num_warps (128) for the mma layout
// SMEM: error: the schedule needs 27648 bytes of shared memory but the target allows 27647; use smaller tiles for this head dim

// After the pass no register tile is left without a layout.
// PLAIN-NOT: {{tensor<[0-9x]+[a-z0-9]+>}}
// PLAIN-NOT: tile.dot

//===----------------------------------------------------------------------===//
// A forward attention step (the tile program of one Q block, trimmed).
//===----------------------------------------------------------------------===//

// The kernel records its schedule; Q, K and V get one padded buffer each
// (64 bf16 columns + 16 bytes = a pitch of 72 elements, 9216 bytes).
// CHECK-LABEL: func.func @attention_step
// CHECK-SAME: ([[QD:%[^:]+]]: !tile.desc<?x64xbf16>, [[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[VD:%[^:]+]]: !tile.desc<?x64xbf16>, [[OD:%[^:]+]]: !tile.desc<?x64xbf16>, [[LD:%[^:]+]]: !tile.desc<?xf32>, [[N:%[^:]+]]: index)
// CHECK-SAME: attributes {tgpu.arch = "sm_90a", tgpu.fast_math, tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 27648 : i64, tile.block_m = 64 : i64, tile.block_n = 64 : i64, tile.kernel}
// CHECK-DAG: [[VB:%.+]] = tgpu.shared_alloc offset 18432 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[KB:%.+]] = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[QB:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[C0:%.+]] = arith.constant 0 : index
// CHECK-NOT: tgpu.shared_alloc
// Q is staged where it was loaded: barrier, copy, wait, barrier.
// CHECK: [[ROW:%.+]] = arith.muli
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[QD]]{{\[}}[[ROW]], [[C0]]{{\]}}, [[QB]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// Register tiles: 1-D row vectors in #tgpu.rows, 2-D tiles (f32, index) in #tgpu.mma.
// CHECK-NEXT: [[M0:%.+]] = tile.splat %{{.+}} : f32 -> tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: [[L0:%.+]] = tile.splat %{{.+}} : f32 -> tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: [[O0:%.+]] = tile.splat %{{.+}} : f32 -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[COLS:%.+]] = tile.iota dim 1 : tensor<64x64xindex, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[NV:%.+]] = tile.splat [[N]] : index -> tensor<64x64xindex, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[NINF:%.+]] = tile.splat %{{.+}} : f32 -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// The loop carries laid-out tiles: iter_args, results and the yield.
// CHECK-NEXT: [[R:%[^:]+]]:3 = scf.for [[J:%[^ ]+]] = [[C0]] to [[N]] step %{{.+}} iter_args([[M:%[^ ]+]] = [[M0]], [[L:%[^ ]+]] = [[L0]], [[ACC:%[^ ]+]] = [[O0]]) -> (tensor<64xf32, #tgpu.rows<warps = 4>>, tensor<64xf32, #tgpu.rows<warps = 4>>, tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
// K is staged in the loop body, then Q K^T reads both operands from shared
// memory; the missing accumulator becomes a zero splat.
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J]], [[C0]]{{\]}}, [[KB]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[ZERO:%.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: [[SACC:%.+]] = tile.splat [[ZERO]] : f32 -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[S:%.+]] = tgpu.mma [[QB]], [[KB]], [[SACC]] {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[JS:%.+]] = tile.splat [[J]] : index -> tensor<64x64xindex, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[COL:%.+]] = arith.addi [[COLS]], [[JS]] : tensor<64x64xindex, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[IN:%.+]] = arith.cmpi slt, [[COL]], [[NV]] : tensor<64x64xindex, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[SM:%.+]] = arith.select [[IN]], [[S]], [[NINF]] : tensor<64x64xi1, #tgpu.mma<warps = 4>>, tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[MX:%.+]] = tile.reduce max [[SM]] dim 1 : tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: [[MN:%.+]] = arith.maximumf [[M]], [[MX]] : tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK: [[ALPHA:%.+]] = math.exp2 %{{.+}} : tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK: [[LN:%.+]] = arith.addf %{{.+}}, %{{.+}} : tensor<64xf32, #tgpu.rows<warps = 4>>
// P stays in registers: bf16 in the mma layout.
// CHECK-NEXT: [[P:%.+]] = arith.truncf %{{.+}} : tensor<64x64xf32, #tgpu.mma<warps = 4>> to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// V is staged where it was loaded, after the softmax.
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[VD]]{{\[}}[[J]], [[C0]]{{\]}}, [[VB]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[AB:%.+]] = tile.broadcast [[ALPHA]] dim 1 : tensor<64xf32, #tgpu.rows<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[ACCS:%.+]] = arith.mulf [[ACC]], [[AB]] : tensor<64x64xf32, #tgpu.mma<warps = 4>>
// P * V: register lhs, shared rhs, not transposed, with the given accumulator.
// CHECK-NEXT: [[O:%.+]] = tgpu.mma [[P]], [[VB]], [[ACCS]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: scf.yield [[MN]], [[LN]], [[O]] : tensor<64xf32, #tgpu.rows<warps = 4>>, tensor<64xf32, #tgpu.rows<warps = 4>>, tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: }
// CHECK-NEXT: [[LB:%.+]] = tile.broadcast [[R]]#1 dim 1 : tensor<64xf32, #tgpu.rows<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[ON:%.+]] = arith.divf [[R]]#2, [[LB]] : tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[OB:%.+]] = arith.truncf [[ON]] : tensor<64x64xf32, #tgpu.mma<warps = 4>> to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-NEXT: tile.store [[OB]], [[OD]]{{\[}}[[ROW]], [[C0]]{{\]}} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, <?x64xbf16>
// CHECK-NEXT: [[LSE:%.+]] = arith.addf [[R]]#0, [[R]]#1 : tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: tile.store [[LSE]], [[LD]]{{\[}}[[ROW]]{{\]}} : tensor<64xf32, #tgpu.rows<warps = 4>>, <?xf32>
// CHECK-NEXT: return
//
// With `arch=sm_80 num-warps=2` the same schedule is recorded for sm_80 and
// every layout spans two warps; the buffers do not depend on the warp count.
// SM80-LABEL: func.func @attention_step
// SM80-SAME: attributes {tgpu.arch = "sm_80", tgpu.fast_math, tgpu.num_warps = 2 : i64, tgpu.shared_bytes = 27648 : i64,
// SM80: tgpu.shared_alloc offset 18432 : memref<64x64xbf16, strided<[72, 1]>, 3>
// SM80: scf.for {{.*}} -> (tensor<64xf32, #tgpu.rows<warps = 2>>, tensor<64xf32, #tgpu.rows<warps = 2>>, tensor<64x64xf32, #tgpu.mma<warps = 2>>)
// SM80: tgpu.mma %{{.+}}, %{{.+}}, %{{.+}} {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 2>> -> tensor<64x64xf32, #tgpu.mma<warps = 2>>
// SM80: tile.reduce max %{{.+}} dim 1 : tensor<64x64xf32, #tgpu.mma<warps = 2>> -> tensor<64xf32, #tgpu.rows<warps = 2>>
// SM80: tgpu.mma %{{.+}}, %{{.+}}, %{{.+}} : tensor<64x64xbf16, #tgpu.mma<warps = 2>>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 2>> -> tensor<64x64xf32, #tgpu.mma<warps = 2>>
// SM80-NOT: warps = 4
// SM80-LABEL: func.func @shared_buffers
func.func @attention_step(%qd: !tile.desc<?x64xbf16>, %kd: !tile.desc<?x64xbf16>,
                          %vd: !tile.desc<?x64xbf16>, %od: !tile.desc<?x64xbf16>,
                          %ld: !tile.desc<?xf32>, %n: index)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %pid = tile.program_id 0
  %row = arith.muli %pid, %c64 : index
  %q = tile.load %qd[%row, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %m0 = tile.splat %ninf : f32 -> tensor<64xf32>
  %l0 = tile.splat %zero : f32 -> tensor<64xf32>
  %o0 = tile.splat %zero : f32 -> tensor<64x64xf32>
  %cols = tile.iota dim 1 : tensor<64x64xindex>
  %nv = tile.splat %n : index -> tensor<64x64xindex>
  %ninfs = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %r:3 = scf.for %j = %c0 to %n step %c64 iter_args(%m = %m0, %l = %l0, %acc = %o0)
      -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    %k = tile.load %kd[%j, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q, %k {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %js = tile.splat %j : index -> tensor<64x64xindex>
    %col = arith.addi %cols, %js : tensor<64x64xindex>
    %in = arith.cmpi slt, %col, %nv : tensor<64x64xindex>
    %sm = arith.select %in, %s, %ninfs : tensor<64x64xi1>, tensor<64x64xf32>
    %mx = tile.reduce max %sm dim 1 : tensor<64x64xf32> -> tensor<64xf32>
    %mn = arith.maximumf %m, %mx : tensor<64xf32>
    %mb = tile.broadcast %mn dim 1 : tensor<64xf32> -> tensor<64x64xf32>
    %d = arith.subf %sm, %mb : tensor<64x64xf32>
    %p = math.exp2 %d : tensor<64x64xf32>
    %dm = arith.subf %m, %mn : tensor<64xf32>
    %alpha = math.exp2 %dm : tensor<64xf32>
    %rs = tile.reduce sum %p dim 1 : tensor<64x64xf32> -> tensor<64xf32>
    %ls = arith.mulf %l, %alpha : tensor<64xf32>
    %ln = arith.addf %ls, %rs : tensor<64xf32>
    %pb = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %v = tile.load %vd[%j, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
    %ab = tile.broadcast %alpha dim 1 : tensor<64xf32> -> tensor<64x64xf32>
    %accs = arith.mulf %acc, %ab : tensor<64x64xf32>
    %o = tile.dot %pb, %v, %accs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %mn, %ln, %o : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
  %lb = tile.broadcast %r#1 dim 1 : tensor<64xf32> -> tensor<64x64xf32>
  %on = arith.divf %r#2, %lb : tensor<64x64xf32>
  %ob = arith.truncf %on : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %ob, %od[%row, %c0] : tensor<64x64xbf16>, !tile.desc<?x64xbf16>
  %lse = arith.addf %r#0, %r#1 : tensor<64xf32>
  tile.store %lse, %ld[%row] : tensor<64xf32>, !tile.desc<?xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Buffer sharing and sizing
//===----------------------------------------------------------------------===//

// Loads of one descriptor with one tile shape share a buffer (K in two KV
// loops); a load of the same descriptor with another shape gets its own. Q,
// the lhs of three dots, is staged once.
// CHECK-LABEL: func.func @shared_buffers
// CHECK-SAME: ([[QD:%[^:]+]]: !tile.desc<?x64xbf16>, [[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[OD:%[^:]+]]: !tile.desc<?x64xf32>, [[OD2:%[^:]+]]: !tile.desc<?x32xf32>, [[N:%[^:]+]]: index)
// CHECK-SAME: tgpu.shared_bytes = 23040 : i64
// CHECK-DAG: [[K32B:%.+]] = tgpu.shared_alloc offset 18432 : memref<32x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[KB:%.+]] = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[QB:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NOT: tgpu.shared_alloc
// CHECK: tgpu.copy_async [[QD]]{{.*}}, [[QB]] :
// CHECK-NOT: tgpu.copy_async [[QD]]
// CHECK: scf.for [[J1:%[^ ]+]] =
// CHECK: tgpu.copy_async [[KD]]{{\[}}[[J1]], %{{.+}}{{\]}}, [[KB]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK: tgpu.mma [[QB]], [[KB]], %{{.+}} {transpose_rhs}
// CHECK: scf.for [[J2:%[^ ]+]] =
// CHECK: tgpu.copy_async [[KD]]{{\[}}[[J2]], %{{.+}}{{\]}}, [[KB]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK: tgpu.mma [[QB]], [[KB]], %{{.+}} {transpose_rhs}
// CHECK: tgpu.copy_async [[KD]]{{\[}}[[N]], %{{.+}}{{\]}}, [[K32B]] : !tile.desc<?x64xbf16>, memref<32x64xbf16, strided<[72, 1]>, 3>
// CHECK: tgpu.mma [[QB]], [[K32B]], %{{.+}} {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<32x64xbf16, strided<[72, 1]>, 3>, tensor<64x32xf32, #tgpu.mma<warps = 4>> -> tensor<64x32xf32, #tgpu.mma<warps = 4>>
// CHECK-NOT: tile.load
// CHECK: return
func.func @shared_buffers(%qd: !tile.desc<?x64xbf16>, %kd: !tile.desc<?x64xbf16>,
                          %od: !tile.desc<?x64xf32>, %od2: !tile.desc<?x32xf32>, %n: index)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %q = tile.load %qd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %z = tile.splat %zero : f32 -> tensor<64x64xf32>
  %a = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %z) -> (tensor<64x64xf32>) {
    %k = tile.load %kd[%j, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q, %k, %acc {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %s : tensor<64x64xf32>
  }
  %b = scf.for %j = %n to %n step %c64 iter_args(%acc = %a) -> (tensor<64x64xf32>) {
    %k = tile.load %kd[%j, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q, %k, %acc {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %s : tensor<64x64xf32>
  }
  %k32 = tile.load %kd[%n, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<32x64xbf16>
  %s32 = tile.dot %q, %k32 {transpose_rhs} : tensor<64x64xbf16>, tensor<32x64xbf16> -> tensor<64x32xf32>
  tile.store %b, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  tile.store %s32, %od2[%c0, %c0] : tensor<64x32xf32>, !tile.desc<?x32xf32>
  return
}

// -----

// The same for sibling loops inside a loop's body (the GQA dK/dV kernel's
// query loops inside its heads loop): K of both inner loops shares a buffer.
// CHECK-LABEL: func.func @nested_shared_buffers
// CHECK-SAME: tgpu.shared_bytes = 18432 : i64
// CHECK-DAG: [[KB:%.+]] = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[QB:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NOT: tgpu.shared_alloc
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tgpu.copy_async {{.*}}, [[KB]] :
// CHECK: scf.for
// CHECK: tgpu.copy_async {{.*}}, [[KB]] :
func.func @nested_shared_buffers(%qd: !tile.desc<?x64xbf16>, %kd: !tile.desc<?x64xbf16>,
                                 %od: !tile.desc<?x64xf32>, %n: index)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %q = tile.load %qd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %z = tile.splat %zero : f32 -> tensor<64x64xf32>
  %r = scf.for %h = %c0 to %c4 step %c1 iter_args(%outer = %z) -> (tensor<64x64xf32>) {
    %a = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %outer) -> (tensor<64x64xf32>) {
      %k = tile.load %kd[%j, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
      %s = tile.dot %q, %k, %acc {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
      scf.yield %s : tensor<64x64xf32>
    }
    %b = scf.for %j = %n to %n step %c64 iter_args(%acc = %a) -> (tensor<64x64xf32>) {
      %k = tile.load %kd[%j, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
      %s = tile.dot %q, %k, %acc {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
      scf.yield %s : tensor<64x64xf32>
    }
    scf.yield %b : tensor<64x64xf32>
  }
  tile.store %r, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// Two loads of one descriptor with one shape that feed the same dot (lhs and
// rhs) are live together, so they get two buffers at different offsets.
// CHECK-LABEL: func.func @same_desc_both_operands
// CHECK-SAME: ([[AD:%[^:]+]]: !tile.desc<?x64xbf16>, [[OD:%[^:]+]]: !tile.desc<?x64xf32>, [[I:%[^:]+]]: index)
// CHECK-SAME: tgpu.shared_bytes = 18432 : i64
// CHECK-DAG: [[RB:%.+]] = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[LB:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NOT: tgpu.shared_alloc
// CHECK: tgpu.copy_async [[AD]]{{\[}}[[C0:%[^ ]+]], [[C0]]{{\]}}, [[LB]] :
// CHECK: tgpu.copy_async [[AD]]{{\[}}[[I]], [[C0]]{{\]}}, [[RB]] :
// CHECK: tgpu.mma [[LB]], [[RB]], %{{.+}} {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NOT: tgpu.shared_alloc
// CHECK: return
func.func @same_desc_both_operands(%ad: !tile.desc<?x64xbf16>, %od: !tile.desc<?x64xf32>, %i: index)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.load %ad[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %b = tile.load %ad[%i, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %s = tile.dot %a, %b {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  tile.store %s, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// Row padding is 16 bytes whatever the element type (4 f32 or 8 f16
// elements), and each buffer starts on a 128-byte boundary: the 4x16xf32
// buffer takes 4 * 20 * 4 = 320 bytes, rounded up to 384.
// CHECK-LABEL: func.func @padding
// CHECK-SAME: ([[AD:%[^:]+]]: !tile.desc<?x4xf32>, [[BD:%[^:]+]]: !tile.desc<?x16xf32>, [[CD:%[^:]+]]: !tile.desc<?x128xf16>, [[DD:%[^:]+]]: !tile.desc<?x128xf16>,
// CHECK-SAME: tgpu.shared_bytes = 24192 : i64
// CHECK-DAG: [[DB:%.+]] = tgpu.shared_alloc offset 19840 : memref<16x128xf16, strided<[136, 1]>, 3>
// CHECK-DAG: [[CB:%.+]] = tgpu.shared_alloc offset 2432 : memref<64x128xf16, strided<[136, 1]>, 3>
// CHECK-DAG: [[BB:%.+]] = tgpu.shared_alloc offset 2048 : memref<4x16xf32, strided<[20, 1]>, 3>
// CHECK-DAG: [[AB:%.+]] = tgpu.shared_alloc offset 0 : memref<64x4xf32, strided<[8, 1]>, 3>
// CHECK: tgpu.copy_async [[AD]]{{.*}}, [[AB]] : !tile.desc<?x4xf32>, memref<64x4xf32, strided<[8, 1]>, 3>
// CHECK: tgpu.copy_async [[BD]]{{.*}}, [[BB]] : !tile.desc<?x16xf32>, memref<4x16xf32, strided<[20, 1]>, 3>
// CHECK: tgpu.mma [[AB]], [[BB]], %{{.+}} : memref<64x4xf32, strided<[8, 1]>, 3>, memref<4x16xf32, strided<[20, 1]>, 3>, tensor<64x16xf32, #tgpu.mma<warps = 4>> -> tensor<64x16xf32, #tgpu.mma<warps = 4>>
// CHECK: tgpu.copy_async [[CD]]{{.*}}, [[CB]] : !tile.desc<?x128xf16>, memref<64x128xf16, strided<[136, 1]>, 3>
// CHECK: tgpu.copy_async [[DD]]{{.*}}, [[DB]] : !tile.desc<?x128xf16>, memref<16x128xf16, strided<[136, 1]>, 3>
// CHECK: tgpu.mma [[CB]], [[DB]], %{{.+}} {transpose_rhs} : memref<64x128xf16, strided<[136, 1]>, 3>, memref<16x128xf16, strided<[136, 1]>, 3>, tensor<64x16xf32, #tgpu.mma<warps = 4>> -> tensor<64x16xf32, #tgpu.mma<warps = 4>>
func.func @padding(%ad: !tile.desc<?x4xf32>, %bd: !tile.desc<?x16xf32>,
                   %cd: !tile.desc<?x128xf16>, %dd: !tile.desc<?x128xf16>,
                   %od: !tile.desc<?x16xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 16 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.load %ad[%c0, %c0] fill 0.0 : f32 : !tile.desc<?x4xf32> -> tensor<64x4xf32>
  %b = tile.load %bd[%c0, %c0] fill 0.0 : f32 : !tile.desc<?x16xf32> -> tensor<4x16xf32>
  %s = tile.dot %a, %b : tensor<64x4xf32>, tensor<4x16xf32> -> tensor<64x16xf32>
  %c = tile.load %cd[%c0, %c0] fill 0.0 : f16 : !tile.desc<?x128xf16> -> tensor<64x128xf16>
  %d = tile.load %dd[%c0, %c0] fill 0.0 : f16 : !tile.desc<?x128xf16> -> tensor<16x128xf16>
  %t = tile.dot %c, %d, %s {transpose_rhs} : tensor<64x128xf16>, tensor<16x128xf16>, tensor<64x16xf32> -> tensor<64x16xf32>
  tile.store %t, %od[%c0, %c0] : tensor<64x16xf32>, !tile.desc<?x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Loads that stay in registers
//===----------------------------------------------------------------------===//

// Loads that feed no dot stay tile.loads (with any fill) and get a layout.
// A staged load with another use is kept for that use: Q is both copied to
// shared memory and loaded into registers.
// CHECK-LABEL: func.func @register_loads
// CHECK-SAME: ([[QD:%[^:]+]]: !tile.desc<?x64xbf16>, [[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[BD:%[^:]+]]: !tile.desc<?x64xf32>, [[LD:%[^:]+]]: !tile.desc<?xf32>, [[OD:%[^:]+]]: !tile.desc<?x64xbf16>, [[ROW:%[^:]+]]: index)
// CHECK-SAME: tgpu.shared_bytes = 18432 : i64
// CHECK-DAG: [[KB:%.+]] = tgpu.shared_alloc offset 9216
// CHECK-DAG: [[QB:%.+]] = tgpu.shared_alloc offset 0
// CHECK: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[QD]]{{\[}}[[ROW]], [[C0:%[^ ]+]]{{\]}}, [[QB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[Q:%.+]] = tile.load [[QD]]{{\[}}[[ROW]], [[C0]]{{\]}} fill 0.000000e+00 : bf16 : <?x64xbf16> -> tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[BIAS:%.+]] = tile.load [[BD]]{{\[}}[[ROW]], [[C0]]{{\]}} fill 0xFF800000 : f32 : <?x64xf32> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[LSE:%.+]] = tile.load [[LD]]{{\[}}[[ROW]]{{\]}} fill 1.000000e+00 : f32 : <?xf32> -> tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[C0]], [[C0]]{{\]}}, [[KB]]
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK: [[S:%.+]] = tgpu.mma [[QB]], [[KB]], %{{.+}} {transpose_rhs}
// CHECK-NEXT: [[T:%.+]] = arith.addf [[S]], [[BIAS]] : tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[M:%.+]] = tile.reduce max [[T]] dim 1 : tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: [[M2:%.+]] = arith.addf [[M]], [[LSE]] : tensor<64xf32, #tgpu.rows<warps = 4>>
// The layouts reach scf.if results and the values yielded in its regions.
// CHECK-NEXT: [[COND:%.+]] = arith.cmpi eq, [[ROW]], [[C0]] : index
// CHECK-NEXT: [[SEL:%.+]] = scf.if [[COND]] -> (tensor<64xf32, #tgpu.rows<warps = 4>>) {
// CHECK-NEXT: scf.yield [[M2]] : tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield [[LSE]] : tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: }
// CHECK-NEXT: tile.store [[Q]], [[OD]]{{\[}}[[ROW]], [[C0]]{{\]}} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, <?x64xbf16>
// CHECK-NEXT: tile.store [[SEL]], [[LD]]{{\[}}[[ROW]]{{\]}} : tensor<64xf32, #tgpu.rows<warps = 4>>, <?xf32>
func.func @register_loads(%qd: !tile.desc<?x64xbf16>, %kd: !tile.desc<?x64xbf16>,
                          %bd: !tile.desc<?x64xf32>, %ld: !tile.desc<?xf32>,
                          %od: !tile.desc<?x64xbf16>, %row: index)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %q = tile.load %qd[%row, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %bias = tile.load %bd[%row, %c0] fill 0xFF800000 : f32 : !tile.desc<?x64xf32> -> tensor<64x64xf32>
  %lse = tile.load %ld[%row] fill 1.0 : f32 : !tile.desc<?xf32> -> tensor<64xf32>
  %k = tile.load %kd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %s = tile.dot %q, %k {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  %t = arith.addf %s, %bias : tensor<64x64xf32>
  %m = tile.reduce max %t dim 1 : tensor<64x64xf32> -> tensor<64xf32>
  %m2 = arith.addf %m, %lse : tensor<64xf32>
  %cond = arith.cmpi eq, %row, %c0 : index
  %sel = scf.if %cond -> (tensor<64xf32>) {
    scf.yield %m2 : tensor<64xf32>
  } else {
    scf.yield %lse : tensor<64xf32>
  }
  tile.store %q, %od[%row, %c0] : tensor<64x64xbf16>, !tile.desc<?x64xbf16>
  tile.store %sel, %ld[%row] : tensor<64xf32>, !tile.desc<?xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Transposed-lhs products (the backward's P^T dO and dS^T Q)
//===----------------------------------------------------------------------===//

// A dK/dV step. P and dS are computed in registers, where each warp holds
// rows, but P^T dO and dS^T Q need their columns: each goes through a buffer
// of its own (18432 and 36864, after Q, K and dO), is stored between two
// barriers (every warp done with the old contents; every warp's rows written
// before any are read) and feeds a transpose_lhs mma. Q keeps its staged
// buffer as dS^T Q's rhs.
// CHECK-LABEL: func.func @transposed_register_lhs
// CHECK-SAME: ([[QD:%[^:]+]]: !tile.desc<?x64xbf16>, [[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[DOD:%[^:]+]]: !tile.desc<?x64xbf16>, [[DKD:%[^:]+]]: !tile.desc<?x64xf32>, [[DVD:%[^:]+]]: !tile.desc<?x64xf32>, [[N:%[^:]+]]: index)
// CHECK-SAME: tgpu.shared_bytes = 46080 : i64
// CHECK-DAG: [[DSB:%.+]] = tgpu.shared_alloc offset 36864 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[DOB:%.+]] = tgpu.shared_alloc offset 27648 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[PB:%.+]] = tgpu.shared_alloc offset 18432 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[KB:%.+]] = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[QB:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NOT: tgpu.shared_alloc
// CHECK: tgpu.copy_async [[KD]]{{.*}}, [[KB]] :
// CHECK: scf.for [[J:%[^ ]+]] = {{.*}} iter_args([[DK:%[^ ]+]] = %{{[0-9]+}}, [[DV:%[^ ]+]] = %{{[0-9]+}})
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[QD]]{{\[}}[[J]], [[C0:%[^ ]+]]{{\]}}, [[QB]] :
// CHECK: [[S:%.+]] = tgpu.mma [[QB]], [[KB]], %{{.+}} {transpose_rhs}
// CHECK-NEXT: [[P:%.+]] = math.exp2 [[S]]
// CHECK-NEXT: [[PBF:%.+]] = arith.truncf [[P]] : tensor<64x64xf32, #tgpu.mma<warps = 4>> to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// dO is staged where it was loaded...
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[DOD]]{{\[}}[[J]], [[C0]]{{\]}}, [[DOB]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// ... and P right before its product, which accumulates into the carried dV.
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.store_shared [[PBF]], [[PB]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[DV2:%.+]] = tgpu.mma [[PB]], [[DOB]], [[DV]] {transpose_lhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[DS:%.+]] = arith.mulf [[P]], [[S]]
// CHECK-NEXT: [[DSBF:%.+]] = arith.truncf [[DS]]
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.store_shared [[DSBF]], [[DSB]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[DK2:%.+]] = tgpu.mma [[DSB]], [[QB]], [[DK]] {transpose_lhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: scf.yield [[DK2]], [[DV2]] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NOT: tile.dot
// CHECK: return
func.func @transposed_register_lhs(%qd: !tile.desc<?x64xbf16>, %kd: !tile.desc<?x64xbf16>,
                                   %dod: !tile.desc<?x64xbf16>, %dkd: !tile.desc<?x64xf32>,
                                   %dvd: !tile.desc<?x64xf32>, %n: index)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %pid = tile.program_id 0
  %row = arith.muli %pid, %c64 : index
  %k = tile.load %kd[%row, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %z = tile.splat %zero : f32 -> tensor<64x64xf32>
  %r:2 = scf.for %j = %c0 to %n step %c64 iter_args(%dk = %z, %dv = %z)
      -> (tensor<64x64xf32>, tensor<64x64xf32>) {
    %q = tile.load %qd[%j, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q, %k {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %p = math.exp2 %s : tensor<64x64xf32>
    %pb = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %do = tile.load %dod[%j, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
    %dv2 = tile.dot %pb, %do, %dv {transpose_lhs} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %ds = arith.mulf %p, %s : tensor<64x64xf32>
    %dsb = arith.truncf %ds : tensor<64x64xf32> to tensor<64x64xbf16>
    %dk2 = tile.dot %dsb, %q, %dk {transpose_lhs} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %dk2, %dv2 : tensor<64x64xf32>, tensor<64x64xf32>
  }
  tile.store %r#0, %dkd[%row, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  tile.store %r#1, %dvd[%row, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// A transposed lhs loaded from a descriptor is staged by its copy as it is
// (A^T, 64 x 128) and read transposed: no register round trip. The 128 x 64
// result has twice block_m rows and still gets the mma layout.
// CHECK-LABEL: func.func @transposed_loaded_lhs
// CHECK-SAME: ([[AD:%[^:]+]]: !tile.desc<?x128xbf16>, [[BD:%[^:]+]]: !tile.desc<?x64xbf16>, [[OD:%[^:]+]]: !tile.desc<?x64xf32>)
// CHECK-SAME: tgpu.shared_bytes = 26624 : i64
// CHECK-DAG: [[BB:%.+]] = tgpu.shared_alloc offset 17408 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[AB:%.+]] = tgpu.shared_alloc offset 0 : memref<64x128xbf16, strided<[136, 1]>, 3>
// CHECK-NOT: tgpu.shared_alloc
// CHECK-NOT: tgpu.store_shared
// CHECK: tgpu.copy_async [[AD]]{{.*}}, [[AB]] : !tile.desc<?x128xbf16>, memref<64x128xbf16, strided<[136, 1]>, 3>
// CHECK-NOT: tgpu.store_shared
// CHECK: tgpu.copy_async [[BD]]{{.*}}, [[BB]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NOT: tgpu.store_shared
// CHECK: [[D:%.+]] = tgpu.mma [[AB]], [[BB]], %{{.+}} {transpose_lhs} : memref<64x128xbf16, strided<[136, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: tile.store [[D]], [[OD]]{{.*}} : tensor<128x64xf32, #tgpu.mma<warps = 4>>, <?x64xf32>
func.func @transposed_loaded_lhs(%ad: !tile.desc<?x128xbf16>, %bd: !tile.desc<?x64xbf16>,
                                 %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.load %ad[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x128xbf16> -> tensor<64x128xbf16>
  %b = tile.load %bd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %d = tile.dot %a, %b {transpose_lhs} : tensor<64x128xbf16>, tensor<64x64xbf16> -> tensor<128x64xf32>
  tile.store %d, %od[%c0, %c0] : tensor<128x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// A dK/dV kernel with 128 keys per block and 64 query rows (block_n 128,
// block_m 64), in f16: S is 64 x 128, the dV accumulator 128 x 64 and its
// row sums 128 long. Rows split over the warps in m16 tiles whatever block_m
// is, so 128-row tiles get #tgpu.mma / #tgpu.rows (over 4 warps, and over 2
// with num-warps=2). The f16 P goes through a 64 x 128 buffer.
// CHECK-LABEL: func.func @rows_beyond_block_m
// CHECK-SAME: tgpu.shared_bytes = 54272 : i64, tile.block_m = 64 : i64, tile.block_n = 128 : i64
// CHECK-DAG: [[DOB:%.+]] = tgpu.shared_alloc offset 45056 : memref<64x64xf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[PB:%.+]] = tgpu.shared_alloc offset 27648 : memref<64x128xf16, strided<[136, 1]>, 3>
// CHECK-DAG: [[KB:%.+]] = tgpu.shared_alloc offset 9216 : memref<128x64xf16, strided<[72, 1]>, 3>
// CHECK-DAG: [[QB:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xf16, strided<[72, 1]>, 3>
// CHECK: [[S:%.+]] = tgpu.mma [[QB]], [[KB]], %{{.+}} {transpose_rhs} : {{.*}} -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[P:%.+]] = arith.truncf [[S]] : tensor<64x128xf32, #tgpu.mma<warps = 4>> to tensor<64x128xf16, #tgpu.mma<warps = 4>>
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async {{.*}}, [[DOB]] :
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.store_shared [[P]], [[PB]] : tensor<64x128xf16, #tgpu.mma<warps = 4>>, memref<64x128xf16, strided<[136, 1]>, 3>
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[Z:%.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: [[ZT:%.+]] = tile.splat [[Z]] : f32 -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[DV:%.+]] = tgpu.mma [[PB]], [[DOB]], [[ZT]] {transpose_lhs} : memref<64x128xf16, strided<[136, 1]>, 3>, memref<64x64xf16, strided<[72, 1]>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[RS:%.+]] = tile.reduce sum [[DV]] dim 1 : tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: tile.store [[DV]], {{.*}} : tensor<128x64xf32, #tgpu.mma<warps = 4>>, <?x64xf32>
// CHECK-NEXT: tile.store [[RS]], {{.*}} : tensor<128xf32, #tgpu.rows<warps = 4>>, <?xf32>
// SM80-LABEL: func.func @rows_beyond_block_m
// SM80-SAME: tgpu.num_warps = 2 : i64
// SM80: tgpu.mma {{.*}} {transpose_lhs} : {{.*}}, tensor<128x64xf32, #tgpu.mma<warps = 2>> -> tensor<128x64xf32, #tgpu.mma<warps = 2>>
// SM80-NEXT: tile.reduce sum {{.*}} : tensor<128x64xf32, #tgpu.mma<warps = 2>> -> tensor<128xf32, #tgpu.rows<warps = 2>>
func.func @rows_beyond_block_m(%qd: !tile.desc<?x64xf16>, %kd: !tile.desc<?x64xf16>,
                               %dod: !tile.desc<?x64xf16>, %dvd: !tile.desc<?x64xf32>,
                               %ld: !tile.desc<?xf32>, %row: index)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 128 : i64} {
  %c0 = arith.constant 0 : index
  %k = tile.load %kd[%row, %c0] fill 0.0 : f16 : !tile.desc<?x64xf16> -> tensor<128x64xf16>
  %q = tile.load %qd[%c0, %c0] fill 0.0 : f16 : !tile.desc<?x64xf16> -> tensor<64x64xf16>
  %s = tile.dot %q, %k {transpose_rhs} : tensor<64x64xf16>, tensor<128x64xf16> -> tensor<64x128xf32>
  %p = arith.truncf %s : tensor<64x128xf32> to tensor<64x128xf16>
  %do = tile.load %dod[%c0, %c0] fill 0.0 : f16 : !tile.desc<?x64xf16> -> tensor<64x64xf16>
  %dv = tile.dot %p, %do {transpose_lhs} : tensor<64x128xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
  %rs = tile.reduce sum %dv dim 1 : tensor<128x64xf32> -> tensor<128xf32>
  tile.store %dv, %dvd[%row, %c0] : tensor<128x64xf32>, !tile.desc<?x64xf32>
  tile.store %rs, %ld[%row] : tensor<128xf32>, !tile.desc<?xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Which functions are scheduled
//===----------------------------------------------------------------------===//

// Each kernel is scheduled on its own (shared offsets restart at 0); a
// function without tile.kernel is left alone.
// CHECK-LABEL: func.func @first_kernel
// CHECK-SAME: tgpu.arch = "sm_90a", tgpu.fast_math, tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 18432 : i64, tile.block_m = 64 : i64, tile.kernel
// CHECK: tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK: tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK: tgpu.mma
// CHECK-LABEL: func.func @second_kernel
// CHECK-SAME: tgpu.arch = "sm_90a", tgpu.fast_math, tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 36864 : i64, tile.block_m = 128 : i64, tile.kernel
// CHECK: tgpu.shared_alloc offset 18432 : memref<128x64xbf16, strided<[72, 1]>, 3>
// CHECK: tgpu.shared_alloc offset 0 : memref<128x64xbf16, strided<[72, 1]>, 3>
// CHECK: tgpu.mma %{{.+}} {transpose_rhs} : {{.*}} -> tensor<128x128xf32, #tgpu.mma<warps = 4>>
// DERIVED-LABEL: func.func @first_kernel
// DERIVED-SAME: tgpu.num_warps = 4 : i64
// DERIVED-LABEL: func.func @second_kernel
// DERIVED-SAME: tgpu.num_warps = 8 : i64
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-SAME: ([[A:%[^:]+]]: tensor<64x64xbf16>, [[B:%[^:]+]]: tensor<64x64xbf16>) -> tensor<64x64xf32> {
// CHECK-NEXT: [[D:%.+]] = tile.dot [[A]], [[B]] {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
// CHECK-NEXT: return [[D]] : tensor<64x64xf32>
// PLAIN-LABEL: func.func @not_a_kernel
// PLAIN: tile.dot
func.func @first_kernel(%ad: !tile.desc<?x64xbf16>, %bd: !tile.desc<?x64xbf16>,
                        %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.load %ad[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %b = tile.load %bd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %s = tile.dot %a, %b : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  tile.store %s, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}
func.func @second_kernel(%ad: !tile.desc<?x64xbf16>, %bd: !tile.desc<?x64xbf16>,
                         %od: !tile.desc<?x128xf32>)
    attributes {tile.kernel, tile.block_m = 128 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.load %ad[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<128x64xbf16>
  %b = tile.load %bd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<128x64xbf16>
  %s = tile.dot %a, %b {transpose_rhs} : tensor<128x64xbf16>, tensor<128x64xbf16> -> tensor<128x128xf32>
  tile.store %s, %od[%c0, %c0] : tensor<128x128xf32>, !tile.desc<?x128xf32>
  return
}
func.func @not_a_kernel(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xf32> {
  %d = tile.dot %a, %b {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

// expected-error @+1 {{a tile kernel needs tile.block_m}}
func.func @missing_block_m(%ad: !tile.desc<?x64xbf16>, %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %a = tile.load %ad[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %s = tile.dot %a, %a {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  tile.store %s, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// 48 rows cannot be split into m16 fragments over 4 warps (nor over 2).
// expected-error @+1 {{block_m 48 must be a multiple of 16 * num_warps}}
func.func @block_m_not_multiple(%ld: !tile.desc<?xf32>)
    attributes {tile.kernel, tile.block_m = 48 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %t = tile.splat %z : f32 -> tensor<48xf32>
  tile.store %t, %ld[%c0] : tensor<48xf32>, !tile.desc<?xf32>
  return
}

// -----

func.func @no_layout_columns(%od: !tile.desc<?x8xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  // expected-error-re @+1 {{no GPU register layout for 'tensor<64x8xf32>': tiles must be RxN or R with R a multiple of {{32|64}} (16 rows per warp) and N a multiple of 16}}
  %t = tile.splat %z : f32 -> tensor<64x8xf32>
  tile.store %t, %od[%c0, %c0] : tensor<64x8xf32>, !tile.desc<?x8xf32>
  return
}

// -----

func.func @no_layout_rows(%od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  // expected-error-re @+1 {{no GPU register layout for 'tensor<48x64xf32>': tiles must be RxN or R with R a multiple of {{32|64}} (16 rows per warp) and N a multiple of 16}}
  %t = tile.load %od[%c0, %c0] fill 0.0 : f32 : !tile.desc<?x64xf32> -> tensor<48x64xf32>
  tile.store %t, %od[%c0, %c0] : tensor<48x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

func.func @no_layout_vector(%ld: !tile.desc<?xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  // expected-error-re @+1 {{no GPU register layout for 'tensor<48xf32>': tiles must be RxN or R with R a multiple of {{32|64}} (16 rows per warp) and N a multiple of 16}}
  %t = tile.splat %z : f32 -> tensor<48xf32>
  tile.store %t, %ld[%c0] : tensor<48xf32>, !tile.desc<?xf32>
  return
}

// -----

// A loop-carried tile without a layout is reported at the loop.
func.func @no_layout_iter_arg(%init: tensor<48xf32>, %ld: !tile.desc<?xf32>, %n: index)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error-re @+1 {{no GPU register layout for 'tensor<48xf32>': tiles must be RxN or R with R a multiple of {{32|64}} (16 rows per warp) and N a multiple of 16}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (tensor<48xf32>) {
    scf.yield %a : tensor<48xf32>
  }
  tile.store %r, %ld[%c0] : tensor<48xf32>, !tile.desc<?xf32>
  return
}

// -----

// 128 x (512 + 8) bf16 is 133120 bytes per operand: Q and K together exceed
// the default limit of 232448 bytes (sm_90).
// expected-error @+1 {{the schedule needs 266240 bytes of shared memory but the target allows 232448; use smaller tiles for this head dim}}
func.func @shared_memory_exceeded(%qd: !tile.desc<?x512xbf16>, %kd: !tile.desc<?x512xbf16>,
                                  %od: !tile.desc<?x128xf32>)
    attributes {tile.kernel, tile.block_m = 128 : i64, tile.block_n = 128 : i64} {
  %c0 = arith.constant 0 : index
  %q = tile.load %qd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x512xbf16> -> tensor<128x512xbf16>
  %k = tile.load %kd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x512xbf16> -> tensor<128x512xbf16>
  %s = tile.dot %q, %k {transpose_rhs} : tensor<128x512xbf16>, tensor<128x512xbf16> -> tensor<128x128xf32>
  tile.store %s, %od[%c0, %c0] : tensor<128x128xf32>, !tile.desc<?x128xf32>
  return
}

// -----

// The rhs of a dot must come from a tile.load: a computed tile cannot be
// staged.
func.func @rhs_not_loaded(%ad: !tile.desc<?x64xbf16>, %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : bf16
  %a = tile.load %ad[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %b = tile.splat %one : bf16 -> tensor<64x64xbf16>
  // expected-error @+1 {{the rhs of a tile.dot must be loaded from a descriptor to be staged in shared memory}}
  %s = tile.dot %a, %b {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  tile.store %s, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// Nor can a loop-carried one.
func.func @rhs_iter_arg(%ad: !tile.desc<?x64xbf16>, %od: !tile.desc<?x64xf32>, %n: index)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tile.load %ad[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %z = arith.constant 0.0 : f32
  %acc0 = tile.splat %z : f32 -> tensor<64x64xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%b = %a, %acc = %acc0) -> (tensor<64x64xbf16>, tensor<64x64xf32>) {
    // expected-error @+1 {{the rhs of a tile.dot must be loaded from a descriptor to be staged in shared memory}}
    %s = tile.dot %a, %b, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %b, %s : tensor<64x64xbf16>, tensor<64x64xf32>
  }
  tile.store %r#1, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// cp.async zero-fills rows past the descriptor, so a staged lhs load must
// fill with zero.
func.func @lhs_nonzero_fill(%ad: !tile.desc<?x64xbf16>, %bd: !tile.desc<?x64xbf16>,
                            %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.load %ad[%c0, %c0] fill 1.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %b = tile.load %bd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  // expected-error @+1 {{operands staged through shared memory are zero-filled; this load fills with 1.000000e+00 : bf16}}
  %s = tile.dot %a, %b {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  tile.store %s, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

func.func @lhs_neg_inf_fill(%ad: !tile.desc<?x64xf16>, %bd: !tile.desc<?x64xf16>,
                            %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.load %ad[%c0, %c0] fill 0xFC00 : f16 : !tile.desc<?x64xf16> -> tensor<64x64xf16>
  %b = tile.load %bd[%c0, %c0] fill 0.0 : f16 : !tile.desc<?x64xf16> -> tensor<64x64xf16>
  // expected-error @+1 {{operands staged through shared memory are zero-filled; this load fills with 0xFC00 : f16}}
  %s = tile.dot %a, %b {transpose_rhs} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  tile.store %s, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// The rhs is checked the same way, and a bad fill is reported once (not also
// as "must be loaded from a descriptor").
func.func @rhs_nonzero_fill(%ad: !tile.desc<?x64xbf16>, %bd: !tile.desc<?x64xbf16>,
                            %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.load %ad[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %b = tile.load %bd[%c0, %c0] fill 1.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  // expected-error @+1 {{operands staged through shared memory are zero-filled; this load fills with 1.000000e+00 : bf16}}
  %s = tile.dot %a, %b {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  tile.store %s, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// mma.sync accumulates in f32: a dot producing f16 is rejected.
func.func @dot_f16_result(%ad: !tile.desc<?x64xf16>, %bd: !tile.desc<?x64xf16>,
                          %od: !tile.desc<?x64xf16>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.load %ad[%c0, %c0] fill 0.0 : f16 : !tile.desc<?x64xf16> -> tensor<64x64xf16>
  %b = tile.load %bd[%c0, %c0] fill 0.0 : f16 : !tile.desc<?x64xf16> -> tensor<64x64xf16>
  // expected-error @+1 {{the GPU schedule accumulates in f32, not 'f16'}}
  %s = tile.dot %a, %b {transpose_rhs} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  tile.store %s, %od[%c0, %c0] : tensor<64x64xf16>, !tile.desc<?x64xf16>
  return
}

// -----

// ldmatrix.trans moves 16-bit elements: a transposed register lhs must be
// rounded to bf16 or f16 before it is stored to shared memory.
func.func @transposed_f32_register_lhs(%bd: !tile.desc<?x64xf32>, %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %a = tile.splat %one : f32 -> tensor<64x64xf32>
  %b = tile.load %bd[%c0, %c0] fill 0.0 : f32 : !tile.desc<?x64xf32> -> tensor<64x64xf32>
  // expected-error @+1 {{a transposed register lhs goes through shared memory in bf16 or f16 (ldmatrix.trans); round it first, got 'f32'}}
  %d = tile.dot %a, %b {transpose_lhs} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %d, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// Column chunks of a tile already staged whole (the atomic schedule's K
// chunks for dS K) are windows of its buffer: one copy, one buffer.
// CHECK-LABEL: func.func @column_windows
// CHECK-DAG: %[[KB:.+]] = tgpu.shared_alloc offset {{[0-9]+}} : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-DAG: %[[QB:.+]] = tgpu.shared_alloc offset {{[0-9]+}} : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NOT: tgpu.shared_alloc
// CHECK: tgpu.copy_async %{{.*}}, %[[KB]]
// CHECK-NOT: tgpu.copy_async
// CHECK: %[[W0:.+]] = memref.subview %[[KB]][0, 0] [64, 32] [1, 1]
// CHECK: %[[W1:.+]] = memref.subview %[[KB]][0, 32] [64, 32] [1, 1]
// CHECK: tgpu.mma %{{.+}}, %[[W0]], %{{.+}} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x32xbf16, strided<[72, 1]>, 3>
// CHECK: tgpu.mma %{{.+}}, %[[W1]], %{{.+}} : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x32xbf16, strided<[72, 1], offset: 32>, 3>
// CHECK-NOT: tile.load
// CHECK: return
func.func @column_windows(%qd: !tile.desc<?x64xbf16>, %kd: !tile.desc<?x64xbf16>,
                          %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %q = tile.load %qd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %k = tile.load %kd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %k0 = tile.load %kd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x32xbf16>
  %k1 = tile.load %kd[%c0, %c32] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x32xbf16>
  %s = tile.dot %q, %k {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xbf16>
  %a = tile.dot %p, %k0 : tensor<64x64xbf16>, tensor<64x32xbf16> -> tensor<64x32xf32>
  %b = tile.dot %p, %k1 : tensor<64x64xbf16>, tensor<64x32xbf16> -> tensor<64x32xf32>
  tile.store %a, %od[%c0, %c0] : tensor<64x32xf32>, !tile.desc<?x64xf32>
  tile.store %b, %od[%c0, %c32] : tensor<64x32xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// An atomic add of a product wider than atomic-product-columns (32) is split
// into column chunks, each its own product, scale and add: the atomic
// backward's dQ share would otherwise sit in registers whole. The rhs chunks
// are windows of its staged buffer. With atomic-product-columns=0 it stays
// whole.
// CHECK-LABEL: func.func @atomic_chunks
// CHECK: %[[KB:.+]] = tgpu.shared_alloc offset {{[0-9]+}} : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK: %[[W0:.+]] = memref.subview %[[KB]][0, 0] [64, 32] [1, 1]
// CHECK: %[[W1:.+]] = memref.subview %[[KB]][0, 32] [64, 32] [1, 1]
// CHECK: %[[P0:.+]] = tgpu.mma %{{.+}}, %[[W0]], %{{.+}} : {{.*}} -> tensor<64x32xf32, #tgpu.mma<warps = 4>>
// CHECK: %[[S0:.+]] = arith.mulf %[[P0]], %{{.+}} : tensor<64x32xf32, #tgpu.mma<warps = 4>>
// CHECK: tile.atomic_add %[[S0]], %{{.+}}[%{{.+}}, %c0{{.*}}] : tensor<64x32xf32, #tgpu.mma<warps = 4>>
// CHECK: %[[P1:.+]] = tgpu.mma %{{.+}}, %[[W1]], %{{.+}} : {{.*}} -> tensor<64x32xf32, #tgpu.mma<warps = 4>>
// CHECK: %[[S1:.+]] = arith.mulf %[[P1]], %{{.+}} : tensor<64x32xf32, #tgpu.mma<warps = 4>>
// CHECK: tile.atomic_add %[[S1]], %{{.+}}[%{{.+}}, %c32{{.*}}] : tensor<64x32xf32, #tgpu.mma<warps = 4>>
// CHECK-NOT: tile.atomic_add
// CHECK: return
// WHOLE-LABEL: func.func @atomic_chunks
// WHOLE: tgpu.mma {{.*}} -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// WHOLE: tile.atomic_add %{{.+}} : tensor<64x64xf32, #tgpu.mma<warps = 4>>
// WHOLE-NOT: tile.atomic_add
func.func @atomic_chunks(%qd: !tile.desc<?x64xbf16>, %kd: !tile.desc<?x64xbf16>,
                         %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %scale = arith.constant 0.125 : f32
  %q = tile.load %qd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %k = tile.load %kd[%c0, %c0] fill 0.0 : bf16 : !tile.desc<?x64xbf16> -> tensor<64x64xbf16>
  %splat = tile.splat %scale : f32 -> tensor<64x64xf32>
  %s = tile.dot %q, %k {transpose_rhs} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xbf16>
  %d = tile.dot %p, %k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  %scaled = arith.mulf %d, %splat : tensor<64x64xf32>
  tile.atomic_add %scaled, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

// Per-column values: a 1-D tile broadcast down the columns (dim 0), and the
// elementwise chain it comes from, take #tgpu.cols; a splat it shares with
// a per-row chain is copied for that chain, which keeps #tgpu.rows.
// CHECK-LABEL: func.func @columns
// CHECK: %[[L:.+]] = tile.load %{{.+}} : f32 : <?xf32> -> tensor<64xf32, #tgpu.cols<warps = 4>>
// CHECK: %[[C:.+]] = arith.mulf %[[L]], %{{.+}} : tensor<64xf32, #tgpu.cols<warps = 4>>
// CHECK: tile.broadcast %[[C]] dim 0 : tensor<64xf32, #tgpu.cols<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK: %[[R:.+]] = tile.reduce sum %{{.+}} dim 1 : tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK: %[[RS:.+]] = tile.splat %{{.+}} : f32 -> tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: arith.mulf %[[R]], %[[RS]] : tensor<64xf32, #tgpu.rows<warps = 4>>
func.func @columns(%ld: !tile.desc<?xf32>, %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %two = arith.constant 2.0 : f32
  %s = tile.splat %two : f32 -> tensor<64xf32>
  %l = tile.load %ld[%c0] fill 0.0 : f32 : !tile.desc<?xf32> -> tensor<64xf32>
  %c = arith.mulf %l, %s : tensor<64xf32>
  %b = tile.broadcast %c dim 0 : tensor<64xf32> -> tensor<64x64xf32>
  %r = tile.reduce sum %b dim 1 : tensor<64x64xf32> -> tensor<64xf32>
  %r2 = arith.mulf %r, %s : tensor<64xf32>
  tile.store %r2, %ld[%c0] : tensor<64xf32>, !tile.desc<?xf32>
  tile.store %b, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

func.func @columns_and_rows(%ld: !tile.desc<?xf32>, %od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %l = tile.load %ld[%c0] fill 0.0 : f32 : !tile.desc<?xf32> -> tensor<64xf32>
  %b = tile.broadcast %l dim 0 : tensor<64xf32> -> tensor<64x64xf32>
  // expected-error @+1 {{a per-column tile cannot also be broadcast along rows}}
  %r = tile.broadcast %l dim 1 : tensor<64xf32> -> tensor<64x64xf32>
  tile.store %b, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  tile.store %r, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}

// -----

func.func @statistic_as_columns(%od: !tile.desc<?x64xf32>)
    attributes {tile.kernel, tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %c0 = arith.constant 0 : index
  %t = tile.load %od[%c0, %c0] fill 0.0 : f32 : !tile.desc<?x64xf32> -> tensor<64x64xf32>
  // expected-error @+1 {{a row statistic cannot also be a per-column tile}}
  %r = tile.reduce max %t dim 1 : tensor<64x64xf32> -> tensor<64xf32>
  %b = tile.broadcast %r dim 0 : tensor<64xf32> -> tensor<64x64xf32>
  tile.store %b, %od[%c0, %c0] : tensor<64x64xf32>, !tile.desc<?x64xf32>
  return
}
