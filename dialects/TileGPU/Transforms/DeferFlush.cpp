//===- DeferFlush.cpp - a step's dQ share added during the next step ------===//
//
// The atomic dK/dV kernel adds each step's dQ share into L2: the warps
// store it into a staging buffer, fence the stores for the async proxy
// and issue bulk reductions. The fence waits for the stores to complete,
// and the step has nothing else to do by then (Nsight Compute: the fence
// is the consumers' largest single stall, 6-8% of the D = 64 and 128
// kernels' samples). A step later the stores are long complete, and the
// warps are waiting for the next step's first products anyway.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/DeferFlush.h"

#include "dialects/TileGPU/Transforms/RegisterEstimate.h"
#include "dialects/TileGPU/Transforms/StepValues.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln::tgpu {

/// Where the flush of the previous step's tile goes in `body`: before the
/// first product wait ahead of `stage`, else at the start.
static Operation *flushPoint(Block *body, Operation *stage) {
  for (Operation &op : *body) {
    if (&op == stage)
      break;
    if (isa<WarpgroupWaitOp>(op))
      return &op;
  }
  return &body->front();
}

/// Flushes the tile `add` staged in the step whose induction variable is
/// `iv` (its view and offsets computed again at `b`) where `pending` holds.
static void flushStep(OpBuilder &b, scf::ForOp loop, CoreReduceAddOp add,
                      Value iv, Value pending) {
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), iv);
  SmallVector<Value> offsets;
  for (Value offset : add.getOffsets())
    offsets.push_back(recompute(b, loop, offset, mapping));
  Value desc = recompute(b, loop, add.getDesc(), mapping);
  CoreFlushOp::create(b, add.getLoc(), add.getStaging(), desc, offsets, pending,
                      TypeAttr::get(add.getValue().getType()));
}

/// Splits `add` into its stage and the flushes: the previous step is the
/// one at iv - step (none in the first, iv == lb), the loop's last at
/// lb + ((ub - lb - 1) / step) step (none where ub <= lb, where the span is
/// taken as 0 so that the index arithmetic cannot overflow): no state is
/// carried across steps.
static void splitIntoStageAndFlushes(CoreReduceAddOp add, scf::ForOp loop) {
  Location loc = add.getLoc();
  OpBuilder b(add);
  Value iv = loop.getInductionVar(), lb = loop.getLowerBound(),
        ub = loop.getUpperBound(), step = loop.getStep();
  b.setInsertionPoint(flushPoint(loop.getBody(), add));
  Value previous = arith::SubIOp::create(b, loc, iv, step);
  Value pending =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, iv, lb);
  flushStep(b, loop, add, previous, pending);
  b.setInsertionPointAfter(loop);
  Value ran = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value span = arith::SelectOp::create(
      b, loc, ran,
      arith::SubIOp::create(b, loc, arith::SubIOp::create(b, loc, ub, lb), one),
      zero);
  Value steps = arith::DivUIOp::create(b, loc, span, step);
  Value last = arith::AddIOp::create(
      b, loc, lb, arith::MulIOp::create(b, loc, steps, step));
  flushStep(b, loop, add, last, ran);
  b.setInsertionPoint(add);
  CoreStageOp::create(b, loc, add.getValue(), add.getStaging());
  SmallVector<Value> read(add.getOffsets());
  read.push_back(add.getDesc());
  add.erase();
  eraseIfDead(read);
}

bool deferCoreFlush(CoreReduceAddOp add) {
  auto loop = dyn_cast<scf::ForOp>(add->getParentOp());
  if (!loop || !loop.getInductionVar().getType().isIndex() ||
      loop.getUnsignedCmp())
    return false;
  // Another use of the staging buffer in the step (a second add of the
  // same tile type shares it) would write it between this add's stage and
  // its flush.
  Value staging = add.getStaging();
  if (llvm::any_of(staging.getUsers(), [&](Operation *user) {
        return user != add.getOperation() && loop->isAncestor(user);
      }))
    return false;
  // A flush anywhere but right after its stage makes ptxas spill where the
  // step's registers are short: every atomic dK/dV kernel at D = 128
  // (64-372 bytes of local memory; 43 reloads per step in plain's), whose
  // estimate (288-352) exceeds the budget (240); at D = 64 (160-224 of 240)
  // only ALiBi's, 8 bytes, and it measured faster still.
  auto ws = add->getParentOfType<WarpSpecializeOp>();
  if (!ws || !ws.getConsumer().isAncestor(add->getParentRegion()) ||
      stepRegisters(loop) > static_cast<int64_t>(ws.getConsumerRegisters()))
    return false;
  if (!recomputable(loop, add.getDesc()) ||
      !llvm::all_of(add.getOffsets(),
                    [&](Value offset) { return recomputable(loop, offset); }))
    return false;
  splitIntoStageAndFlushes(add, loop);
  return true;
}

} // namespace kiln::tgpu
