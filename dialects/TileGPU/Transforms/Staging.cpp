//===- Staging.cpp - shared buffers that register tiles leave through -----===//

#include "dialects/TileGPU/Transforms/Staging.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"
#include "dialects/TileGPU/Transforms/SharedLayout.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace kiln::tgpu {

/// A multiprocessor's registers.
constexpr int64_t kRegistersPerSM = 65536;

Block *stagingRegionEnd(Operation *op, func::FuncOp kernel) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (auto ws = dyn_cast<WarpSpecializeOp>(parent))
      return ws.getConsumer().isAncestor(op->getParentRegion())
                 ? &ws.getConsumer().front()
                 : nullptr;
    if (parent == kernel.getOperation())
      return &kernel.front();
  }
  return nullptr;
}

BlockArgument mappableBase(tile::ViewOp view, func::FuncOp kernel) {
  auto arg = dyn_cast<BlockArgument>(view.getBase());
  if (!arg || arg.getOwner() != &kernel.front())
    return nullptr;
  auto type = cast<MemRefType>(arg.getType());
  if (type.getRank() < 2 || type.getRank() > 5 ||
      !(kernel.getArgAttr(arg.getArgNumber(), tile::attrs::kTensor) ||
        kernel.getArgAttr(arg.getArgNumber(), tile::attrs::kWorkspace)))
    return nullptr;
  return arg;
}

LogicalResult addStagingBuffers(func::FuncOp kernel, ArrayRef<Type> types,
                                int64_t limit, int64_t minRegisters,
                                SmallVectorImpl<SharedAllocOp> &buffers) {
  buffers.clear();
  // (A kernel not laid out yet has no buffers to count.)
  auto laidOut = kernel->getAttrOfType<IntegerAttr>(attrs::kSharedBytes);
  int64_t before = laidOut ? laidOut.getInt() : 0;
  Block &entry = kernel.front();
  OpBuilder b(kernel.getContext());
  b.setInsertionPointToStart(&entry);
  for (Operation &op : entry)
    if (isa<SharedAllocOp>(op))
      b.setInsertionPointAfter(&op);
  for (Type type : types)
    buffers.push_back(
        SharedAllocOp::create(b, kernel.getLoc(), cast<MemRefType>(type), 0));
  if (failed(layoutSharedBuffers(kernel, 0, "the staging buffers")))
    return failure();
  if (limit <= 0)
    return success();
  int64_t after =
      kernel->getAttrOfType<IntegerAttr>(attrs::kSharedBytes).getInt();
  int64_t wanted = ctasFitting(before, limit);
  if (kernel->hasAttr(attrs::kProducerWarps)) {
    auto ctas = kernel->getAttrOfType<IntegerAttr>(attrs::kCtasPerSM);
    wanted = std::min<int64_t>(wanted, ctas ? ctas.getInt() : 1);
  } else if (auto warps =
                 kernel->getAttrOfType<IntegerAttr>(attrs::kNumWarps)) {
    wanted = std::min<int64_t>(
        wanted, kRegistersPerSM / (32 * warps.getInt() * minRegisters));
  }
  if (ctasFitting(after, limit) >= std::max<int64_t>(wanted, 1))
    return success();
  for (SharedAllocOp buffer : buffers)
    buffer.erase();
  buffers.clear();
  return layoutSharedBuffers(kernel, 0, "the kernel's buffers");
}

void waitAtEnds(ArrayRef<Block *> ends, Location loc) {
  OpBuilder b(loc.getContext());
  for (Block *end : ends) {
    if (!end->empty() && end->back().hasTrait<OpTrait::IsTerminator>())
      b.setInsertionPoint(&end->back());
    else
      b.setInsertionPointToEnd(end);
    // One wait covers every copy before it (another pass's, already there).
    Block::iterator point = b.getInsertionPoint();
    if (point != end->begin() && isa<BulkWaitOp>(*std::prev(point)))
      continue;
    BulkWaitOp::create(b, loc);
  }
}

} // namespace kiln::tgpu
