// RUN: kiln-opt %s -split-input-file -tgpu-warpgroup-mma | FileCheck %s --enable-var-scope
// RUN: kiln-opt %s -split-input-file -tgpu-warpgroup-mma="shared-memory-bytes=30000" -verify-diagnostics -o /dev/null
// RUN: kiln-opt %s -split-input-file -tgpu-warpgroup-mma="pack-lhs-first=false" | FileCheck %s --check-prefix=PERSTEP

// tgpu-warpgroup-mma moves the products of sm_90a kernels that wgmma can
// take onto it, swizzles the shared buffers they read, lays the buffers out
// again and fences the async proxy after each cp.async wait.

// A forward KV step over two warpgroups: Q K^T from shared Q (K-major A)
// and K (K-major B), P V from registers and V (MN-major B). The padded
// buffers become 128-byte swizzled ones at 1024-byte aligned offsets, with
// no padding (8 KiB for K and V, 16 KiB for Q).
// CHECK-LABEL: func.func @kv_step
// CHECK-NOT: tgpu.lhs_packed_per_step
// CHECK-SAME: tgpu.shared_bytes = 32768 : i64
// The ablation of packing P before the products marks the kernels it
// rewrites; the emitter then packs P at each k16 step.
// PERSTEP-LABEL: func.func @kv_step
// PERSTEP-SAME: tgpu.lhs_packed_per_step
// CHECK-DAG: [[VB:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-DAG: [[KB:%.+]] = tgpu.shared_alloc offset 8192 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-DAG: [[QB:%.+]] = tgpu.shared_alloc offset 16384 : memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK: tgpu.copy_async {{.*}}, [[KB]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-NEXT: tgpu.copy_async {{.*}}, [[VB]]
// CHECK-NEXT: tgpu.async_wait {pending = 1 : i64}
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK-NEXT: tgpu.barrier
// CHECK: [[S:%.+]] = tgpu.warpgroup_mma [[QB]], [[KB]], {{%.+}} {transpose_rhs} : memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 8>> -> tensor<128x64xf32, #tgpu.mma<warps = 8>>
// CHECK: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK-NEXT: tgpu.barrier
// CHECK: tgpu.warpgroup_mma {{%.+}}, [[VB]], {{%.+}} : tensor<128x64xbf16, #tgpu.mma<warps = 8>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-NOT: {{tgpu.mma }}
// Over the limit of the second run:
// expected-error @+1 {{the wgmma schedule needs 32768 bytes of shared memory but the target allows 30000}}
func.func @kv_step(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %j: index)
    -> tensor<128x64xf32, #tgpu.mma<warps = 8>>
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 8 : i64, tgpu.shared_bytes = 36864 : i64} {
  %vb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %kb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %qb = tgpu.shared_alloc offset 18432 : memref<128x64xbf16, strided<[72, 1]>, 3>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait {pending = 1 : i64}
  tgpu.barrier
  %z = tile.splat %zero : f32 -> tensor<128x64xf32, #tgpu.mma<warps = 8>>
  %s = tgpu.mma %qb, %kb, %z {transpose_rhs} : memref<128x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 8>> -> tensor<128x64xf32, #tgpu.mma<warps = 8>>
  %p = arith.truncf %s : tensor<128x64xf32, #tgpu.mma<warps = 8>> to tensor<128x64xbf16, #tgpu.mma<warps = 8>>
  tgpu.async_wait
  tgpu.barrier
  %o = tgpu.mma %p, %vb, %z : tensor<128x64xbf16, #tgpu.mma<warps = 8>>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 8>> -> tensor<128x64xf32, #tgpu.mma<warps = 8>>
  return %o : tensor<128x64xf32, #tgpu.mma<warps = 8>>
}

// -----

// Untouched: an sm_80 kernel, and products wgmma cannot take -- two m16
// tiles per warp (128 rows over 4 warps), and products whose rhs buffer is
// also read by that one (it keeps its padding). A kernel without wgmma gets
// no fences.
// CHECK-LABEL: func.func @sm80
// CHECK-NOT: swizzle
// CHECK: {{tgpu.mma }}
// CHECK-LABEL: func.func @not_eligible
// CHECK-SAME: tgpu.shared_bytes = 36864 : i64
// CHECK-NOT: swizzle
// CHECK-NOT: tgpu.warpgroup_mma
// CHECK-NOT: tgpu.fence_async_shared
// CHECK: return
func.func @sm80(%kd: !tile.desc<?x64xbf16>, %j: index) -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
    attributes {tgpu.arch = "sm_80", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 18432 : i64} {
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %qb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  %s = tgpu.mma %qb, %kb, %z {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return %s : tensor<64x64xf32, #tgpu.mma<warps = 4>>
}
func.func @not_eligible(%j: index) -> (tensor<128x64xf32, #tgpu.mma<warps = 4>>, tensor<64x64xf32, #tgpu.mma<warps = 4>>, tensor<64x64xf32, #tgpu.mma<warps = 4>>)
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 36864 : i64} {
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %qb = tgpu.shared_alloc offset 9216 : memref<128x64xbf16, strided<[72, 1]>, 3>
  %pb = tgpu.shared_alloc offset 27648 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait
  %zero = arith.constant 0.0 : f32
  %z128 = tile.splat %zero : f32 -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
  %z = tile.splat %zero : f32 -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  %s = tgpu.mma %qb, %kb, %z128 {transpose_rhs} : memref<128x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
  %t = tgpu.mma %pb, %kb, %z {transpose_lhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  %u = tgpu.mma %pb, %kb, %z : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return %s, %t, %u : tensor<128x64xf32, #tgpu.mma<warps = 4>>, tensor<64x64xf32, #tgpu.mma<warps = 4>>, tensor<64x64xf32, #tgpu.mma<warps = 4>>
}

// -----

// The backward's Pᵀ dO: P goes from registers into a shared buffer that the
// product reads transposed. The buffer is swizzled (the threads' stores
// follow it), the writers fence for the async proxy before the barrier,
// and wgmma reads P MN-major (transpose_lhs).
// CHECK-LABEL: func.func @transposed_lhs
// CHECK-DAG: [[PB:%.+]] = tgpu.shared_alloc offset {{[0-9]+}} : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-DAG: [[DOB:%.+]] = tgpu.shared_alloc offset {{[0-9]+}} : memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK: tgpu.store_shared %{{.+}}, [[PB]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK-NEXT: tgpu.barrier
// CHECK-NEXT: tgpu.warpgroup_mma [[PB]], [[DOB]], %{{.+}} {transpose_lhs} : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 4>> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
func.func @transposed_lhs(%p: tensor<64x64xbf16, #tgpu.mma<warps = 4>>,
                          %dv: tensor<64x128xf32, #tgpu.mma<warps = 4>>) -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 26624 : i64} {
  %pb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %dob = tgpu.shared_alloc offset 9216 : memref<64x128xbf16, strided<[136, 1]>, 3>
  tgpu.store_shared %p, %pb : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  %r = tgpu.mma %pb, %dob, %dv {transpose_lhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x128xbf16, strided<[136, 1]>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 4>> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
  return %r : tensor<64x128xf32, #tgpu.mma<warps = 4>>
}

// -----

// Head dim 96: rows of 192 bytes take the 64-byte swizzle. A buffer no
// product reads keeps its layout.
// CHECK-LABEL: func.func @hd96
// CHECK-DAG: tgpu.shared_alloc offset 0 : memref<64x96xbf16, #tgpu.swizzle<bytes = 64>, 3>
// CHECK-DAG: tgpu.shared_alloc offset 12288 : memref<64x96xbf16, strided<[104, 1]>, 3>
// CHECK: tgpu.warpgroup_mma
func.func @hd96(%p: tensor<64x64xbf16, #tgpu.mma<warps = 4>>) -> tensor<64x96xf32, #tgpu.mma<warps = 4>>
    attributes {tgpu.arch = "sm_90a", tgpu.num_warps = 4 : i64, tgpu.shared_bytes = 26624 : i64} {
  %vb = tgpu.shared_alloc offset 0 : memref<64x96xbf16, strided<[104, 1]>, 3>
  %qb = tgpu.shared_alloc offset 13312 : memref<64x96xbf16, strided<[104, 1]>, 3>
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> tensor<64x96xf32, #tgpu.mma<warps = 4>>
  %o = tgpu.mma %p, %vb, %z : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x96xbf16, strided<[104, 1]>, 3>, tensor<64x96xf32, #tgpu.mma<warps = 4>> -> tensor<64x96xf32, #tgpu.mma<warps = 4>>
  return %o : tensor<64x96xf32, #tgpu.mma<warps = 4>>
}
