//===- TileOps.td - tile dialect operations ----------------*- tablegen -*-===//

#ifndef KILN_TILE_OPS
#define KILN_TILE_OPS

include "dialects/Tile/IR/TileBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Tile_ProgramIdOp : Tile_Op<"program_id", [Pure]> {
  let summary = "index of this program instance along a grid axis (0, 1 or 2)";
  let description = [{
    Forward attention uses axis 0 for the Q block, 1 for the head, 2 for the
    batch. A GPU backend maps axes to blockIdx; the CPU backend loops.
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs Index:$result);
  let assemblyFormat = "$axis attr-dict";
}

def Tile_ViewOp : Tile_Op<"view", [Pure, AttrSizedOperandSegments]> {
  let summary = "a descriptor for a 1-D or 2-D slice of a strided global array";
  let description = [{
    Fixes every dimension of `base` not listed in `keep` at the given index:
    `tile.view %Q[%b, %h] keep [1, 3]` is the `[N, D]` matrix of batch `b`,
    head `h` in a `[B, N, H, D]` array with arbitrary strides. `keep` may
    list the dimensions in any order: `keep [3, 0]` is the transposed
    `[D, B]` matrix (the split-KV combine reads its partial outputs down the
    splits that way, so that reductions run along the descriptor's rows).

    With `packed` naming a dimension not kept, and a descriptor of group G,
    the rows interleave that dimension's positions index .. index + G - 1
    with the first kept one: `tile.view %Q[%b, %h0] keep [1, 3] packed 2 :
    ... -> !tile.desc<?x128xbf16, group 4>` has row r = query r / 4 of head
    h0 + r % 4 — the query heads of one GQA group as neighbouring rows of
    one tile, so that their K/V tiles are read once for all of them. A
    packed view keeps its dimensions in increasing order.

    With `pages %table, %lengths`, `base` is a pool of pages `[P, S, H, D]`
    (S static: the page size) and the first index names a sequence `b`, not
    a page: `tile.view %K[%b, %h] keep [1, 3] pages %table, %lens` is
    sequence b's `[lens[b], D]` matrix of head h whose row r lives at
    `base[table[b, r / S], r % S, h, :]` (the block table of vLLM's and
    FlashInfer's paged KV caches). Rows from `lens[b]` on are outside the
    descriptor, as rows past a dense view's end: loads read the fill.

    With `ragged %offsets[%s]`, the first kept dimension holds sequences
    packed one after another (FlashAttention's varlen layout, `offsets` its
    `cu_seqlens`, [S + 1] of i32) and the view covers sequence s only: its
    row r is the base's row `offsets[s] + r`, and it has `offsets[s + 1] -
    offsets[s]` rows. `tile.view %Q[%h] keep [0, 2] ragged %cu[%s]` is
    sequence s's `[L_s, D]` matrix of head h in a `[T, H, D]` array. Both
    offsets are clamped into the dimension (and the end to at least the
    start), so that no offsets reach outside the base.
  }];
  let arguments = (ins AnyStridedMemRef:$base, Variadic<Index>:$indices,
                       Optional<AnyStridedMemRef>:$pageTable,
                       Optional<AnyStridedMemRef>:$lengths,
                       Optional<AnyStridedMemRef>:$offsets,
                       Optional<Index>:$sequence,
                       DenseI64ArrayAttr:$keep,
                       OptionalAttr<I64Attr>:$packed);
  let results = (outs Tile_DescType:$result);
  let assemblyFormat = [{
    $base `[` $indices `]` `keep` $keep (`packed` $packed^)? (`pages` $pageTable^ `,` $lengths)? (`ragged` $offsets^ `[` $sequence `]`)? attr-dict `:` type($base) (`,` type($pageTable)^ `,` type($lengths))? (`ragged` type($offsets)^)? `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$base,
                   "::mlir::ValueRange":$indices,
                   "::mlir::DenseI64ArrayAttr":$keep), [{
      build($_builder, $_state, result, base, indices, ::mlir::Value(),
            ::mlir::Value(), ::mlir::Value(), ::mlir::Value(), keep,
            ::mlir::IntegerAttr());
    }]>,
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$base,
                   "::mlir::ValueRange":$indices,
                   "::mlir::DenseI64ArrayAttr":$keep,
                   "::mlir::IntegerAttr":$packed), [{
      build($_builder, $_state, result, base, indices, ::mlir::Value(),
            ::mlir::Value(), ::mlir::Value(), ::mlir::Value(), keep, packed);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The position among `indices` of the packed dimension's first index.
    unsigned getPackedIndexPosition();
    /// Whether the base is a pool of pages read through a block table.
    bool isPaged() { return static_cast<bool>(getPageTable()); }
    /// Whether the view covers one sequence of a packed (varlen) array.
    bool isRagged() { return static_cast<bool>(getOffsets()); }
  }];
  let hasVerifier = 1;
}

def Tile_RaggedBlockOp : Tile_Op<"ragged_block", [Pure]> {
  let summary = "which sequence and which of its blocks a program of a packed batch owns";
  let description = [{
    Numbers the blocks of `block` rows of every sequence of a packed batch
    (`offsets`, FlashAttention's `cu_seqlens`: [S + 1] of i32) one after
    another, sequence 0's first, and returns the sequence and the block
    within it that `index` names: `%s, %j = tile.ragged_block %cu[%pid]
    block 128` has the program own rows `j * 128 ..` of sequence s. A
    varlen grid launches `ceildiv(T, block) + S` programs along the axis
    (at least the blocks there are, whatever the lengths); past the last
    block, the result is the last sequence and a block at or past its end,
    which a program finds empty. Lengths are clamped as `tile.view ...
    ragged` clamps them. The work is a scan over the sequences; a GPU
    backend has each warp do it for its own threads.
  }];
  let arguments = (ins AnyStridedMemRef:$offsets, Index:$index,
                       ConfinedAttr<I64Attr, [IntPositive]>:$block);
  let results = (outs Index:$sequence, Index:$blockInSequence);
  let assemblyFormat = [{
    $offsets `[` $index `]` `block` $block attr-dict `:` type($offsets)
  }];
  let hasVerifier = 1;
}

def Tile_FirstRowOp : Tile_Op<"first_row", [Pure]> {
  let summary = "the base's row at which a descriptor's row 0 lies";
  let description = [{
    Along the first kept dimension of the view that defines `desc`: a
    ragged view's sequence start (clamped as the view clamps it), 0 for
    other views. TMA addresses a ragged view's rows through a tensor map of
    the whole packed array, at this row plus the tile's.
  }];
  let arguments = (ins Tile_DescType:$desc);
  let results = (outs Index:$result);
  let assemblyFormat = "$desc attr-dict `:` type($desc)";
}

def Tile_DimOp : Tile_Op<"dim", [Pure]> {
  let summary = "the extent of a descriptor along one dimension";
  let arguments = (ins Tile_DescType:$desc, I64Attr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$desc `,` $dim attr-dict `:` type($desc)";
  let hasVerifier = 1;
}

def Tile_LoadOp : Tile_Op<"load", [MemoryEffects<[MemRead]>,
                                   AttrSizedOperandSegments]> {
  let summary = "loads a tile at the given offsets; elements outside read `fill`";
  let description = [{
    With `mask` (an i1 tile of the result's shape), elements whose mask is
    false read `fill` too and touch no memory: the split-KV combine reads a
    block of splits of which only the first few are its own.
  }];
  let arguments = (ins Tile_DescType:$desc, Variadic<Index>:$offsets,
                       Optional<Tile_Tile>:$mask, TypedAttrInterface:$fill);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $desc `[` $offsets `]` (`mask` $mask^)? `fill` $fill attr-dict `:` type($desc) (`,` type($mask)^)? `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$desc,
                   "::mlir::ValueRange":$offsets,
                   "::mlir::TypedAttr":$fill), [{
      build($_builder, $_state, result, desc, offsets, ::mlir::Value(), fill);
    }]>
  ];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [MemoryEffects<[MemWrite]>,
                                     AttrSizedOperandSegments]> {
  let summary = "stores a tile at the given offsets; elements outside are dropped";
  let description = [{
    With `mask` (an i1 tile of the value's shape), elements whose mask is
    false are dropped too: a program that owns one element of a 1-D output
    (the split-KV combine's LSE of one query row) stores a whole tile with
    only that element's mask set.
  }];
  let arguments = (ins Tile_Tile:$value, Tile_DescType:$desc,
                       Variadic<Index>:$offsets, Optional<Tile_Tile>:$mask);
  let assemblyFormat = [{
    $value `,` $desc `[` $offsets `]` (`mask` $mask^)? attr-dict `:` type($value) `,` type($desc) (`,` type($mask)^)?
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$value, "::mlir::Value":$desc,
                   "::mlir::ValueRange":$offsets), [{
      build($_builder, $_state, value, desc, offsets, ::mlir::Value());
    }]>
  ];
  let hasVerifier = 1;
}

def Tile_AtomicAddOp : Tile_Op<"atomic_add", [MemoryEffects<[MemRead, MemWrite]>, AttrSizedOperandSegments]> {
  let summary = "adds a tile into global memory atomically; elements outside are dropped";
  let description = [{
    Programs that share an output (dQ in the one-kernel backward, where every
    KV block adds its part of every query row) accumulate with this instead
    of `tile.store`. The sum is exact up to the order of the additions, which
    makes it non-deterministic on a GPU; the CPU backend runs programs one
    after the other and is deterministic.

    With `turn`, the add is this program's turn-th among the programs adding
    to the same block of rows of a kernel marked `tile.ordered_adds`: the GPU
    schedule (`tgpu-ordered-adds`) makes it wait until turn earlier adds
    there are complete, which fixes the order of the sums. Backends that run
    programs one at a time ignore it.
  }];
  let arguments = (ins Tile_Tile:$value, Tile_DescType:$desc,
                       Variadic<Index>:$offsets, Optional<Index>:$turn);
  let assemblyFormat = [{
    $value `,` $desc `[` $offsets `]` (`turn` $turn^)? attr-dict `:` type($value) `,` type($desc)
  }];
  let hasVerifier = 1;
}

def Tile_DotOp : Tile_Op<"dot", [Pure]> {
  let summary = "tile matrix product with f32 accumulation: acc + lhs(^T) * rhs(^T)";
  let description = [{
    `lhs` is `MxK` (or `KxM` with `transpose_lhs`, the layout of P in
    `P^T dO` of the backward pass), `rhs` is `KxN` (or `NxK` with
    `transpose_rhs`, the layout of a K tile in `Q K^T`); inputs are widened
    to the accumulator's element type before multiplying, as tensor cores do.
  }];
  let arguments = (ins Tile_Tile:$lhs, Tile_Tile:$rhs, Optional<Tile_Tile>:$acc,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`,` $acc^)? attr-dict `:` type($lhs) `,` type($rhs) (`,` type($acc)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce", [Pure]> {
  let summary = "reduces a 2-D tile along one dimension (max or sum)";
  let arguments = (ins Tile_ReduceKindAttr:$kind, Tile_Tile:$source, I64Attr:$dim);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $kind $source `dim` $dim attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ReduceAllOp : Tile_Op<"reduce_all", [Pure]> {
  let summary = "reduces a 1-D tile to a scalar (max or sum)";
  let description = [{
    Every element of a 1-D tile (a tile.reduce's per-row values) combined
    into one scalar, the same in every program instance's threads: a block
    mask's builder counts a block's visible elements with it.
  }];
  let arguments = (ins Tile_ReduceKindAttr:$kind, Tile_Tile:$source);
  let results = (outs AnyFloat:$result);
  let assemblyFormat = [{
    $kind $source attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure]> {
  let summary = "repeats a 1-D tile along a new dimension `dim` of a 2-D tile";
  let arguments = (ins Tile_Tile:$source, I64Attr:$dim);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source `dim` $dim attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_SplatOp : Tile_Op<"splat", [Pure]> {
  let summary = "a tile whose every element is one scalar";
  let arguments = (ins AnyTypeOf<[AnyInteger, Index, AnyFloat]>:$value);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$value attr-dict `:` type($value) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_IotaOp : Tile_Op<"iota", [Pure]> {
  let summary = "an index tile counting 0, 1, ... along `dim`";
  let description = [{
    The basis of positional masks: `q_idx = iota dim 0 + q0`,
    `kv_idx = iota dim 1 + k0`.
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "`dim` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_PhiloxOp : Tile_Op<"philox", [Pure]> {
  let summary = "the dropout's 16- or 8-bit uniforms of a tile of (query, key) pairs";
  let description = [{
    Element (i, j) of the result is the uniform (in an i32, 0 to 2^bits - 1)
    that keeps or drops the attention weight of query `q_start + i` and key
    `kv_start + j` of (`batch`, `head`), or of query `q_start + j` and key
    `kv_start + i` with `keys_by_queries` (the dK/dV kernel's Sᵀ). The bits
    are Philox4x32-10 of a counter made of (q, kv, batch, head, offset)
    under the key `seed` (`reference/Philox.h` defines the layout). With
    `bits = 16` (the default) one call covers a 2 x 4 patch of queries and
    keys, which a GPU lowering computes once per thread; with `bits = 8` a
    4 x 4 patch, which two lanes of a warp share.

    ```mlir
    %u = tile.philox %seed, %offset, %b, %h, %q0, %kv0 : tensor<64x64xi32>
    %keep = arith.cmpi ult, %u, %threshold : tensor<64x64xi32>
    ```
  }];
  let arguments = (ins I64:$seed, I64:$offset, Index:$batch, Index:$head,
                       Index:$q_start, Index:$kv_start,
                       UnitAttr:$keys_by_queries,
                       DefaultValuedAttr<I64Attr, "16">:$bits);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $seed `,` $offset `,` $batch `,` $head `,` $q_start `,` $kv_start attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ScatterAddOp : Tile_Op<"scatter_add", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "adds a float tile into a memref at per-element index tiles, atomically";
  let description = [{
    Element e of `values` is added to `dest[indices[0][e], indices[1][e],
    ...]` (one index tile per dimension of `dest`, shaped like `values`);
    several elements may name one entry, and programs running at once add
    to the same entries, so the adds are atomic (their order is not
    fixed). The backward accumulates gradients of captured tensors with it.

    ```mlir
    tile.scatter_add %contrib, %grad_slopes[%heads] : tensor<64x64xf32>, memref<?xf32>, tensor<64x64xindex>
    ```

    With `fixed_point`, `dest` is an i64 accumulator with one more
    dimension of 3 than there are index tiles, and each f32 element x adds
    integers, so that the sum is the same in any order (a deterministic
    gradient): at [..., 0] round(x 2^16), at [..., 1] round((x 2^16 -
    round(x 2^16)) 2^24) (rounding to nearest even), so the entry holds
    [..., 0] 2^-16 + [..., 1] 2^-40; and at [..., 2] 1 when x is not finite
    or |x| >= 2^46 (the sum is then not representable). Sums stay exact up
    to |sum| < 2^47 and 2^40 elements per entry.

    ```mlir
    tile.scatter_add %contrib, %grad_fixed[%heads] {fixed_point} : tensor<64x64xf32>, memref<?x3xi64>, tensor<64x64xindex>
    ```
  }];
  let arguments = (ins Tile_Tile:$values, AnyMemRef:$dest,
                       Variadic<Tile_Tile>:$indices, UnitAttr:$fixed_point);
  let assemblyFormat = [{
    $values `,` $dest `[` $indices `]` attr-dict `:` type($values) `,` type($dest) `,` type($indices)
  }];
  let hasVerifier = 1;
}

def Tile_GatherOp : Tile_Op<"gather", [MemoryEffects<[MemRead]>]> {
  let summary = "reads a captured tensor at per-element index tiles";
  let arguments = (ins AnyMemRef:$source, Variadic<Tile_Tile>:$indices);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` attr-dict `:` type($source) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // KILN_TILE_OPS
