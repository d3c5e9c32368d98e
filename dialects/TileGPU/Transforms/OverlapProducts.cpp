//===- OverlapProducts.cpp - issue independent products together ----------===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUOVERLAPPRODUCTS
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln::tgpu;

namespace {

/// Whether `op` may run before a product issued after it in program order:
/// no region, and no effect but reads (a ring wait only waits).
bool movableAcross(Operation *op) {
  if (isa<MbarrierWaitOp>(op))
    return true;
  if (op->getNumRegions() != 0 || isa<WarpgroupMmaOp>(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::all_of(list, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Read>(e.getEffect());
  });
}

/// The first op of `block` at or after `from` that uses `value` (directly
/// or inside its regions), or null.
Operation *firstUse(Value value, Block *block, Operation *from) {
  Operation *first = nullptr;
  for (Operation *user : value.getUsers()) {
    Operation *top = block->findAncestorOpInBlock(*user);
    if (!top || top->isBeforeInBlock(from))
      continue;
    if (!first || top->isBeforeInBlock(first))
      first = top;
  }
  return first;
}

/// Reads `product`'s result through a wait placed before `before`.
void waitBefore(OpBuilder &b, WarpgroupMmaOp product, Operation *before,
                int64_t pending) {
  b.setInsertionPoint(before);
  auto wait = WarpgroupWaitOp::create(b, product.getLoc(), product.getType(),
                                      product.getResult(), pending);
  product.getResult().replaceAllUsesExcept(wait.getResult(), wait);
}

/// The shared allocations `buffer` may be (through arith.select and
/// memref.subview), appended to `allocs`; false when it may be another.
bool allocsOf(Value buffer, SmallVectorImpl<SharedAllocOp> &allocs) {
  if (auto alloc = buffer.getDefiningOp<SharedAllocOp>()) {
    allocs.push_back(alloc);
    return true;
  }
  if (auto select = buffer.getDefiningOp<arith::SelectOp>())
    return allocsOf(select.getTrueValue(), allocs) &&
           allocsOf(select.getFalseValue(), allocs);
  if (auto view = buffer.getDefiningOp<memref::SubViewOp>())
    return allocsOf(view.getSource(), allocs);
  return false;
}

/// A buffer the threads write (P, dS) is published and reused around
/// synchronous products (tgpu-warp-specialize's barriers assume the read
/// completed): products reading one stay synchronous. Written through the
/// same value, or through any value that may be one of its allocations
/// (selects, subviews).
bool threadWritten(Value operand) {
  if (llvm::any_of(operand.getUsers(),
                   [](Operation *user) { return isa<StoreSharedOp>(user); }))
    return true;
  SmallVector<SharedAllocOp> allocs;
  if (!allocsOf(operand, allocs))
    return false;
  auto scope = allocs.front()->getParentOfType<FunctionOpInterface>();
  if (!scope)
    return false;
  bool written = false;
  scope->walk([&](StoreSharedOp store) {
    SmallVector<SharedAllocOp> dest;
    written |= !allocsOf(store.getDest(), dest) ||
               llvm::any_of(dest, [&](SharedAllocOp alloc) {
                 return llvm::is_contained(allocs, alloc);
               });
  });
  return written;
}
bool readsThreadWritten(WarpgroupMmaOp product) {
  return threadWritten(product.getLhs()) || threadWritten(product.getRhs());
}

/// Moves the ring releases from `from` up to `wait` to just after `wait`, in
/// order: a slot is released only once the products reading it completed.
void releasesAfter(Operation *from, Operation *wait) {
  SmallVector<Operation *> releases;
  for (Operation *op = from; op != wait; op = op->getNextNode())
    if (isa<MbarrierArriveOp>(op))
      releases.push_back(op);
  Operation *after = wait;
  for (Operation *release : releases) {
    release->moveAfter(after);
    after = release;
  }
}

/// Issues `product` asynchronously and reads it through a wait right before
/// `user`; the ring releases in between move after that wait.
void issueAsyncUntil(WarpgroupMmaOp product, Operation *user) {
  product.setAsync(true);
  OpBuilder b(product->getContext());
  waitBefore(b, product, user, 0);
  releasesAfter(product->getNextNode(), user->getPrevNode());
}

/// Overlaps `second` with `first` (the product before it in its block) if
/// the ops between allow it.
bool overlap(WarpgroupMmaOp first, WarpgroupMmaOp second) {
  if (first.getAsync() || second.getAsync())
    return false;
  for (WarpgroupMmaOp product : {first, second})
    if (readsThreadWritten(product))
      return false;
  Block *block = second->getBlock();
  // What lies between: ring waits move up with the product, as do the
  // effect-free ops computing its operands; anything else must not be
  // something it depends on.
  llvm::SetVector<Operation *> moved;
  SmallVector<Operation *> between;
  for (Operation *op = first->getNextNode(); op != second;
       op = op->getNextNode()) {
    if (!movableAcross(op))
      return false;
    between.push_back(op);
    if (isa<MbarrierWaitOp>(op))
      moved.insert(op);
  }
  // Operands defined between the two, transitively.
  SmallVector<Value> worklist(second->getOperands());
  for (Operation *wait : moved)
    worklist.append(wait->getOperands().begin(), wait->getOperands().end());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (def == first.getOperation())
      return false; // it depends on the first product
    if (!def || def->getBlock() != block || !first->isBeforeInBlock(def) ||
        !def->isBeforeInBlock(second) || moved.contains(def))
      continue;
    moved.insert(def);
    worklist.append(def->getOperands().begin(), def->getOperands().end());
  }
  if (!firstUse(first.getResult(), block, first) ||
      !firstUse(second.getResult(), block, second))
    return false;

  // Move (in program order) right after `first`, then issue both async.
  Operation *at = first;
  for (Operation *op : between)
    if (moved.contains(op)) {
      op->moveAfter(at);
      at = op;
    }
  second->moveAfter(at);
  Operation *firstUser = firstUse(first.getResult(), block, second);
  Operation *secondUser = firstUse(second.getResult(), block, second);
  first.setAsync(true);
  second.setAsync(true);
  OpBuilder b(second->getContext());
  // Groups complete in issue order: the first wait leaves the second in
  // flight when it comes first.
  bool firstEarlier = !secondUser->isBeforeInBlock(firstUser);
  waitBefore(b, first, firstUser, firstEarlier ? 1 : 0);
  waitBefore(b, second, secondUser, 0);
  // Releases of ring slots go after the last wait.
  Operation *lastWait = (firstEarlier ? secondUser : firstUser)->getPrevNode();
  releasesAfter(second->getNextNode(), lastWait);
  return true;
}

/// Issues a synchronous `product` asynchronously and reads it through a wait
/// at its first use, when work that does not depend on it lies in between
/// (dropout's random bits after S's product): that work runs while the
/// tensor cores do. Only effect-free ops, reads and ring waits may lie in
/// between; ring releases move after the wait.
bool waitAtFirstUse(WarpgroupMmaOp product) {
  if (product.getAsync() || readsThreadWritten(product))
    return false;
  Block *block = product->getBlock();
  Operation *user = firstUse(product.getResult(), block, product);
  if (!user)
    return false;
  bool work = false;
  for (Operation *op = product->getNextNode(); op != user;
       op = op->getNextNode()) {
    if (isa<MbarrierArriveOp>(op))
      continue;
    if (!movableAcross(op))
      return false;
    work |= !isa<MbarrierWaitOp>(op) && !op->hasTrait<OpTrait::ConstantLike>();
  }
  if (!work)
    return false;
  issueAsyncUntil(product, user);
  return true;
}

/// Whether `op` (without regions) may write one of `allocs`: a store, a
/// copy, a staging buffer of an add into global memory, or any write effect
/// on a shared buffer not provably distinct (mbarrier words aside: rank-1
/// i64, never a product's operand). A product writes no shared memory (its
/// write effect is the group it commits); ops without effects (barriers,
/// waits) write none, nor do the tile dialect's adds and stores into
/// global descriptors.
bool mayWrite(Operation *op, ArrayRef<SharedAllocOp> allocs) {
  auto hits = [&](Value buffer) {
    SmallVector<SharedAllocOp> written;
    return !allocsOf(buffer, written) ||
           llvm::any_of(written, [&](SharedAllocOp alloc) {
             return llvm::is_contained(allocs, alloc);
           });
  };
  if (isa<WarpgroupMmaOp>(op))
    return false;
  if (auto add = dyn_cast<BulkReduceAddOp>(op))
    return hits(add.getStaging());
  if (auto add = dyn_cast<TmaReduceAddOp>(op))
    return hits(add.getStaging());
  if (auto store = dyn_cast<TmaStoreOp>(op))
    return hits(store.getStaging());
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::any_of(list, [&](const MemoryEffects::EffectInstance &e) {
    if (!isa<MemoryEffects::Write>(e.getEffect()))
      return false;
    Value value = e.getValue();
    if (!value)
      return isa<TileGPUDialect>(op->getDialect());
    auto type = dyn_cast<MemRefType>(value.getType());
    bool mbarrier =
        type && type.getRank() == 1 && type.getElementType().isInteger(64);
    return type && !mbarrier && isSharedMemRef(type) && hits(value);
  });
}

/// What a thread meets first walking the ops [from, to) in order: a
/// barrier, or a write into `allocs`, or neither. Nested blocks are walked
/// too; a barrier inside one does not count for what follows it (a loop may
/// run no step), a write inside one before its barrier does.
enum class Reach { Barrier, Write, Neither };
Reach firstReached(Block::iterator from, Block::iterator to,
                   ArrayRef<SharedAllocOp> allocs) {
  for (Operation &op : llvm::make_range(from, to)) {
    if (isa<BarrierOp>(op))
      return Reach::Barrier;
    for (Region &region : op.getRegions())
      for (Block &block : region)
        if (firstReached(block.begin(), block.end(), allocs) == Reach::Write)
          return Reach::Write;
    if (op.getNumRegions() == 0 && mayWrite(&op, allocs))
      return Reach::Write;
  }
  return Reach::Neither;
}

/// Whether every write into `allocs` that can follow the terminator of
/// `block` (a loop body) comes after a barrier: in the loop's next step, and
/// after the loop, level by level outwards (an enclosing loop's next step
/// too). A product reading `allocs` waited for before that terminator has
/// then completed in every warpgroup before any of them writes.
bool barrierBeforeNextWrite(Block *block, ArrayRef<SharedAllocOp> allocs) {
  if (firstReached(block->begin(), block->end(), allocs) == Reach::Write)
    return false;
  for (Operation *op = block->getParentOp();
       op && !isa<FunctionOpInterface>(op);
       op = op->getBlock()->getParentOp()) {
    Block *parent = op->getBlock();
    Reach after =
        firstReached(std::next(op->getIterator()), parent->end(), allocs);
    if (after == Reach::Write)
      return false;
    if (after == Reach::Barrier)
      return true;
    if (isa<LoopLikeOpInterface>(parent->getParentOp()) &&
        firstReached(parent->begin(), op->getIterator(), allocs) ==
            Reach::Write)
      return false;
  }
  return true;
}

/// Issues a synchronous `product` whose result first feeds its block's
/// terminator (an accumulator carried by a loop: dV, dK) asynchronously and
/// waits for it right before the terminator, when other work lies in
/// between: the products after it issue without waiting for it. Ring
/// releases in between move after the wait; a ring wait in between, an op
/// with regions, or a write into a buffer the product reads, keeps it
/// synchronous.
bool waitAtTerminator(WarpgroupMmaOp product) {
  if (product.getAsync())
    return false;
  // A shared rhs the threads write keeps it synchronous (its barriers
  // assume completed readers), and so does a register operand read by
  // anything after it before the wait: the PTX ISA leaves reading a
  // product's A registers while it is in flight undefined. A shared lhs the
  // threads write may stay in flight (dS for dS K, stored for dSᵀ K before
  // it in the atomic schedule) where no write into it lies between the
  // product and its wait (below) and every later write into it follows a
  // barrier (barrierBeforeNextWrite), which each warpgroup reaches only
  // after its wait.
  Value lhs = product.getLhs();
  bool registerLhs = isa<RankedTensorType>(lhs.getType());
  if (threadWritten(product.getRhs()))
    return false;
  if (registerLhs)
    for (Operation *user : lhs.getUsers())
      if (user != product && user->getBlock() == product->getBlock() &&
          product->isBeforeInBlock(user))
        return false;
  // An accumulator carried by an scf.for: acc is an iteration argument and
  // the product's result is yielded in its place, and used nowhere before.
  Block *block = product->getBlock();
  auto yield = dyn_cast<scf::YieldOp>(block->getTerminator());
  auto acc = dyn_cast<BlockArgument>(product.getAcc());
  if (!yield || !isa<scf::ForOp>(block->getParentOp()) || !acc ||
      acc.getOwner() != block || acc.getArgNumber() == 0 ||
      yield.getOperand(acc.getArgNumber() - 1) != product.getResult() ||
      firstUse(product.getResult(), block, product) != yield)
    return false;
  Operation *terminator = yield;
  // Shared-memory writes in between go to buffers provably not the
  // product's (distinct allocations through selects and subviews), and no
  // copy lands in shared memory there at all.
  SmallVector<SharedAllocOp> read;
  if (!allocsOf(product.getRhs(), read) ||
      (!registerLhs && !allocsOf(lhs, read)))
    return false;
  if (!registerLhs && threadWritten(lhs)) {
    SmallVector<SharedAllocOp> lhsAllocs;
    (void)allocsOf(lhs, lhsAllocs);
    if (!barrierBeforeNextWrite(block, lhsAllocs))
      return false;
  }
  auto writesOperand = [&](Operation *op) {
    return isa<CopyAsyncOp, TmaLoadOp, TmaLoadPagesOp>(op) ||
           mayWrite(op, read);
  };
  bool work = false;
  for (Operation *op = product->getNextNode(); op != terminator;
       op = op->getNextNode()) {
    // No ring wait (its slot's release, moved after the wait, could be the
    // one awaited) and no warpgroup turn (another warpgroup's progress).
    if (isa<MbarrierWaitOp, WarpgroupTurnOp>(op) || op->getNumRegions() != 0 ||
        writesOperand(op))
      return false;
    work |= !isa<MbarrierArriveOp, WarpgroupWaitOp>(op) &&
            !op->hasTrait<OpTrait::ConstantLike>();
  }
  if (!work)
    return false;
  issueAsyncUntil(product, terminator);
  return true;
}

struct TileGPUOverlapProducts
    : public kiln::tgpu::impl::TileGPUOverlapProductsBase<
          TileGPUOverlapProducts> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<std::pair<WarpgroupMmaOp, WarpgroupMmaOp>> pairs;
    getOperation()->walk([&](Block *block) {
      WarpgroupMmaOp previous;
      for (Operation &op : *block)
        if (auto product = dyn_cast<WarpgroupMmaOp>(op)) {
          if (previous)
            pairs.push_back({previous, product});
          previous = product;
        }
    });
    for (auto &pair : pairs)
      overlap(pair.first, pair.second);
    SmallVector<WarpgroupMmaOp> products;
    getOperation()->walk([&](WarpgroupMmaOp op) { products.push_back(op); });
    for (WarpgroupMmaOp product : products)
      waitAtFirstUse(product);
    if (asyncAccumulate)
      for (WarpgroupMmaOp product : products)
        waitAtTerminator(product);
  }
};

} // namespace
