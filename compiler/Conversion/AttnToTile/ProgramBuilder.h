//===- ProgramBuilder.h - helpers shared by the attn -> tile lowerings -*- C++
//-*-===//
//
// The forward and backward tile programs are built from the same pieces: a
// builder with the constants and tile ops they repeat, global array types,
// and the keep-mask of a score tile (keys past Lk, causal, mask_mod).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CONVERSION_ATTNTOTILE_PROGRAMBUILDER_H
#define KILN_COMPILER_CONVERSION_ATTNTOTILE_PROGRAMBUILDER_H

#include "compiler/Conversion/AttnToTile/ModVectorizer.h"
#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

#include <limits>

namespace kiln {

using namespace mlir;

/// A builder with the few constructors the tile programs repeat.
struct ProgramBuilder {
  OpBuilder &b;
  Location loc;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// The [seq, cols] matrix of (batch, head) in a [B, L, H, D] array. With
  /// `group` > 1, the [seq * group, cols] matrix whose row r is position
  /// r / group of heads head .. head + group - 1 interleaved (r % group).
  Value view(Value base, Value batch, Value head, int64_t cols, Type elt,
             int64_t group = 1) {
    return tile::ViewOp::create(
        b, loc,
        tile::DescType::get(b.getContext(), {ShapedType::kDynamic, cols}, elt,
                            group),
        base, ValueRange{batch, head}, b.getDenseI64ArrayAttr({1, 3}),
        group > 1 ? b.getI64IntegerAttr(2) : IntegerAttr());
  }
  /// The [seq, cols] matrix of (batch, head) in a [B, H, L, D] array (the
  /// atomic backward's dQ accumulator: a block of rows is contiguous).
  Value headMajorView(Value base, Value batch, Value head, int64_t cols,
                      Type elt) {
    return tile::ViewOp::create(
        b, loc,
        tile::DescType::get(b.getContext(), {ShapedType::kDynamic, cols}, elt),
        base, ValueRange{batch, head}, b.getDenseI64ArrayAttr({2, 3}),
        IntegerAttr());
  }
  /// The [lens[batch], cols] matrix of sequence `batch`, head `head` in a
  /// paged KV cache: a pool [pages, pageSize, heads, cols] whose row r lives
  /// in page table[batch, r / pageSize].
  Value pagedView(Value pool, Value table, Value lengths, Value batch,
                  Value head, int64_t cols, Type elt, int64_t pageSize) {
    return tile::ViewOp::create(
        b, loc,
        tile::DescType::get(b.getContext(), {ShapedType::kDynamic, cols}, elt,
                            /*group=*/1, pageSize),
        pool, ValueRange{batch, head}, table, lengths, Value(), Value(),
        b.getDenseI64ArrayAttr({1, 3}), IntegerAttr());
  }
  /// The [L_s, cols] matrix of sequence `seq`, head `head` in a packed
  /// [T, H, cols] array whose sequence s is rows offsets[s] .. offsets[s +
  /// 1] - 1 (varlen).
  Value raggedView(Value base, Value offsets, Value seq, Value head,
                   int64_t cols, Type elt) {
    return tile::ViewOp::create(
        b, loc,
        tile::DescType::get(b.getContext(), {ShapedType::kDynamic, cols}, elt),
        base, ValueRange{head}, Value(), Value(), offsets, seq,
        b.getDenseI64ArrayAttr({0, 2}), IntegerAttr());
  }
  /// The per-row f32 values (LSE, D) of sequence `seq`, head `head` in a
  /// packed [H, T] array.
  Value raggedRowView(Value base, Value offsets, Value seq, Value head) {
    return tile::ViewOp::create(
        b, loc,
        tile::DescType::get(b.getContext(), {ShapedType::kDynamic},
                            b.getF32Type()),
        base, ValueRange{head}, Value(), Value(), offsets, seq,
        b.getDenseI64ArrayAttr({1}), IntegerAttr());
  }
  /// The per-row f32 values (LSE, D) of (batch, head) in a [B, H, L] array;
  /// `group` as for view().
  Value rowView(Value base, Value batch, Value head, int64_t group = 1) {
    return tile::ViewOp::create(
        b, loc,
        tile::DescType::get(b.getContext(), {ShapedType::kDynamic},
                            b.getF32Type(), group),
        base, ValueRange{batch, head}, b.getDenseI64ArrayAttr({2}),
        group > 1 ? b.getI64IntegerAttr(1) : IntegerAttr());
  }
  /// A `shape` tile of `desc` at `offsets`; elements outside read `fill`.
  Value load(Value desc, ArrayRef<int64_t> shape, Type elt, ValueRange offsets,
             double fill) {
    return tile::LoadOp::create(b, loc, RankedTensorType::get(shape, elt), desc,
                                offsets, b.getFloatAttr(elt, fill));
  }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value splat(Value scalar, ArrayRef<int64_t> shape) {
    return splatToTile(b, loc, scalar, shape);
  }
  Value splatF32(double v, ArrayRef<int64_t> shape) {
    return splat(f32(v), shape);
  }
  Value add(Value x, Value y) {
    return isa<FloatType>(getElementTypeOrSelf(x.getType()))
               ? Value(arith::AddFOp::create(b, loc, x, y))
               : Value(arith::AddIOp::create(b, loc, x, y));
  }
  Value sub(Value x, Value y) {
    return isa<FloatType>(getElementTypeOrSelf(x.getType()))
               ? Value(arith::SubFOp::create(b, loc, x, y))
               : Value(arith::SubIOp::create(b, loc, x, y));
  }
  Value mul(Value x, Value y) {
    return isa<FloatType>(getElementTypeOrSelf(x.getType()))
               ? Value(arith::MulFOp::create(b, loc, x, y))
               : Value(arith::MulIOp::create(b, loc, x, y));
  }
  Value maxIndex(Value x, Value y) {
    return arith::MaxSIOp::create(b, loc, x, y);
  }
  Value minIndex(Value x, Value y) {
    return arith::MinSIOp::create(b, loc, x, y);
  }
  /// Rounds a signed index down / up to a multiple of `multiple`.
  Value floorTo(Value x, int64_t multiple) {
    Value m = index(multiple);
    return mul(arith::FloorDivSIOp::create(b, loc, x, m), m);
  }
  Value ceilTo(Value x, int64_t multiple) {
    Value m = index(multiple);
    return mul(arith::CeilDivSIOp::create(b, loc, x, m), m);
  }
  Value iota(int64_t dim, ArrayRef<int64_t> shape) {
    return tile::IotaOp::create(
        b, loc, RankedTensorType::get(shape, b.getIndexType()), dim);
  }
  Value reduce(tile::ReduceKind kind, Value t) {
    auto type = cast<RankedTensorType>(t.getType());
    auto result =
        RankedTensorType::get({type.getDimSize(0)}, type.getElementType());
    return tile::ReduceOp::create(b, loc, result, kind, t, /*dim=*/1);
  }
  /// Repeats a per-row vector across `cols` columns.
  /// Repeats a 1-D tile of per-column values down `rows` rows.
  Value colBroadcast(Value cols, int64_t rows) {
    auto type = cast<RankedTensorType>(cols.getType());
    auto result = RankedTensorType::get({rows, type.getDimSize(0)},
                                        type.getElementType());
    return tile::BroadcastOp::create(b, loc, result, cols, /*dim=*/0);
  }
  Value rowBroadcast(Value rows, int64_t cols) {
    auto type = cast<RankedTensorType>(rows.getType());
    auto result = RankedTensorType::get({type.getDimSize(0), cols},
                                        type.getElementType());
    return tile::BroadcastOp::create(b, loc, result, rows, /*dim=*/1);
  }
};

/// Whether a mod of `spec` may read a capture at an index computed from the
/// query (`query`) or the key position (modIndexesMemoryWith): the mods
/// then see those positions clamped into the sequence.
inline bool modsIndexMemoryWith(attn::AttentionOp spec, bool query) {
  // score_mod(score, b, h, q, kv, ...), mask_mod(b, h, q, kv, ...).
  return (spec.hasScoreMod() &&
          modIndexesMemoryWith(spec.getScoreMod(), query ? 3 : 4)) ||
         (spec.hasMaskMod() &&
          modIndexesMemoryWith(spec.getMaskMod(), query ? 2 : 3));
}

/// A dynamically shaped global array with arbitrary strides.
inline MemRefType stridedMemRef(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                Type elt) {
  SmallVector<int64_t> strides(shape.size(), ShapedType::kDynamic);
  return MemRefType::get(
      shape, elt, StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides));
}

/// True where key `kvIdx` is visible from query `qIdx`: inside the sequence
/// (a zero-padded key would otherwise score 0 and add exp2(0) = 1 to the row
/// sum), on the kept side of the causal diagonal, and kept by the mask_mod
/// (which sees `modQIdx` / `modKvIdx`, clamped when it reads captures).
inline Value buildKeepMask(ProgramBuilder &pb, attn::AttentionOp spec,
                           Value qIdx, Value kvIdx, Value lenK,
                           Value diagOffset, Value batch, Value head,
                           Value modQIdx, Value modKvIdx,
                           ArrayRef<Value> captures) {
  auto shape = cast<RankedTensorType>(qIdx.getType()).getShape();
  OpBuilder &b = pb.b;
  Location loc = pb.loc;
  Value keep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, kvIdx,
                                     pb.splat(lenK, shape));
  if (spec.getCausal() != attn::CausalAlignment::none) {
    Value limit = qIdx;
    if (spec.getCausal() == attn::CausalAlignment::bottom_right)
      limit = pb.add(limit, pb.splat(diagOffset, shape));
    Value causal =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, kvIdx, limit);
    keep = arith::AndIOp::create(b, loc, keep, causal);
  }
  if (spec.hasMaskMod()) {
    SmallVector<Value> args{batch, head, modQIdx, modKvIdx};
    args.append(captures.begin(), captures.end());
    Value mod = inlineModOverTile(b, loc, spec.getMaskMod(), args, shape);
    keep = arith::AndIOp::create(b, loc, keep, mod);
  }
  return keep;
}

/// `scores` with the keys that `keep` (built inside the branch) rejects set
/// to -inf where `when` holds, else unchanged: a step whose mask only some
/// iterations of its loop need (branch-masked-steps), so that the loop
/// holds one copy of the rest of the step.
inline Value maskScoresWhen(ProgramBuilder &pb, Value when, Value scores,
                            llvm::function_ref<Value(ProgramBuilder &)> keep) {
  auto branch = scf::IfOp::create(pb.b, pb.loc, TypeRange{scores.getType()},
                                  when, /*addThenBlock=*/true,
                                  /*addElseBlock=*/true);
  OpBuilder thenBuilder = branch.getThenBodyBuilder();
  ProgramBuilder tp{thenBuilder, pb.loc};
  Value kept = keep(tp);
  Value negInf =
      tp.splatF32(-std::numeric_limits<double>::infinity(),
                  cast<RankedTensorType>(scores.getType()).getShape());
  scf::YieldOp::create(thenBuilder, pb.loc,
                       ValueRange{arith::SelectOp::create(
                           thenBuilder, pb.loc, kept, scores, negInf)});
  OpBuilder elseBuilder = branch.getElseBodyBuilder();
  scf::YieldOp::create(elseBuilder, pb.loc, ValueRange{scores});
  return branch.getResult(0);
}

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_ATTNTOTILE_PROGRAMBUILDER_H
