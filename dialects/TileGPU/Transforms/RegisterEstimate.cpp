//===- RegisterEstimate.cpp - registers a loop's register tiles hold ------===//

#include "dialects/TileGPU/Transforms/RegisterEstimate.h"

#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace kiln::tgpu {

int64_t registersPerThread(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.getElementType().isIntOrFloat())
    return 0;
  int64_t elements = 0;
  if (auto mma = dyn_cast_or_null<MmaLayoutAttr>(tensor.getEncoding()))
    elements = tensor.getNumElements() / (32 * mma.getWarps());
  else if (auto rows = dyn_cast_or_null<RowsLayoutAttr>(tensor.getEncoding()))
    elements = tensor.getDimSize(0) / (8 * rows.getWarps());
  else if (isa_and_nonnull<ColsLayoutAttr>(tensor.getEncoding()))
    elements = tensor.getDimSize(0) / 4;
  int64_t bits = tensor.getElementTypeBitWidth();
  return (elements * bits + 31) / 32;
}

int64_t registersAcrossSteps(scf::ForOp loop) {
  int64_t registers = 0;
  for (Value carried : loop.getRegionIterArgs())
    registers += registersPerThread(carried.getType());
  llvm::SmallPtrSet<Value, 8> liveIn;
  loop.getBody()->walk([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      if (!loop.isDefinedOutsideOfLoop(operand) ||
          !liveIn.insert(operand).second)
        continue;
      Operation *def = operand.getDefiningOp();
      if (isa_and_nonnull<tile::SplatOp>(def))
        continue;
      if (auto broadcast = dyn_cast_or_null<tile::BroadcastOp>(def))
        operand = broadcast.getSource();
      registers += registersPerThread(operand.getType());
    }
  });
  return registers;
}

int64_t largestStepTile(scf::ForOp loop) {
  int64_t largest = 0;
  loop.getBody()->walk([&](Operation *op) {
    for (Value result : op->getResults()) {
      auto tensor = dyn_cast<RankedTensorType>(result.getType());
      if (tensor && tensor.getRank() == 2)
        largest = std::max(largest, registersPerThread(tensor));
    }
  });
  return largest;
}

int64_t stepRegisters(scf::ForOp loop) {
  return registersAcrossSteps(loop) + 2 * largestStepTile(loop) + 32;
}

} // namespace kiln::tgpu
