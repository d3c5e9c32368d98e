//===- RowTermsAfterMax.cpp - a row's own term after its maximum ----------===//
//
// A score_mod such as ALiBi's adds a bias whose terms vary along the rows
// only (after tile-reassociate-low-rank, `slope · log2 e · float(k0 - q0 -
// row)`) to terms that vary along the columns (`slope · log2 e ·
// float(col)`) and to the scaled score. The online softmax then takes each
// row's maximum of the sum and exponentiates the sum minus it: per element
// one fused multiply-add for the score and the column's term, one add for
// the row's term, one subtraction of the maximum. Adding a row's own term
// commutes with the row's maximum exactly (rounding is monotonic: the
// largest sum is the largest addend plus the term), and `(a + r) - m` is
// `a - (m - r)` up to rounding, so the row's term moves onto the row: the
// maximum is taken over `a` and the term added to it once per row, and the
// exponent subtracts `m - r`, one subtraction per row. One add per element
// goes. Where the sum is written `a + r` the maxima (hence the running
// maximum, the row sums' scale and the log-sum-exp) are those of the
// written order; where the row's term sits deeper in the sum (ALiBi's `s +
// (r + c)`) the addends are regrouped first, a reassociation, and the
// exponent's argument rounds differently in any case, so the pipelines run
// the pass under fast math only, with tile-reassociate-low-rank. A backward
// step's `exp2(s - lse)` is the same subtraction, with the log-sum-exp for
// the maximum.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tile/Transforms/Passes.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/Tile/Transforms/TileRank.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

namespace kiln::tile {
#define GEN_PASS_DEF_TILEROWTERMSAFTERMAX
#include "dialects/Tile/Transforms/Passes.h.inc"
} // namespace kiln::tile

using namespace mlir;
using namespace kiln;

namespace {

using tile::isTile2D;

/// Whether `v` is constant along dimension `dim` (the one a row's maximum
/// reduces: 1, or 0 in a backward kernel on Sᵀ, whose rows are keys).
bool isRowTerm(Value v, int64_t dim) {
  return (tile::rankOf(v) & (tile::Rank(1) << dim)) == 0;
}

bool isNegativeInfinity(Value v) {
  std::optional<APFloat> k = tile::splatFloatConstant(v);
  return k && k->isInfinity() && k->isNegative();
}

/// The addends of a tree of `arith.addf` under `v`, in order: three levels
/// reach a score plus a bias of per-row and per-column terms (each maybe a
/// sum of two); deeper ones count as one addend.
void collectAddends(Value v, int depth, SmallVectorImpl<Value> &addends) {
  auto add = v.getDefiningOp<arith::AddFOp>();
  if (!add || depth > 3) {
    addends.push_back(v);
    return;
  }
  collectAddends(add.getLhs(), depth + 1, addends);
  collectAddends(add.getRhs(), depth + 1, addends);
}

/// Whether every use of `v` is one the rewrite folds, all along one
/// dimension `dim` (-1 until a use names it): a row maximum (`tile.reduce
/// max` along `dim`), the subtraction of a row's value repeated along `dim`
/// (`v - tile.broadcast m dim`), or a select against -inf (a mask) whose
/// uses are again of these kinds.
bool usesFold(Value v, int64_t &dim, RankedTensorType &rows, int depth = 0) {
  // A mask's select, or two (a partial block's and the diagonal's).
  if (depth > 2 || v.use_empty())
    return false;
  // All along one dimension, with one type of a row's values (a maximum's
  // result, a subtracted row value).
  auto along = [&](int64_t d, Type rowType) {
    if (dim < 0) {
      dim = d;
      rows = dyn_cast<RankedTensorType>(rowType);
    }
    return dim == d && rows && rowType == rows;
  };
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto reduce = dyn_cast<tile::ReduceOp>(user)) {
      if (reduce.getKind() != tile::ReduceKind::max ||
          !along(reduce.getDim(), reduce.getType()))
        return false;
    } else if (auto sub = dyn_cast<arith::SubFOp>(user)) {
      auto broadcast = sub.getRhs().getDefiningOp<tile::BroadcastOp>();
      if (use.getOperandNumber() != 0 || !broadcast ||
          !along(broadcast.getDim(), broadcast.getSource().getType()))
        return false;
    } else if (auto select = dyn_cast<arith::SelectOp>(user)) {
      unsigned other = use.getOperandNumber() == 1 ? 2 : 1;
      if (use.getOperandNumber() == 0 ||
          !isNegativeInfinity(user->getOperand(other)) ||
          !usesFold(select.getResult(), dim, rows, depth + 1))
        return false;
    } else {
      return false;
    }
  }
  return true;
}

/// The 1-D type of a row's values of element type `element`, with the
/// encoding of `rows`.
RankedTensorType rowsType(RankedTensorType rows, Type element) {
  return RankedTensorType::get(rows.getShape(), element, rows.getEncoding());
}

/// A row term (isRowTerm: tile::rankOf found only splats, iotas along the
/// other dimension, broadcasts along the reduced one, splat constants and
/// one-result elementwise ops over 2-D tiles below it) built again as a
/// 1-D tile of its
/// rows (the other dimension than the reduced one): splats and iotas as 1-D
/// ones, a broadcast along the reduced dimension as its source, elementwise
/// ops over those.
Value buildRows(OpBuilder &b, Value v, RankedTensorType rows,
                IRMapping &built) {
  if (Value done = built.lookupOrNull(v))
    return done;
  Operation *op = v.getDefiningOp();
  auto type = cast<RankedTensorType>(v.getType());
  RankedTensorType rowType = rowsType(rows, type.getElementType());
  Value result;
  if (auto splat = dyn_cast<tile::SplatOp>(op)) {
    result = tile::SplatOp::create(b, op->getLoc(), rowType, splat.getValue());
  } else if (isa<tile::IotaOp>(op)) {
    result = tile::IotaOp::create(b, op->getLoc(), rowType, 0);
  } else if (auto broadcast = dyn_cast<tile::BroadcastOp>(op)) {
    result = broadcast.getSource();
  } else if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = cast<DenseElementsAttr>(constant.getValue());
    result = arith::ConstantOp::create(
        b, op->getLoc(), rowType,
        DenseElementsAttr::get(rowType, dense.getSplatValue<Attribute>()));
  } else {
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(buildRows(b, operand, rows, built));
    OperationState state(op->getLoc(), op->getName(), operands, {rowType},
                         op->getAttrs());
    result = b.create(state)->getResult(0);
  }
  built.map(v, result);
  return result;
}

/// Rewrites the uses of `old` (usesFold) to read `rest` with the row's
/// values `rows` added after each maximum and subtracted from each
/// subtracted row value, those per-row ops with `flags`.
void rewriteUses(IRRewriter &rewriter, Value old, Value rest, Value rows,
                 arith::FastMathFlags flags) {
  for (OpOperand &use : llvm::make_early_inc_range(old.getUses())) {
    Operation *user = use.getOwner();
    rewriter.setInsertionPoint(user);
    Location loc = user->getLoc();
    if (auto reduce = dyn_cast<tile::ReduceOp>(user)) {
      Value max = tile::ReduceOp::create(rewriter, loc, reduce.getType(),
                                         reduce.getKindAttr(), rest,
                                         reduce.getDimAttr());
      rewriter.replaceOpWithNewOp<arith::AddFOp>(reduce, max, rows, flags);
    } else if (auto sub = dyn_cast<arith::SubFOp>(user)) {
      auto broadcast = sub.getRhs().getDefiningOp<tile::BroadcastOp>();
      Value shifted = arith::SubFOp::create(rewriter, loc,
                                            broadcast.getSource(), rows, flags);
      Value repeated = tile::BroadcastOp::create(
          rewriter, loc, broadcast.getType(), shifted, broadcast.getDimAttr());
      rewriter.replaceOpWithNewOp<arith::SubFOp>(sub, rest, repeated,
                                                 sub.getFastmathAttr());
    } else {
      auto select = cast<arith::SelectOp>(user);
      // -inf + r = -inf: the masked elements stay masked.
      Value trueValue =
          select.getTrueValue() == old ? rest : select.getTrueValue();
      Value falseValue =
          select.getFalseValue() == old ? rest : select.getFalseValue();
      Value masked = arith::SelectOp::create(
          rewriter, loc, select.getCondition(), trueValue, falseValue);
      rewriteUses(rewriter, select.getResult(), masked, rows, flags);
      rewriter.eraseOp(select);
    }
  }
}

/// Moves the row's terms of `sum` after its uses' maxima, if it has some
/// beside other terms and all its uses fold.
void moveRowTerms(IRRewriter &rewriter, arith::AddFOp sum) {
  int64_t dim = -1;
  RankedTensorType rows;
  if (!isTile2D(sum.getResult()) ||
      !isa<FloatType>(getElementTypeOrSelf(sum.getType())) ||
      !usesFold(sum.getResult(), dim, rows))
    return;
  if (rows.getRank() != 1 ||
      rows.getElementType() != getElementTypeOrSelf(sum.getType()))
    return;
  SmallVector<Value> addends, rowAddends, otherAddends;
  collectAddends(sum.getResult(), 0, addends);
  for (Value addend : addends)
    (isRowTerm(addend, dim) ? rowAddends : otherAddends).push_back(addend);
  if (rowAddends.empty() || otherAddends.empty())
    return;
  // The row's values, 1-D, built before the sum (its addends dominate it).
  rewriter.setInsertionPoint(sum);
  arith::FastMathFlags flags = sum.getFastmath();
  // The new per-row adds and subtractions meet what the sum never did: a
  // masked row's maximum and the initial maximum, -inf.
  arith::FastMathFlags rowFlags =
      flags & ~(arith::FastMathFlags::nnan | arith::FastMathFlags::ninf);
  Location loc = sum.getLoc();
  IRMapping built;
  Value rowValues;
  for (Value addend : rowAddends) {
    Value row = buildRows(rewriter, addend, rows, built);
    rowValues = rowValues ? arith::AddFOp::create(rewriter, loc, rowValues, row,
                                                  rowFlags)
                                .getResult()
                          : row;
  }
  Value rest = otherAddends.front();
  for (Value addend : ArrayRef(otherAddends).drop_front())
    rest = arith::AddFOp::create(rewriter, loc, rest, addend, flags);
  rewriteUses(rewriter, sum.getResult(), rest, rowValues, rowFlags);
  rewriter.eraseOp(sum);
}

struct TileRowTermsAfterMax
    : kiln::tile::impl::TileRowTermsAfterMaxBase<TileRowTermsAfterMax> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<arith::AddFOp> sums;
    getOperation()->walk([&](arith::AddFOp sum) {
      if (!tile::inKernelBelowHeadDim(sum, minHeadDim))
        sums.push_back(sum);
    });
    IRRewriter rewriter(&getContext());
    // In walk order, inner sums first: a sum inside another has the outer
    // one for a use, which does not fold, so it is left alone (and dead
    // once the outer one is rewritten, for the canonicalizer).
    for (arith::AddFOp sum : sums)
      moveRowTerms(rewriter, sum);
  }
};

} // namespace
