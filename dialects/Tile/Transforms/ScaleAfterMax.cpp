//===- ScaleAfterMax.cpp - a row's maximum before its positive scale -----===//
//
// The online softmax scales each score (by scale · log2 e, or log2 e after
// a score_mod), takes each row's maximum of the scaled scores and
// exponentiates the scaled scores minus it. The GPU compiler fuses the
// exponent's scaling and subtraction into one FMA per element, but the
// maximum still needs the scaled scores, so each element is also
// multiplied once on its own. Multiplying by a positive constant commutes
// with the maximum exactly (rounding is monotonic: the largest product is
// the product of the largest element), so the maximum can be taken over the
// unscaled scores and scaled once per row; a masked step's select of the
// scaled score against -inf likewise becomes a select of the score (-inf
// times a positive scale is -inf). The maxima are bit for bit the same, and
// so is everything on the CPU and in unmasked GPU steps; in a masked GPU
// step the exponent's scaling and subtraction, which the select used to
// keep apart, become one FMA as in the unmasked steps (one rounding instead
// of two: the last bit may differ from the written order's). One
// multiplication per element goes.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tile/Transforms/Passes.h"

#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kiln::tile {
#define GEN_PASS_DEF_TILESCALEAFTERMAX
#include "dialects/Tile/Transforms/Passes.h.inc"
} // namespace kiln::tile

using namespace mlir;
using namespace kiln;

namespace {

bool isPositiveFinite(const std::optional<APFloat> &k) {
  return k && k->isFiniteNonZero() && !k->isNegative();
}

/// `x * k` with k a positive finite splat constant.
struct PositiveScale {
  Value x, splat;
  APFloat k;
};
std::optional<PositiveScale> matchPositiveScale(Value v) {
  auto mul = v.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    std::optional<APFloat> k = tile::splatFloatConstant(mul->getOperand(1 - i));
    if (isPositiveFinite(k))
      return PositiveScale{mul->getOperand(i), mul->getOperand(1 - i), *k};
  }
  return std::nullopt;
}

/// reduce max (x * k) -> (reduce max x) * k.
struct MaxBeforeScale : OpRewritePattern<tile::ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tile::ReduceOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getKind() != tile::ReduceKind::max)
      return failure();
    auto scaled = matchPositiveScale(op.getSource());
    if (!scaled)
      return failure();
    Location loc = op.getLoc();
    Value max =
        tile::ReduceOp::create(rewriter, loc, op.getType(), op.getKindAttr(),
                               scaled->x, op.getDimAttr());
    Value k = tile::SplatOp::create(
        rewriter, loc, op.getType(),
        arith::ConstantOp::create(
            rewriter, loc,
            rewriter.getFloatAttr(op.getType().getElementType(), scaled->k)));
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, max, k);
    return success();
  }
};

/// select(c, x * k, -inf) -> select(c, x, -inf) * k, where a row maximum
/// reads the select (elsewhere, the backward's masked scores, there is no
/// multiplication to save).
struct SelectBeforeScale : OpRewritePattern<arith::SelectOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::SelectOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || !isa<FloatType>(type.getElementType()))
      return failure();
    if (llvm::none_of(op->getUsers(), [](Operation *user) {
          auto reduce = dyn_cast<tile::ReduceOp>(user);
          return reduce && reduce.getKind() == tile::ReduceKind::max;
        }))
      return failure();
    auto fill = tile::splatFloatConstant(op.getFalseValue());
    auto scaled = matchPositiveScale(op.getTrueValue());
    if (!fill || !fill->isInfinity() || !fill->isNegative() || !scaled)
      return failure();
    Value select =
        arith::SelectOp::create(rewriter, op.getLoc(), op.getCondition(),
                                scaled->x, op.getFalseValue());
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, select, scaled->splat);
    return success();
  }
};

struct TileScaleAfterMax
    : kiln::tile::impl::TileScaleAfterMaxBase<TileScaleAfterMax> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MaxBeforeScale, SelectBeforeScale>(&getContext());
    // An optimisation: a driver that stops early leaves correct IR.
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace
