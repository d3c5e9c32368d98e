//===- TmaStores.cpp - output tiles stored by TMA from shared memory
//-------===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"
#include "dialects/TileGPU/Transforms/SharedLayout.h"
#include "dialects/TileGPU/Transforms/Staging.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <map>

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUTMASTORES
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;
using namespace kiln::tgpu;

/// The view `store` writes through, where a tensor map of the kernel's
/// argument can stand for it: a plain view (not paged, ragged or packed) of
/// two dimensions, the columns the argument's innermost (contiguous) one,
/// exactly as wide as the tile, with no mask on the store. Its rows are the
/// whole dimension, so TMA's clipping at the tensor's edge drops the rows
/// tile.store drops.
static tile::ViewOp mappedView(tile::StoreOp store, func::FuncOp kernel) {
  auto tile = cast<RankedTensorType>(store.getValue().getType());
  tile::DescType desc = store.getDesc().getType();
  if (store.getMask() || desc.getShape().size() != 2 || desc.isPaged() ||
      desc.getGroup() != 1 || store.getOffsets().size() != 2 ||
      desc.getShape()[1] != tile.getDimSize(1))
    return nullptr;
  auto view = store.getDesc().getDefiningOp<tile::ViewOp>();
  if (!view || view.getPageTable() || view.getOffsets() || view.getPacked())
    return nullptr;
  BlockArgument base = mappableBase(view, kernel);
  if (!base || !kernel.getArgAttr(base.getArgNumber(), tile::attrs::kTensor))
    return nullptr;
  int64_t rank = cast<MemRefType>(base.getType()).getRank();
  ArrayRef<int64_t> keep = view.getKeep();
  if (keep.size() != 2 || keep[1] != rank - 1 || keep[0] == keep[1])
    return nullptr;
  return view;
}

/// The staging buffer of a stored tile, or a null type where the tile does
/// not go through one: a 2-D bf16 or f16 #tgpu.mma tile whose warps hold
/// whole m16 blocks of rows and whose column group's row is whole swizzle
/// spans (the widest dividing it: a TMA box is at most one span wide).
static MemRefType stagingType(tile::StoreOp store) {
  auto tile = dyn_cast<RankedTensorType>(store.getValue().getType());
  if (!tile || tile.getRank() != 2 ||
      !(tile.getElementType().isBF16() || tile.getElementType().isF16()) ||
      !isa_and_nonnull<MmaLayoutAttr>(tile.getEncoding()))
    return nullptr;
  int64_t warpRows = warpBlockRows(tile);
  int64_t swizzle = widestSwizzle(groupColumns(tile) * 2);
  if (!swizzle || warpRows % 16 != 0 || warpRows > 256)
    return nullptr;
  auto memorySpace =
      IntegerAttr::get(IntegerType::get(tile.getContext(), 64), 3);
  return MemRefType::get(tile.getShape(), tile.getElementType(),
                         SwizzleLayoutAttr::get(tile.getContext(), swizzle),
                         memorySpace);
}

/// The registers a consumer thread holds at least where an output tile is
/// stored (only warp-specialized kernels are rewritten, whose CTAs per
/// multiprocessor are their attribute; the count is not used for them).
constexpr int64_t kMinRegisters = 128;

/// Whether every use of `value`, and of the choices (arith.select) that pick
/// it, lies in a loop of `ws`'s producer region or of its consumer region
/// before `point` (in the consumers' block): a ring stage or a step's
/// vector, which the consumers have finished with at `point` (each waited
/// for every copy into it), and which the producer, whose loops issue only
/// the copies the consumers wait for, writes no more.
static bool deadAfterLoops(Value value, WarpSpecializeOp ws, Operation *point) {
  Block *block = point->getBlock();
  for (Operation *user : value.getUsers()) {
    if (!user->getParentOfType<scf::ForOp>())
      return false;
    if (Operation *top = block->findAncestorOpInBlock(*user)) {
      if (top == point || !top->isBeforeInBlock(point))
        return false;
    } else if (!ws.getProducer().isAncestor(user->getParentRegion())) {
      return false;
    }
    if (isa<arith::SelectOp>(user) &&
        !deadAfterLoops(user->getResult(0), ws, point))
      return false;
  }
  return true;
}

/// Where no staging buffer fits beside the kernel's buffers: one of `type`
/// over buffers dead at `first` (the first store through it, in the
/// consumers' region), a 1024-byte aligned run of them that no live buffer
/// overlaps, or null. Only a kernel of one tile per CTA (a persistent CTA's
/// next tile refills its rings under the epilogue) whose stores lie in the
/// consumers' region itself (all of them reach the barrier placed before
/// the first).
static SharedAllocOp overlayStaging(func::FuncOp kernel, MemRefType type,
                                    tile::StoreOp first) {
  Block *block = first->getBlock();
  auto ws = dyn_cast_or_null<WarpSpecializeOp>(block->getParentOp());
  if (kernel->hasAttr(attrs::kPersistent) || !ws ||
      block->getParent() != &ws.getConsumer())
    return nullptr;
  SmallVector<SharedAllocOp> dead, live;
  kernel.walk([&](SharedAllocOp alloc) {
    (!alloc.getOverlays() && deadAfterLoops(alloc, ws, first) ? dead : live)
        .push_back(alloc);
  });
  llvm::sort(dead, [](SharedAllocOp a, SharedAllocOp b) {
    return a.getOffset() < b.getOffset();
  });
  int64_t bytes = sharedBufferBytes(type);
  auto overlaps = [](SharedAllocOp a, int64_t lo, int64_t hi) {
    int64_t start = static_cast<int64_t>(a.getOffset());
    return start < hi && lo < start + sharedBufferBytes(a.getType());
  };
  for (SharedAllocOp base : dead) {
    int64_t lo = static_cast<int64_t>(base.getOffset()), hi = lo + bytes;
    if (lo % 1024 != 0 || llvm::any_of(live, [&](SharedAllocOp a) {
          return overlaps(a, lo, hi);
        }))
      continue;
    OpBuilder b(kernel.getContext());
    b.setInsertionPointAfter(base);
    for (SharedAllocOp alloc : dead)
      if (alloc->getBlock() == base->getBlock() && base->isBeforeInBlock(alloc))
        b.setInsertionPointAfter(alloc);
    return SharedAllocOp::create(b, kernel.getLoc(), type, lo, base);
  }
  return nullptr;
}

/// The consumers' reads of the copies a freed choice picks among: every use
/// in `ws`'s consumer region of the choice's operands (the copies' buffers)
/// and, through further choices, of what picks them, but the choices
/// themselves.
static SmallVector<OpOperand *> copyReads(arith::SelectOp choice,
                                          WarpSpecializeOp ws) {
  SmallVector<OpOperand *> reads;
  SmallVector<Value> values{choice.getTrueValue(), choice.getFalseValue()};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!values.empty()) {
    Value value = values.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (!ws.getConsumer().isAncestor(user->getParentRegion()))
        continue;
      if (auto select = dyn_cast<arith::SelectOp>(user)) {
        if (use.getOperandNumber() != 0 && seen.insert(select).second)
          values.push_back(select.getResult());
        continue;
      }
      reads.push_back(&use);
    }
  }
  return reads;
}

/// Whether each warp's block of the copies (in `tile`'s layout: a warp's
/// rows, every column) is read only by its own warpgroup: the `reads` are
/// wgmma A operands (rows split among the warpgroups, not transposed) of
/// products with `tile`'s rows and warps, in one column group. A
/// warpgroup's product completes for all its warps at once.
static bool readByOwnWarpgroups(ArrayRef<OpOperand *> reads,
                                RankedTensorType tile) {
  auto layout = dyn_cast<MmaLayoutAttr>(tile.getEncoding());
  if (!layout || layout.getColGroups() != 1)
    return false;
  for (OpOperand *use : reads) {
    if (isa<MbarrierArriveOp>(use->getOwner()))
      continue;
    auto product = dyn_cast<WarpgroupMmaOp>(use->getOwner());
    if (!product || use->getOperandNumber() != 0 || product.getTransposeLhs())
      return false;
    auto result = cast<RankedTensorType>(product.getResult().getType());
    auto resultLayout = dyn_cast<MmaLayoutAttr>(result.getEncoding());
    if (!resultLayout || resultLayout.getColGroups() != 1 ||
        resultLayout.getWarps() != layout.getWarps() ||
        result.getDimSize(0) != tile.getDimSize(0))
      return false;
  }
  return true;
}

/// Where no staging buffer fits in a persistent kernel: the tile's own copy
/// of a buffer the consumers free for the producer (`tgpu.mbarrier_arrive
/// ... frees`) before the stores, of the staging's type and held in turns
/// (a choice among copies, so the producer fills the next tile's copy in
/// the meantime: Q used by turns). The arrival moves after the stores,
/// behind a wait until they have read their staging; where a warp's rows of
/// the buffer may be read by other warpgroups, a consumers' barrier comes
/// before the first store. Returns the buffer, or null: also where a read
/// of the copies may still be in flight at the stores (an asynchronous
/// product waited for after them) or the arrival would move past a wait
/// (for the producer's data: the producer might wait for this arrival).
static Value stageInFreedCopy(ArrayRef<tile::StoreOp> stores, MemRefType type) {
  tile::StoreOp first = stores.front();
  auto ws = first->getParentOfType<WarpSpecializeOp>();
  if (!ws)
    return nullptr;
  MbarrierArriveOp found;
  SmallVector<OpOperand *> reads;
  ws.getConsumer().walk([&](MbarrierArriveOp arrive) {
    Value frees = arrive.getFrees();
    auto choice = frees ? frees.getDefiningOp<arith::SelectOp>() : nullptr;
    if (found || !choice || frees.getType() != type)
      return;
    Block *block = arrive->getBlock();
    for (tile::StoreOp store : stores) {
      Operation *top = block->findAncestorOpInBlock(*store);
      if (!top || !arrive->isBeforeInBlock(top))
        return;
    }
    // Nothing reads the copies after the arrival, directly or through
    // another choice, and every asynchronous product reading them is waited
    // for before it.
    SmallVector<OpOperand *> candidateReads = copyReads(choice, ws);
    for (OpOperand *use : candidateReads) {
      Operation *user = use->getOwner();
      if (user == arrive.getOperation())
        continue;
      Operation *top = block->findAncestorOpInBlock(*user);
      if (!top || !top->isBeforeInBlock(arrive))
        return;
      if (auto product = dyn_cast<WarpgroupMmaOp>(user))
        for (Operation *wait : product.getResult().getUsers()) {
          Operation *waitTop = block->findAncestorOpInBlock(*wait);
          if (!waitTop || !waitTop->isBeforeInBlock(arrive))
            return;
        }
    }
    found = arrive;
    reads = std::move(candidateReads);
  });
  if (!found)
    return nullptr;
  Block *block = found->getBlock();
  Operation *firstTop = nullptr, *lastTop = nullptr;
  for (tile::StoreOp store : stores) {
    Operation *top = block->findAncestorOpInBlock(*store);
    if (!firstTop || top->isBeforeInBlock(firstTop))
      firstTop = top;
    if (!lastTop || lastTop->isBeforeInBlock(top))
      lastTop = top;
  }
  for (Operation *op = found->getNextNode(); op != lastTop->getNextNode();
       op = op->getNextNode()) {
    WalkResult waits = op->walk([](Operation *inner) {
      return isa<MbarrierWaitOp, ReadTileOp>(inner) ? WalkResult::interrupt()
                                                    : WalkResult::advance();
    });
    if (waits.wasInterrupted())
      return nullptr;
  }
  Value copy = found.getFrees();
  auto tile = cast<RankedTensorType>(first.getValue().getType());
  if (!readByOwnWarpgroups(reads, tile)) {
    OpBuilder b(firstTop);
    BarrierOp::create(b, first.getLoc());
  }
  found->moveAfter(lastTop);
  OpBuilder b(found);
  BulkWaitReadOp::create(b, found.getLoc(), 0);
  return copy;
}

namespace {

struct TileGPUTmaStores
    : public kiln::tgpu::impl::TileGPUTmaStoresBase<TileGPUTmaStores> {
  using TileGPUTmaStoresBase::TileGPUTmaStoresBase;

  void runOnOperation() override {
    getOperation()->walk([&](func::FuncOp kernel) {
      if (failed(runOnKernel(kernel)))
        signalPassFailure();
    });
  }

  LogicalResult runOnKernel(func::FuncOp kernel) {
    maps.clear();
    auto arch = kernel->getAttrOfType<StringAttr>(attrs::kArch);
    if (!arch || arch.getValue() != "sm_90a" || kernel.getBody().empty() ||
        !kernel->hasAttr(attrs::kProducerWarps))
      return success();
    // The consumers' output stores by tile type, layout included: one
    // staging buffer for each (a program's stores of one tile type are in
    // exclusive branches or one after the other, and each warp waits for
    // its own previous stores to have read its block; tiles of another
    // layout would put other warps' blocks there).
    llvm::MapVector<Type, SmallVector<tile::StoreOp>> stores;
    kernel.walk([&](tile::StoreOp store) {
      Block *end = stagingRegionEnd(store, kernel);
      if (!end || end->getParentOp() == kernel.getOperation() ||
          !mappedView(store, kernel) || !stagingType(store))
        return;
      stores[store.getValue().getType()].push_back(store);
    });
    if (stores.empty())
      return success();
    SmallVector<Type> types;
    for (auto &entry : stores)
      types.push_back(stagingType(entry.second.front()));
    SmallVector<SharedAllocOp> buffers;
    if (failed(addStagingBuffers(kernel, types, sharedMemoryBytes,
                                 kMinRegisters, buffers)))
      return failure();
    // Staging beside the buffers would cost a CTA per multiprocessor (the
    // D = 128 dK/dV kernel's 214 KB): over the loops' rings instead, which
    // the consumers are done with when they store, behind a barrier of the
    // consumers (the other warpgroups may still read the ring).
    if (buffers.empty() && stores.size() == 1) {
      tile::StoreOp first = stores.front().second.front();
      for (tile::StoreOp store : stores.front().second)
        if (store->getBlock() != first->getBlock())
          return success();
      if (SharedAllocOp overlay =
              overlayStaging(kernel, cast<MemRefType>(types.front()), first)) {
        auto before = kernel->getAttrOfType<IntegerAttr>(attrs::kSharedBytes);
        if (failed(layoutSharedBuffers(kernel, 0, "the staging overlay")))
          return failure();
        auto after = kernel->getAttrOfType<IntegerAttr>(attrs::kSharedBytes);
        if (before && after.getInt() > before.getInt() &&
            sharedMemoryBytes > 0 &&
            ctasFitting(after.getInt(), sharedMemoryBytes) <
                ctasFitting(before.getInt(), sharedMemoryBytes)) {
          overlay.erase();
          return layoutSharedBuffers(kernel, 0, "the kernel's buffers");
        }
        buffers.push_back(overlay);
        OpBuilder b(first);
        BarrierOp::create(b, first.getLoc());
      }
    }
    // A persistent kernel's stores in the tile's own copy of Q, which it
    // hands back to the producer only once they have read it.
    SmallVector<Value> staging(buffers.begin(), buffers.end());
    if (staging.empty() && stores.size() == 1 && stageInOwnCopy &&
        kernel->hasAttr(attrs::kPersistent))
      if (Value copy = stageInFreedCopy(stores.front().second,
                                        cast<MemRefType>(types.front())))
        staging.push_back(copy);
    if (staging.empty())
      return success();

    OpBuilder b(kernel.getContext());
    llvm::SetVector<Block *> ends;
    for (auto [buffer, entry] : llvm::zip(staging, stores)) {
      for (tile::StoreOp store : entry.second) {
        b.setInsertionPoint(store);
        storeThroughMap(store, buffer, kernel, b);
        ends.insert(stagingRegionEnd(store, kernel));
        store.erase();
      }
    }
    // The stores have read the staging before the consumers' region (and
    // the kernel) ends, and are in global memory for the next kernel.
    waitAtEnds(ends.getArrayRef(), kernel.getLoc());
    return success();
  }

  /// `store` as a tgpu.tma_store through `buffer` and a tensor map of the
  /// argument its view reads (one per argument and box, appended to the
  /// kernel's arguments): the view's columns innermost, then its rows, then
  /// the argument's other dimensions innermost first; the box one swizzle
  /// span of columns by a warp's rows; the coordinates the tile's column and
  /// row, then the view's index of each other dimension in the map's order.
  void storeThroughMap(tile::StoreOp store, Value buffer, func::FuncOp kernel,
                       OpBuilder &b) {
    tile::ViewOp view = mappedView(store, kernel);
    BlockArgument base = mappableBase(view, kernel);
    auto tile = cast<RankedTensorType>(store.getValue().getType());
    int64_t swizzle = swizzleBytes(cast<MemRefType>(buffer.getType()));
    int64_t rank = cast<MemRefType>(base.getType()).getRank();
    ArrayRef<int64_t> keep = view.getKeep();
    // The view's index of each dimension it fixes: its indices name the
    // dimensions not kept, in increasing order.
    std::map<int64_t, Value> fixed;
    auto indices = view.getIndices();
    for (int64_t d = 0, i = 0; d < rank; ++d)
      if (!llvm::is_contained(keep, d))
        fixed[d] = indices[i++];
    SmallVector<int64_t> dims{keep[1], keep[0]};
    SmallVector<Value> coords{store.getOffsets()[1], store.getOffsets()[0]};
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (llvm::is_contained(keep, d))
        continue;
      dims.push_back(d);
      coords.push_back(fixed[d]);
    }
    SmallVector<int64_t> box(rank, 1);
    box[0] = swizzle / 2;
    box[1] = warpBlockRows(tile);
    auto key = std::make_tuple(base.getArgNumber(), keep[0], box[1], box[0]);
    Value &map = maps[key];
    if (!map)
      map = appendTensorMap(kernel, base.getArgNumber(), dims, box, swizzle,
                            kernel.getLoc());
    TmaStoreOp::create(b, store.getLoc(), store.getValue(), buffer, map,
                       coords);
  }

  /// The tensor maps made for the kernel being rewritten, by argument, rows'
  /// dimension and box.
  std::map<std::tuple<unsigned, int64_t, int64_t, int64_t>, Value> maps;
};

} // namespace
