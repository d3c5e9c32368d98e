//===- GuardDivision.cpp - integer division by zero in mods gives 0 -------===//
//
// arith's integer division and remainder by zero are undefined: the CPU
// backend's code traps on them (SIGFPE kills the process running the
// kernel, a Python interpreter included) and a GPU returns an unspecified
// value. The float64 reference (ModInterpreter) defines them as 0, so the
// mods' divisions get a divisor that cannot be zero and a zero result where
// it was.
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

namespace {

bool isDivision(Operation *op) {
  return isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
             arith::FloorDivSIOp, arith::CeilDivSIOp>(op);
}

/// Rewrites `op` (a division of lhs by rhs) so that a zero rhs divides by 1
/// and the result is 0.
void guard(Operation *op) {
  Value divisor = op->getOperand(1);
  APInt constant;
  if (matchPattern(divisor, m_ConstantInt(&constant)) && !constant.isZero())
    return;
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type type = divisor.getType();
  Value zero = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  Value one =
      arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 1));
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor, zero);
  Value safe = arith::SelectOp::create(b, loc, isZero, one, divisor);
  op->setOperand(1, safe);
  b.setInsertionPointAfter(op);
  Value result = op->getResult(0);
  auto select = arith::SelectOp::create(b, loc, isZero, zero, result);
  result.replaceAllUsesExcept(select, select);
}

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
