//===- PipelineProducts.cpp - overlap the softmax with the previous P V ---===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUPIPELINEPRODUCTS
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln::tgpu;

namespace {

/// A KV loop on wgmma: its two products, where P V's result is yielded,
/// and the copy of V.
struct ProductLoop {
  scf::ForOp loop;
  WarpgroupMmaOp qk, pv;
  unsigned accIndex;
  CopyAsyncOp vCopy;
};

/// Whether `a` and `b` pick the same two values by the same condition, the
/// other way round (this step's buffer and the next step's).
bool swappedPair(Value a, Value b) {
  auto sa = a.getDefiningOp<arith::SelectOp>();
  auto sb = b.getDefiningOp<arith::SelectOp>();
  return sa && sb && sa.getCondition() == sb.getCondition() &&
         sa.getTrueValue() == sb.getFalseValue() &&
         sa.getFalseValue() == sb.getTrueValue();
}

std::optional<ProductLoop> match(scf::ForOp loop) {
  Block &body = *loop.getBody();
  SmallVector<WarpgroupMmaOp> products;
  SmallVector<CopyAsyncOp> copies;
  bool nested = false;
  loop.getBody()->walk([&](Operation *op) {
    if (auto p = dyn_cast<WarpgroupMmaOp>(op)) {
      products.push_back(p);
      nested |= p->getBlock() != &body;
    }
    if (auto c = dyn_cast<CopyAsyncOp>(op)) {
      copies.push_back(c);
      nested |= c->getBlock() != &body;
    }
  });
  if (nested || products.size() != 2 || copies.size() != 2)
    return std::nullopt;
  ProductLoop p{loop, products[0], products[1], 0, nullptr};
  if (!p.qk.getTransposeRhs() || p.pv.getTransposeRhs() || p.qk.getAsync() ||
      p.pv.getAsync() || p.qk.getPredicate() || p.pv.getPredicate() ||
      !isa<RankedTensorType>(p.pv.getLhs().getType()))
    return std::nullopt;
  // P V's result goes to the yield alone, as the accumulator.
  if (!p.pv->hasOneUse() || !isa<scf::YieldOp>(*p.pv->getUsers().begin()))
    return std::nullopt;
  OpOperand &yielded = *p.pv->getUses().begin();
  p.accIndex = yielded.getOperandNumber();
  // V is double-buffered: the copy whose buffer is the other of P V's.
  for (CopyAsyncOp copy : copies)
    if (swappedPair(copy.getDest(), p.pv.getRhs()))
      p.vCopy = copy;
  if (!p.vCopy || !p.vCopy->isBeforeInBlock(p.qk))
    return std::nullopt;
  // The accumulator is read (rescaled) only after Q K^T.
  for (Operation *user : loop.getRegionIterArgs()[p.accIndex].getUsers()) {
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!top || !p.qk->isBeforeInBlock(top))
      return std::nullopt;
  }
  return p;
}

void rotate(ProductLoop &p) {
  scf::ForOp loop = p.loop;
  Location loc = p.pv.getLoc();
  IRRewriter rewriter(loop.getContext());
  auto pType = cast<RankedTensorType>(p.pv.getLhs().getType());
  auto vSelect = p.pv.getRhs().getDefiningOp<arith::SelectOp>();

  // Carried: P and its V buffer, starting as zeros and some V buffer (the
  // first step issues no product with them).
  rewriter.setInsertionPoint(loop);
  Value zero = arith::ConstantOp::create(
      rewriter, loc, rewriter.getFloatAttr(pType.getElementType(), 0.0));
  Value zeros = kiln::tile::SplatOp::create(rewriter, loc, pType, zero);
  Value pLhs = p.pv.getLhs(), pRhs = p.pv.getRhs(), pAcc = p.pv.getAcc();
  auto rotated = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, ValueRange{zeros, vSelect.getFalseValue()},
      /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        return SmallVector<Value>{pLhs, pRhs};
      }));
  Block &body = *rotated.getBody();
  unsigned n = rotated.getNumRegionIterArgs();
  BlockArgument acc = rotated.getRegionIterArgs()[p.accIndex];
  BlockArgument prevP = rotated.getRegionIterArgs()[n - 2];
  BlockArgument prevV = rotated.getRegionIterArgs()[n - 1];
  // The yield carries the rescaled accumulator; P V moves to the next step.
  auto yield = cast<scf::YieldOp>(body.getTerminator());
  yield->setOperand(p.accIndex, pAcc);
  p.pv.erase();

  // Step j: Q K_j^T, then P_{j-1} V_{j-1} (none in the first step), wait
  // for Q K_j^T only.
  rewriter.setInsertionPointToStart(&body);
  Value notFirst =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                            rotated.getInductionVar(), rotated.getLowerBound());
  p.qk.setAsync(true);
  rewriter.setInsertionPointAfter(p.qk);
  auto previous = WarpgroupMmaOp::create(
      rewriter, loc, acc.getType(), prevP, prevV, acc, notFirst,
      /*transpose_rhs=*/false, /*async=*/true);
  auto scores = WarpgroupWaitOp::create(rewriter, loc, p.qk.getType(),
                                        p.qk.getResult(), int64_t(1));
  p.qk.getResult().replaceAllUsesExcept(scores.getResult(), scores);

  // Wait for P V before the accumulator's first reader (the rescale).
  Operation *firstReader = nullptr;
  for (Operation *user : acc.getUsers()) {
    if (user == previous.getOperation())
      continue;
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!firstReader || top->isBeforeInBlock(firstReader))
      firstReader = top;
  }
  rewriter.setInsertionPoint(firstReader ? firstReader : yield.getOperation());
  auto output = WarpgroupWaitOp::create(rewriter, loc, previous.getType(),
                                        previous.getResult(), int64_t(0));
  acc.replaceAllUsesExcept(output.getResult(), previous);
  // Every warpgroup is done with V_{j-1}'s buffer: load V_{j+1} into it.
  BarrierOp::create(rewriter, loc);
  rewriter.clone(*p.vCopy);
  p.vCopy.erase();

  // After the loop: its last P V, once every copy has landed.
  rewriter.setInsertionPointAfter(rotated);
  if (auto drain = dyn_cast_or_null<AsyncWaitOp>(rotated->getNextNode()))
    rewriter.setInsertionPointAfter(drain);
  else
    AsyncWaitOp::create(rewriter, loc, 0);
  FenceAsyncSharedOp::create(rewriter, loc);
  BarrierOp::create(rewriter, loc);
  Value ran = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                    rotated.getLowerBound(),
                                    rotated.getUpperBound());
  Value accOut = rotated.getResult(p.accIndex);
  auto last = WarpgroupMmaOp::create(
      rewriter, loc, accOut.getType(), rotated.getResult(n - 2),
      rotated.getResult(n - 1), accOut, ran, /*transpose_rhs=*/false,
      /*async=*/false);
  accOut.replaceAllUsesExcept(last.getResult(), last);
}

struct TileGPUPipelineProducts
    : public kiln::tgpu::impl::TileGPUPipelineProductsBase<
          TileGPUPipelineProducts> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      if (auto p = match(loop))
        rotate(*p);
  }
};

} // namespace
