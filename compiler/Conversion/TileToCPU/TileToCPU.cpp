//===- TileToCPU.cpp - tile programs -> linalg/tensor/memref/scf ----------===//
//
// The CPU backend runs the very tile program the GPU path schedules: one
// program instance at a time, tiles as tensors that one-shot bufferization
// turns into small buffers. It exists to check every lowering's numerics on
// machines without a GPU, so it favours obviously-correct code over speed.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

#include <array>
#include <functional>
#include <limits>

namespace kiln {
#define GEN_PASS_DEF_CONVERTTILETOCPU
#include "compiler/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A descriptor is a strided memref window on the CPU. A packed one (group
/// G) keeps the packed dimension second: [rows / G, G, cols...], so that
/// descriptor row r is memref position (r / G, r % G).
///
/// A paged one (a KV cache's pool) is the pool at its head, [pages, page
/// size, cols]; its rows are found through the block table of the view that
/// made it (PagedRows).
MemRefType descToMemRef(tile::DescType desc) {
  SmallVector<int64_t> shape(desc.getShape());
  if (desc.isPaged())
    shape = {ShapedType::kDynamic, desc.getPageSize(), desc.getShape()[1]};
  if (desc.getGroup() > 1)
    shape.insert(shape.begin() + 1, desc.getGroup());
  SmallVector<int64_t> strides(shape.size(), ShapedType::kDynamic);
  return MemRefType::get(
      shape, desc.getElementType(),
      StridedLayoutAttr::get(desc.getContext(), ShapedType::kDynamic, strides));
}

Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value filled(OpBuilder &b, Location loc, RankedTensorType type, Value scalar) {
  return linalg::FillOp::create(b, loc, scalar, emptyLike(b, loc, type))
      .getResult(0);
}

/// The extent of a descriptor's dimension `d` on its memref (descToMemRef):
/// a packed descriptor's rows are its memref's first dimension times the
/// group, its columns the memref's third.
Value descExtent(OpBuilder &b, Location loc, Value memref, int64_t d,
                 int64_t group) {
  if (group == 1)
    return memref::DimOp::create(b, loc, memref, d);
  if (d != 0)
    return memref::DimOp::create(b, loc, memref, d + 1);
  Value rows = memref::DimOp::create(b, loc, memref, 0);
  return arith::MulIOp::create(b, loc, rows,
                               arith::ConstantIndexOp::create(b, loc, group));
}

/// True when every `offsets[d] + ivs[d]` lies in [0, dim(memref, d)) and,
/// with a `mask` tile, its element at `ivs` is set. `positions` gets the
/// memref's indices; a packed descriptor's (`group` > 1) row r becomes
/// (r / group, r % group).
Value inBounds(OpBuilder &b, Location loc, Value memref, ValueRange offsets,
               ValueRange ivs, SmallVectorImpl<Value> &positions,
               int64_t group, Value mask) {
  Value ok;
  for (auto [d, offset] : llvm::enumerate(offsets)) {
    Value pos = arith::AddIOp::create(b, loc, offset, ivs[d]);
    Value extent = descExtent(b, loc, memref, d, group);
    if (d == 0 && group > 1) {
      Value g = arith::ConstantIndexOp::create(b, loc, group);
      // Negative rows fail the unsigned compare below before these are used.
      positions.push_back(arith::DivUIOp::create(b, loc, pos, g));
      positions.push_back(arith::RemUIOp::create(b, loc, pos, g));
    } else {
      positions.push_back(pos);
    }
    // Unsigned compare also rejects negative positions.
    Value fits =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, pos, extent);
    ok = ok ? Value(arith::AndIOp::create(b, loc, ok, fits)) : fits;
  }
  if (mask)
    ok = arith::AndIOp::create(b, loc, ok,
                               tensor::ExtractOp::create(b, loc, mask, ivs));
  return ok;
}

/// A paged view's sequence, block table and length, as the converted
/// program sees them.
struct PagedRows {
  Value sequence, table, lengths;
  int64_t pageSize;

  static std::optional<PagedRows> of(Value desc,
                                     ConversionPatternRewriter &rewriter) {
    auto view = desc.getDefiningOp<tile::ViewOp>();
    if (!view || !view.isPaged())
      return std::nullopt;
    return PagedRows{rewriter.getRemappedValue(view.getIndices()[0]),
                     rewriter.getRemappedValue(view.getPageTable()),
                     rewriter.getRemappedValue(view.getLengths()),
                     view.getType().getPageSize()};
  }
  /// The sequence's key count, within [0, the table's capacity] (as on the
  /// GPU; the runtime refuses other lengths before a CPU run).
  Value length(OpBuilder &b, Location loc) const {
    Value n = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, lengths, ValueRange{sequence}));
    Value capacity =
        arith::MulIOp::create(b, loc, memref::DimOp::create(b, loc, table, 1),
                              arith::ConstantIndexOp::create(b, loc, pageSize));
    return arith::MinSIOp::create(
        b, loc,
        arith::MaxSIOp::create(b, loc, n,
                               arith::ConstantIndexOp::create(b, loc, 0)),
        capacity);
  }
  /// Whether row `row`, column `col` of the sequence (of `rows`, its
  /// length()) exists and its page is in the pool, and where it lives in
  /// the pool at its head ([page, row in page, col]).
  Value locate(OpBuilder &b, Location loc, Value pool, Value rows, Value row,
               Value col, SmallVectorImpl<Value> &positions) const {
    Value ps = arith::ConstantIndexOp::create(b, loc, pageSize);
    Value ok = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rows),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col,
                              memref::DimOp::create(b, loc, pool, 2)));
    // Rows outside read no table entry: clamp the index into the table.
    Value slot = arith::DivUIOp::create(b, loc, row, ps);
    Value last =
        arith::SubIOp::create(b, loc, memref::DimOp::create(b, loc, table, 1),
                              arith::ConstantIndexOp::create(b, loc, 1));
    slot = arith::SelectOp::create(b, loc, ok, slot,
                                   arith::ConstantIndexOp::create(b, loc, 0));
    slot = arith::MinUIOp::create(b, loc, slot, last);
    Value page = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, table, ValueRange{sequence, slot}));
    // A table entry outside the pool is a missing page (zeros), as on the
    // GPU: never memory outside the pool.
    ok = arith::AndIOp::create(
        b, loc, ok,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, page,
                              memref::DimOp::create(b, loc, pool, 0)));
    positions.push_back(page);
    positions.push_back(arith::RemUIOp::create(b, loc, row, ps));
    positions.push_back(col);
    return ok;
  }
};

/// Entry `i` of a packed batch's sequence offsets (cu_seqlens) as an index.
Value loadOffset(OpBuilder &b, Location loc, Value offsets, Value i) {
  return arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, offsets, ValueRange{i}));
}

/// Sequence `s`'s first row and row count in a dimension of `extent` rows
/// (tile.view ... ragged): both offsets clamped into [0, extent], the end to
/// at least the start.
std::pair<Value, Value> raggedRows(OpBuilder &b, Location loc, Value offsets,
                                   Value s, Value extent) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto clamp = [&](Value v, Value lo) {
    return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, lo),
                                  extent);
  };
  Value start = clamp(loadOffset(b, loc, offsets, s), zero);
  Value end =
      clamp(loadOffset(b, loc, offsets, arith::AddIOp::create(b, loc, s, one)),
            start);
  return {start, arith::SubIOp::create(b, loc, end, start)};
}

struct RaggedBlockLowering : OpConversionPattern<tile::RaggedBlockOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::RaggedBlockOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Value offsets = adaptor.getOffsets(), index = adaptor.getIndex();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value block = arith::ConstantIndexOp::create(b, loc, op.getBlock());
    Value sequences = arith::SubIOp::create(
        b, loc, memref::DimOp::create(b, loc, offsets, 0), one);
    // The last sequence whose first block is at or before `index`; its
    // blocks counted from there. Sequences with no rows have no blocks.
    auto scan = scf::ForOp::create(
        b, loc, zero, sequences, one, ValueRange{zero, zero, index},
        [&](OpBuilder &nb, Location l, Value s, ValueRange carried) {
          Value before = carried[0];
          Value start = loadOffset(nb, l, offsets, s);
          Value end =
              loadOffset(nb, l, offsets, arith::AddIOp::create(nb, l, s, one));
          Value rows = arith::MaxSIOp::create(
              nb, l, arith::SubIOp::create(nb, l, end, start), zero);
          Value blocks = arith::CeilDivSIOp::create(nb, l, rows, block);
          Value reached = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::sle, before, index);
          Value seq = arith::SelectOp::create(nb, l, reached, s, carried[1]);
          Value inSeq = arith::SelectOp::create(
              nb, l, reached, arith::SubIOp::create(nb, l, index, before),
              carried[2]);
          scf::YieldOp::create(
              nb, l,
              ValueRange{arith::AddIOp::create(nb, l, before, blocks), seq,
                         inSeq});
        });
    rewriter.replaceOp(op, {scan.getResult(1), scan.getResult(2)});
    return success();
  }
};

struct FirstRowLowering : OpConversionPattern<tile::FirstRowOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::FirstRowOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto view = op.getDesc().getDefiningOp<tile::ViewOp>();
    if (!view || !view.isRagged()) {
      rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(op, 0);
      return success();
    }
    Value base = rewriter.getRemappedValue(view.getBase());
    Value extent =
        memref::DimOp::create(rewriter, loc, base, view.getKeep()[0]);
    rewriter.replaceOp(
        op,
        raggedRows(rewriter, loc, rewriter.getRemappedValue(view.getOffsets()),
                   rewriter.getRemappedValue(view.getSequence()), extent)
            .first);
    return success();
  }
};

struct ViewLowering : OpConversionPattern<tile::ViewOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::ViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value base = adaptor.getBase();
    auto baseType = cast<MemRefType>(base.getType());
    tile::DescType desc = op.getResult().getType();
    if (op.isPaged()) {
      // The pool at the head: [pages, page size, cols].
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value head = adaptor.getIndices()[1];
      SmallVector<OpFoldResult> offsets{zero, zero, head, zero}, sizes,
          strides(4, rewriter.getIndexAttr(1));
      for (int64_t d = 0; d < 4; ++d)
        sizes.push_back(d == 2 ? rewriter.getIndexAttr(1)
                               : memref::getMixedSize(rewriter, loc, base, d));
      rewriter.replaceOpWithNewOp<memref::SubViewOp>(
          op, descToMemRef(desc), base, offsets, sizes, strides);
      return success();
    }
    std::optional<int64_t> packed = op.getPacked();
    SmallVector<OpFoldResult> offsets, sizes, strides;
    SmallVector<int64_t> kept; // the subview's dimensions, in base order
    auto fixed = adaptor.getIndices().begin();
    ArrayRef<int64_t> keep = op.getKeep();
    for (int64_t d = 0; d < baseType.getRank(); ++d) {
      strides.push_back(rewriter.getIndexAttr(1));
      if (llvm::is_contained(keep, d)) {
        offsets.push_back(rewriter.getIndexAttr(0));
        sizes.push_back(memref::getMixedSize(rewriter, loc, base, d));
        kept.push_back(d);
        if (op.isRagged() && d == keep[0]) {
          auto [start, rows] = raggedRows(
              rewriter, loc, adaptor.getOffsets(), adaptor.getSequence(),
              memref::DimOp::create(rewriter, loc, base, d));
          offsets.back() = start;
          sizes.back() = rows;
        }
      } else if (packed && d == *packed) {
        offsets.push_back(*fixed++);
        sizes.push_back(rewriter.getIndexAttr(desc.getGroup()));
        kept.push_back(d);
      } else {
        offsets.push_back(*fixed++);
        sizes.push_back(rewriter.getIndexAttr(1));
      }
    }
    auto resultType = descToMemRef(desc);
    // The descriptor's dimensions in `keep`'s order, and the packed one
    // second (descToMemRef); where the base has them in another order (a
    // transposed view, or LSE's [B, H, L] packed by heads), a transpose puts
    // them there.
    auto position = [&](int64_t d) -> unsigned {
      return llvm::find(kept, d) - kept.begin();
    };
    SmallVector<unsigned> order{position(keep[0])};
    if (packed)
      order.push_back(position(*packed));
    for (int64_t d : keep.drop_front())
      order.push_back(position(d));
    if (llvm::is_sorted(order)) {
      rewriter.replaceOpWithNewOp<memref::SubViewOp>(op, resultType, base,
                                                     offsets, sizes, strides);
      return success();
    }
    SmallVector<int64_t> baseOrderShape;
    for (unsigned i : llvm::seq<unsigned>(0, order.size()))
      baseOrderShape.push_back(
          resultType.getDimSize(llvm::find(order, i) - order.begin()));
    auto subviewType = MemRefType::get(
        baseOrderShape, desc.getElementType(),
        StridedLayoutAttr::get(
            getContext(), ShapedType::kDynamic,
            SmallVector<int64_t>(order.size(), ShapedType::kDynamic)));
    Value window = memref::SubViewOp::create(rewriter, loc, subviewType, base,
                                             offsets, sizes, strides);
    auto permutation = AffineMap::getPermutationMap(order, getContext());
    Value transposed = memref::TransposeOp::create(
        rewriter, loc, window, AffineMapAttr::get(permutation));
    rewriter.replaceOpWithNewOp<memref::CastOp>(op, resultType, transposed);
    return success();
  }
};

struct DimLowering : OpConversionPattern<tile::DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (auto paged = PagedRows::of(op.getDesc(), rewriter)) {
      Location loc = op.getLoc();
      rewriter.replaceOp(op, op.getDim() == 0
                                 ? paged->length(rewriter, loc)
                                 : Value(memref::DimOp::create(
                                       rewriter, loc, adaptor.getDesc(), 2)));
      return success();
    }
    rewriter.replaceOp(op, descExtent(rewriter, op.getLoc(), adaptor.getDesc(),
                                      op.getDim(),
                                      op.getDesc().getType().getGroup()));
    return success();
  }
};

struct LoadLowering : OpConversionPattern<tile::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value memref = adaptor.getDesc();
    SmallVector<Value> offsets(adaptor.getOffsets());
    auto type = cast<RankedTensorType>(op.getResult().getType());
    auto fill = cast<TypedAttr>(op.getFill());
    std::optional<PagedRows> paged = PagedRows::of(op.getDesc(), rewriter);
    // The sequence's length, read once per tile rather than per element.
    Value rows = paged ? paged->length(rewriter, op.getLoc()) : Value();
    rewriter.replaceOpWithNewOp<tensor::GenerateOp>(
        op, type, ValueRange{},
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          SmallVector<Value> positions;
          Value ok;
          if (paged) {
            ok = paged->locate(
                b, loc, memref, rows,
                arith::AddIOp::create(b, loc, offsets[0], ivs[0]),
                arith::AddIOp::create(b, loc, offsets[1], ivs[1]), positions);
            if (Value mask = adaptor.getMask())
              ok = arith::AndIOp::create(
                  b, loc, ok, tensor::ExtractOp::create(b, loc, mask, ivs));
          } else {
            ok = inBounds(b, loc, memref, offsets, ivs, positions,
                          op.getDesc().getType().getGroup(), adaptor.getMask());
          }
          auto guarded = scf::IfOp::create(
              b, loc, ok,
              [&](OpBuilder &then, Location l) {
                Value v = memref::LoadOp::create(then, l, memref, positions);
                scf::YieldOp::create(then, l, v);
              },
              [&](OpBuilder &other, Location l) {
                Value v = arith::ConstantOp::create(other, l, fill);
                scf::YieldOp::create(other, l, v);
              });
          tensor::YieldOp::create(b, loc, guarded.getResult(0));
        });
    return success();
  }
};

/// Builds a loop nest over a static tile shape.
void tileLoopNest(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t extent : shape) {
    lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    ubs.push_back(arith::ConstantIndexOp::create(b, loc, extent));
    steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  scf::buildLoopNest(b, loc, lbs, ubs, steps, body);
}

/// Writes each element of `value` that lands inside `memref` at `offsets`
/// and whose `mask` element (if given) is true: `write(builder, loc, element,
/// positions)` does the writing.
void writeInBounds(
    OpBuilder &rewriter, Location location, Value memref, int64_t group,
    Value value, ValueRange offsetRange, Value mask,
    function_ref<void(OpBuilder &, Location, Value, ValueRange)> write) {
  SmallVector<Value> offsets(offsetRange);
  auto type = cast<RankedTensorType>(value.getType());
  tileLoopNest(rewriter, location, type.getShape(),
               [&](OpBuilder &b, Location loc, ValueRange ivs) {
                 SmallVector<Value> positions;
                 Value ok = inBounds(b, loc, memref, offsets, ivs, positions,
                                     group, mask);
                 scf::IfOp::create(
                     b, loc, ok, [&](OpBuilder &then, Location l) {
                       Value v = tensor::ExtractOp::create(then, l, value, ivs);
                       write(then, l, v, positions);
                       scf::YieldOp::create(then, l);
                     });
               });
}

struct StoreLowering : OpConversionPattern<tile::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value memref = adaptor.getDesc();
    writeInBounds(rewriter, op.getLoc(), memref,
                  op.getDesc().getType().getGroup(), adaptor.getValue(),
                  adaptor.getOffsets(), adaptor.getMask(),
                  [&](OpBuilder &b, Location l, Value v, ValueRange at) {
                    memref::StoreOp::create(b, l, v, memref, at);
                  });
    rewriter.eraseOp(op);
    return success();
  }
};

/// Programs run one after another on the CPU, so an atomic add is a plain
/// read-add-write.
struct AtomicAddLowering : OpConversionPattern<tile::AtomicAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::AtomicAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value memref = adaptor.getDesc();
    writeInBounds(rewriter, op.getLoc(), memref,
                  op.getDesc().getType().getGroup(), adaptor.getValue(),
                  adaptor.getOffsets(), /*mask=*/Value(),
                  [&](OpBuilder &b, Location l, Value v, ValueRange at) {
                    Value old = memref::LoadOp::create(b, l, memref, at);
                    Value sum = arith::AddFOp::create(b, l, old, v);
                    memref::StoreOp::create(b, l, sum, memref, at);
                  });
    rewriter.eraseOp(op);
    return success();
  }
};

/// `x`'s three integer addends of a fixed-point scatter_add (the op's
/// description): round(x 2^16), the rest in units of 2^-40, and 1 when x is
/// outside the representable range.
std::array<Value, 3> fixedPointAddends(OpBuilder &b, Location loc, Value x) {
  // One op per statement: C++ leaves the order of argument evaluation open,
  // and the IR should not depend on it.
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  };
  Value wide = arith::ExtFOp::create(b, loc, f64, x);
  Value magnitude = math::AbsFOp::create(b, loc, wide);
  Value limit = constant(0x1p46);
  // NaN compares false, so it is flagged too.
  Value inRange = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                        magnitude, limit);
  Value scale = constant(0x1p16);
  Value scaled = arith::MulFOp::create(b, loc, wide, scale);
  Value high = math::RoundEvenOp::create(b, loc, scaled);
  Value rest = arith::SubFOp::create(b, loc, scaled, high);
  Value restScale = constant(0x1p24);
  Value restScaled = arith::MulFOp::create(b, loc, rest, restScale);
  Value low = math::RoundEvenOp::create(b, loc, restScaled);
  // Out of range the conversions would be undefined: add zeros and the flag.
  Value zero = constant(0.0);
  Value yes = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  Value outOfRange = arith::XOrIOp::create(b, loc, inRange, yes);
  Value flag = arith::ExtUIOp::create(b, loc, i64, outOfRange);
  auto toInt = [&](Value v) -> Value {
    Value kept = arith::SelectOp::create(b, loc, inRange, v, zero);
    return arith::FPToSIOp::create(b, loc, i64, kept);
  };
  Value highInt = toInt(high);
  Value lowInt = toInt(low);
  return {highInt, lowInt, flag};
}

/// Each element added at its indices; programs run one after another on the
/// CPU, so a plain read-add-write (with fixed_point, of the three integers).
struct ScatterAddLowering : OpConversionPattern<tile::ScatterAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::ScatterAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValues().getType());
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<Value> lbs(type.getRank(), zero), steps(type.getRank(), one),
        ubs;
    for (int64_t d : type.getShape())
      ubs.push_back(arith::ConstantIndexOp::create(rewriter, loc, d));
    Value dest = adaptor.getDest(), values = adaptor.getValues();
    SmallVector<Value> indexTiles(adaptor.getIndices());
    scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps,
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          SmallVector<Value> at;
          for (Value tileOfIndices : indexTiles)
            at.push_back(tensor::ExtractOp::create(b, l, tileOfIndices, ivs));
          Value v = tensor::ExtractOp::create(b, l, values, ivs);
          if (op.getFixedPoint()) {
            std::array<Value, 3> addends = fixedPointAddends(b, l, v);
            at.push_back(Value());
            for (int64_t part = 0; part < 3; ++part) {
              at.back() = arith::ConstantIndexOp::create(b, l, part);
              Value old = memref::LoadOp::create(b, l, dest, at);
              memref::StoreOp::create(
                  b, l, arith::AddIOp::create(b, l, old, addends[part]), dest,
                  at);
            }
            return;
          }
          Value old = memref::LoadOp::create(b, l, dest, at);
          memref::StoreOp::create(b, l, arith::AddFOp::create(b, l, old, v),
                                  dest, at);
        });
    rewriter.eraseOp(op);
    return success();
  }
};

/// Widens `v` to `type` when it is narrower.
Value widen(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return arith::ExtFOp::create(b, loc, type, v);
}

struct DotLowering : OpConversionPattern<tile::DotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type accType = resultType.getElementType();
    Value init = adaptor.getAcc();
    if (!init)
      init = filled(rewriter, loc, resultType,
                    arith::ConstantOp::create(
                        rewriter, loc, rewriter.getFloatAttr(accType, 0)));
    MLIRContext *ctx = rewriter.getContext();
    AffineExpr m, n, k;
    bindDims(ctx, m, n, k);
    SmallVector<AffineMap> maps{
        op.getTransposeLhs() ? AffineMap::get(3, 0, {k, m}, ctx)
                             : AffineMap::get(3, 0, {m, k}, ctx),
        op.getTransposeRhs() ? AffineMap::get(3, 0, {n, k}, ctx)
                             : AffineMap::get(3, 0, {k, n}, ctx),
        AffineMap::get(3, 0, {m, n}, ctx)};
    SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel,
                                               utils::IteratorType::parallel,
                                               utils::IteratorType::reduction};
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType},
        ValueRange{adaptor.getLhs(), adaptor.getRhs()}, ValueRange{init}, maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value a = widen(b, l, args[0], accType);
          Value c = widen(b, l, args[1], accType);
          Value prod = arith::MulFOp::create(b, l, a, c);
          Value sum = arith::AddFOp::create(b, l, args[2], prod);
          linalg::YieldOp::create(b, l, sum);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// linalg.reduce's body for tile.reduce and tile.reduce_all: max or sum.
std::function<void(OpBuilder &, Location, ValueRange)> combineBody(bool isMax) {
  return [isMax](OpBuilder &b, Location l, ValueRange args) {
    Value r = isMax ? Value(arith::MaximumFOp::create(b, l, args[0], args[1]))
                    : Value(arith::AddFOp::create(b, l, args[0], args[1]));
    linalg::YieldOp::create(b, l, r);
  };
}

struct ReduceLowering : OpConversionPattern<tile::ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elt = resultType.getElementType();
    bool isMax = op.getKind() == tile::ReduceKind::max;
    double identity = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
    Value init =
        filled(rewriter, loc, resultType,
               arith::ConstantOp::create(rewriter, loc,
                                         rewriter.getFloatAttr(elt, identity)));
    auto reduce = linalg::ReduceOp::create(
        rewriter, loc, ValueRange{adaptor.getSource()}, ValueRange{init},
        SmallVector<int64_t>{int64_t(op.getDim())}, combineBody(isMax));
    rewriter.replaceOp(op, reduce.getResult(0));
    return success();
  }
};

/// A 1-D tile to a scalar: a linalg.reduce to a 0-D tensor, extracted.
struct ReduceAllLowering : OpConversionPattern<tile::ReduceAllOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::ReduceAllOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elt = op.getType();
    bool isMax = op.getKind() == tile::ReduceKind::max;
    double identity = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
    auto scalarType = RankedTensorType::get({}, elt);
    Value init =
        filled(rewriter, loc, scalarType,
               arith::ConstantOp::create(rewriter, loc,
                                         rewriter.getFloatAttr(elt, identity)));
    auto reduce = linalg::ReduceOp::create(
        rewriter, loc, ValueRange{adaptor.getSource()}, ValueRange{init},
        SmallVector<int64_t>{0},
        combineBody(isMax));
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(op, reduce.getResult(0),
                                                   ValueRange{});
    return success();
  }
};

struct BroadcastLowering : OpConversionPattern<tile::BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Value init = emptyLike(rewriter, op.getLoc(), type);
    auto bcast =
        linalg::BroadcastOp::create(rewriter, op.getLoc(), adaptor.getSource(),
                                    init,
                                    SmallVector<int64_t>{int64_t(op.getDim())});
    rewriter.replaceOp(op, bcast.getResult()[0]);
    return success();
  }
};

struct SplatLowering : OpConversionPattern<tile::SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    rewriter.replaceOp(op,
                       filled(rewriter, op.getLoc(), type, adaptor.getValue()));
    return success();
  }
};

struct IotaLowering : OpConversionPattern<tile::IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    int64_t dim = op.getDim();
    rewriter.replaceOpWithNewOp<tensor::GenerateOp>(
        op, type, ValueRange{},
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          tensor::YieldOp::create(b, loc, ivs[dim]);
        });
    return success();
  }
};

/// Each element's uniform by its own Philox4x32-10 call (reference/Philox.h
/// defines the counter layout, 16- or 8-bit): 8 or 16 times the work of
/// sharing one call per patch, but obviously the definition, which is what
/// this backend is for.
struct PhiloxLowering : OpConversionPattern<tile::PhiloxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::PhiloxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    bool transposed = op.getKeysByQueries();
    rewriter.replaceOpWithNewOp<tensor::GenerateOp>(
        op, type, ValueRange{},
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Type i32 = b.getI32Type(), i64 = b.getI64Type();
          auto k32 = [&](uint32_t v) -> Value {
            return arith::ConstantOp::create(
                b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
          };
          auto k64 = [&](int64_t v) -> Value {
            return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
          };
          auto toI64 = [&](Value index) -> Value {
            return arith::IndexCastUIOp::create(b, loc, i64, index);
          };
          auto lo32 = [&](Value x) -> Value {
            return arith::TruncIOp::create(b, loc, i32, x);
          };
          auto shr = [&](Value x, int64_t n) -> Value {
            return arith::ShRUIOp::create(b, loc, x, k64(n));
          };
          auto andK = [&](Value x, int64_t m) -> Value {
            return arith::AndIOp::create(b, loc, x, k64(m));
          };
          auto shl = [&](Value x, int64_t n) -> Value {
            return arith::ShLIOp::create(b, loc, x, k64(n));
          };
          auto orI = [&](Value x, Value y) -> Value {
            return arith::OrIOp::create(b, loc, x, y);
          };
          auto xorI = [&](Value x, Value y) -> Value {
            return arith::XOrIOp::create(b, loc, x, y);
          };
          Value row = arith::AddIOp::create(
              b, loc, transposed ? adaptor.getKvStart() : adaptor.getQStart(),
              ivs[0]);
          Value col = arith::AddIOp::create(
              b, loc, transposed ? adaptor.getQStart() : adaptor.getKvStart(),
              ivs[1]);
          Value q = toI64(transposed ? col : row);
          Value kv = toI64(transposed ? row : col);
          Value seed = adaptor.getSeed(), offset = adaptor.getOffset();
          bool bytes = op.getBits() == 8;
          Value queries = bytes ? orI(shl(shr(q, 4), 2), andK(shr(q, 1), 3))
                                : orI(shl(shr(q, 4), 3), andK(q, 7));
          Value ctr[4] = {lo32(orI(shl(shr(kv, 4), 2), andK(shr(kv, 1), 3))),
                          lo32(queries),
                          lo32(orI(shl(toI64(adaptor.getBatch()), 16),
                                   toI64(adaptor.getHead()))),
                          lo32(offset)};
          Value key[2] = {lo32(seed),
                          lo32(xorI(shr(seed, 32), shr(offset, 32)))};
          for (int round = 0; round < 10; ++round) {
            auto p0 = arith::MulUIExtendedOp::create(b, loc, k32(0xD2511F53u),
                                                     ctr[0]);
            auto p1 = arith::MulUIExtendedOp::create(b, loc, k32(0xCD9E8D57u),
                                                     ctr[2]);
            Value next[4] = {
                xorI(xorI(p1.getHigh(), ctr[1]), key[0]), p1.getLow(),
                xorI(xorI(p0.getHigh(), ctr[3]), key[1]), p0.getLow()};
            std::copy(next, next + 4, ctr);
            key[0] = arith::AddIOp::create(b, loc, key[0], k32(0x9E3779B9u));
            key[1] = arith::AddIOp::create(b, loc, key[1], k32(0xBB67AE85u));
          }
          // Word ((q >> 3) & 1) * 2 + ((kv >> 3) & 1), half kv & 1 (16
          // bits) or byte (q & 1) * 2 + (kv & 1) (8 bits).
          Value qHigh = arith::TruncIOp::create(b, loc, b.getI1Type(),
                                                andK(shr(q, 3), 1));
          Value kvHigh = arith::TruncIOp::create(b, loc, b.getI1Type(),
                                                 andK(shr(kv, 3), 1));
          Value lowPair =
              arith::SelectOp::create(b, loc, kvHigh, ctr[1], ctr[0]);
          Value highPair =
              arith::SelectOp::create(b, loc, kvHigh, ctr[3], ctr[2]);
          Value word =
              arith::SelectOp::create(b, loc, qHigh, highPair, lowPair);
          Value part =
              bytes ? orI(shl(andK(q, 1), 1), andK(kv, 1)) : andK(kv, 1);
          Value shift =
              arith::MulIOp::create(b, loc, lo32(part), k32(bytes ? 8 : 16));
          Value uniform = arith::AndIOp::create(
              b, loc, arith::ShRUIOp::create(b, loc, word, shift),
              k32(bytes ? 0xFFu : 0xFFFFu));
          tensor::YieldOp::create(b, loc, uniform);
        });
    return success();
  }
};

struct GatherLowering : OpConversionPattern<tile::GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Value source = adaptor.getSource();
    SmallVector<Value> indexTiles(adaptor.getIndices());
    rewriter.replaceOpWithNewOp<tensor::GenerateOp>(
        op, type, ValueRange{},
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          SmallVector<Value> at;
          for (Value tileOfIndices : indexTiles)
            at.push_back(tensor::ExtractOp::create(b, loc, tileOfIndices, ivs));
          Value v = memref::LoadOp::create(b, loc, source, at);
          tensor::YieldOp::create(b, loc, v);
        });
    return success();
  }
};

/// Program ids become trailing arguments; a `<name>_grid` launcher walks the
/// grid (axis 0 innermost, as a GPU schedules consecutive blocks).
LogicalResult scheduleGrid(func::FuncOp kernel) {
  OpBuilder b(kernel.getContext());
  Location loc = kernel.getLoc();
  Block &entry = kernel.front();
  unsigned numArgs = entry.getNumArguments();
  Type indexType = b.getIndexType();
  SmallVector<Value> pids;
  // The launch roles of the arguments were read into the plan before this
  // lowering; the kernel's signature changes here and they would not match.
  kernel.removeArgAttrsAttr();
  for (int axis = 0; axis < 3; ++axis)
    pids.push_back(entry.addArgument(indexType, loc));
  SmallVector<Type> argTypes(entry.getArgumentTypes());
  kernel.setType(b.getFunctionType(argTypes, {}));
  kernel.walk([&](tile::ProgramIdOp op) {
    op.replaceAllUsesWith(pids[op.getAxis()]);
    op.erase();
  });

  b.setInsertionPointAfter(kernel);
  SmallVector<Type> launcherTypes(argTypes.begin(), argTypes.begin() + numArgs);
  launcherTypes.append(3, indexType);
  auto launcher = func::FuncOp::create(
      b, loc, (kernel.getName() + kCPULauncherSuffix).str(),
      b.getFunctionType(launcherTypes, {}));
  launcher->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    b.getUnitAttr());
  Block *body = launcher.addEntryBlock();
  b.setInsertionPointToStart(body);
  ValueRange args = body->getArguments();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> ubs{args[numArgs + 2], args[numArgs + 1], args[numArgs]};
  scf::buildLoopNest(b, loc, {zero, zero, zero}, ubs, {one, one, one},
                     [&](OpBuilder &nb, Location l, ValueRange ivs) {
                       SmallVector<Value> callArgs(args.take_front(numArgs));
                       callArgs.append({ivs[2], ivs[1], ivs[0]});
                       func::CallOp::create(nb, l, kernel, callArgs);
                     });
  func::ReturnOp::create(b, loc);
  kernel.setPrivate();
  // The schedule is fixed now (and the launch plan read off before this
  // lowering); tile-level metadata does not go further down.
  SmallVector<StringAttr> tileAttrs;
  for (NamedAttribute attr : kernel->getDiscardableAttrs())
    if (attr.getName().getValue().starts_with(
            (tile::TileDialect::getDialectNamespace() + ".").str()))
      tileAttrs.push_back(attr.getName());
  for (StringAttr name : tileAttrs)
    kernel->removeDiscardableAttr(name);
  return success();
}

struct ConvertTileToCPU
    : public kiln::impl::ConvertTileToCPUBase<ConvertTileToCPU> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    module.walk([&](func::FuncOp f) {
      if (f->hasAttr(tile::attrs::kKernel))
        kernels.push_back(f);
    });
    for (func::FuncOp kernel : kernels)
      if (failed(scheduleGrid(kernel)))
        return signalPassFailure();
    if (auto stray = module.walk([](tile::ProgramIdOp op) {
          op.emitError("tile.program_id outside a tile.kernel function");
          return WalkResult::interrupt();
        });
        stray.wasInterrupted())
      return signalPassFailure();

    TypeConverter converter;
    converter.addConversion([](Type t) { return t; });
    converter.addConversion(
        [](tile::DescType desc) -> Type { return descToMemRef(desc); });

    ConversionTarget target(getContext());
    target.addIllegalDialect<tile::TileDialect>();
    target.addLegalDialect<arith::ArithDialect, math::MathDialect,
                           memref::MemRefDialect, tensor::TensorDialect,
                           linalg::LinalgDialect, scf::SCFDialect,
                           func::FuncDialect>();
    RewritePatternSet patterns(&getContext());
    patterns.add<ViewLowering, DimLowering, LoadLowering, StoreLowering,
                 AtomicAddLowering, DotLowering, ReduceLowering,
                 ReduceAllLowering, BroadcastLowering, SplatLowering,
                 IotaLowering, PhiloxLowering, GatherLowering,
                 ScatterAddLowering, RaggedBlockLowering, FirstRowLowering>(
        converter, &getContext());
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
