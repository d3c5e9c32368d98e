//===- Rings.cpp - positions in a ring of shared buffers ------------------===//

#include "dialects/TileGPU/Transforms/Rings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace kiln::tgpu {

RingPosition ringPosition(OpBuilder &b, Location loc, Value n, int64_t stages) {
  Value s = arith::ConstantIndexOp::create(b, loc, stages);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value stage = arith::RemUIOp::create(b, loc, n, s);
  Value parity =
      arith::AndIOp::create(b, loc, arith::DivUIOp::create(b, loc, n, s), one);
  return {stage, parity};
}

Value stepNumber(OpBuilder &b, Location loc, Value iv, Value lb, Value step,
                 Value base) {
  return arith::AddIOp::create(
      b, loc, base,
      arith::DivUIOp::create(b, loc, arith::SubIOp::create(b, loc, iv, lb),
                             step));
}

Value stageBuffer(OpBuilder &b, Location loc, ArrayRef<Value> stages,
                  Value stage) {
  Value current = stages[0];
  for (size_t i = 1; i < stages.size(); ++i) {
    Value is = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, stage,
        arith::ConstantIndexOp::create(b, loc, int64_t(i)));
    current = arith::SelectOp::create(b, loc, is, stages[i], current);
  }
  return current;
}

} // namespace kiln::tgpu
