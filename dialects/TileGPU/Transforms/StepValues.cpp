//===- StepValues.cpp - a loop step's scalars computed for another step ---===//

#include "dialects/TileGPU/Transforms/StepValues.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln::tgpu {

bool recomputable(scf::ForOp loop, Value v) {
  if (loop.isDefinedOutsideOfLoop(v) || v == loop.getInductionVar())
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || def->getNumRegions() ||
      !isPure(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return recomputable(loop, operand);
  });
}

Value recompute(OpBuilder &b, scf::ForOp loop, Value v, IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(v))
    return mapped;
  if (loop.isDefinedOutsideOfLoop(v))
    return v;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    recompute(b, loop, operand, mapping);
  return b.clone(*def, mapping)->getResult(cast<OpResult>(v).getResultNumber());
}

void eraseIfDead(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isOpTriviallyDead(def))
    return;
  SmallVector<Value> operands(def->getOperands());
  def->erase();
  for (Value operand : operands)
    eraseIfDead(operand);
}

} // namespace kiln::tgpu
