// RUN: kiln-opt %s -split-input-file -tgpu-combine-before-waits | FileCheck %s
// RUN: kiln run %examples/softcap.mlir --backward --head-dim 128 -emit=tgpu | FileCheck %s --check-prefix=SOFTCAP
// RUN: kiln run %examples/softcap.mlir --backward --head-dim 128 -emit=tgpu --no-combine-before-waits | FileCheck %s --check-prefix=OFF
// RUN: kiln run %examples/softcap.mlir --backward --head-dim 128 -emit=tgpu --no-fast-math | FileCheck %s --check-prefix=OFF

// In the pipeline, softcap's dK/dV kernel (D = 128, the atomic schedule):
// P times its dS factor and P's bf16 copy, both before dP's wait, in each
// loop; without the pass (or without fast math, under which alone the
// pipeline runs it) P is narrowed after dS.
// SOFTCAP-LABEL: func.func @softcap_bwd_dkdv(
// SOFTCAP-COUNT-2: [[P:%.+]] = math.exp2 {{.*}}
// SOFTCAP-NEXT: [[PG:%.+]] = arith.mulf [[P]], %{{.+}} :
// SOFTCAP-NEXT: arith.truncf [[P]] :
// OFF-LABEL: func.func @softcap_bwd_dkdv(
// OFF: [[DP:%.+]] = tgpu.warpgroup_wait %{{[0-9]+}} : tensor<128x64xf32
// OFF-NEXT: [[X:%.+]] = arith.subf [[DP]]
// OFF-NEXT: [[A:%.+]] = arith.mulf [[P:%.+]], [[X]] :
// OFF-NEXT: arith.mulf [[A]], %{{.+}} :
// OFF-NEXT: arith.truncf [[P]] :

// tgpu-combine-before-waits: in dS = (P * (dP - D)) * g, P and g are ready
// before dP's wait, so P * g is computed right after g, and P's narrowing
// (its last use) moves up beside it: only P * g and P's bf16 copy live
// across the wait.
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-LABEL: func.func @softcap_ds
// CHECK: [[S:%.+]] = tgpu.warpgroup_wait %{{.+}} {pending = 1 : i64}
// CHECK: [[T:%.+]] = math.tanh [[S]]
// CHECK: [[G:%.+]] = arith.subf %{{.+}}, %{{.+}}
// CHECK: [[P:%.+]] = math.exp2 [[T]]
// CHECK-NEXT: [[PG:%.+]] = arith.mulf [[P]], [[G]]
// CHECK-NEXT: [[PB:%.+]] = arith.truncf [[P]]
// CHECK-NEXT: [[DP:%.+]] = tgpu.warpgroup_wait [[DPA:%.+]] :
// CHECK-NEXT: [[X:%.+]] = arith.subf [[DP]], %{{.+}}
// CHECK-NEXT: [[DS:%.+]] = arith.mulf [[PG]], [[X]]
// CHECK-NEXT: arith.truncf [[DS]]
// CHECK-NEXT: return [[PB]]
func.func @softcap_ds(%q: !buf, %k: !buf, %do: !buf, %v: !buf, %d: !acc) -> (!p, !p) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %ones = tile.splat %one : f32 -> !acc
  %sa = tgpu.warpgroup_mma %q, %k, %z {async, transpose_rhs} : !buf, !buf, !acc -> !acc
  %dpa = tgpu.warpgroup_mma %do, %v, %z {async, transpose_rhs} : !buf, !buf, !acc -> !acc
  %s = tgpu.warpgroup_wait %sa {pending = 1 : i64} : !acc
  %t = math.tanh %s : !acc
  %t2 = arith.mulf %t, %t : !acc
  %g = arith.subf %ones, %t2 : !acc
  %pf = math.exp2 %t : !acc
  %dp = tgpu.warpgroup_wait %dpa : !acc
  %x = arith.subf %dp, %d : !acc
  %a = arith.mulf %pf, %x : !acc
  %ds = arith.mulf %a, %g : !acc
  %pb = arith.truncf %pf : !acc to !p
  %dsb = arith.truncf %ds : !acc to !p
  return %pb, %dsb : !p, !p
}

// -----

// Left alone: the inner product has another use, or the outer factor needs
// the same wait as x (nothing to gain), or no wait at all.
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-LABEL: func.func @left_alone
// CHECK: [[A:%.+]] = arith.mulf [[P:%.+]], [[X:%.+]] :
// CHECK-NEXT: arith.mulf [[A]], %{{.+}} :
// CHECK: [[B:%.+]] = arith.mulf [[P]], [[X]] :
// CHECK-NEXT: arith.mulf [[B]], [[X]] :
// CHECK: [[C:%.+]] = arith.mulf [[P]], %arg4 :
// CHECK-NEXT: arith.mulf [[C]], %arg4 :
func.func @left_alone(%q: !buf, %k: !buf, %do: !buf, %v: !buf, %g: !acc) -> (!acc, !acc, !acc, !acc) {
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %pf = math.exp2 %g : !acc
  %dpa = tgpu.warpgroup_mma %do, %v, %z {async, transpose_rhs} : !buf, !buf, !acc -> !acc
  %x = tgpu.warpgroup_wait %dpa : !acc
  %a = arith.mulf %pf, %x : !acc
  %r1 = arith.mulf %a, %g : !acc
  %b = arith.mulf %pf, %x : !acc
  %r2 = arith.mulf %b, %x : !acc
  %c = arith.mulf %pf, %g : !acc
  %r3 = arith.mulf %c, %g : !acc
  return %r1, %a, %r2, %r3 : !acc, !acc, !acc, !acc
}

// -----

// Left alone where nothing would be freed: g from outside the block (an
// outer factor, ALiBi's slope: p * g would live beside p's narrow copy),
// g read again, or p read after the wait.
!acc = tensor<64x64xf32, #tgpu.mma<warps = 4>>
!p = tensor<64x64xbf16, #tgpu.mma<warps = 4>>
!buf = memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-LABEL: func.func @nothing_freed
// CHECK: [[X:%.+]] = tgpu.warpgroup_wait
// CHECK-NEXT: [[A:%.+]] = arith.mulf [[P:%.+]], [[X]] :
// CHECK-NEXT: arith.mulf [[A]], %arg4 :
// CHECK-NEXT: [[B:%.+]] = arith.mulf [[P]], [[X]] :
// CHECK-NEXT: arith.mulf [[B]], [[G:%.+]] :
// CHECK-NEXT: arith.addf [[G]], [[G]]
// CHECK-NEXT: [[C:%.+]] = arith.mulf [[P]], [[X]] :
// CHECK-NEXT: arith.mulf [[C]], [[H:%.+]] :
// CHECK-NEXT: arith.addf [[P]], [[P]]
func.func @nothing_freed(%do: !buf, %v: !buf, %t: !acc, %u: !acc, %slope: !acc) -> (!acc, !acc, !acc, !acc, !acc) {
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> !acc
  %pf = math.exp2 %t : !acc
  %g = math.exp2 %u : !acc
  %h = math.tanh %u : !acc
  %dpa = tgpu.warpgroup_mma %do, %v, %z {async, transpose_rhs} : !buf, !buf, !acc -> !acc
  %x = tgpu.warpgroup_wait %dpa : !acc
  %a = arith.mulf %pf, %x : !acc
  %r1 = arith.mulf %a, %slope : !acc
  %b = arith.mulf %pf, %x : !acc
  %r2 = arith.mulf %b, %g : !acc
  %gg = arith.addf %g, %g : !acc
  %c = arith.mulf %pf, %x : !acc
  %r3 = arith.mulf %c, %h : !acc
  %pp = arith.addf %pf, %pf : !acc
  return %r1, %r2, %gg, %r3, %pp : !acc, !acc, !acc, !acc, !acc
}
