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
// block per CTA). Hopper's (a TMA ring on mbarriers filled by a producer
// warpgroup, wgmma from consumer warpgroups, setmaxnreg) extends it with ops
// of the same kind (tgpu.tma_load, tgpu.mbarrier_*, tgpu.warpgroup_mma, the
// tgpu.warp_specialize role regions) chosen by passes; nothing here assumes
// mma.sync beyond tgpu.mma's lowering in the emitter.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TILEGPU
#define KILN_TILEGPU

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TileGPU_Dialect : Dialect {
  let name = "tgpu";
  let cppNamespace = "::kiln::tgpu";
  let summary = "GPU schedules of tile programs: layouts, shared memory, async copies, MMA";
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
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

    `tensor<64x128xf32, #tgpu.mma<warps = 8, col_groups = 2>>`: a tile with
    fewer rows than 16 per warp. The warps split into `col_groups` groups of
    W / G consecutive warps; group g owns columns [g*N/G, (g+1)*N/G) and its
    warps split all M rows as above (FlashAttention-3's dQ = dS K in a
    128-key backward CTA: each consumer warpgroup computes half the
    columns). Products (as the accumulator), elementwise ops, splats, index
    tiles, loads, stores, shared stores and atomic adds take such tiles; no
    row statistics or broadcasts (a row lies in G warps), no Philox bits.
  }];
  let parameters = (ins "int64_t":$warps,
                        DefaultValuedParameter<"int64_t", "1">:$col_groups);
  let builders = [
    AttrBuilder<(ins "int64_t":$warps), [{
      return $_get($_ctxt, warps, 1);
    }]>
  ];
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
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

def TileGPU_ColsLayoutAttr : AttrDef<TileGPU_Dialect, "ColsLayout"> {
  let mnemonic = "cols";
  let summary = "a 1-D per-column register tile matching the columns of #tgpu.mma";
  let description = [{
    Per-column values of an `#tgpu.mma` tile (the backward's per-query LSE
    and D down the columns of Sᵀ): each thread holds the values of the
    columns it holds in the 2-D tile, two per n8 fragment; every warp holds
    all columns.
  }];
  let parameters = (ins "int64_t":$warps);
  let assemblyFormat = "`<` struct(params) `>`";
}

def TileGPU_SwizzleLayoutAttr
    : AttrDef<TileGPU_Dialect, "SwizzleLayout",
              [DeclareAttrInterfaceMethods<MemRefLayoutAttrInterface,
                                           ["isIdentity", "verifyLayout",
                                            "getStridesAndOffset"]>]> {
  let mnemonic = "swizzle";
  let summary = "a shared tile in the swizzled layout that wgmma and TMA use";
  let description = [{
    `memref<128x128xbf16, #tgpu.swizzle<bytes = 128>, 3>`: the tile is
    stored as column blocks of `bytes` bytes (64 bf16 columns for 128), each
    block holding every row at `bytes` bytes per row; within a block the
    16-byte chunk index of byte offset `o` is XORed with bits
    [7, 7 + log2(bytes / 16)) of `o` (CUTLASS's Swizzle<3,4,3> for 128
    bytes, <2,4,3> for 64, <1,4,3> for 32). This is the canonical layout a
    wgmma shared-memory descriptor reads, K-major (rows are M or N) or
    MN-major (rows are K), and the one a TMA copy with the same swizzle
    writes, so a buffer in it needs no padding and no bank-conflict care.
    The index space stays row-major (getAffineMap is the identity map) but
    the placement is not strided: getStridesAndOffset fails, so nothing
    mistakes it for a plain buffer. Rows are a multiple of 8 and the row's
    bytes a multiple of `bytes`; the buffer starts 1024-byte aligned.
  }];
  let parameters = (ins "int64_t":$bytes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def TileGPU_TensorMapType : TypeDef<TileGPU_Dialect, "TensorMap"> {
  let mnemonic = "tensor_map";
  let summary = "a TMA tensor map (CUtensorMap) the runtime encodes per launch";
  let description = [{
    A kernel argument of this type is a `const __grid_constant__
    kiln::TensorMap`: 128 bytes the runtime builds with
    cuTensorMapEncodeTiled from a tensor the kernel also receives, as the
    argument's `tgpu.tensor_map` dictionary says (`tensor`: the number of the
    memref argument it describes; `dims`: that tensor's dimensions innermost
    first; `box`: the box over them; `swizzle`: bytes). `tgpu.tma_load`
    reads through it, `tgpu.tma_reduce_add` adds through it (the tensor may
    then be a workspace, the atomic backward's dQ accumulator).
  }];
}

class TileGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<TileGPU_Dialect, mnemonic, traits>;

def TileGPU_SharedAllocOp : TileGPU_Op<"shared_alloc"> {
  let summary = "a buffer in shared memory (memory space 3) at a fixed offset";
  let description = [{
    With `overlays %b`, the buffer reuses the memory from buffer `%b`'s
    offset on (its offset is `%b`'s; the layout places it there and counts
    its end, not its bytes beside the others). The pass that makes it
    guarantees that every buffer it covers is dead (no access pending or
    to come) wherever the overlay is used.
  }];
  let arguments = (ins I64Attr:$offset,
                       Optional<AnyStaticShapeMemRef>:$overlays);
  let results = (outs Res<AnyStaticShapeMemRef, "", [MemAlloc]>:$buffer);
  let assemblyFormat = [{
    (`overlays` $overlays^ `:` type($overlays) `,`)? `offset` $offset attr-dict
    `:` type($buffer)
  }];
  let builders = [
    OpBuilder<(ins "mlir::Type":$type, "int64_t":$offset), [{
      build($_builder, $_state, type, offset, mlir::Value());
    }]>,
  ];
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
  let summary = "a barrier of every thread that runs the code around it";
  let description = [{
    `__syncthreads()`, or inside the consumer region of
    `tgpu.warp_specialize`, a named barrier of the consumer warps alone (the
    producer warps never reach it).
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def TileGPU_StoreSharedOp : TileGPU_Op<"store_shared"> {
  let summary = "writes a register tile into a shared buffer of its shape";
  let description = [{
    Every thread writes the elements it holds in the tile's `#tgpu.mma`
    layout. The transposed-lhs products of the backward pass (`Pᵀ dO`,
    `dSᵀ Q`) go through shared memory this way: a warp holds rows of P, but
    the product needs its columns, which ldmatrix.trans (into a padded
    buffer) or `tgpu.warpgroup_mma` with `transpose_lhs` (from a
    `#tgpu.swizzle` buffer, written at the swizzled offsets) then reads.
    Readers in other warps need a `tgpu.barrier` after the store, and the
    async proxy (wgmma) a `tgpu.fence_async_shared` before that barrier.
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

def TileGPU_WarpgroupMmaOp
    : TileGPU_Op<"warpgroup_mma",
                 [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "acc + A * op(B) by wgmma (sm_90a), B read through a descriptor";
  let description = [{
    Hopper's warpgroup product: each group of four warps multiplies its 64
    rows of A by all of op(B) with `wgmma.mma_async` m64nNk16 steps over K,
    A from a swizzled shared buffer (K-major, read through a descriptor) or
    from registers (`#tgpu.mma` bf16/f16, P in P*V), B from a swizzled
    shared buffer: K-major when `transpose_rhs` (K rows for Q K^T), else
    MN-major (V rows for P V; the transpose happens in the descriptor, not
    in an ldmatrix.trans copy). With `transpose_lhs` the lhs is a swizzled
    shared buffer holding Aᵀ (K x M: P for Pᵀ dO in the backward), read
    MN-major the same way. The accumulator is the same `#tgpu.mma`
    register tile as `tgpu.mma`'s, with one m16 tile per warp: that is the
    wgmma accumulator layout, so the softmax and the mods around it do not
    change. `tgpu-warpgroup-mma` rewrites eligible `tgpu.mma` ops into it.

    The op waits for its own products, unless `async`: then it issues them
    as one wgmma group and its result may only be read through a
    `tgpu.warpgroup_wait`. With a `predicate` (warpgroup-uniform) the
    products are issued only where it holds and the result is `acc`
    elsewhere; the group is committed either way, so wait counts do not
    depend on it. An async product also writes (the warpgroup's group
    count): it is neither erased, merged nor moved across other effects.
  }];
  let arguments = (ins AnyType:$lhs, AnyStaticShapeMemRef:$rhs,
                       AnyRankedTensor:$acc, Optional<I1>:$predicate,
                       UnitAttr:$transpose_rhs, UnitAttr:$async,
                       UnitAttr:$transpose_lhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc (`if` $predicate^)? attr-dict `:` type($lhs) `,` type($rhs) `,` type($acc) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGPU_WarpgroupWaitOp
    : TileGPU_Op<"warpgroup_wait", [AllTypesMatch<["value", "result"]>]> {
  let summary = "waits for asynchronous warpgroup products; yields their results";
  let description = [{
    `wgmma.wait_group pending`: every wgmma group of this warpgroup but the
    `pending` most recently committed is complete. Groups complete in
    issue order, so `%s = tgpu.warpgroup_wait %s0 {pending = 1}` after
    issuing Q K^T and then P V waits for Q K^T alone. The operand is the
    result of an async `tgpu.warpgroup_mma`; the result is that value, now
    readable.
  }];
  let arguments = (ins AnyRankedTensor:$value,
                       DefaultValuedAttr<I64Attr, "0">:$pending);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def TileGPU_FenceAsyncSharedOp : TileGPU_Op<"fence_async_shared"> {
  let summary = "orders this thread's shared-memory writes before async-proxy reads";
  let description = [{
    `fence.proxy.async.shared::cta`: wgmma and TMA read shared memory through
    the async proxy, which does not see what a thread wrote through the
    generic proxy (cp.async, st.shared) until the writer fences. Each writing
    thread fences after its writes complete and before the barrier that
    publishes them.
  }];
  let assemblyFormat = "attr-dict";
}

def TileGPU_LaunchDependentsOp : TileGPU_Op<"launch_dependents"> {
  let summary = "lets the stream's next kernel start before this grid ends";
  let description = [{
    `griddepcontrol.launch_dependents` (sm_90): once every CTA of this grid
    has run it (or exited), the kernel launched after it on the stream with
    programmatic stream serialization (the launch plan's `overlaps_prior`)
    may start its CTAs on the multiprocessors this grid leaves free. It
    orders nothing: the dependent kernel's `tgpu.wait_prior_grids` does.
    Inserted by `tgpu-overlap-launches`.
  }];
  let assemblyFormat = "attr-dict";
}

def TileGPU_WaitPriorGridsOp : TileGPU_Op<"wait_prior_grids"> {
  let summary = "waits until the grids this kernel overlaps have completed";
  let description = [{
    `griddepcontrol.wait` (sm_90): blocks the thread until every grid this
    one was launched to overlap (programmatic stream serialization) has
    completed and its memory operations are visible; returns at once in a
    kernel launched without it. Nothing before it may read or write global
    memory that an earlier kernel on the stream reads or writes.
    Inserted by `tgpu-overlap-launches`.
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Hopper's copy engine and warp specialization (sm_90a)
//===----------------------------------------------------------------------===//

def TileGPU_MbarrierMemRef : MemRefRankOf<[I64], [1]>;

def TileGPU_MbarrierInitOp : TileGPU_Op<"mbarrier_init"> {
  let summary = "initialises an mbarrier for `count` arrivals per phase";
  let description = [{
    The barrier is element `index` of a shared `memref<Nxi64, 3>`. One
    thread (thread 0) initialises it and fences the initialisation for the
    copy engine; a `tgpu.barrier` must follow before anyone uses it.
  }];
  let arguments = (ins Arg<TileGPU_MbarrierMemRef, "", [MemWrite]>:$barriers,
                       Index:$index, I64Attr:$count);
  let assemblyFormat = [{
    $barriers `[` $index `]` `count` $count attr-dict `:` type($barriers)
  }];
  let hasVerifier = 1;
}

def TileGPU_MbarrierArriveOp : TileGPU_Op<"mbarrier_arrive"> {
  let summary = "every thread that runs it arrives once at an mbarrier";
  let description = [{
    Release semantics: what the thread read or wrote before it is ordered
    before the phase's completion. Consumers release a ring slot this way
    after their last read of it.

    With `frees %buffer`, the arrival hands `%buffer` (a shared buffer, or
    a choice among copies of one) back to the producer, whose next copy
    into it waits for the phase: the consumers read it no more after the
    arrival. Passes that reuse the buffer before that (tgpu-tma-stores
    staging an output tile in the tile's own copy of Q) move the arrival
    after their last use; the emitted code is the same.
  }];
  let arguments = (ins Arg<TileGPU_MbarrierMemRef, "", [MemWrite]>:$barriers,
                       Index:$index,
                       Optional<AnyStaticShapeMemRef>:$frees);
  let assemblyFormat = [{
    $barriers `[` $index `]` (`frees` $frees^ `:` type($frees))? attr-dict
    `:` type($barriers)
  }];
  let builders = [
    OpBuilder<(ins "mlir::Value":$barriers, "mlir::Value":$index), [{
      build($_builder, $_state, barriers, index, mlir::Value());
    }]>
  ];
  let hasVerifier = 1;
}

def TileGPU_MbarrierWaitOp : TileGPU_Op<"mbarrier_wait"> {
  let summary = "waits until the phase of an mbarrier with the given parity completes";
  let description = [{
    `mbarrier.try_wait.parity` in a loop. Phases alternate parity 0, 1, 0,
    ...; waiting for parity 1 on a fresh barrier returns at once (the phase
    "before" the first), which is how a producer finds every ring slot empty
    on its first pass. Acquire semantics: the copies that completed the
    phase are visible after it.
  }];
  let arguments = (ins Arg<TileGPU_MbarrierMemRef, "", [MemRead, MemWrite]>:$barriers,
                       Index:$index, Index:$parity);
  let assemblyFormat = [{
    $barriers `[` $index `]` `,` $parity attr-dict `:` type($barriers)
  }];
  let hasVerifier = 1;
}

def TileGPU_NextTileOp : TileGPU_Op<"next_tile"> {
  let summary = "a persistent kernel's next tile, drawn from a counter";
  let description = [{
    Run by the producer warp of a kernel whose CTAs loop over tiles
    (`tgpu.persistent`): the first `ctas` tiles are the CTAs' own, and lane
    0 draws each later one from `counter` (an i32 workspace the runtime
    zeroes before the launch), every lane getting the count drawn plus
    `ctas`. Tiles go out in order as CTAs ask, as the hardware hands out
    the CTAs of a grid. With `total` <= `ctas` the result is `total` and
    the counter is not read (the runtime may pass none). With `shares
    %words` (two shared i32 words; a producer warpgroup that draws keep
    bits, whose four warps all run the loop), the warpgroup's first thread
    draws and the others read the tile from a word after a barrier of the
    warpgroup, the words alternating by tile.
  }];
  let arguments = (ins Arg<MemRefRankOf<[I32], [1]>, "", [MemRead, MemWrite]>:$counter,
                       Index:$ctas, Index:$total,
                       Arg<Optional<AnyStaticShapeMemRef>, "", [MemRead, MemWrite]>:$words);
  let results = (outs Index:$tile);
  let assemblyFormat = [{
    $counter `,` $ctas `,` $total (`shares` $words^)? attr-dict `:` type($counter) (`,` type($words)^)?
  }];
  let hasVerifier = 1;
}

def TileGPU_PublishTileOp : TileGPU_Op<"publish_tile"> {
  let summary = "the producer tells the consumers their next tile's program ids";
  let description = [{
    Lane 0 of the warp that runs it stores the tile's program ids `x`, `y`,
    `z` in the 8-byte words `slots[slot]` .. `slots[slot + 2]` (beside the
    mbarriers, never initialised as ones). Its next arrival at a barrier
    releases them: the consumers read them (`tgpu.read_tile`) after their
    wait on that barrier's phase. With `arrive`, lane 0 arrives at
    `slots[arrive]` right after (a phase with no copy: `x` = -1 says there is
    no tile left).
  }];
  let arguments = (ins Index:$x, Index:$y, Index:$z,
                       Arg<TileGPU_MbarrierMemRef, "", [MemWrite]>:$slots,
                       Index:$slot, Optional<Index>:$arrive);
  let assemblyFormat = [{
    $x `,` $y `,` $z `to` $slots `[` $slot `]` (`arrive` $arrive^)? attr-dict `:` type($slots)
  }];
}

def TileGPU_ReadTileOp : TileGPU_Op<"read_tile"> {
  let summary = "a program id of the tile the producer published";
  let description = [{
    Reads the word `slots[slot + axis]` that `tgpu.publish_tile` stored,
    after a wait on the barrier whose phase the producer's arrival
    completed.
  }];
  let arguments = (ins Arg<TileGPU_MbarrierMemRef, "", [MemRead]>:$slots,
                       Index:$slot, I64Attr:$axis);
  let results = (outs Index:$id);
  let assemblyFormat = "$slots `[` $slot `]` `axis` $axis attr-dict `:` type($slots)";
}

def TileGPU_TmaLoadOp : TileGPU_Op<"tma_load"> {
  let summary = "copies a tile through a TMA tensor map, completing on an mbarrier";
  let description = [{
    One thread arrives at the barrier expecting the tile's bytes
    (`mbarrier.arrive.expect_tx`) and issues `cp.async.bulk.tensor` for each
    column block of the swizzled destination (a 128-byte swizzle holds 64
    16-bit columns per block, and a TMA box is at most one swizzle span
    wide). `coords` are element coordinates in the map's order, innermost
    first (4 of a [B, N, H, D] tensor, 3 of a packed varlen [T, H, D] one);
    the column coordinate of block b is `coords[0] + b * width`.
    Boxes past the tensor read zeros. The destination's swizzle must be the
    map's; the barrier must have been initialised for one arrival.
  }];
  let arguments = (ins TileGPU_TensorMapType:$map, Variadic<Index>:$coords,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$dest,
                       Arg<TileGPU_MbarrierMemRef, "", [MemWrite]>:$barriers,
                       Index:$index);
  let assemblyFormat = [{
    $map `[` $coords `]` `,` $dest `,` $barriers `[` $index `]` attr-dict `:` type($dest) `,` type($barriers)
  }];
  let hasVerifier = 1;
}

/// A tile dialect descriptor (!tile.desc), the source of copies.
def TileGPU_TileDesc : Type<CPred<"::llvm::isa<::kiln::tile::DescType>($_self)">,
                            "a !tile.desc descriptor", "::kiln::tile::DescType">;

def TileGPU_TmaLoadPagesOp : TileGPU_Op<"tma_load_pages"> {
  let summary = "copies a tile of a paged KV cache's rows through a TMA tensor map";
  let description = [{
    `tgpu.tma_load` for a paged descriptor (a `tile.view` with `pages`):
    the tile's rows `row .. row + R - 1` of the descriptor's sequence, at
    head `head` and column `col`, come from the pool the map describes
    (`[P, S, H, D]` as a `[B, N, H, D]` tensor: its "batch" is the page) in
    boxes of min(S, R) rows, each from the page the sequence's block table
    names. A box starting at or past the sequence's length reads no table
    entry: its page coordinate is -1, so TMA writes zeros (and still
    completes its bytes). Rows of a box past the length but inside a page
    read whatever the page holds (`tgpu.zero_rows_past` clears them). `row`
    is a multiple of min(S, R), so no box crosses a page.
  }];
  let arguments = (ins TileGPU_TensorMapType:$map, TileGPU_TileDesc:$desc,
                       Index:$col, Index:$row, Index:$head,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$dest,
                       Arg<TileGPU_MbarrierMemRef, "", [MemWrite]>:$barriers,
                       Index:$index);
  let assemblyFormat = [{
    $map `[` $col `,` $row `,` $head `]` `pages` $desc `,` $dest `,` $barriers `[` $index `]` attr-dict `:` type($desc) `,` type($dest) `,` type($barriers)
  }];
  let hasVerifier = 1;
}

def TileGPU_ScaleRowsOp
    : TileGPU_Op<"scale_rows", [Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "each row of a register tile times its factor; a warp whose factors are all 1 skips it";
  let description = [{
    `value · broadcast(factors)`: row r of the `#tgpu.mma` tile times
    element r of the `#tgpu.rows` factors. A warp whose rows' factors are
    all exactly 1 leaves its elements as they are (x · 1 = x), so the
    result is the same either way; the multiplications run only in warps
    where some factor differs from 1 (a warp vote). The online softmax's
    accumulator correction `exp2(m_old - m)` is 1 in most steps once
    `tile-lazy-rescale` moves the reference maximum in steps
    (`tgpu-skip-unit-scales` forms this op).
  }];
  let arguments = (ins AnyRankedTensor:$value, AnyRankedTensor:$factors);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $value `,` $factors attr-dict `:` type($value) `,` type($factors)
  }];
  let hasVerifier = 1;
}

def TileGPU_BulkLoadOp : TileGPU_Op<"bulk_load"> {
  let summary = "copies a run of a vector into shared memory, completing on an mbarrier";
  let description = [{
    Elements `offset` .. `offset + N - 1` of the 1-D descriptor `source`
    (a per-query vector: the backward's base-2 LSE and D) into the
    N-element shared vector `dest`, by one bulk copy
    (`cp.async.bulk`, no tensor map) whose bytes complete on the barrier:
    the producer's one thread adds them to the phase's expected bytes
    (`mbarrier.expect_tx`) without arriving, so it issues this before the
    copy that arrives on the same barrier (the ring's tile). Elements at or
    past the descriptor's end are not copied: their slots keep stale data,
    which the reader's `tgpu.load_shared` replaces by its fill. Where the
    run is not a contiguous, 16-byte aligned multiple of 16 bytes the thread
    copies it element by element instead (slower, never wrong).
  }];
  let arguments = (ins TileGPU_TileDesc:$source, Index:$offset,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$dest,
                       Arg<TileGPU_MbarrierMemRef, "", [MemWrite]>:$barriers,
                       Index:$index);
  let assemblyFormat = [{
    $source `[` $offset `]` `,` $dest `,` $barriers `[` $index `]` attr-dict `:` type($source) `,` type($dest) `,` type($barriers)
  }];
  let hasVerifier = 1;
}

def TileGPU_LoadSharedOp
    : TileGPU_Op<"load_shared", [MemoryEffects<[MemRead]>]> {
  let summary = "reads a shared vector into registers, filling what lies past a count";
  let description = [{
    Every thread reads the elements it holds in the result's `#tgpu.rows`
    or `#tgpu.cols` layout from the shared vector `source`; elements at
    index `count` and past read `fill` instead (a descriptor's end, as
    `tile.load` fills past it). The consumers' side of `tgpu.bulk_load`.
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "", [MemRead]>:$source,
                       Index:$count, F32Attr:$fill);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source `[` $count `]` `fill` $fill attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGPU_DrawKeepBitsOp : TileGPU_Op<"draw_keep_bits"> {
  let summary = "the producer draws the dropout's keep bits of a consumer tile into shared memory";
  let description = [{
    The keep bits of `tile.philox %seed, %offset, %batch, %head, %q_start,
    %kv_start` compared below `threshold` (`arith.cmpi ult`), for a tile
    of type `tile` (an i1 `#tgpu.mma` tile of the consumer warps, one
    column group), drawn by every producer thread on the consumers'
    behalf for the first `patches` 8-element patches of each consumer
    thread: the words of consumer thread t (bit e % 32 of word e / 32 its
    element e kept) at `dest[t * words .. (t + 1) * words)`, words =
    ceil(8 * patches / 32). Run by the whole producer warpgroup,
    each thread then arriving on the ring's full barrier; the consumers'
    side is `tgpu.load_keep_bits` (tgpu-warp-specialize `producer-bits`).
    Philox's ~45 integer instructions per call leave the consumers'
    instruction streams for the producer's, which are idle between copies.
  }];
  let arguments = (ins I64:$seed, I64:$offset, Index:$batch, Index:$head,
                       Index:$q_start, Index:$kv_start,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$dest,
                       I32Attr:$threshold, I64Attr:$patches, TypeAttr:$tile,
                       UnitAttr:$keys_by_queries);
  let assemblyFormat = [{
    $seed `,` $offset `,` $batch `,` $head `,` $q_start `,` $kv_start `below` $threshold `patches` $patches `into` $dest `as` $tile attr-dict `:` type($dest)
  }];
  let hasVerifier = 1;
}

def TileGPU_LoadKeepBitsOp
    : TileGPU_Op<"load_keep_bits", [MemoryEffects<[MemRead]>]> {
  let summary = "reads the keep bits the producer drew for this thread, drawing the rest";
  let description = [{
    Every consumer thread reads the keep bits of its first `patches`
    8-element patches from a slot that `tgpu.draw_keep_bits` filled, and
    draws those of its other elements itself (`tile.philox` of the same
    operands below `threshold`): the i1 `#tgpu.mma` tile whose type the
    draw names. With `patches` all of a thread's, the operands go unused.
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "", [MemRead]>:$source,
                       I64:$seed, I64:$offset, Index:$batch, Index:$head,
                       Index:$q_start, Index:$kv_start,
                       I32Attr:$threshold, I64Attr:$patches,
                       UnitAttr:$keys_by_queries);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source `,` $seed `,` $offset `,` $batch `,` $head `,` $q_start `,` $kv_start `below` $threshold `patches` $patches attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGPU_ZeroRowsPastOp : TileGPU_Op<"zero_rows_past"> {
  let summary = "the consumers zero the rows of a shared tile past a descriptor's end";
  let description = [{
    Row r of `dest` holds row `row + r` of `desc`; the rows at or past the
    descriptor's row count are set to zero, spread over the consumer
    threads. TMA fills rows past a tensor's end with zeros, but not the
    rows of a paged KV cache's last page past a sequence's length: those
    hold whatever the page held, and a product would carry a NaN there
    into the output even with its probability 0. Followed by a
    `tgpu.fence_async_shared` and a `tgpu.barrier` before a product reads
    `dest`.
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$dest,
                       TileGPU_TileDesc:$desc, Index:$row);
  let assemblyFormat = [{
    $dest `,` $desc `[` $row `]` attr-dict `:` type($dest) `,` type($desc)
  }];
}

def TileGPU_BulkReduceAddOp
    : TileGPU_Op<"bulk_reduce_add", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "adds an f32 register tile into global memory through shared memory by bulk reductions";
  let description = [{
    Row r of `value` is added, element by element, to row `row + r` of
    `desc` from column `col` on: each warp writes the rows of `value` it
    holds (the `#tgpu.mma` layout gives a warp a block of whole 16-row
    tiles) into its rows of `staging`, an unswizzled f32 shared buffer of
    the tile's shape, fences them for the async proxy and adds them with
    `cp.reduce.async.bulk .add.f32`: one bulk reduction per warp where the
    descriptor's rows are one contiguous run as wide as the tile, else one
    per row. L2 takes whole lines instead of one 8-byte `red.global` per
    lane and element pair (1.3-1.8x the reduction throughput into L2 on an
    H100, `bench/probe_dq_reduce.cu`). No barrier: a warp's rows of
    `staging` are its own, and its lanes wait until their previous
    reductions have read them before writing (so successive adds may share
    `staging`). Rows at or past the descriptor's row count are skipped. The
    sums are complete in global memory after `tgpu.bulk_wait`.
  }];
  let arguments = (ins AnyRankedTensor:$value, AnyStaticShapeMemRef:$staging,
                       TileGPU_TileDesc:$desc, Variadic<Index>:$offsets);
  let assemblyFormat = [{
    $value `,` $staging `,` $desc `[` $offsets `]` attr-dict `:` type($value) `,` type($staging) `,` type($desc)
  }];
  let hasVerifier = 1;
}

def TileGPU_CoreReduceAddOp
    : TileGPU_Op<"core_reduce_add", [MemoryEffects<[MemRead, MemWrite]>,
                                     AttrSizedOperandSegments]> {
  let summary = "adds an f32 register tile into an array kept in mma core-block order, by bulk reductions";
  let description = [{
    Element (r, c) of `value` is added to element (`row` + r, `col` + c)
    of `desc`, a dense f32 array whose 16-row bands are each kept in **core
    order**: a band holds its rows' bytes, ordered by the 16 x 8 core blocks
    of the mma fragments from left to right, each block as 32 lanes of 4
    floats (lane l: rows l/4 and l/4 + 8 of the band, columns 2(l%4) and
    2(l%4) + 1 of the block; a `#tgpu.mma` thread's four elements of a core
    block, in their order). Each warp writes its elements into `staging`
    (an unswizzled f32 shared buffer of the tile's shape, holding the tile
    in the same order: one 16-byte store per core block, a warp's 32 of
    them 512 contiguous bytes), fences them for the async proxy, and its
    lane 0 adds each band of its block (16 rows of its column group: one
    contiguous run of the array) with one `cp.reduce.async.bulk .add.f32`.
    A row-major accumulator needs, for a warp in column groups, a tensor map
    and a TMA reduction per 128-byte span, and 8-byte stores at swizzled
    addresses computed per element.

    `row` and `col` are multiples of 16 and 8, and `desc`'s rows a multiple
    of 16 (the array's last band is whole); bands at or past the
    descriptor's rows are skipped. No barrier: a warp's part of `staging`
    is its own, and its lanes wait until their previous reductions have
    read it before writing. The sums are complete in global memory after
    `tgpu.bulk_wait`. Only `tgpu.core_load` reads such an array back.
    `turn`: the `tile.atomic_add`'s, for `tgpu-ordered-adds`.
  }];
  let arguments = (ins AnyRankedTensor:$value, AnyStaticShapeMemRef:$staging,
                       TileGPU_TileDesc:$desc, Variadic<Index>:$offsets,
                       Optional<Index>:$turn);
  let assemblyFormat = [{
    $value `,` $staging `,` $desc `[` $offsets `]` (`turn` $turn^)? attr-dict `:` type($value) `,` type($staging) `,` type($desc)
  }];
  let hasVerifier = 1;
}

def TileGPU_CoreStageOp
    : TileGPU_Op<"core_stage", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "writes an f32 register tile into its staging buffer in core order, for a later tgpu.core_flush";
  let description = [{
    The first half of `tgpu.core_reduce_add`: each warp waits until its
    lanes' earlier bulk reductions have read its part of `staging`, then
    writes its elements of `value` there in core order (one 16-byte store
    per core block). No fence and no reduction: a later `tgpu.core_flush`
    of the same buffer, by the same warps, fences the writes for the async
    proxy and adds them. Splitting the two lets the fence, which waits for
    the stores to complete, run a step later, when they have
    (`tgpu-bulk-reductions` `defer-flush`).
  }];
  let arguments = (ins AnyRankedTensor:$value, AnyStaticShapeMemRef:$staging);
  let assemblyFormat = [{
    $value `,` $staging attr-dict `:` type($value) `,` type($staging)
  }];
  let hasVerifier = 1;
}

def TileGPU_CoreFlushOp
    : TileGPU_Op<"core_flush", [MemoryEffects<[MemRead, MemWrite]>,
                               AttrSizedOperandSegments]> {
  let summary = "adds a staged tile into an array in core order, by bulk reductions";
  let description = [{
    The second half of `tgpu.core_reduce_add`: each warp fences its part of
    `staging` (written by a `tgpu.core_stage` of a tile of type `tile`) for
    the async proxy, and its lane 0 adds each of its bands into `desc` at
    (`row`, `col`) with one `cp.reduce.async.bulk .add.f32`, as
    `tgpu.core_reduce_add` does. With `if %pending`, nothing happens where
    `pending` is false (a loop's first step, with no earlier step's tile
    staged). The sums are complete after `tgpu.bulk_wait`.
  }];
  let arguments = (ins AnyStaticShapeMemRef:$staging, TileGPU_TileDesc:$desc,
                       Variadic<Index>:$offsets, Optional<I1>:$pending,
                       TypeAttr:$tile);
  let assemblyFormat = [{
    $staging `,` $desc `[` $offsets `]` (`if` $pending^)? attr-dict `:` $tile `,` type($staging) `,` type($desc)
  }];
  let hasVerifier = 1;
}

def TileGPU_CoreAddStagedOp
    : TileGPU_Op<"core_add_staged", [MemoryEffects<[MemRead, MemWrite]>,
                                     AttrSizedOperandSegments]> {
  let summary = "adds a whole staged tile into an array in core order, from the producer's warp";
  let description = [{
    The producer's side of `tgpu-bulk-reductions` `producer-reductions`:
    the consumers staged a tile in `staging` (`tgpu.core_stage`), fenced it
    and arrived on a barrier the producer waited for; one lane of the
    producer's warp now adds every 16-row band of the buffer (an
    unswizzled f32 tile in core order: one contiguous run per band, as in
    the array) into `desc` at (`row`, `col`) with one
    `cp.reduce.async.bulk .add.f32` per band, and commits them as one bulk
    group. Bands at or past the descriptor's rows are skipped. The buffer
    may be written again once `tgpu.bulk_wait_read` says the group has
    read it; the sums are complete after `tgpu.bulk_wait`. `turn`: the
    staged share's `tile.atomic_add`'s, for `tgpu-ordered-adds`.
  }];
  let arguments = (ins AnyStaticShapeMemRef:$staging, TileGPU_TileDesc:$desc,
                       Variadic<Index>:$offsets, Optional<Index>:$turn);
  let assemblyFormat = [{
    $staging `,` $desc `[` $offsets `]` (`turn` $turn^)? attr-dict `:` type($staging) `,` type($desc)
  }];
  let hasVerifier = 1;
}

def TileGPU_TurnWaitOp
    : TileGPU_Op<"turn_wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "waits until a counter in global memory reaches this program's turn";
  let description = [{
    `tgpu-ordered-adds`: lane 0 of the warp that runs it reads
    `turns[index]` (an i32 workspace the runtime zeroes before the launch)
    with acquire semantics at GPU scope until it equals `turn`, then
    orders what it read before its later bulk operations (a proxy fence);
    the warp continues together. The programs that come earlier in the
    order must be resident or done: the turns follow the grid's program
    ids, which the hardware hands out in order.
  }];
  let arguments = (ins TileGPU_TileDesc:$turns, Index:$index, Index:$turn);
  let assemblyFormat = [{
    $turns `[` $index `]` `,` $turn attr-dict `:` type($turns)
  }];
}

def TileGPU_TurnSignalOp
    : TileGPU_Op<"turn_signal", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "passes the turn to the next program, once this one's bulk operations are complete";
  let description = [{
    Lane 0 waits until every bulk group it committed is complete in global
    memory (`cp.async.bulk.wait_group 0`), fences the async proxy's writes
    against its own, and adds 1 to `turns[index]` with release semantics at
    GPU scope: the next program's `tgpu.turn_wait` then sees the sums.

    `deferred`: lane 0 only notes the counter and does all that at its next
    `tgpu.turn_wait` (before it polls) or at the end of its region, by when
    the sums are normally complete: the warp does not stop for them. Where
    the next program reaches the block a step or more later anyway (turns in
    arrival order), that costs it nothing. Every `tgpu.turn_wait` and
    `tgpu.turn_signal` of the region must then be in one warp's region of a
    `tgpu.warp_specialize` producer.
  }];
  let arguments = (ins TileGPU_TileDesc:$turns, Index:$index,
                       UnitAttr:$deferred);
  let assemblyFormat = [{
    $turns `[` $index `]` (`deferred` $deferred^)? attr-dict `:` type($turns)
  }];
}

def TileGPU_BulkWaitReadOp : TileGPU_Op<"bulk_wait_read"> {
  let summary = "waits until this thread's older bulk groups have read their shared memory";
  let description = [{
    `cp.async.bulk.wait_group.read pending`: every bulk group this thread
    committed, but the `pending` most recent, has finished reading its
    shared source, which may then be written again (the sums need not have
    landed). Threads that committed none pass at once.
  }];
  let arguments = (ins I64Attr:$pending);
  let assemblyFormat = "$pending attr-dict";
  let hasVerifier = 1;
}

def TileGPU_CoreLoadOp : TileGPU_Op<"core_load", [MemoryEffects<[MemRead]>]> {
  let summary = "loads an f32 register tile from an array kept in mma core-block order";
  let description = [{
    The read side of `tgpu.core_reduce_add`: element (r, c) of the result
    is element (`row` + r, `col` + c) of `desc`, whose 16-row bands are in
    core order. A thread's four elements of a core block are one 16-byte
    load, a warp's 32 of them 512 contiguous bytes, whatever the result's
    `#tgpu.mma` warps and column groups. Bands past the descriptor's rows
    read `fill`. `row` and `col` are multiples of 16 and 8.
  }];
  let arguments = (ins TileGPU_TileDesc:$desc, Variadic<Index>:$offsets,
                       F32Attr:$fill);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $desc `[` $offsets `]` `fill` $fill attr-dict `:` type($desc) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGPU_TmaReduceAddOp
    : TileGPU_Op<"tma_reduce_add", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "adds an f32 register tile into a tensor through a TMA tensor map, a box per warp";
  let description = [{
    `tgpu.bulk_reduce_add` for a tile whose warps hold blocks that are not
    one contiguous run of the tensor (`#tgpu.mma` column groups: a warp
    holds 16 rows of its group's columns, a strided block of a row-major
    accumulator). Each warp writes the elements it holds into its block of
    `staging` (an f32 shared buffer of the tile's shape, swizzled: a
    swizzle span of columns per box, as TMA lays a box out) and its lane 0
    adds each swizzle span of its columns with one
    `cp.reduce.async.bulk.tensor .add` through `map`, whose box is one span
    of columns by a warp's rows (one reduction per warp and span, where one
    per row issued lane by lane measured slower than `red.global`).
    `coords` are the tile's origin in the map's order, innermost first:
    column, row, then the map's outer dimensions. Elements outside the
    tensor are skipped by TMA. No barrier: a warp's block of `staging` is
    its own, and lane 0 waits until its previous reductions have read it
    before the warp writes. The sums are complete in global memory after
    `tgpu.bulk_wait`.
  }];
  let arguments = (ins AnyRankedTensor:$value, AnyStaticShapeMemRef:$staging,
                       TileGPU_TensorMapType:$map, Variadic<Index>:$coords);
  let assemblyFormat = [{
    $value `,` $staging `,` $map `[` $coords `]` attr-dict `:` type($value) `,` type($staging)
  }];
  let hasVerifier = 1;
}

def TileGPU_TmaStoreOp
    : TileGPU_Op<"tma_store", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "stores a 16-bit register tile into a tensor through a TMA tensor map, a box per warp";
  let description = [{
    The epilogue's output tile (bf16 or f16, `#tgpu.mma`) written by the
    copy engine instead of by each lane's stores: each warp writes the
    elements it holds into its block of `staging` (a shared buffer of the
    tile's shape and element type, swizzled: a swizzle span of columns per
    box, as TMA lays a box out) and its lane 0 stores each swizzle span of
    its columns with one `cp.async.bulk.tensor` through `map`, whose box is
    one span of columns by a warp's rows. `coords` are the tile's origin in
    the map's order, innermost first: column, row, then the map's other
    dimensions. Elements outside the tensor are not written (TMA clips the
    box: rows past the sequence stay untouched). No barrier: a warp's block
    of `staging` is its own, and lane 0 waits until its previous stores have
    read it before the warp writes. The values are in global memory after
    `tgpu.bulk_wait`.
  }];
  let arguments = (ins AnyRankedTensor:$value, AnyStaticShapeMemRef:$staging,
                       TileGPU_TensorMapType:$map, Variadic<Index>:$coords);
  let assemblyFormat = [{
    $value `,` $staging `,` $map `[` $coords `]` attr-dict `:` type($value) `,` type($staging)
  }];
  let hasVerifier = 1;
}

def TileGPU_BulkWaitOp : TileGPU_Op<"bulk_wait"> {
  let summary = "waits until this thread's bulk reductions and stores are complete";
  let description = [{
    `cp.async.bulk.wait_group 0`: the sums of every `tgpu.bulk_reduce_add`
    (and `tgpu.tma_reduce_add`) and the values of every `tgpu.tma_store`
    this thread issued are in global memory (before the kernel ends, so
    that the next kernel reads them, and before its shared memory goes).
    Threads that issued none pass at once.
  }];
  let assemblyFormat = "attr-dict";
}

def TileGPU_WarpgroupTurnOp : TileGPU_Op<"warpgroup_turn"> {
  let summary = "consumer warpgroups take turns issuing products (ping-pong)";
  let description = [{
    A token passed round-robin among the consumer warpgroups of a
    `tgpu.warp_specialize` consumer region, on named barriers (one per
    warpgroup, 128 threads syncing and 128 arriving): `wait` blocks until
    the previous warpgroup passed the token to this one, `pass` hands it to
    the next. `start` (before the first wait) lets the last warpgroup give
    the first token to warpgroup 0; `end` (after the last pass) has
    warpgroup 0 take the token the last warpgroup passed last, so every
    barrier phase completes. Between its wait and its pass a warpgroup
    issues its products, and the others run their softmax meanwhile: the
    products of the warpgroups stop colliding and the tensor cores stop
    idling while all of them do their softmax at once. Every warpgroup must
    run the same sequence of waits and passes.
  }];
  let arguments = (ins StrAttr:$kind);
  let assemblyFormat = "$kind attr-dict";
  let hasVerifier = 1;
}

def TileGPU_WarpSpecializeOp
    : TileGPU_Op<"warp_specialize", [NoTerminator]> {
  let summary = "splits the CTA into consumer warps and a producer warpgroup";
  let description = [{
    The CTA runs `tgpu.num_warps` consumer warps (the warps every register
    layout of the kernel counts) and `producer_warps` more after them. The
    op is the kernel's one if/else on the warp's role: the producer
    warpgroup lowers its register budget to `producer_registers`
    (`setmaxnreg.dec`) and one of its threads runs the `producer` region,
    typically TMA loads into a ring guarded by mbarriers; the consumer warps
    raise theirs to `consumer_registers` (`setmaxnreg.inc`) and run the
    `consumer` region. Both regions see the values defined before the op;
    the producer warps leave the kernel after the op, so nothing after it
    may need them, and a `tgpu.barrier` inside the consumer region counts
    consumer threads only.
  }];
  let arguments = (ins I64Attr:$producer_warps, I64Attr:$producer_registers,
                       I64Attr:$consumer_registers);
  let regions = (region SizedRegion<1>:$producer, SizedRegion<1>:$consumer);
  let assemblyFormat = [{
    attr-dict `producer` $producer `consumer` $consumer
  }];
  let hasVerifier = 1;
}

#endif // KILN_TILEGPU
