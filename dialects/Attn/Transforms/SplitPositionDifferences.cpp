//===- SplitPositionDifferences.cpp - floats of positions, not of diffs ---===//
//
// A score_mod such as ALiBi's computes slope * float(kv - q). Lowered over a
// tile, float(kv - q) is one integer subtraction and one conversion per
// element; float(kv) - float(q) converts values that depend on the column
// (or the row) alone, which the GPU compiler computes once per column (or
// row) a thread holds, leaving one float subtraction per element. Both are
// exact while the positions stay below 2^24, so the rewrite changes no
// result there.
//
//===----------------------------------------------------------------------===//

#include "dialects/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln::attn {
#define GEN_PASS_DEF_ATTNSPLITPOSITIONDIFFERENCES
#include "dialects/Attn/Transforms/Passes.h.inc"
} // namespace kiln::attn

using namespace mlir;
using namespace kiln::attn;

namespace {

/// Whether `v` is one of the mod's index arguments (batch, head, query,
/// key: positions in tensors, so below 2^24 in any problem that fits).
bool isPosition(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || !arg.getType().isIndex())
    return false;
  return isa_and_nonnull<AttentionOp>(arg.getOwner()->getParentOp());
}

/// sitofp(index_cast(subi(a, b))) -> subf(sitofp(index_cast(a)),
/// sitofp(index_cast(b))) for positions a and b.
struct SplitDifference : OpRewritePattern<arith::SIToFPOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::SIToFPOp op,
                                PatternRewriter &rewriter) const override {
    auto cast = op.getIn().getDefiningOp<arith::IndexCastOp>();
    auto sub = cast ? cast.getIn().getDefiningOp<arith::SubIOp>() : nullptr;
    if (!sub || !isPosition(sub.getLhs()) || !isPosition(sub.getRhs()))
      return failure();
    // Exact: integers below 2^24 convert exactly, and so does their
    // difference.
    if (!isa<Float32Type, Float64Type>(op.getType()))
      return failure();
    Location loc = op.getLoc();
    Type wide = cast.getType();
    auto toFloat = [&](Value position) -> Value {
      Value integer = arith::IndexCastOp::create(rewriter, loc, wide, position);
      return arith::SIToFPOp::create(rewriter, loc, op.getType(), integer);
    };
    Value lhs = toFloat(sub.getLhs());
    Value rhs = toFloat(sub.getRhs());
    rewriter.replaceOpWithNewOp<arith::SubFOp>(op, lhs, rhs);
    return success();
  }
};

struct AttnSplitPositionDifferences
    : public kiln::attn::impl::AttnSplitPositionDifferencesBase<
          AttnSplitPositionDifferences> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitDifference>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    SmallVector<AttentionOp> specs;
    getOperation()->walk([&](AttentionOp op) { specs.push_back(op); });
    for (AttentionOp spec : specs)
      for (Region &region : spec->getRegions())
        if (!region.empty() && failed(applyPatternsGreedily(region, frozen)))
          return signalPassFailure();
  }
};

} // namespace
