//===- ReassociateLowRank.cpp - per-row and per-column work first --------===//
//
// On the GPU a 2-D tile's elements are spread over a thread's registers: a
// value that varies along one dimension only (a row's query position, a
// column's key position, a splat) is computed once per row or column a
// thread holds (NVVM merges the equal per-element expressions), while an
// op whose operands vary along both dimensions costs one instruction per
// element. A score_mod such as ALiBi's, `score + slope * (kv - q)`, scaled
// and then multiplied by log2(e) for the base-2 softmax, lowers to four to
// five per-element float ops beside the score's own scaling; reassociated so
// that the per-row and per-column terms combine first, it needs two (one
// add, one fused multiply-add). Where a step's products take about as long
// as a warp's instructions (D = 64 on the H100), those ops are the step's
// time.
//
// The rewrites (float ops on 2-D tiles; ranks by `tile.splat`, `tile.iota`
// and `tile.broadcast`, joined through elementwise ops):
//   - float(a + iota_A) - float(b + iota_B), A != B, and float((a + iota_A)
//     - (b + iota_B)) -> (float(a - b) - float(iota_B)) + float(iota_A):
//     exact while positions stay below 2^24 (as the attn-level
//     attn-split-position-differences assumes), and relative to the tile:
//     no term is larger than |kv - q| plus the tile's size, so the bias
//     rounds as it did;
//   - x * (r + c) with r, c and x each varying along at most one dimension
//     (r + c along both), x * r and x * c along one, and r or c bounded by
//     the tile's size (so that no two large terms cancel) -> x * r + x * c;
//   - (f ± l) * s and (l ± f) * s with s a splat and l a sum of per-row
//     and per-column terms -> f * s ± l * s (l * s ± f * s);
//   - (z * x) * y with x, y and x * y varying along at most one dimension
//     and z along both, or x and y splats and z not -> z * (x * y);
//     splat(a) op splat(b) -> splat(a op b).
// All but the first reassociate floating-point arithmetic; the pass does not
// look at the ops' fastmath flags, so the pipelines run it only under fast
// math.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tile/Transforms/Passes.h"

#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/Tile/Transforms/TileRank.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln::tile {
#define GEN_PASS_DEF_TILEREASSOCIATELOWRANK
#include "dialects/Tile/Transforms/Passes.h.inc"
} // namespace kiln::tile

using namespace mlir;
using namespace kiln;

namespace {

using tile::isTile2D;
using tile::kFullRank;
using tile::kScalarRank;
using tile::Rank;
using tile::rankOf;

bool isLowRank(Value v) { return rankOf(v) != kFullRank; }

/// Whether `v` is bounded by the tile's size, up to a scalar factor: iotas
/// and constants through elementwise ops, times splats (a column's offset in
/// the tile times a slope, not its position in the sequence).
bool isTileBounded(Value v, int depth = 0) {
  Operation *op = v.getDefiningOp();
  if (!op || depth > 16)
    return false;
  if (isa<tile::IotaOp, arith::ConstantOp>(op))
    return true;
  if (auto splat = dyn_cast<tile::SplatOp>(op))
    return isa_and_nonnull<arith::ConstantOp>(splat.getValue().getDefiningOp());
  if (isa<arith::MulFOp>(op))
    for (int i = 0; i < 2; ++i)
      if (rankOf(op->getOperand(i)) == kScalarRank &&
          isTileBounded(op->getOperand(1 - i), depth + 1))
        return true;
  if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0)
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    return isTileBounded(operand, depth + 1);
  });
}

/// A sum of products of per-row, per-column and scalar values (each term
/// cheap): what distributing a multiplication over keeps cheap.
bool isLowRankSum(Value v, int depth = 0) {
  if (depth > 12)
    return false;
  if (isLowRank(v))
    return true;
  Operation *op = v.getDefiningOp();
  if (isa_and_nonnull<arith::AddFOp, arith::SubFOp>(op))
    return isLowRankSum(op->getOperand(0), depth + 1) &&
           isLowRankSum(op->getOperand(1), depth + 1);
  if (isa_and_nonnull<arith::NegFOp>(op))
    return isLowRankSum(op->getOperand(0), depth + 1);
  if (isa_and_nonnull<arith::MulFOp>(op))
    return (isLowRankSum(op->getOperand(0), depth + 1) &&
            isLowRank(op->getOperand(1))) ||
           (isLowRankSum(op->getOperand(1), depth + 1) &&
            isLowRank(op->getOperand(0)));
  return false;
}

/// `a + iota dim d` (either order) on an index tile: (a, d).
std::optional<std::pair<Value, int64_t>> matchPosition(Value v) {
  auto add = v.getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    auto iota = add->getOperand(i).getDefiningOp<tile::IotaOp>();
    auto splat = add->getOperand(1 - i).getDefiningOp<tile::SplatOp>();
    if (iota && splat && splat.getValue().getType().isIndex())
      return std::make_pair(splat.getValue(), int64_t(iota.getDim()));
  }
  return std::nullopt;
}

/// The index tile under `sitofp(index_cast(x))`, or null: into f32 or f64
/// through integers of 32 bits or more, where positions below 2^24 convert
/// and subtract exactly (narrower types would round or wrap).
Value positionsConverted(Value v) {
  auto toFloat = v.getDefiningOp<arith::SIToFPOp>();
  if (!toFloat || (!getElementTypeOrSelf(toFloat.getType()).isF32() &&
                   !getElementTypeOrSelf(toFloat.getType()).isF64()))
    return {};
  auto cast = toFloat.getIn().getDefiningOp<arith::IndexCastOp>();
  if (!cast ||
      getElementTypeOrSelf(cast.getType()).getIntOrFloatBitWidth() < 32)
    return {};
  return cast.getIn();
}

/// float(iota dim d) of `like`'s shape through the same integer type.
Value floatIota(PatternRewriter &rewriter, Location loc, RankedTensorType like,
                Type intElement, RankedTensorType indexType, int64_t dim) {
  Value iota = tile::IotaOp::create(rewriter, loc, indexType, dim);
  Value ints = arith::IndexCastOp::create(rewriter, loc,
                                          indexType.clone(intElement), iota);
  return arith::SIToFPOp::create(rewriter, loc, like, ints);
}

/// (float(a - b) - float(iota_B)) + float(iota_A) for positions a + iota_A
/// and b + iota_B along different dimensions: the same value as float((a +
/// iota_A) - (b + iota_B)), exactly, below 2^24.
Value relativePositions(PatternRewriter &rewriter, Location loc,
                        RankedTensorType type, Type intElement,
                        RankedTensorType indexType, std::pair<Value, int64_t> a,
                        std::pair<Value, int64_t> b) {
  Value diff = arith::SubIOp::create(rewriter, loc, a.first, b.first);
  Value diffInt = arith::IndexCastOp::create(rewriter, loc, intElement, diff);
  Value diffFloat =
      arith::SIToFPOp::create(rewriter, loc, type.getElementType(), diffInt);
  Value splat = tile::SplatOp::create(rewriter, loc, type, diffFloat);
  Value rowsOrCols = arith::SubFOp::create(
      rewriter, loc, splat,
      floatIota(rewriter, loc, type, intElement, indexType, b.second));
  return arith::AddFOp::create(
      rewriter, loc, rowsOrCols,
      floatIota(rewriter, loc, type, intElement, indexType, a.second));
}

/// float(a + iota_A) - float(b + iota_B).
struct RelativePositionDifference : OpRewritePattern<arith::SubFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::SubFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isTile2D(op.getResult()))
      return failure();
    Value lhs = positionsConverted(op.getLhs());
    Value rhs = positionsConverted(op.getRhs());
    if (!lhs || !rhs)
      return failure();
    auto a = matchPosition(lhs), b = matchPosition(rhs);
    // The integer types the two conversions went through (both checked).
    Type intElement = getElementTypeOrSelf(
        op.getLhs().getDefiningOp<arith::SIToFPOp>().getIn());
    if (!a || !b || a->second == b->second ||
        intElement != getElementTypeOrSelf(
                          op.getRhs().getDefiningOp<arith::SIToFPOp>().getIn()))
      return failure();
    rewriter.replaceOp(
        op, relativePositions(rewriter, op.getLoc(),
                              cast<RankedTensorType>(op.getType()), intElement,
                              cast<RankedTensorType>(lhs.getType()), *a, *b));
    return success();
  }
};

/// float((a + iota_A) - (b + iota_B)).
struct RelativeConvertedDifference : OpRewritePattern<arith::SIToFPOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::SIToFPOp op,
                                PatternRewriter &rewriter) const override {
    if (!isTile2D(op.getResult()))
      return failure();
    Value ints = positionsConverted(op.getResult());
    auto sub = ints ? ints.getDefiningOp<arith::SubIOp>() : nullptr;
    if (!sub)
      return failure();
    auto a = matchPosition(sub.getLhs()), b = matchPosition(sub.getRhs());
    if (!a || !b || a->second == b->second)
      return failure();
    Type intElement = getElementTypeOrSelf(op.getIn());
    rewriter.replaceOp(
        op, relativePositions(rewriter, op.getLoc(),
                              cast<RankedTensorType>(op.getType()), intElement,
                              cast<RankedTensorType>(ints.getType()), *a, *b));
    return success();
  }
};

/// Whether distributing `factor` over `sum` (an add or a subtract) takes
/// per-element work out:
///   - x * (r + c), r, c and x each cheap, r + c not: the product moves
///     onto the cheap terms;
///   - (f + l) * s, s a splat, l a sum of cheap terms: l * s is then taken
///     apart by the first case, and f * s folds into f's own scaling.
bool worthDistributing(Operation *sum, Value factor) {
  Value a = sum->getOperand(0), b = sum->getOperand(1);
  Rank ra = rankOf(a), rb = rankOf(b), rx = rankOf(factor);
  if (ra != kFullRank && rb != kFullRank && (ra | rb) == kFullRank &&
      rx != kFullRank) {
    // Both products must stay cheap (a per-row factor times a per-column
    // term would be a product per element again), and one term must be
    // bounded by the tile: two large terms that cancel (positions the first
    // rewrite could not make relative, say) would, multiplied apart, each
    // round at their own size rather than at the size of the difference.
    return (rx | ra) != kFullRank && (rx | rb) != kFullRank &&
           (isTileBounded(a) || isTileBounded(b));
  }
  // A splat over a sum one of whose terms is a per-element sum of cheap
  // terms, which the first case then takes apart.
  return rx == kScalarRank && ((ra == kFullRank && isLowRankSum(a)) ||
                               (rb == kFullRank && isLowRankSum(b)));
}

/// (a ± b) * x -> a * x ± b * x where worthDistributing says so.
struct DistributeOverSum : OpRewritePattern<arith::MulFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::MulFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isTile2D(op.getResult()))
      return failure();
    for (int i = 0; i < 2; ++i) {
      Value sum = op->getOperand(i), factor = op->getOperand(1 - i);
      Operation *def = sum.getDefiningOp();
      if (!isa_and_nonnull<arith::AddFOp, arith::SubFOp>(def) ||
          !sum.hasOneUse() || !worthDistributing(def, factor))
        continue;
      // The products keep the multiplication's flags, the sum its own.
      auto flags = op.getFastmath();
      Location loc = op.getLoc();
      Value lhs = arith::MulFOp::create(rewriter, loc, def->getOperand(0),
                                        factor, flags);
      Value rhs = arith::MulFOp::create(rewriter, loc, def->getOperand(1),
                                        factor, flags);
      if (auto add = dyn_cast<arith::AddFOp>(def))
        rewriter.replaceOpWithNewOp<arith::AddFOp>(op, lhs, rhs,
                                                   add.getFastmath());
      else
        rewriter.replaceOpWithNewOp<arith::SubFOp>(
            op, lhs, rhs, cast<arith::SubFOp>(def).getFastmath());
      return success();
    }
    return failure();
  }
};

/// (z * x) * y -> z * (x * y), x and y cheap, z not (or x and y splats).
struct GroupCheapFactors : OpRewritePattern<arith::MulFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::MulFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isTile2D(op.getResult()))
      return failure();
    for (int i = 0; i < 2; ++i) {
      auto inner = op->getOperand(i).getDefiningOp<arith::MulFOp>();
      Value y = op->getOperand(1 - i);
      if (!inner || !inner->hasOneUse() || !isLowRank(y))
        continue;
      for (int j = 0; j < 2; ++j) {
        Value z = inner->getOperand(j), x = inner->getOperand(1 - j);
        // x * y must stay cheap: a per-row times a per-column factor would
        // be a product per element again. A cheap z gains where x and y are
        // splats: one product per row or column instead of two (ALiBi's
        // float(col) · slope · log2 e).
        bool splats = rankOf(x) == kScalarRank && rankOf(y) == kScalarRank &&
                      rankOf(z) != kScalarRank;
        if ((isLowRank(z) && !splats) || !isLowRank(x) ||
            (rankOf(x) | rankOf(y)) == kFullRank)
          continue;
        auto flags = op.getFastmath();
        Value cheap = arith::MulFOp::create(rewriter, op.getLoc(), x, y, flags);
        rewriter.replaceOpWithNewOp<arith::MulFOp>(op, z, cheap, flags);
        return success();
      }
    }
    return failure();
  }
};

/// splat(a) op splat(b) -> splat(a op b).
template <typename Op> struct FoldSplats : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    auto a = op.getLhs().template getDefiningOp<tile::SplatOp>();
    auto b = op.getRhs().template getDefiningOp<tile::SplatOp>();
    if (!a || !b)
      return failure();
    Value scalar = Op::create(rewriter, op.getLoc(), a.getValue(), b.getValue(),
                              op.getFastmath());
    rewriter.replaceOpWithNewOp<tile::SplatOp>(op, op.getType(), scalar);
    return success();
  }
};

struct TileReassociateLowRank
    : kiln::tile::impl::TileReassociateLowRankBase<TileReassociateLowRank> {
  void runOnOperation() override {
    // Differences of positions first, relative to the tile, so that the
    // multiplications distributed afterwards never meet absolute positions.
    RewritePatternSet positions(&getContext());
    positions.add<RelativePositionDifference, RelativeConvertedDifference>(
        &getContext());
    // An optimisation: what the driver did not finish (it gives up after
    // its iteration limit) leaves correct IR, so that is no failure.
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    (void)applyPatternsGreedily(getOperation(), std::move(positions), config);
    RewritePatternSet patterns(&getContext());
    patterns
        .add<DistributeOverSum, GroupCheapFactors, FoldSplats<arith::MulFOp>,
             FoldSplats<arith::AddFOp>, FoldSplats<arith::SubFOp>>(
            &getContext());
    (void)applyPatternsGreedily(getOperation(), std::move(patterns), config);
  }
};

} // namespace
