//===- CombineBeforeWaits.cpp - multiply ready factors before a wait ------===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUCOMBINEBEFOREWAITS
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln::tgpu;

namespace {

/// Per op of one block: the last product or product wait (in block order)
/// that its value depends on within the block, or null where none does.
class Readiness {
public:
  explicit Readiness(Block &block) : block(block) {}

  /// The last product or wait `value` needs, or null (defined before the
  /// block, or from none).
  Operation *of(Value value) {
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != &block)
      return nullptr;
    auto it = cache.find(def);
    if (it != cache.end())
      return it->second;
    Operation *last = isa<WarpgroupMmaOp, WarpgroupWaitOp>(def) ? def : nullptr;
    for (Value operand : def->getOperands())
      last = later(last, of(operand));
    return cache[def] = last;
  }

  /// Of two ops of the block (or null), the later.
  static Operation *later(Operation *a, Operation *b) {
    if (!a || !b)
      return a ? a : b;
    return a->isBeforeInBlock(b) ? b : a;
  }

private:
  Block &block;
  llvm::DenseMap<Operation *, Operation *> cache;
};

/// The op of `block` after which both `a` and `b` exist: the later of their
/// definitions in the block, or null when both come from outside it.
Operation *definedAfter(Block &block, Value a, Value b) {
  auto inBlock = [&](Value v) -> Operation * {
    Operation *def = v.getDefiningOp();
    return def && def->getBlock() == &block ? def : nullptr;
  };
  return Readiness::later(inBlock(a), inBlock(b));
}

/// (p * x) * g with p and g ready before the product or wait x needs:
/// becomes (p * g) * x, p * g computed where p and g are, where that frees
/// registers across the wait: g made in the block for this product only,
/// and p read after the wait by nothing else (but a narrowing, which
/// narrowEarly moves up). Returns p, whose uses moved up, or null.
Value combine(arith::MulFOp outer, Readiness &ready) {
  Block &block = *outer->getBlock();
  for (unsigned inner = 0; inner < 2; ++inner) {
    auto product = outer->getOperand(inner).getDefiningOp<arith::MulFOp>();
    Value g = outer->getOperand(1 - inner);
    Operation *gDef = g.getDefiningOp();
    if (!product || product->getBlock() != &block || !product->hasOneUse() ||
        product.getFastmath() != outer.getFastmath() || !gDef ||
        gDef->getBlock() != &block || !g.hasOneUse())
      continue;
    for (unsigned late = 0; late < 2; ++late) {
      Value x = product->getOperand(late), p = product->getOperand(1 - late);
      Operation *xReady = ready.of(x);
      if (!xReady)
        continue;
      Operation *pgReady = Readiness::later(ready.of(p), ready.of(g));
      if (pgReady && !pgReady->isBeforeInBlock(xReady))
        continue;
      bool pDies = llvm::all_of(p.getUsers(), [&](Operation *user) {
        if (user == product.getOperation() || isa<arith::TruncFOp>(user))
          return true;
        Operation *top = block.findAncestorOpInBlock(*user);
        return top && top->isBeforeInBlock(xReady);
      });
      if (!pDies)
        continue;
      // p * g right after the later of the two (at the block's start when
      // both come from outside it).
      OpBuilder b(outer);
      if (Operation *after = definedAfter(block, p, g))
        b.setInsertionPointAfter(after);
      else
        b.setInsertionPointToStart(&block);
      Value pg =
          arith::MulFOp::create(b, outer.getLoc(), p, g, outer.getFastmath());
      b.setInsertionPoint(outer);
      Value result =
          arith::MulFOp::create(b, outer.getLoc(), pg, x, outer.getFastmath());
      outer.replaceAllUsesWith(result);
      outer.erase();
      product.erase();
      return p;
    }
  }
  return nullptr;
}

/// A narrowing of `p` that is p's last use moves up to p's previous last
/// use (or its definition): p's registers free there, the narrower copy's
/// taken instead.
void narrowEarly(Value p) {
  Operation *def = p.getDefiningOp();
  if (!def)
    return;
  Block *block = def->getBlock();
  for (Operation *user : llvm::make_early_inc_range(p.getUsers())) {
    auto narrow = dyn_cast<arith::TruncFOp>(user);
    if (!narrow || narrow->getBlock() != block)
      continue;
    Operation *last = def;
    bool lastUse = true;
    for (Operation *other : p.getUsers()) {
      if (other == user)
        continue;
      Operation *top = block->findAncestorOpInBlock(*other);
      if (!top || !top->isBeforeInBlock(narrow)) {
        lastUse = false;
        break;
      }
      last = Readiness::later(last, top);
    }
    if (lastUse)
      narrow->moveAfter(last);
  }
}

struct TileGPUCombineBeforeWaits
    : public kiln::tgpu::impl::TileGPUCombineBeforeWaitsBase<
          TileGPUCombineBeforeWaits> {
  void runOnOperation() override {
    getOperation()->walk([&](Block *block) {
      Readiness ready(*block);
      SmallVector<arith::MulFOp> products;
      for (Operation &op : *block)
        if (auto mul = dyn_cast<arith::MulFOp>(op);
            mul && isa<RankedTensorType>(mul.getType()))
          products.push_back(mul);
      SmallVector<Value> moved;
      for (arith::MulFOp mul : products)
        if (Value p = combine(mul, ready))
          moved.push_back(p);
      for (Value p : moved)
        narrowEarly(p);
    });
  }
};

} // namespace
