//===- GuardDivision.cpp - integer division by zero in mods gives 0 -------===//
//
// arith's integer division and remainder by zero, and signed INT_MIN / -1,
// are undefined: the CPU backend's code traps on them (SIGFPE kills the
// process running the kernel, a Python interpreter included) and a GPU
// returns an unspecified value. The float64 reference (ModInterpreter)
// defines them (by 0: 0; by -1: the wrapping negation, remainder 0), and the
// mods' divisions get a divisor that is neither and the defined result.
//
//===----------------------------------------------------------------------===//

#include "dialects/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

namespace kiln::attn {
#define GEN_PASS_DEF_ATTNGUARDDIVISION
#include "dialects/Attn/Transforms/Passes.h.inc"
} // namespace kiln::attn

using namespace mlir;
using namespace kiln::attn;

static bool isDivision(Operation *op) {
  return isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
             arith::FloorDivSIOp, arith::CeilDivSIOp>(op);
}

/// Rewrites `op` (lhs divided by rhs) so that it cannot trap: a zero rhs
/// divides by 1 and gives 0; for the signed ops, whose INT_MIN / -1
/// overflows (and traps on x86), a rhs of -1 divides by 1 too and gives the
/// wrapping -lhs (a remainder: 0, which x % 1 already is). The reference
/// (ModInterpreter) defines the same.
static void guard(Operation *op) {
  bool isSigned = isa<arith::DivSIOp, arith::RemSIOp, arith::FloorDivSIOp,
                      arith::CeilDivSIOp>(op);
  bool isRemainder = isa<arith::RemSIOp, arith::RemUIOp>(op);
  Value lhs = op->getOperand(0), divisor = op->getOperand(1);
  APInt constant;
  if (matchPattern(divisor, m_ConstantInt(&constant)) && !constant.isZero() &&
      !(isSigned && constant.isAllOnes()))
    return;
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type type = divisor.getType();
  auto constantOf = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, v));
  };
  Value zero = constantOf(0), one = constantOf(1);
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor, zero);
  Value replaced = isZero, isMinusOne;
  if (isSigned) {
    isMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       divisor, constantOf(-1));
    replaced = arith::OrIOp::create(b, loc, isZero, isMinusOne);
  }
  op->setOperand(1, arith::SelectOp::create(b, loc, replaced, one, divisor));
  b.setInsertionPointAfter(op);
  Value result = op->getResult(0), guarded = result;
  SmallPtrSet<Operation *, 2> selects;
  if (isSigned && !isRemainder) {
    guarded = arith::SelectOp::create(
        b, loc, isMinusOne, arith::SubIOp::create(b, loc, zero, lhs), guarded);
    selects.insert(guarded.getDefiningOp());
  }
  guarded = arith::SelectOp::create(b, loc, isZero, zero, guarded);
  selects.insert(guarded.getDefiningOp());
  result.replaceUsesWithIf(guarded, [&](OpOperand &use) {
    return !selects.contains(use.getOwner());
  });
}

namespace {

struct AttnGuardDivisionPass
    : kiln::attn::impl::AttnGuardDivisionBase<AttnGuardDivisionPass> {
  void runOnOperation() override {
    getOperation().walk([](AttentionOp attention) {
      for (Region *mod : {&attention.getScoreMod(), &attention.getMaskMod()}) {
        SmallVector<Operation *> divisions;
        mod->walk([&](Operation *op) {
          if (isDivision(op))
            divisions.push_back(op);
        });
        for (Operation *op : divisions)
          guard(op);
      }
    });
  }
};

} // namespace
