//===- StepValues.cpp - a loop step's scalars computed for another step ---===//

#include "dialects/TileGPU/Transforms/StepValues.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln::tgpu {

bool recomputable(scf::ForOp loop, Value v, bool *speculatable) {
  if (loop.isDefinedOutsideOfLoop(v) || v == loop.getInductionVar())
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || def->getNumRegions())
    return false;
  if (!isPure(def)) {
    if (!speculatable || !isMemoryEffectFree(def))
      return false;
    *speculatable = false;
  }
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return recomputable(loop, operand, speculatable);
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

void eraseIfDead(ArrayRef<Value> values) {
  // Values, not ops, on the worklist: an op is looked at only while its
  // value may still be live, and a dead op is erased once (after it, its
  // results are no longer on the list).
  SmallVector<Value> work(values.begin(), values.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || !isOpTriviallyDead(def))
      continue;
    for (Value operand : def->getOperands())
      work.push_back(operand);
    for (Value result : def->getResults())
      llvm::erase(work, result);
    def->erase();
  }
}

} // namespace kiln::tgpu
