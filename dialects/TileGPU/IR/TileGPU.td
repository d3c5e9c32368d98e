//===- TileGPU.td - tgpu dialect: the GPU schedule ---------*- tablegen -*-===//
//
// `tgpu` (TileGPU) is where a tile program gets a GPU schedule: which tiles
// live in registers and in what thread layout, which go through shared
// memory, how global->shared copies are issued and awaited, and which
// tensor-core instruction multiplies them. Register tiles stay ranked
// tensors (elementwise arith/math and tile.reduce/broadcast/splat/iota/gather
// keep working on them), now carrying a layout encoding.
//
// The first schedule is the sm_80 one (cp.async + mma.sync, 4 warps, one Q
// block per CTA). Hopper's (TMA ring + mbarriers, wgmma from consumer
// warpgroups, a producer warp, setmaxnreg) extends this dialect with ops of
// the same kind (tgpu.tma_copy, tgpu.mbarrier_*, tgpu.wgmma, warp-role
// regions) chosen by passes; nothing here assumes mma.sync beyond tgpu.mma's
// lowering in the emitter.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TILEGPU
#define KILN_TILEGPU

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TileGPU_Dialect : Dialect {
  let name = "tgpu";
  let cppNamespace = "::kiln::tgpu";
  let summary = "GPU schedules of tile programs: layouts, shared memory, async copies, MMA";
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::kiln::tile::TileDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TileGPU_MmaLayoutAttr : AttrDef<TileGPU_Dialect, "MmaLayout"> {
  let mnemonic = "mma";
  let summary = "a 2-D register tile in the accumulator layout of mma.m16n8";
  let description = [{
    `tensor<64x64xf32, #tgpu.mma<warps = 4>>`: warp w owns rows
    [w*M/W, (w+1)*M/W), in m16 x n8 fragments; lane l of a fragment holds
    rows l/4 and l/4 + 8, columns 2*(l%4) and 2*(l%4) + 1. The same layout,
    in bf16/f16, is the A operand of the next mma (P in P*V) with no shuffle.
  }];
  let parameters = (ins "int64_t":$warps);
  let assemblyFormat = "`<` struct(params) `>`";
}

def TileGPU_RowsLayoutAttr : AttrDef<TileGPU_Dialect, "RowsLayout"> {
  let mnemonic = "rows";
  let summary = "a 1-D per-row register tile matching the rows of #tgpu.mma";
  let description = [{
    Row statistics (max, sum, LSE) of an `#tgpu.mma` tile: each thread holds
    the values of the rows it holds in the 2-D tile, replicated across the
    four lanes of a quad after a reduction.
  }];
  let parameters = (ins "int64_t":$warps);
  let assemblyFormat = "`<` struct(params) `>`";
}

class TileGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<TileGPU_Dialect, mnemonic, traits>;

def TileGPU_SharedAllocOp : TileGPU_Op<"shared_alloc"> {
  let summary = "a buffer in shared memory (memory space 3) at a fixed offset";
  let arguments = (ins I64Attr:$offset);
  let results = (outs Res<AnyStaticShapeMemRef, "", [MemAlloc]>:$buffer);
  let assemblyFormat = "`offset` $offset attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def TileGPU_CopyAsyncOp : TileGPU_Op<"copy_async"> {
  let summary = "starts a global -> shared copy of a tile; rows past the descriptor read 0";
  let description = [{
    Every thread of the CTA issues its share of 16-byte `cp.async` copies;
    out-of-bounds rows are zero-filled by the copy itself (src-size 0).
    Completion is awaited with `tgpu.async_wait` and published to other
    warps with `tgpu.barrier`.
  }];
  let arguments = (ins AnyType:$source, Variadic<Index>:$offsets,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$dest);
  let assemblyFormat = [{
    $source `[` $offsets `]` `,` $dest attr-dict `:` type($source) `,` type($dest)
  }];
}

def TileGPU_AsyncWaitOp : TileGPU_Op<"async_wait"> {
  let summary = "waits until at most `pending` async copy groups of this thread are in flight";
  let arguments = (ins DefaultValuedAttr<I64Attr, "0">:$pending);
  let assemblyFormat = "attr-dict";
}

def TileGPU_BarrierOp : TileGPU_Op<"barrier"> {
  let summary = "a CTA-wide barrier (__syncthreads)";
  let assemblyFormat = "attr-dict";
}

def TileGPU_StoreSharedOp : TileGPU_Op<"store_shared"> {
  let summary = "writes a register tile into a shared buffer of its shape";
  let description = [{
    Every thread writes the elements it holds in the tile's `#tgpu.mma`
    layout. The transposed-lhs products of the backward pass (`Pᵀ dO`,
    `dSᵀ Q`) go through shared memory this way: a warp holds rows of P, but
    the product needs its columns, which ldmatrix.trans then reads. Readers
    in other warps need a `tgpu.barrier` after the store.
  }];
  let arguments = (ins AnyRankedTensor:$value,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$dest);
  let assemblyFormat = "$value `,` $dest attr-dict `:` type($value) `,` type($dest)";
  let hasVerifier = 1;
}

def TileGPU_MmaOp : TileGPU_Op<"mma", [MemoryEffects<[MemRead]>]> {
  let summary = "acc + op(A) * op(B) on tensor cores";
  let description = [{
    `lhs` is a shared-memory buffer (loaded with ldmatrix) or a register tile
    in `#tgpu.mma` layout (P in P*V); `rhs` is a shared-memory buffer, read
    transposed (`K` rows for `Q K^T`) when `transpose_rhs` is set. With
    `transpose_lhs` the lhs must be a shared buffer holding Aᵀ (K x M; `P`
    for `Pᵀ dO`), read with ldmatrix.trans. The accumulator and result are
    f32 `#tgpu.mma` tiles.
  }];
  let arguments = (ins AnyType:$lhs, AnyStaticShapeMemRef:$rhs,
                       AnyRankedTensor:$acc, UnitAttr:$transpose_rhs,
                       UnitAttr:$transpose_lhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `,` type($acc) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // KILN_TILEGPU
