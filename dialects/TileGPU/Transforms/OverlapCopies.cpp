//===- OverlapCopies.cpp - issue staged copies early ----------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUOVERLAPCOPIES
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln::tgpu;

namespace {

/// barrier; copy_async; async_wait {pending = 0}; barrier
struct StagedCopy {
  BarrierOp before;
  CopyAsyncOp copy;
  AsyncWaitOp wait;
  BarrierOp after;
};

SmallVector<StagedCopy> findStagedCopies(Block &block) {
  SmallVector<StagedCopy> found;
  for (Operation &op : block) {
    auto copy = dyn_cast<CopyAsyncOp>(op);
    if (!copy)
      continue;
    auto before = dyn_cast_or_null<BarrierOp>(copy->getPrevNode());
    auto wait = dyn_cast_or_null<AsyncWaitOp>(copy->getNextNode());
    if (!before || !wait || wait.getPending() != 0)
      continue;
    auto after = dyn_cast_or_null<BarrierOp>(wait->getNextNode());
    if (after)
      found.push_back({before, copy, wait, after});
  }
  return found;
}

/// Whether any op from `from` (exclusive) to `to` (exclusive), nested regions
/// included, uses `buffer`.
bool usedBetween(Value buffer, Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    bool uses = false;
    op->walk([&](Operation *nested) {
      if (llvm::is_contained(nested->getOperands(), buffer))
        uses = true;
    });
    if (uses)
      return true;
  }
  return false;
}

/// Whether ops strictly between `from` and `to` (nested included) may write
/// memory: the moved copy must not read global data written there.
bool writesBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    bool writes = false;
    op->walk([&](Operation *nested) {
      if (isa<BarrierOp, AsyncWaitOp>(nested))
        return;
      auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
      if (!effects ? !isMemoryEffectFree(nested)
                   : effects.hasEffect<MemoryEffects::Write>())
        writes = true;
    });
    if (writes)
      return true;
  }
  return false;
}

/// A buffer the pass can reason about: a shared_alloc used only by copies
/// and mmas (no views that could alias it).
SharedAllocOp plainBuffer(Value buffer) {
  auto alloc = buffer.getDefiningOp<SharedAllocOp>();
  if (!alloc)
    return {};
  for (Operation *user : buffer.getUsers())
    if (!isa<CopyAsyncOp, MmaOp>(user))
      return {};
  return alloc;
}

/// Whether two shared buffers' byte ranges overlap.
bool overlap(SharedAllocOp a, SharedAllocOp b) {
  auto bytes = [](SharedAllocOp op) {
    MemRefType type = op.getType();
    SmallVector<int64_t> strides;
    int64_t offset;
    (void)type.getStridesAndOffset(strides, offset);
    return type.getDimSize(0) * strides[0] *
           (type.getElementTypeBitWidth() / 8);
  };
  int64_t aStart = a.getOffset(), bStart = b.getOffset();
  return aStart < bStart + bytes(b) && bStart < aStart + bytes(a);
}

/// Whether every operand of `op` is available right after `point`.
bool operandsAvailableAfter(Operation *op, Operation *point,
                            DominanceInfo &dominance) {
  return llvm::all_of(op->getOperands(), [&](Value v) {
    return dominance.properlyDominates(v, point) || v.getDefiningOp() == point;
  });
}

struct TileGPUOverlapCopies
    : public kiln::tgpu::impl::TileGPUOverlapCopiesBase<TileGPUOverlapCopies> {
  void runOnOperation() override {
    DominanceInfo dominance(getOperation());
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks) {
      SmallVector<StagedCopy> copies = findStagedCopies(*block);
      // Pair each staged copy with the next one, at most once each.
      for (size_t i = 0; i + 1 < copies.size(); i += 2) {
        StagedCopy &first = copies[i], &second = copies[i + 1];
        Value buffer = second.copy.getDest();
        SharedAllocOp firstAlloc = plainBuffer(first.copy.getDest());
        SharedAllocOp secondAlloc = plainBuffer(buffer);
        if (!firstAlloc || !secondAlloc || overlap(firstAlloc, secondAlloc) ||
            usedBetween(buffer, first.copy, second.before) ||
            writesBetween(first.copy, second.before) ||
            !operandsAvailableAfter(second.copy, first.copy, dominance)) {
          --i; // try the second with its successor
          continue;
        }
        second.copy->moveAfter(first.copy);
        first.wait.setPending(1);
        second.before.erase();
      }
    }
  }
};

} // namespace
