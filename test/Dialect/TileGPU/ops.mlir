// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s --enable-var-scope

// Round trips of the tgpu layout attributes and of every tgpu op.

// The layouts as tensor encodings: #tgpu.mma on 2-D tiles of any element
// type, #tgpu.rows on 1-D row vectors, with various warp counts.
// CHECK-LABEL: func.func private @layouts
// CHECK-SAME: (tensor<64x64xf32, #tgpu.mma<warps = 4>>, tensor<64x128xbf16, #tgpu.mma<warps = 4>>, tensor<64x128xi1, #tgpu.mma<warps = 4>>, tensor<128x64xindex, #tgpu.mma<warps = 8>>)
// CHECK-SAME: -> (tensor<64xf32, #tgpu.rows<warps = 4>>, tensor<32xf32, #tgpu.rows<warps = 2>>, tensor<64xi1, #tgpu.rows<warps = 4>>)
func.func private @layouts(tensor<64x64xf32, #tgpu.mma<warps = 4>>,
                           tensor<64x128xbf16, #tgpu.mma<warps = 4>>,
                           tensor<64x128xi1, #tgpu.mma<warps = 4>>,
                           tensor<128x64xindex, #tgpu.mma<warps = 8>>)
    -> (tensor<64xf32, #tgpu.rows<warps = 4>>,
        tensor<32xf32, #tgpu.rows<warps = 2>>,
        tensor<64xi1, #tgpu.rows<warps = 4>>)

// -----

// Layout-encoded tensors flow through arith and tile ops unchanged.
// CHECK-LABEL: func.func @layouts_in_ops
// CHECK-SAME: ([[S:%[^:]+]]: tensor<64x64xf32, #tgpu.mma<warps = 4>>, [[M:%[^:]+]]: tensor<64xf32, #tgpu.rows<warps = 4>>)
// CHECK-NEXT: [[R:%.+]] = tile.reduce max [[S]] dim 1 : tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: [[X:%.+]] = arith.maximumf [[M]], [[R]] : tensor<64xf32, #tgpu.rows<warps = 4>>
// CHECK-NEXT: [[B:%.+]] = tile.broadcast [[X]] dim 1 : tensor<64xf32, #tgpu.rows<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[D:%.+]] = arith.subf [[S]], [[B]] : tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[P:%.+]] = arith.truncf [[D]] : tensor<64x64xf32, #tgpu.mma<warps = 4>> to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
// CHECK-NEXT: return [[X]], [[P]] : tensor<64xf32, #tgpu.rows<warps = 4>>, tensor<64x64xbf16, #tgpu.mma<warps = 4>>
func.func @layouts_in_ops(%s: tensor<64x64xf32, #tgpu.mma<warps = 4>>,
                          %m: tensor<64xf32, #tgpu.rows<warps = 4>>)
    -> (tensor<64xf32, #tgpu.rows<warps = 4>>, tensor<64x64xbf16, #tgpu.mma<warps = 4>>) {
  %r = tile.reduce max %s dim 1 : tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64xf32, #tgpu.rows<warps = 4>>
  %x = arith.maximumf %m, %r : tensor<64xf32, #tgpu.rows<warps = 4>>
  %b = tile.broadcast %x dim 1 : tensor<64xf32, #tgpu.rows<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  %d = arith.subf %s, %b : tensor<64x64xf32, #tgpu.mma<warps = 4>>
  %p = arith.truncf %d : tensor<64x64xf32, #tgpu.mma<warps = 4>> to tensor<64x64xbf16, #tgpu.mma<warps = 4>>
  return %x, %p : tensor<64xf32, #tgpu.rows<warps = 4>>, tensor<64x64xbf16, #tgpu.mma<warps = 4>>
}

// -----

// tgpu.shared_alloc: padded strided buffers, an identity-layout buffer, and
// a 1-D buffer, at offset 0 and at other multiples of 16 bytes.
// CHECK-LABEL: func.func @shared_alloc
// CHECK-NEXT: [[A:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc offset 9216 : memref<128x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: [[C:%.+]] = tgpu.shared_alloc offset 27648 : memref<64x128xf16, 3>
// CHECK-NEXT: [[D:%.+]] = tgpu.shared_alloc offset 16 : memref<4xf32, 3>
// CHECK-NEXT: return [[A]], [[B]], [[C]], [[D]] : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<128x64xbf16, strided<[72, 1]>, 3>, memref<64x128xf16, 3>, memref<4xf32, 3>
func.func @shared_alloc()
    -> (memref<64x64xbf16, strided<[72, 1]>, 3>,
        memref<128x64xbf16, strided<[72, 1]>, 3>,
        memref<64x128xf16, 3>, memref<4xf32, 3>) {
  %a = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %b = tgpu.shared_alloc offset 9216 : memref<128x64xbf16, strided<[72, 1]>, 3>
  %c = tgpu.shared_alloc offset 27648 : memref<64x128xf16, 3>
  %d = tgpu.shared_alloc offset 16 : memref<4xf32, 3>
  return %a, %b, %c, %d
      : memref<64x64xbf16, strided<[72, 1]>, 3>,
        memref<128x64xbf16, strided<[72, 1]>, 3>,
        memref<64x128xf16, 3>, memref<4xf32, 3>
}

// -----

// An overlay: a buffer over another's memory from its offset on (here a
// 32 KB swizzled tile over a 16 KB one and what follows it).
// CHECK-LABEL: func.func @shared_alloc_overlay
// CHECK-NEXT: [[A:%.+]] = tgpu.shared_alloc offset 1024 : memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc overlays [[A]] : memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, offset 1024 : memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-NEXT: return [[B]]
func.func @shared_alloc_overlay()
    -> memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3> {
  %a = tgpu.shared_alloc offset 1024 : memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %b = tgpu.shared_alloc overlays %a : memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, offset 1024 : memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3>
  return %b : memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3>
}

// -----

// The staged copy: barrier, copy_async from a descriptor, async_wait with
// the default (elided) and an explicit pending count, barrier.
// CHECK-LABEL: func.func @staged_copies
// CHECK-SAME: ([[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[VD:%[^:]+]]: !tile.desc<?x64xbf16>, [[J:%[^:]+]]: index)
// CHECK-NEXT: [[C0:%.+]] = arith.constant 0 : index
// CHECK-NEXT: [[KB:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: [[VB:%.+]] = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J]], [[C0]]{{\]}}, [[KB]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.copy_async [[VD]]{{\[}}[[J]], [[C0]]{{\]}}, [[VB]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.async_wait {pending = 1 : i64}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.async_wait{{$}}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @staged_copies(%kd: !tile.desc<?x64xbf16>, %vd: !tile.desc<?x64xbf16>, %j: index) {
  %c0 = arith.constant 0 : index
  %kb = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %vb = tgpu.shared_alloc offset 9216 : memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.barrier
  tgpu.copy_async %kd[%j, %c0], %kb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.copy_async %vd[%j, %c0], %vb : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
  tgpu.async_wait {pending = 1 : i64}
  tgpu.barrier
  tgpu.async_wait
  // An explicit pending = 0 is the default and prints as the bare op.
  tgpu.async_wait {pending = 0 : i64}
  tgpu.barrier
  return
}

// -----

// copy_async of a 1-D descriptor into a 1-D buffer.
// CHECK-LABEL: func.func @copy_async_1d
// CHECK-SAME: ([[D:%[^:]+]]: !tile.desc<?xf32>, [[I:%[^:]+]]: index)
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc offset 0 : memref<64xf32, 3>
// CHECK-NEXT: tgpu.copy_async [[D]]{{\[}}[[I]]{{\]}}, [[B]] : !tile.desc<?xf32>, memref<64xf32, 3>
func.func @copy_async_1d(%d: !tile.desc<?xf32>, %i: index) {
  %b = tgpu.shared_alloc offset 0 : memref<64xf32, 3>
  tgpu.copy_async %d[%i], %b : !tile.desc<?xf32>, memref<64xf32, 3>
  tgpu.async_wait
  return
}

// -----

// tgpu.mma with a shared lhs and a transposed shared rhs (Q K^T).
// CHECK-LABEL: func.func @mma_shared_lhs
// CHECK-SAME: ([[ACC:%[^:]+]]: tensor<64x128xf32, #tgpu.mma<warps = 4>>)
// CHECK-NEXT: [[Q:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: [[K:%.+]] = tgpu.shared_alloc offset 9216 : memref<128x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: [[S:%.+]] = tgpu.mma [[Q]], [[K]], [[ACC]] {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<128x64xbf16, strided<[72, 1]>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 4>> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[S2:%.+]] = tgpu.mma [[Q]], [[K]], [[S]] {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<128x64xbf16, strided<[72, 1]>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 4>> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: return [[S2]] : tensor<64x128xf32, #tgpu.mma<warps = 4>>
func.func @mma_shared_lhs(%acc: tensor<64x128xf32, #tgpu.mma<warps = 4>>)
    -> tensor<64x128xf32, #tgpu.mma<warps = 4>> {
  %q = tgpu.shared_alloc offset 0 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %k = tgpu.shared_alloc offset 9216 : memref<128x64xbf16, strided<[72, 1]>, 3>
  %s = tgpu.mma %q, %k, %acc {transpose_rhs}
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<128x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x128xf32, #tgpu.mma<warps = 4>> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
  // The unit attribute's long spelling parses to the same thing.
  %s2 = tgpu.mma %q, %k, %s {transpose_rhs = unit}
      : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<128x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x128xf32, #tgpu.mma<warps = 4>> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
  return %s2 : tensor<64x128xf32, #tgpu.mma<warps = 4>>
}

// -----

// tgpu.mma with a register lhs in #tgpu.mma layout (P in P * V), bf16
// elements, rhs read untransposed; no transpose_rhs attribute is printed.
// CHECK-LABEL: func.func @mma_register_lhs
// CHECK-SAME: ([[P:%[^:]+]]: tensor<64x128xbf16, #tgpu.mma<warps = 4>>, [[ACC:%[^:]+]]: tensor<64x64xf32, #tgpu.mma<warps = 4>>)
// CHECK-NEXT: [[V:%.+]] = tgpu.shared_alloc offset 0 : memref<128x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: [[O:%.+]] = tgpu.mma [[P]], [[V]], [[ACC]] : tensor<64x128xbf16, #tgpu.mma<warps = 4>>, memref<128x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: return [[O]] : tensor<64x64xf32, #tgpu.mma<warps = 4>>
func.func @mma_register_lhs(%p: tensor<64x128xbf16, #tgpu.mma<warps = 4>>,
                            %acc: tensor<64x64xf32, #tgpu.mma<warps = 4>>)
    -> tensor<64x64xf32, #tgpu.mma<warps = 4>> {
  %v = tgpu.shared_alloc offset 0 : memref<128x64xbf16, strided<[72, 1]>, 3>
  %o = tgpu.mma %p, %v, %acc
      : tensor<64x128xbf16, #tgpu.mma<warps = 4>>, memref<128x64xbf16, strided<[72, 1]>, 3>,
        tensor<64x64xf32, #tgpu.mma<warps = 4>> -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
  return %o : tensor<64x64xf32, #tgpu.mma<warps = 4>>
}

// -----

// A whole staged KV step in generic form parses to the custom form.
// CHECK-LABEL: func.func @generic_form
// CHECK-SAME: ([[KD:%[^:]+]]: !tile.desc<?x64xbf16>, [[J:%[^:]+]]: index, [[ACC:%[^:]+]]: tensor<64x64xf32, #tgpu.mma<warps = 2>>)
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc offset 32 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.copy_async [[KD]]{{\[}}[[J]], [[J]]{{\]}}, [[B]] : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: tgpu.async_wait {pending = 2 : i64}
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: [[R:%.+]] = tgpu.mma [[B]], [[B]], [[ACC]] {transpose_rhs} : memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 2>> -> tensor<64x64xf32, #tgpu.mma<warps = 2>>
// CHECK-NEXT: return [[R]]
func.func @generic_form(%kd: !tile.desc<?x64xbf16>, %j: index,
                        %acc: tensor<64x64xf32, #tgpu.mma<warps = 2>>)
    -> tensor<64x64xf32, #tgpu.mma<warps = 2>> {
  %b = "tgpu.shared_alloc"() {offset = 32 : i64} : () -> memref<64x64xbf16, strided<[72, 1]>, 3>
  "tgpu.barrier"() : () -> ()
  "tgpu.copy_async"(%kd, %j, %j, %b) : (!tile.desc<?x64xbf16>, index, index, memref<64x64xbf16, strided<[72, 1]>, 3>) -> ()
  "tgpu.async_wait"() {pending = 2 : i64} : () -> ()
  "tgpu.barrier"() : () -> ()
  %r = "tgpu.mma"(%b, %b, %acc) {transpose_rhs} : (memref<64x64xbf16, strided<[72, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<64x64xf32, #tgpu.mma<warps = 2>>) -> tensor<64x64xf32, #tgpu.mma<warps = 2>>
  return %r : tensor<64x64xf32, #tgpu.mma<warps = 2>>
}

// -----

// tgpu.store_shared (the backward's P and dS on their way to ldmatrix.trans):
// a bf16 tile into a padded buffer of its shape, an f16 tile of 8 warps into
// an identity-layout buffer, and the generic form.
// CHECK-LABEL: func.func @store_shared
// CHECK-SAME: ([[P:%[^:]+]]: tensor<64x128xbf16, #tgpu.mma<warps = 4>>, [[H:%[^:]+]]: tensor<128x64xf16, #tgpu.mma<warps = 8>>)
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc offset 0 : memref<64x128xbf16, strided<[136, 1]>, 3>
// CHECK-NEXT: [[C:%.+]] = tgpu.shared_alloc offset 17408 : memref<128x64xf16, 3>
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: tgpu.store_shared [[P]], [[B]] : tensor<64x128xbf16, #tgpu.mma<warps = 4>>, memref<64x128xbf16, strided<[136, 1]>, 3>
// CHECK-NEXT: tgpu.store_shared [[H]], [[C]] : tensor<128x64xf16, #tgpu.mma<warps = 8>>, memref<128x64xf16, 3>
// CHECK-NEXT: tgpu.store_shared [[P]], [[B]] : tensor<64x128xbf16, #tgpu.mma<warps = 4>>, memref<64x128xbf16, strided<[136, 1]>, 3>
// CHECK-NEXT: tgpu.barrier{{$}}
// CHECK-NEXT: return
func.func @store_shared(%p: tensor<64x128xbf16, #tgpu.mma<warps = 4>>,
                        %h: tensor<128x64xf16, #tgpu.mma<warps = 8>>) {
  %b = tgpu.shared_alloc offset 0 : memref<64x128xbf16, strided<[136, 1]>, 3>
  %c = tgpu.shared_alloc offset 17408 : memref<128x64xf16, 3>
  tgpu.barrier
  tgpu.store_shared %p, %b : tensor<64x128xbf16, #tgpu.mma<warps = 4>>, memref<64x128xbf16, strided<[136, 1]>, 3>
  tgpu.store_shared %h, %c : tensor<128x64xf16, #tgpu.mma<warps = 8>>, memref<128x64xf16, 3>
  "tgpu.store_shared"(%p, %b) : (tensor<64x128xbf16, #tgpu.mma<warps = 4>>, memref<64x128xbf16, strided<[136, 1]>, 3>) -> ()
  tgpu.barrier
  return
}

// -----

// On sm_90a the backward's P goes into a swizzled buffer that wgmma reads
// MN-major (transpose_lhs): Pᵀ dO with 64 keys and 64 query rows.
// CHECK-LABEL: func.func @warpgroup_transposed_lhs
// CHECK: tgpu.store_shared %{{.+}}, [[P:%.+]] : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK-NEXT: tgpu.barrier
// CHECK-NEXT: tgpu.warpgroup_mma [[P]], %{{.+}}, %{{.+}} {transpose_lhs} : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 4>> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
func.func @warpgroup_transposed_lhs(%p: tensor<64x64xbf16, #tgpu.mma<warps = 4>>,
                                    %acc: tensor<64x128xf32, #tgpu.mma<warps = 4>>) -> tensor<64x128xf32, #tgpu.mma<warps = 4>> {
  %b = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %d = tgpu.shared_alloc offset 8192 : memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>
  tgpu.store_shared %p, %b : tensor<64x64xbf16, #tgpu.mma<warps = 4>>, memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  tgpu.fence_async_shared
  tgpu.barrier
  %r = tgpu.warpgroup_mma %b, %d, %acc {transpose_lhs} : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<64x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 4>> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
  return %r : tensor<64x128xf32, #tgpu.mma<warps = 4>>
}

// -----

// A 64-row product over eight warps in two column groups (dQ = dS K of a
// 128-key dK/dV CTA): each warpgroup computes all rows of half the columns;
// col_groups = 1 is the default and is not printed.
// CHECK-LABEL: func.func @warpgroup_column_groups
// CHECK: tgpu.warpgroup_mma %{{.+}}, %{{.+}}, %{{.+}} {transpose_lhs} : memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>> -> tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
// CHECK: tensor<64x64xf32, #tgpu.mma<warps = 4>>
func.func @warpgroup_column_groups(%acc: tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>,
                                   %one: tensor<64x64xf32, #tgpu.mma<warps = 4, col_groups = 1>>)
    -> (tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, tensor<64x64xf32, #tgpu.mma<warps = 4>>) {
  %ds = tgpu.shared_alloc offset 0 : memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %k = tgpu.shared_alloc offset 16384 : memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %r = tgpu.warpgroup_mma %ds, %k, %acc {transpose_lhs} : memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>> -> tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>
  return %r, %one : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, tensor<64x64xf32, #tgpu.mma<warps = 4>>
}

// -----

// tgpu.mma with transpose_lhs: the shared lhs holds A^T. P^T dO of a dK/dV
// kernel with 128 keys and 64 query rows: P is 64 x 128 (K x M), dO 64 x 64,
// the dV accumulator 128 x 64 (M x N).
// CHECK-LABEL: func.func @mma_transpose_lhs
// CHECK-SAME: ([[ACC:%[^:]+]]: tensor<128x64xf32, #tgpu.mma<warps = 4>>)
// CHECK-NEXT: [[P:%.+]] = tgpu.shared_alloc offset 0 : memref<64x128xbf16, strided<[136, 1]>, 3>
// CHECK-NEXT: [[DO:%.+]] = tgpu.shared_alloc offset 17408 : memref<64x64xbf16, strided<[72, 1]>, 3>
// CHECK-NEXT: [[DV:%.+]] = tgpu.mma [[P]], [[DO]], [[ACC]] {transpose_lhs} : memref<64x128xbf16, strided<[136, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
// The long spelling and the generic form parse to the same op.
// CHECK-NEXT: [[DV2:%.+]] = tgpu.mma [[P]], [[DO]], [[DV]] {transpose_lhs} : memref<64x128xbf16, strided<[136, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: [[DV3:%.+]] = tgpu.mma [[P]], [[DO]], [[DV2]] {transpose_lhs} : memref<64x128xbf16, strided<[136, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
// CHECK-NEXT: return [[DV3]] : tensor<128x64xf32, #tgpu.mma<warps = 4>>
func.func @mma_transpose_lhs(%acc: tensor<128x64xf32, #tgpu.mma<warps = 4>>)
    -> tensor<128x64xf32, #tgpu.mma<warps = 4>> {
  %p = tgpu.shared_alloc offset 0 : memref<64x128xbf16, strided<[136, 1]>, 3>
  %do = tgpu.shared_alloc offset 17408 : memref<64x64xbf16, strided<[72, 1]>, 3>
  %dv = tgpu.mma %p, %do, %acc {transpose_lhs}
      : memref<64x128xbf16, strided<[136, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
  %dv2 = tgpu.mma %p, %do, %dv {transpose_lhs = unit}
      : memref<64x128xbf16, strided<[136, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>,
        tensor<128x64xf32, #tgpu.mma<warps = 4>> -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
  %dv3 = "tgpu.mma"(%p, %do, %dv2) {transpose_lhs} : (memref<64x128xbf16, strided<[136, 1]>, 3>, memref<64x64xbf16, strided<[72, 1]>, 3>, tensor<128x64xf32, #tgpu.mma<warps = 4>>) -> tensor<128x64xf32, #tgpu.mma<warps = 4>>
  return %dv3 : tensor<128x64xf32, #tgpu.mma<warps = 4>>
}

// -----

// Both operands transposed: A^T is 32 x 64 (K x M), B^T 128 x 32 (N x K).
// CHECK-LABEL: func.func @mma_transpose_both
// CHECK: tgpu.mma %{{.+}}, %{{.+}}, %{{.+}} {transpose_lhs, transpose_rhs} : memref<32x64xf16, strided<[72, 1]>, 3>, memref<128x32xf16, strided<[40, 1]>, 3>, tensor<64x128xf32, #tgpu.mma<warps = 2>> -> tensor<64x128xf32, #tgpu.mma<warps = 2>>
func.func @mma_transpose_both(%acc: tensor<64x128xf32, #tgpu.mma<warps = 2>>)
    -> tensor<64x128xf32, #tgpu.mma<warps = 2>> {
  %a = tgpu.shared_alloc offset 0 : memref<32x64xf16, strided<[72, 1]>, 3>
  %b = tgpu.shared_alloc offset 4608 : memref<128x32xf16, strided<[40, 1]>, 3>
  %r = tgpu.mma %a, %b, %acc {transpose_rhs, transpose_lhs}
      : memref<32x64xf16, strided<[72, 1]>, 3>, memref<128x32xf16, strided<[40, 1]>, 3>,
        tensor<64x128xf32, #tgpu.mma<warps = 2>> -> tensor<64x128xf32, #tgpu.mma<warps = 2>>
  return %r : tensor<64x128xf32, #tgpu.mma<warps = 2>>
}

// -----

// The copy engine and warp specialization round-trip.
// CHECK-LABEL: func.func @warp_specialized
// CHECK-SAME: %arg0: !tgpu.tensor_map
// CHECK: tgpu.mbarrier_init %{{.+}}[%{{.+}}] count 1 : memref<2xi64, 3>
// CHECK: tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
// CHECK-NEXT: tgpu.tma_load %arg0[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}], %{{.+}}, %{{.+}}[%{{.+}}] : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<2xi64, 3>
// CHECK-NEXT: } consumer {
// CHECK-NEXT: tgpu.mbarrier_wait %{{.+}}[%{{.+}}], %{{.+}} : memref<2xi64, 3>
// CHECK-NEXT: tgpu.mbarrier_arrive %{{.+}}[%{{.+}}] : memref<2xi64, 3>
// The arrival that hands a buffer back to the producer names it.
// CHECK-NEXT: tgpu.mbarrier_arrive %{{.+}}[%{{.+}}] frees %{{.+}} : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3> : memref<2xi64, 3>
func.func @warp_specialized(%map: !tgpu.tensor_map {tgpu.tensor_map = {tensor = 0 : i64}})
    attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = tgpu.shared_alloc offset 0 : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  %bars = tgpu.shared_alloc offset 8192 : memref<2xi64, 3>
  tgpu.mbarrier_init %bars[%c0] count 1 : memref<2xi64, 3>
  tgpu.mbarrier_init %bars[%c1] count 256 : memref<2xi64, 3>
  tgpu.barrier
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    tgpu.tma_load %map[%c0, %c0, %c0, %c0], %buf, %bars[%c0] : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3>, memref<2xi64, 3>
  } consumer {
    tgpu.mbarrier_wait %bars[%c0], %c0 : memref<2xi64, 3>
    tgpu.mbarrier_arrive %bars[%c1] : memref<2xi64, 3>
    tgpu.mbarrier_arrive %bars[%c1] frees %buf : memref<64x64xbf16, #tgpu.swizzle<bytes = 128>, 3> : memref<2xi64, 3>
  }
  return
}

// -----

// tgpu.bulk_load and tgpu.load_shared (a step's per-query vector copied by
// the producer beside a ring's tile, read by the consumers).
// CHECK-LABEL: func.func @ring_vector
// CHECK: tgpu.bulk_load %{{.+}}[%{{.+}}], %{{.+}}, %{{.+}}[%{{.+}}] : <?xf32>, memref<64xf32, 3>, memref<2xi64, 3>
// CHECK: tgpu.load_shared %{{.+}}[%{{.+}}] fill 0x7F800000 : memref<64xf32, 3> -> tensor<64xf32, #tgpu.cols<warps = 4>>
// CHECK: tgpu.load_shared %{{.+}}[%{{.+}}] fill 0.000000e+00 : memref<64xf32, 3> -> tensor<64xf32, #tgpu.rows<warps = 4>>
func.func @ring_vector(%d: !tile.desc<?xf32>, %row: index)
    attributes {tgpu.num_warps = 4 : i64, tgpu.producer_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = tgpu.shared_alloc offset 0 : memref<64xf32, 3>
  %bars = tgpu.shared_alloc offset 256 : memref<2xi64, 3>
  tgpu.mbarrier_init %bars[%c0] count 1 : memref<2xi64, 3>
  tgpu.mbarrier_init %bars[%c1] count 128 : memref<2xi64, 3>
  tgpu.barrier
  tgpu.warp_specialize {consumer_registers = 256 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    tgpu.bulk_load %d[%row], %v, %bars[%c0] : !tile.desc<?xf32>, memref<64xf32, 3>, memref<2xi64, 3>
  } consumer {
    tgpu.mbarrier_wait %bars[%c0], %c0 : memref<2xi64, 3>
    %n = tile.dim %d, 0 : !tile.desc<?xf32>
    %count = arith.subi %n, %row : index
    %l = tgpu.load_shared %v[%count] fill 0x7F800000 : memref<64xf32, 3> -> tensor<64xf32, #tgpu.cols<warps = 4>>
    %r = tgpu.load_shared %v[%count] fill 0.0 : memref<64xf32, 3> -> tensor<64xf32, #tgpu.rows<warps = 4>>
    tgpu.mbarrier_arrive %bars[%c1] : memref<2xi64, 3>
  }
  return
}

// -----

// Three CTAs of one consumer warpgroup: 80 registers per thread at entry, a
// pool of 20480, of which a producer at 24 leaves the consumers 136 (the
// verifier's bound, met exactly; 144 is rejected in invalid.mlir).
// CHECK-LABEL: func.func @warp_specialized_three_ctas
// CHECK: tgpu.warp_specialize {consumer_registers = 136 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64}
func.func @warp_specialized_three_ctas()
    attributes {tgpu.num_warps = 4 : i64, tgpu.producer_warps = 4 : i64, tgpu.ctas_per_sm = 3 : i64} {
  tgpu.warp_specialize {consumer_registers = 136 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    %p = arith.constant 0 : index
  } consumer {
    %c = arith.constant 0 : index
  }
  return
}

// -----

// tgpu.core_reduce_add and tgpu.core_load (an accumulator kept in mma
// core-block order): a tile in column groups staged through an unswizzled
// buffer of its shape, read back in another layout.
// CHECK-LABEL: func.func @core_order
// CHECK: tgpu.core_reduce_add %{{.+}}, %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>, <?x128xf32>
// CHECK-NEXT: tgpu.core_load %{{.+}}[%{{.+}}, %{{.+}}] fill 0.000000e+00 : <?x128xf32> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
func.func @core_order(%t: tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>,
                      %d: !tile.desc<?x128xf32>, %r: index) -> tensor<64x128xf32, #tgpu.mma<warps = 4>> {
  %c0 = arith.constant 0 : index
  %b = tgpu.shared_alloc offset 0 : memref<64x128xf32, 3>
  tgpu.core_reduce_add %t, %b, %d[%r, %c0] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>, !tile.desc<?x128xf32>
  %v = tgpu.core_load %d[%r, %c0] fill 0.0 : !tile.desc<?x128xf32> -> tensor<64x128xf32, #tgpu.mma<warps = 4>>
  return %v : tensor<64x128xf32, #tgpu.mma<warps = 4>>
}

// -----

// tgpu.core_add_staged (the producer's warp adds a staged tile) and
// tgpu.bulk_wait_read (its older reductions have read their buffers).
// CHECK-LABEL: func.func @core_add_staged
// CHECK: tgpu.core_add_staged %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<64x128xf32, 3>, <?x128xf32>
// CHECK-NEXT: tgpu.bulk_wait_read 1
// CHECK-NEXT: tgpu.bulk_wait{{$}}
func.func @core_add_staged(%d: !tile.desc<?x128xf32>, %r: index)
    attributes {tgpu.num_warps = 8 : i64, tgpu.producer_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = tgpu.shared_alloc offset 0 : memref<64x128xf32, 3>
  tgpu.warp_specialize {consumer_registers = 240 : i64, producer_registers = 24 : i64, producer_warps = 4 : i64} producer {
    tgpu.core_add_staged %b, %d[%r, %c0] : memref<64x128xf32, 3>, !tile.desc<?x128xf32>
    tgpu.bulk_wait_read 1
    tgpu.bulk_wait
  } consumer {
    tgpu.barrier
  }
  return
}

// -----

// tgpu.core_stage and tgpu.core_flush: tgpu.core_reduce_add in two halves,
// the flush with or without a predicate.
// CHECK-LABEL: func.func @core_stage_flush
// CHECK: tgpu.core_stage %{{.+}}, %{{.+}} : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>
// CHECK-NEXT: tgpu.core_flush %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] if %{{.+}} : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>, <?x128xf32>
// CHECK-NEXT: tgpu.core_flush %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>, <?x128xf32>
func.func @core_stage_flush(%t: tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>,
                            %d: !tile.desc<?x128xf32>, %r: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %b = tgpu.shared_alloc offset 0 : memref<64x128xf32, 3>
  tgpu.core_stage %t, %b : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>
  tgpu.core_flush %b, %d[%r, %c0] if %p : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>, !tile.desc<?x128xf32>
  tgpu.core_flush %b, %d[%r, %c0] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, 3>, !tile.desc<?x128xf32>
  return
}

// -----

// tgpu.bulk_reduce_add and tgpu.bulk_wait (the atomic backward's dQ shares
// by bulk reductions): an f32 tile staged through a buffer of its shape,
// added into a descriptor, waited for.
// CHECK-LABEL: func.func @bulk_reduce_add
// CHECK-SAME: ([[T:%[^:]+]]: tensor<64x64xf32, #tgpu.mma<warps = 4>>, [[D:%[^:]+]]: !tile.desc<?x64xf32>, [[R:%[^:]+]]: index)
// CHECK-NEXT: [[C0:%.+]] = arith.constant 0 : index
// CHECK-NEXT: [[B:%.+]] = tgpu.shared_alloc offset 0 : memref<64x64xf32, 3>
// CHECK-NEXT: tgpu.bulk_reduce_add [[T]], [[B]], [[D]]{{\[}}[[R]], [[C0]]] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, 3>, <?x64xf32>
// CHECK-NEXT: tgpu.bulk_wait{{$}}
func.func @bulk_reduce_add(%t: tensor<64x64xf32, #tgpu.mma<warps = 4>>,
                           %d: !tile.desc<?x64xf32>, %r: index) {
  %c0 = arith.constant 0 : index
  %b = tgpu.shared_alloc offset 0 : memref<64x64xf32, 3>
  tgpu.bulk_reduce_add %t, %b, %d[%r, %c0] : tensor<64x64xf32, #tgpu.mma<warps = 4>>, memref<64x64xf32, 3>, !tile.desc<?x64xf32>
  tgpu.bulk_wait
  return
}

// -----

// tgpu.tma_store (the forward's output tile stored through a tensor map, a
// box per warp and swizzle span): coordinates column, row, then the others.
// CHECK-LABEL: func.func @tma_store
// CHECK: tgpu.tma_store %arg0, %{{.+}}, %arg1[%c0, %arg2, %c0, %c0] : tensor<128x64xbf16, #tgpu.mma<warps = 8>>, memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
func.func @tma_store(%t: tensor<128x64xbf16, #tgpu.mma<warps = 8>>,
                     %map: !tgpu.tensor_map, %r: index) {
  %c0 = arith.constant 0 : index
  %b = tgpu.shared_alloc offset 0 : memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  tgpu.tma_store %t, %b, %map[%c0, %r, %c0, %c0] : tensor<128x64xbf16, #tgpu.mma<warps = 8>>, memref<128x64xbf16, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

// tgpu.tma_reduce_add (a tile in column groups added through a tensor map,
// a box per warp and swizzle span): coordinates column, row, then outer.
// CHECK-LABEL: func.func @tma_reduce_add
// CHECK: tgpu.tma_reduce_add %arg0, %{{.+}}, %arg1[%c0, %arg2, %c0, %c0] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>
func.func @tma_reduce_add(%t: tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>,
                          %map: !tgpu.tensor_map, %r: index) {
  %c0 = arith.constant 0 : index
  %b = tgpu.shared_alloc offset 0 : memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>
  tgpu.tma_reduce_add %t, %b, %map[%c0, %r, %c0, %c0] : tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>, memref<64x128xf32, #tgpu.swizzle<bytes = 128>, 3>
  return
}

// -----

// tgpu.scale_rows (each row of a register tile times its factor; warps
// whose factors are all 1 skip it).
// CHECK-LABEL: func.func @scale_rows
// CHECK: tgpu.scale_rows %arg0, %arg1 : tensor<64x128xf32, #tgpu.mma<warps = 4>>, tensor<64xf32, #tgpu.rows<warps = 4>>
func.func @scale_rows(%t: tensor<64x128xf32, #tgpu.mma<warps = 4>>,
                      %f: tensor<64xf32, #tgpu.rows<warps = 4>>) -> tensor<64x128xf32, #tgpu.mma<warps = 4>> {
  %s = tgpu.scale_rows %t, %f : tensor<64x128xf32, #tgpu.mma<warps = 4>>, tensor<64xf32, #tgpu.rows<warps = 4>>
  return %s : tensor<64x128xf32, #tgpu.mma<warps = 4>>
}

// -----

// tgpu.draw_keep_bits / tgpu.load_keep_bits (the dropout's keep bits drawn
// by the producer on the consumers' behalf: here 3 of each consumer
// thread's 8 patches of a 128 x 128 tile over 8 warps, one word per thread;
// the consumers draw the other 5 from the same operands), and tgpu.next_tile
// sharing the tile through two words.
// CHECK-LABEL: func.func @keep_bits
// CHECK: tgpu.draw_keep_bits %arg0, %arg1, %arg2, %arg2, %arg2, %arg2 below 58982 patches 3 into %arg3 as tensor<128x128xi1, #tgpu.mma<warps = 8>> {keys_by_queries} : memref<256xi32, 3>
// CHECK: tgpu.load_keep_bits %arg3, %arg0, %arg1, %arg2, %arg2, %arg2, %arg2 below 58982 patches 3 {keys_by_queries} : memref<256xi32, 3> -> tensor<128x128xi1, #tgpu.mma<warps = 8>>
// CHECK: tgpu.next_tile %arg4, %arg2, %arg2 shares %arg5 : memref<1xi32>, memref<2xi32, 3>
func.func @keep_bits(%seed: i64, %off: i64, %i: index, %s: memref<256xi32, 3>, %counter: memref<1xi32>, %words: memref<2xi32, 3>) -> tensor<128x128xi1, #tgpu.mma<warps = 8>> {
  tgpu.draw_keep_bits %seed, %off, %i, %i, %i, %i below 58982 patches 3 into %s as tensor<128x128xi1, #tgpu.mma<warps = 8>> {keys_by_queries} : memref<256xi32, 3>
  %k = tgpu.load_keep_bits %s, %seed, %off, %i, %i, %i, %i below 58982 patches 3 {keys_by_queries} : memref<256xi32, 3> -> tensor<128x128xi1, #tgpu.mma<warps = 8>>
  %t = tgpu.next_tile %counter, %i, %i shares %words : memref<1xi32>, memref<2xi32, 3>
  return %k : tensor<128x128xi1, #tgpu.mma<warps = 8>>
}
