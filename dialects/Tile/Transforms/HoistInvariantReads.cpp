//===- HoistInvariantReads.cpp - a loop's reads that no step changes ------===//
//
// A mod's read of a captured tensor at indices fixed for the program (ALiBi's
// slope[h]) is inlined into every KV step. MLIR's loop-invariant code motion
// moves only ops without memory effects, so the read stays in the loop, and
// with it everything computed from it: ALiBi's per-column terms
// (float(col) · slope · log2 e, one product per column a thread holds) were
// computed again each step (and in the backward the read's latency sat in
// front of every step's exponentials). A read of a kernel argument at
// indices defined outside a loop that writes other buffers only (the
// backward's dQ adds, not the capture) reads the same value in every step,
// so it moves before the loop, and loop-invariant code motion then moves
// what depends on it. The kernel's arguments are distinct tensors: a
// capture is never an output or a workspace.
//
// The read then also happens where the loop runs no step. The reads moved
// are a mod's at indices the program fixes (batch, head, constants), which a
// mod reads in every program of that batch and head that computes a score;
// the runtime checks each capture's shape against the problem's.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tile/Transforms/Passes.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace kiln::tile {
#define GEN_PASS_DEF_TILEHOISTINVARIANTREADS
#include "dialects/Tile/Transforms/Passes.h.inc"
} // namespace kiln::tile

using namespace mlir;
using namespace kiln;

namespace {

/// The buffer under `memref`: through tile.view's base and view-like ops'
/// sources, up to a function argument (or whatever else defines it).
Value bufferOf(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (auto view = dyn_cast<tile::ViewOp>(def))
      memref = view.getBase();
    else if (auto viewLike = dyn_cast<ViewLikeOpInterface>(def))
      memref = viewLike.getViewSource();
    else
      break;
  }
  return memref;
}

/// Whether `buffer` (a bufferOf) is one the pass can tell apart from the
/// others: a kernel argument, or memory an op of the kernel allocates. A
/// memref carried by a loop, chosen by a select or an scf.if, or cast
/// from another type could be any of them.
bool isKnownBuffer(Value buffer) {
  if (auto argument = dyn_cast<BlockArgument>(buffer))
    return argument.getOwner()->isEntryBlock() &&
           isa<FunctionOpInterface>(argument.getOwner()->getParentOp());
  auto effects = buffer.getDefiningOp<MemoryEffectOpInterface>();
  return effects && effects.getEffectOnValue<MemoryEffects::Allocate>(buffer);
}

/// The buffers the ops in `loop` may write, or nothing where one writes
/// memory it does not name or the pass cannot tell apart (isKnownBuffer), or
/// has effects it does not declare.
std::optional<SmallVector<Value>> writtenBuffers(LoopLikeOpInterface loop) {
  SmallVector<Value> written;
  // False where the written buffer is not one the pass can tell apart.
  auto write = [&](Value memref) {
    Value buffer = bufferOf(memref);
    written.push_back(buffer);
    return isKnownBuffer(buffer);
  };
  WalkResult result = loop->walk([&](Operation *op) {
    if (op == loop.getOperation())
      return WalkResult::advance();
    // The tile dialect's writes declare their effect on the op; the buffer
    // is the descriptor's (or scatter_add's destination).
    Value dest;
    if (auto store = dyn_cast<tile::StoreOp>(op))
      dest = store.getDesc();
    else if (auto add = dyn_cast<tile::AtomicAddOp>(op))
      dest = add.getDesc();
    else if (auto scatter = dyn_cast<tile::ScatterAddOp>(op))
      dest = scatter.getDest();
    if (dest)
      return write(dest) ? WalkResult::advance() : WalkResult::interrupt();
    auto interface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!interface) {
      // Ops that only hold regions (scf.if, scf.for) speak through theirs.
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    interface.getEffects(effects);
    for (const MemoryEffects::EffectInstance &effect : effects) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
        continue;
      if (!effect.getValue() || !write(effect.getValue()))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return std::nullopt;
  return written;
}

/// Whether `op` is a read that may move out of a loop writing `written`:
/// from a kernel argument none of the writes is to (the arguments are
/// distinct tensors; a capture is never an output or a workspace).
bool isInvariantRead(Operation *op, ArrayRef<Value> written) {
  auto load = dyn_cast<memref::LoadOp>(op);
  if (!load)
    return false;
  Value buffer = bufferOf(load.getMemRef());
  return isa<BlockArgument>(buffer) && isKnownBuffer(buffer) &&
         !llvm::is_contained(written, buffer);
}

struct TileHoistInvariantReads
    : kiln::tile::impl::TileHoistInvariantReadsBase<TileHoistInvariantReads> {
  using Base::Base;
  void runOnOperation() override {
    // Innermost loops first: a read moved out of an inner loop can move on
    // out of an outer one that writes nothing either.
    getOperation()->walk([&](LoopLikeOpInterface loop) {
      if (tile::inKernelBelowHeadDim(loop, minHeadDim))
        return;
      std::optional<SmallVector<Value>> written = writtenBuffers(loop);
      if (!written)
        return;
      moveLoopInvariantCode(
          loop.getLoopRegions(),
          [&](Value value, Region *) {
            return loop.isDefinedOutsideOfLoop(value);
          },
          [&](Operation *op, Region *) {
            return isInvariantRead(op, *written) ||
                   (isMemoryEffectFree(op) && isSpeculatable(op));
          },
          [&](Operation *op, Region *) { loop.moveOutOfLoop(op); });
    });
  }
};

} // namespace
