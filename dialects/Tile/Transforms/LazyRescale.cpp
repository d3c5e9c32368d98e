//===- LazyRescale.cpp - the online softmax's maximum moved in steps ------===//
//
// The online softmax keeps, per row, a running maximum m, the sum l of
// exp2(s - m) and the accumulator acc = sum exp2(s - m) v; when a KV step
// raises m, l and acc are multiplied by exp2(m_old - m_new). On the GPU
// that is one multiply per accumulator element per step (64 per thread at
// D = 128, 128 at D = 256), although after the first steps a row's maximum
// rarely grows. Nothing but the range of the exponentials needs m to be the
// true maximum: l, acc and the final log-sum-exp m + log2 l are exact for any
// reference value they share. So the reference moves only when the step's
// maximum exceeds it by more than a threshold t (FlashAttention-4's
// conditional rescaling): exponentials stay at most 2^t, and in most steps
// the factor exp2(m_old - m_old) is exactly 1, which the GPU schedule can
// skip (tgpu-skip-unit-scales).
//
//===----------------------------------------------------------------------===//

#include "dialects/Tile/Transforms/Passes.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln::tile {
#define GEN_PASS_DEF_TILELAZYRESCALE
#include "dialects/Tile/Transforms/Passes.h.inc"
} // namespace kiln::tile

using namespace mlir;
using namespace kiln;

namespace {

/// Whether v is a splat of -inf (the empty row's maximum).
bool isNegInfSplat(Value v) {
  std::optional<APFloat> value = tile::splatFloatConstant(v);
  return value && value->isInfinity() && value->isNegative();
}

/// Whether `use` compares its value with -inf (the reference is -inf exactly
/// when the maximum is).
bool isNegInfTest(OpOperand &use) {
  auto cmp = dyn_cast<arith::CmpFOp>(use.getOwner());
  return cmp && isNegInfSplat(cmp->getOperand(1 - use.getOperandNumber()));
}

/// Whether `use` is the operand `lhs ? minuend : subtrahend` of a
/// subtraction that only exponents read (and not both operands).
bool isExponentOperand(OpOperand &use, bool lhs) {
  auto sub = dyn_cast<arith::SubFOp>(use.getOwner());
  return sub && sub.getLhs() != sub.getRhs() &&
         use.get() == (lhs ? sub.getLhs() : sub.getRhs()) &&
         llvm::all_of(sub->getUsers(), llvm::IsaPred<math::Exp2Op>);
}

/// Whether every use of a maximum (or of a value derived from it by the
/// empty-row guard or a broadcast) reads it as a softmax's reference: the
/// subtrahend of an exponent, or a -inf test. `yield` (with the operand
/// number the maximum may take there) admits the loop's own yield.
bool readAsReference(Value v, Operation *yield = nullptr,
                     unsigned yieldOperand = 0) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (user == yield && use.getOperandNumber() == yieldOperand)
      continue;
    if (isNegInfTest(use) || isExponentOperand(use, /*lhs=*/false))
      continue;
    if (auto select = dyn_cast<arith::SelectOp>(user)) {
      if (use.get() == select.getCondition() || !readAsReference(select))
        return false;
      continue;
    }
    if (!isa<tile::BroadcastOp>(user) || !readAsReference(user->getResult(0)))
      return false;
  }
  return true;
}

bool loopReadsAsReference(scf::ForOp loop, unsigned i);

/// Whether every use of a KV loop's final maximum is one the reference
/// serves as well: the log-sum-exp m + log2 l, a -inf test, or the start
/// of the next KV loop (whose steps relate to whatever maximum they start
/// from), provided that loop reads its own maximum only as a reference.
bool finalReadAsReference(Value result) {
  for (OpOperand &use : result.getUses()) {
    Operation *user = use.getOwner();
    if (isNegInfTest(use))
      continue;
    if (auto loop = dyn_cast<scf::ForOp>(user)) {
      if (use.getOperandNumber() < loop.getNumControlOperands() ||
          !loopReadsAsReference(
              loop, use.getOperandNumber() - loop.getNumControlOperands()))
        return false;
      continue;
    }
    auto add = dyn_cast<arith::AddFOp>(user);
    if (!add || !add->getOperand(1 - use.getOperandNumber())
                     .getDefiningOp<math::Log2Op>())
      return false;
  }
  return true;
}

/// Whether the carried maximum m (the previous step's reference) is read
/// only by the step's maximum `max`, as the minuend of an exponent (the
/// correction factor exp2(m - m_new)) or in a -inf test: a reference where
/// the loop read a maximum serves those as well.
bool carriedReadAsReference(BlockArgument m, Operation *max) {
  return llvm::all_of(m.getUses(), [&](OpOperand &use) {
    return use.getOwner() == max || isNegInfTest(use) ||
           isExponentOperand(use, /*lhs=*/true);
  });
}

/// The step's maximum m_new = max(m, x) that a KV loop yields in place of
/// its carried f32 row vector m (iteration argument i), or null.
arith::MaximumFOp stepMaximum(scf::ForOp loop, unsigned i) {
  BlockArgument m = loop.getRegionIterArg(i);
  auto type = dyn_cast<RankedTensorType>(m.getType());
  if (!loop->hasAttr(tile::attrs::kKvLoop) || !type || type.getRank() != 1 ||
      !type.getElementType().isF32())
    return {};
  auto max = loop.getYieldedValues()[i].getDefiningOp<arith::MaximumFOp>();
  if (!max || (max.getLhs() != m && max.getRhs() != m) ||
      max->getBlock() != loop.getBody())
    return {};
  return max;
}

/// Whether KV loop `loop` carries a running maximum as iteration argument i
/// and reads it, in the step and after the loop, only as a reference.
bool loopReadsAsReference(scf::ForOp loop, unsigned i) {
  arith::MaximumFOp max = stepMaximum(loop, i);
  return max &&
         readAsReference(max, loop.getBody()->getTerminator(), i) &&
         carriedReadAsReference(loop.getRegionIterArg(i), max) &&
         finalReadAsReference(loop.getResult(i));
}

struct TileLazyRescale
    : kiln::tile::impl::TileLazyRescaleBase<TileLazyRescale> {
  using TileLazyRescaleBase::TileLazyRescaleBase;

  void runOnOperation() override {
    if (!(threshold >= 0.0) || threshold > 15.0) {
      // Exponentials up to 2^t: fp16 probabilities overflow above 2^15.
      getOperation()->emitError()
          << "tile-lazy-rescale: threshold " << threshold.getValue()
          << " is outside [0, 15]";
      return signalPassFailure();
    }
    if (threshold == 0.0)
      return; // the reference is the maximum itself
    // Every loop is checked before any is rewritten: the checks of one loop
    // read the loops after it.
    SmallVector<std::pair<scf::ForOp, unsigned>> maxima;
    getOperation()->walk([&](scf::ForOp loop) {
      for (unsigned i = 0, e = loop.getNumRegionIterArgs(); i < e; ++i)
        if (loopReadsAsReference(loop, i))
          maxima.push_back({loop, i});
    });
    for (auto [loop, i] : maxima)
      rewrite(loop, i);
  }

  /// m_ref = m_new - m > t ? m_new : m in place of m_new = max(m, x). The
  /// difference, not m + t: rounding m + t up could let the exponentials
  /// exceed 2^t. With m = -inf it is +inf (a finite maximum moves the
  /// reference) or NaN (both -inf: the reference stays).
  void rewrite(scf::ForOp loop, unsigned i) {
    arith::MaximumFOp max = stepMaximum(loop, i);
    BlockArgument m = loop.getRegionIterArg(i);
    OpBuilder b(max->getContext());
    // The threshold's splat before the loop, the comparison in the step.
    b.setInsertionPoint(loop);
    Location loc = max.getLoc();
    Value t = tile::SplatOp::create(
        b, loc, m.getType(),
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(threshold)));
    b.setInsertionPointAfter(max);
    Value growth = arith::SubFOp::create(b, loc, max, m);
    Value grows =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, growth, t);
    auto reference = arith::SelectOp::create(b, loc, grows, max, m);
    max.getResult().replaceAllUsesExcept(
        reference, SmallPtrSet<Operation *, 2>{growth.getDefiningOp(),
                                                reference});
  }
};

} // namespace
