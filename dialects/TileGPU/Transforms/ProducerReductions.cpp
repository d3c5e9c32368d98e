//===- ProducerReductions.cpp - dQ shares added by the producer warp ------===//
//
// The atomic dK/dV kernel's consumers spent 28% of their samples in the
// step's dQ share after its product (Nsight Compute, D = 128): the staging
// stores, the fence that waits for them, and the bulk reductions each warp's
// lane 0 issued, waiting for the copy engine to take them. FlashAttention-3's
// arrangement leaves the consumers the stores, the fence and one barrier
// arrival, and has a producer warp issue the reductions; a second staging
// buffer lets the consumers stage a step's share while the copy engine still
// reads the previous one.
//
// The producer's warp already runs the kernel's loops, issuing each step's
// loads. After step n's loads it takes step n - 1's share: by then the
// consumers have finished step n - 2 (with two ring stages, the slot the
// loads waited for), and step n - 1's share is staged when they finish that
// step, which is also when the loads of step n + 1 can go. So waiting for
// the share delays no load; what can is lane 0's wait, after issuing share
// n - 1, for share n - 2's reductions to have read their buffer (issued a
// step earlier, so normally long done). Shares are counted across the loops
// (the same count on both sides): share m uses buffer m mod 2, its "full"
// barrier (the consumers' arrivals) and its "empty" one, which the producer
// arrives on once share m's own reductions have read the buffer (after it
// issued share m + 1).
//
// Freedom from deadlock rests on the consumers staging each step's share
// before they wait for a later step's loads (the producer waits for share
// n - 1 before it issues step n + 1's loads): the add stays where the
// lowering put it, in its own step.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/ProducerReductions.h"

#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"
#include "dialects/TileGPU/Transforms/Rings.h"
#include "dialects/TileGPU/Transforms/SharedLayout.h"
#include "dialects/TileGPU/Transforms/StepValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace kiln::tgpu {

namespace {

/// An add, the consumers' loop it is in, and the producer's loop over the
/// same range.
struct Site {
  CoreReduceAddOp add;
  scf::ForOp loop, producer;
};

/// Where the adds write through a view each step makes (GQA's group steps:
/// the view of the step's query head), the producer makes it again: `op`,
/// the first add's view, cloned with the operands at `varying` (those that
/// differ between the steps or the loops) computed for the step the way
/// the offsets are. Empty where all adds write through one view made
/// before the loops, which the producer makes once.
struct StepView {
  Operation *op = nullptr;
  SmallVector<unsigned> varying;

  explicit operator bool() const { return op; }
};

/// The barriers' indices: full[slot], then empty[slot].
constexpr int64_t kFull = 0, kEmpty = 2;
/// The lanes that run a producer region and arrive on "empty": the
/// emitter runs it on the producer warpgroup's first warp.
constexpr int64_t kProducerLanes = 32;

/// Whether `v` is defined inside `scope`'s regions.
bool definedIn(Operation *scope, Value v) {
  Operation *owner = v.getDefiningOp();
  if (!owner)
    owner = cast<BlockArgument>(v).getOwner()->getParentOp();
  return scope->isAncestor(owner) && !(owner == scope && v.getDefiningOp());
}

/// Whether the producer region can compute `v` (recomputable in `loop`'s
/// step): everything it reads outside the step is defined outside `ws`.
bool producerComputable(scf::ForOp loop, Value v, Operation *ws) {
  if (v == loop.getInductionVar())
    return true;
  if (loop.isDefinedOutsideOfLoop(v))
    return !definedIn(ws, v);
  return llvm::all_of(v.getDefiningOp()->getOperands(), [&](Value operand) {
    return producerComputable(loop, operand, ws);
  });
}

/// Whether `v` can be computed again outside `ws` from values defined
/// outside it, by pure ops of `block` (the consumers' region: a view made
/// before their loops).
bool hoistable(Block *block, Value v, Operation *ws) {
  if (!definedIn(ws, v))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != block || def->getNumRegions() || !isPure(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return hoistable(block, operand, ws);
  });
}

/// Clones the ops of `ws` that `v` (hoistable) needs at `b`.
Value hoist(OpBuilder &b, Value v, Operation *ws, IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(v))
    return mapped;
  if (!definedIn(ws, v))
    return v;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    hoist(b, operand, ws, mapping);
  return b.clone(*def, mapping)->getResult(cast<OpResult>(v).getResultNumber());
}

Value constant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Whether the adds of `sites` write through views their steps make, all
/// by the same op but for operands the producer can compute from its
/// induction variables (and integers, so that a loop's first step can take
/// the previous loop's last); `view` gets the op and those operands, and
/// `speculatable` is cleared where they may be computed for steps that ran
/// only (recomputable).
bool stepViews(ArrayRef<Site> sites, Operation *ws, StepView &view,
               bool &speculatable) {
  Site front = sites.front();
  Operation *first = front.add.getDesc().getDefiningOp();
  if (!first || first->getNumResults() != 1 || first->getNumRegions())
    return false;
  for (Site site : sites) {
    Operation *def = site.add.getDesc().getDefiningOp();
    if (!def || def->getBlock() != site.loop.getBody() ||
        !recomputable(site.loop, site.add.getDesc(), &speculatable) ||
        !OperationEquivalence::isEquivalentTo(
            first, def, OperationEquivalence::ignoreValueEquivalence, nullptr,
            OperationEquivalence::IgnoreLocations))
      return false;
  }
  for (auto [k, operand] : llvm::enumerate(first->getOperands())) {
    bool same = llvm::all_of(sites, [&](Site site) {
      return site.add.getDesc().getDefiningOp()->getOperand(k) == operand;
    });
    if (same && !definedIn(ws, operand))
      continue;
    for (Site site : sites) {
      Value v = site.add.getDesc().getDefiningOp()->getOperand(k);
      if (!v.getType().isIntOrIndex() || v.getType() != operand.getType() ||
          !producerComputable(site.loop, v, ws))
        return false;
    }
    view.varying.push_back(k);
  }
  view.op = first;
  return true;
}

/// The values `site`'s add reads that its step computes: its view's varying
/// operands (`view`, where the steps make views), its offsets, then its turn
/// where it has one (tgpu-ordered-adds).
SmallVector<Value> stepOperands(Site site, const StepView &view) {
  SmallVector<Value> values;
  if (view) {
    Operation *def = site.add.getDesc().getDefiningOp();
    for (unsigned k : view.varying)
      values.push_back(def->getOperand(k));
  }
  llvm::append_range(values, site.add.getOffsets());
  if (Value turn = site.add.getTurn())
    values.push_back(turn);
  return values;
}

/// `site`'s stepOperands computed again for the step whose induction
/// variable is `iv`.
SmallVector<Value> offsetsAt(OpBuilder &b, Site site, Value iv,
                             const StepView &view) {
  IRMapping mapping;
  mapping.map(site.loop.getInductionVar(), iv);
  SmallVector<Value> offsets;
  for (Value value : stepOperands(site, view))
    offsets.push_back(recompute(b, site.loop, value, mapping));
  return offsets;
}

} // namespace

bool issueFromProducer(func::FuncOp kernel, ArrayRef<CoreReduceAddOp> adds,
                       int64_t sharedLimit) {
  if (adds.empty())
    return false;
  auto ws = adds.front()->getParentOfType<WarpSpecializeOp>();
  if (!ws || ws->getBlock() != &kernel.front())
    return false;
  Block *consumers = &ws.getConsumer().front();
  Block *producer = &ws.getProducer().front();
  CoreReduceAddOp front = adds.front();
  // The adds take turns (tgpu-ordered-adds) all or none.
  if (llvm::any_of(adds, [&](CoreReduceAddOp add) {
        return bool(add.getTurn()) != bool(front.getTurn());
      }))
    return false;
  bool turns = bool(front.getTurn());
  // Whether the offsets and views can be computed for any step (else for
  // steps that ran only).
  bool speculatable = true;
  Value staging = front.getStaging();
  Value desc = front.getDesc();
  auto stagingAlloc = staging.getDefiningOp<SharedAllocOp>();
  if (!stagingAlloc || stagingAlloc->getBlock() != &kernel.front())
    return false;
  // One view made before the loops, or one per step (checked below).
  bool oneView = hoistable(consumers, desc, ws) &&
                 llvm::all_of(adds, [&](CoreReduceAddOp add) {
                   return add.getDesc() == desc;
                 });
  // Nothing but these adds may write the buffers, and nothing else in the
  // producer may commit bulk groups (its read waits count the groups).
  for (Operation *user : staging.getUsers())
    if (!llvm::is_contained(adds, dyn_cast<CoreReduceAddOp>(user)))
      return false;
  bool groups = false;
  ws.getProducer().walk([&](Operation *op) {
    groups |= isa<BulkReduceAddOp, TmaReduceAddOp, TmaStoreOp, CoreReduceAddOp,
                  CoreFlushOp, CoreAddStagedOp>(op);
  });
  if (groups)
    return false;

  // One add per loop at the top of the consumers, each loop's range run by
  // a loop of the producer, in the same order.
  SmallVector<scf::ForOp> producerLoops;
  for (Operation &op : *producer)
    if (auto loop = dyn_cast<scf::ForOp>(op))
      producerLoops.push_back(loop);
  SmallVector<Site> sites;
  size_t next = 0;
  for (CoreReduceAddOp add : adds) {
    auto loop = dyn_cast<scf::ForOp>(add->getParentOp());
    if (!loop || loop->getBlock() != consumers || add.getStaging() != staging ||
        !loop.getInductionVar().getType().isIndex() || loop.getUnsignedCmp() ||
        llvm::any_of(sites, [&](const Site &s) { return s.loop == loop; }))
      return false;
    // (The turn, tgpu-ordered-adds', is computed again with the offsets.)
    SmallVector<Value> computed(add.getOffsets());
    if (Value turn = add.getTurn())
      computed.push_back(turn);
    for (Value value : computed)
      if (!recomputable(loop, value, &speculatable) ||
          !producerComputable(loop, value, ws))
        return false;
    while (next < producerLoops.size() &&
           (producerLoops[next].getLowerBound() != loop.getLowerBound() ||
            producerLoops[next].getUpperBound() != loop.getUpperBound() ||
            producerLoops[next].getStep() != loop.getStep()))
      ++next;
    if (next == producerLoops.size())
      return false;
    sites.push_back({add, loop, producerLoops[next++]});
  }
  llvm::sort(sites, [](const Site &a, const Site &b) {
    return a.loop->isBeforeInBlock(b.loop);
  });
  for (size_t i = 1; i < sites.size(); ++i)
    if (!sites[i - 1].producer->isBeforeInBlock(sites[i].producer))
      return false;
  StepView view;
  if (!oneView && !stepViews(sites, ws, view, speculatable))
    return false;

  // The second buffer and the four barriers, where they cost no CTA.
  MLIRContext *ctx = kernel.getContext();
  Location loc = ws.getLoc();
  auto stagingType = cast<MemRefType>(staging.getType());
  auto barrierType = MemRefType::get({4}, IntegerType::get(ctx, 64),
                                     MemRefLayoutAttrInterface(),
                                     stagingType.getMemorySpace());
  auto ctasAttr = kernel->getAttrOfType<IntegerAttr>(attrs::kCtasPerSM);
  auto warpsAttr = kernel->getAttrOfType<IntegerAttr>(attrs::kNumWarps);
  if (!warpsAttr)
    return false;
  OpBuilder b(stagingAlloc);
  b.setInsertionPointAfter(stagingAlloc);
  Value second = SharedAllocOp::create(b, loc, stagingType, 0);
  Value barriers = SharedAllocOp::create(b, loc, barrierType, 0);
  if (failed(layoutSharedBuffers(kernel, 0, "the producer's reductions")))
    return false;
  int64_t bytes =
      kernel->getAttrOfType<IntegerAttr>(attrs::kSharedBytes).getInt();
  if (sharedLimit > 0 &&
      ctasFitting(bytes, sharedLimit) < (ctasAttr ? ctasAttr.getInt() : 1)) {
    second.getDefiningOp()->erase();
    barriers.getDefiningOp()->erase();
    (void)layoutSharedBuffers(kernel, 0, "the kernel's buffers");
    return false;
  }

  // The barriers, initialised with the kernel's others (before the CTA
  // barrier that publishes them, else with one of their own).
  BarrierOp publish;
  for (Operation *op = ws->getPrevNode(); op; op = op->getPrevNode())
    if ((publish = dyn_cast<BarrierOp>(op)))
      break;
  if (publish && publish->isBeforeInBlock(barriers.getDefiningOp()))
    publish = nullptr;
  b.setInsertionPoint(publish ? publish.getOperation() : ws.getOperation());
  int64_t consumerThreads = 32 * warpsAttr.getInt();
  for (int64_t slot = 0; slot < 2; ++slot) {
    MbarrierInitOp::create(b, loc, barriers, constant(b, loc, kFull + slot),
                           consumerThreads);
    MbarrierInitOp::create(b, loc, barriers, constant(b, loc, kEmpty + slot),
                           kProducerLanes);
  }
  if (!publish)
    BarrierOp::create(b, loc);

  // Each loop's first share's number: the steps of the loops before it.
  b.setInsertionPoint(ws);
  SmallVector<Value> bases;
  Value total = constant(b, loc, 0);
  for (Site site : sites) {
    bases.push_back(total);
    scf::ForOp loop = site.loop;
    Value span = arith::MaxSIOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, loop.getUpperBound(),
                              loop.getLowerBound()),
        constant(b, loc, 0));
    total = arith::AddIOp::create(
        b, loc, total,
        arith::CeilDivSIOp::create(b, loc, span, loop.getStep()));
  }

  // The consumers: wait for the buffer, stage, fence, arrive.
  for (auto [site, base] : llvm::zip(sites, bases)) {
    CoreReduceAddOp add = site.add;
    scf::ForOp loop = site.loop;
    b.setInsertionPoint(add);
    Location at = add.getLoc();
    auto [slot, parity] =
        ringPosition(b, at,
                     stepNumber(b, at, loop.getInductionVar(),
                                loop.getLowerBound(), loop.getStep(), base),
                     2);
    // A fresh barrier passes a wait for parity 1: the first two shares
    // find their buffers free.
    MbarrierWaitOp::create(
        b, at, barriers,
        arith::AddIOp::create(b, at, slot, constant(b, at, kEmpty)),
        arith::XOrIOp::create(b, at, parity, constant(b, at, 1)));
    CoreStageOp::create(b, at, add.getValue(),
                        stageBuffer(b, at, {staging, second}, slot));
    // The fence waits for the stores. Moved into the next step (as
    // defer-flush moves it) with the arrival, it measured 1.5-8% slower at
    // D = 64 for plain, causal and ALiBi (softcap 3-4% faster;
    // performance.md), so it stays here.
    FenceAsyncSharedOp::create(b, at);
    MbarrierArriveOp::create(
        b, at, barriers,
        arith::AddIOp::create(b, at, slot, constant(b, at, kFull)));
  }

  // The producer: its view of the array (or each share's, made with the
  // share), then each share after the next step's loads, the last after the
  // loops.
  b.setInsertionPointToStart(producer);
  Value producerDesc;
  if (!view) {
    IRMapping hoisted;
    producerDesc = hoist(b, desc, ws, hoisted);
  }
  auto take = [&](OpBuilder &b, Location at, Value m, ValueRange offsets) {
    auto [slot, parity] = ringPosition(b, at, m, 2);
    MbarrierWaitOp::create(
        b, at, barriers,
        arith::AddIOp::create(b, at, slot, constant(b, at, kFull)), parity);
    // (offsets: the view's varying operands where the steps make views,
    // the add's, then its turn where it takes turns.)
    Value shareDesc = producerDesc;
    if (view) {
      Operation *made = b.clone(*view.op);
      for (auto [k, operand] : llvm::zip(view.varying, offsets))
        made->setOperand(k, operand);
      shareDesc = made->getResult(0);
      offsets = offsets.drop_front(view.varying.size());
    }
    ValueRange rowCol = turns ? offsets.drop_back() : offsets;
    CoreAddStagedOp::create(b, at, stageBuffer(b, at, {staging, second}, slot),
                            shareDesc, rowCol,
                            turns ? offsets.back() : Value());
    // Share m - 1's reductions have read their buffer: the consumers may
    // stage share m + 1 there.
    BulkWaitReadOp::create(b, at, 1);
    auto released =
        scf::IfOp::create(b, at,
                          arith::CmpIOp::create(b, at, arith::CmpIPredicate::ne,
                                                m, constant(b, at, 0)),
                          /*withElseRegion=*/false);
    OpBuilder inside = OpBuilder::atBlockBegin(released.thenBlock());
    MbarrierArriveOp::create(
        inside, at, barriers,
        arith::SubIOp::create(inside, at, constant(inside, at, kEmpty + 1),
                              slot));
  };
  // The offsets of the share before each loop's first (the last step of
  // the loops before that ran; unread before the first loop). Where they
  // may be computed for steps that ran only, they start as zeros, and what
  // every add reads from outside the split (a column, a view's batch) is
  // read as it is, never carried (carried: the others' positions).
  SmallVector<Value> previous;
  SmallVector<unsigned> carried;
  if (speculatable) {
    previous =
        offsetsAt(b, sites.front(), sites.front().loop.getLowerBound(), view);
  } else {
    for (auto [i, value] : llvm::enumerate(stepOperands(sites.front(), view))) {
      if (!definedIn(ws, value) && llvm::all_of(sites, [&](Site site) {
            return stepOperands(site, view)[i] == value;
          })) {
        previous.push_back(value);
        continue;
      }
      carried.push_back(i);
      previous.push_back(
          arith::ConstantOp::create(b, loc, b.getZeroAttr(value.getType())));
    }
  }
  for (auto [site, base] : llvm::zip(sites, bases)) {
    scf::ForOp loop = site.producer;
    Location at = site.add.getLoc();
    Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
          step = loop.getStep(), iv = loop.getInductionVar();
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value n = stepNumber(b, at, iv, lb, step, base);
    auto pending =
        scf::IfOp::create(b, at,
                          arith::CmpIOp::create(b, at, arith::CmpIPredicate::ne,
                                                n, constant(b, at, 0)),
                          /*withElseRegion=*/false);
    OpBuilder inside = OpBuilder::atBlockBegin(pending.thenBlock());
    Value first =
        arith::CmpIOp::create(inside, at, arith::CmpIPredicate::eq, iv, lb);
    Value shareIv = arith::SubIOp::create(inside, at, iv, step);
    // In a loop's first step, this step's (it runs) rather than one before
    // the loop, where the offsets are not for any step.
    if (!speculatable)
      shareIv = arith::SelectOp::create(inside, at, first, iv, shareIv);
    SmallVector<Value> offsets = offsetsAt(inside, site, shareIv, view);
    for (auto [offset, before] : llvm::zip(offsets, previous))
      if (speculatable || offset != before)
        offset = arith::SelectOp::create(inside, at, first, before, offset);
    take(inside, at,
         arith::SubIOp::create(inside, at, n, constant(inside, at, 1)),
         offsets);
    // After the loop: its last step's offsets where it ran (the span
    // taken as 0 where it did not, so the arithmetic cannot overflow).
    b.setInsertionPointAfter(loop);
    Value ran = arith::CmpIOp::create(b, at, arith::CmpIPredicate::slt, lb, ub);
    Value span = arith::SelectOp::create(
        b, at, ran,
        arith::SubIOp::create(b, at, arith::SubIOp::create(b, at, ub, lb),
                              constant(b, at, 1)),
        constant(b, at, 0));
    Value last = arith::AddIOp::create(
        b, at, lb,
        arith::MulIOp::create(b, at, arith::DivUIOp::create(b, at, span, step),
                              step));
    if (speculatable) {
      SmallVector<Value> lastOffsets = offsetsAt(b, site, last, view);
      for (auto [before, latest] : llvm::zip(previous, lastOffsets))
        before = arith::SelectOp::create(b, at, ran, latest, before);
    } else {
      // Computed only where the loop ran.
      auto pick = [&](ArrayRef<Value> values) {
        return llvm::map_to_vector(carried,
                                   [&](unsigned i) { return values[i]; });
      };
      auto kept = scf::IfOp::create(
          b, at, ran,
          [&](OpBuilder &b, Location at) {
            scf::YieldOp::create(b, at, pick(offsetsAt(b, site, last, view)));
          },
          [&](OpBuilder &b, Location at) {
            scf::YieldOp::create(b, at, pick(previous));
          });
      for (auto [i, result] : llvm::zip(carried, kept.getResults()))
        previous[i] = result;
    }
  }
  // The last share once everything else is issued, then the sums complete
  // before the kernel ends (the next kernel reads them).
  if (!producer->empty() && producer->back().hasTrait<OpTrait::IsTerminator>())
    b.setInsertionPoint(&producer->back());
  else
    b.setInsertionPointToEnd(producer);
  auto any =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                              total, constant(b, loc, 0)),
                        /*withElseRegion=*/false);
  OpBuilder inside = OpBuilder::atBlockBegin(any.thenBlock());
  take(inside, loc,
       arith::SubIOp::create(inside, loc, total, constant(inside, loc, 1)),
       previous);
  BulkWaitOp::create(b, loc);

  llvm::SetVector<Value> read;
  for (Site site : sites) {
    read.insert(site.add.getOffsets().begin(), site.add.getOffsets().end());
    if (Value turn = site.add.getTurn())
      read.insert(turn);
    read.insert(site.add.getDesc());
    site.add.erase();
  }
  eraseIfDead(read.getArrayRef());
  // The consumers issue no bulk operations now, unless something else
  // does: their wait at the end has nothing to wait for.
  bool issues = false;
  ws.getConsumer().walk([&](Operation *op) {
    issues |= isa<BulkReduceAddOp, TmaReduceAddOp, TmaStoreOp, CoreReduceAddOp,
                  CoreFlushOp>(op);
  });
  if (!issues)
    for (Operation &op : llvm::make_early_inc_range(*consumers))
      if (isa<BulkWaitOp>(op))
        op.erase();
  return true;
}

} // namespace kiln::tgpu
