//===- BulkReductions.cpp - f32 adds through shared memory, in bulk -------===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"
#include "dialects/TileGPU/Transforms/SharedLayout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUBULKREDUCTIONS
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;
using namespace kiln::tgpu;

/// Whether `add` can go through a staging buffer: a 2-D f32 register tile
/// in the accumulator layout whose rows are whole 16-byte chunks, as wide
/// as its descriptor, a view of an array's last two dimensions (rows one
/// after the other in a dense array: the tile is one contiguous run, one
/// bulk reduction). Reductions of strided rows would be one per row, and
/// the copy engine takes them from uniform registers: the lanes' addresses
/// one at a time, 64 issues per tile, which measured slower than
/// red.global.
static bool stageable(tile::AtomicAddOp add) {
  auto tile = dyn_cast<RankedTensorType>(add.getValue().getType());
  tile::DescType desc = add.getDesc().getType();
  if (!tile || tile.getRank() != 2 || !tile.getElementType().isF32() ||
      !isa_and_nonnull<MmaLayoutAttr>(tile.getEncoding()) ||
      (tile.getDimSize(1) * 4) % 16 != 0)
    return false;
  // In column groups a warp holds part of each of its rows: not one run.
  // (One bulk reduction per row from each warp, tried on the 128-key
  // atomic kernel, measured 0.85-0.99x its red.global form on the H100.)
  if (cast<MmaLayoutAttr>(tile.getEncoding()).getColGroups() != 1)
    return false;
  if (desc.getShape().size() != 2 || desc.isPaged() || desc.getGroup() != 1 ||
      add.getOffsets().size() != 2)
    return false;
  if (desc.getShape()[1] != tile.getDimSize(1))
    return false;
  auto view = add.getDesc().getDefiningOp<tile::ViewOp>();
  if (!view || view.getPageTable() || view.getOffsets())
    return false;
  int64_t rank = cast<MemRefType>(view.getBase().getType()).getRank();
  return view.getKeep() == ArrayRef<int64_t>{rank - 2, rank - 1};
}

/// The block whose end the sums must be complete by: the consumer region
/// of a warp-specialized kernel, else the kernel's body. Null for an add in
/// a producer region (which runs on one thread: not staged).
static Block *regionEnd(Operation *op, func::FuncOp kernel) {
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

/// A multiprocessor's registers, and the fewest a thread of a kernel with an
/// f32 accumulator tile to add holds (the atomic dK/dV kernel's dK and dV
/// accumulators alone take 64 per thread at D = 64).
constexpr int64_t kRegistersPerSM = 65536;
constexpr int64_t kMinRegisters = 128;

namespace {

struct TileGPUBulkReductions
    : public kiln::tgpu::impl::TileGPUBulkReductionsBase<
          TileGPUBulkReductions> {
  using TileGPUBulkReductionsBase::TileGPUBulkReductionsBase;

  void runOnOperation() override {
    getOperation()->walk([&](func::FuncOp kernel) {
      if (failed(runOnKernel(kernel)))
        signalPassFailure();
    });
  }

  LogicalResult runOnKernel(func::FuncOp kernel) {
    auto arch = kernel->getAttrOfType<StringAttr>(attrs::kArch);
    if (!arch || arch.getValue() != "sm_90a" || kernel.getBody().empty())
      return success();
    // The adds by tile type: one staging buffer for each.
    llvm::MapVector<Type, SmallVector<tile::AtomicAddOp>> adds;
    kernel.walk([&](tile::AtomicAddOp add) {
      if (stageable(add) && regionEnd(add, kernel))
        adds[add.getValue().getType()].push_back(add);
    });
    if (adds.empty())
      return success();
    // (A kernel not laid out yet has no buffers to count.)
    auto laidOut = kernel->getAttrOfType<IntegerAttr>(attrs::kSharedBytes);
    int64_t before = laidOut ? laidOut.getInt() : 0;

    // The staging buffers (unpadded: one contiguous run for the copy
    // engine) go after the kernel's top-level buffers.
    Block &entry = kernel.front();
    OpBuilder b(kernel.getContext());
    b.setInsertionPointToStart(&entry);
    for (Operation &op : entry)
      if (isa<SharedAllocOp>(op))
        b.setInsertionPointAfter(&op);
    Location loc = kernel.getLoc();
    SmallVector<std::pair<SharedAllocOp, SmallVector<tile::AtomicAddOp>>>
        staged;
    for (auto &[type, group] : adds) {
      auto tile = cast<RankedTensorType>(type);
      auto buffer =
          MemRefType::get(tile.getShape(), tile.getElementType(),
                          MemRefLayoutAttrInterface(), b.getI64IntegerAttr(3));
      staged.push_back({SharedAllocOp::create(b, loc, buffer, 0), group});
    }
    if (failed(layoutSharedBuffers(kernel, 0, "the bulk reductions' staging")))
      return failure();

    // The staging must not cost the kernel a CTA per multiprocessor (nor
    // exceed the limit): otherwise the adds stay red.global. A
    // warp-specialized kernel runs tgpu.ctas_per_sm CTAs (1 when absent);
    // any other as many as its shared memory allows, and its registers:
    // a kernel that accumulates f32 tiles holds at least
    // kMinRegisters per thread.
    int64_t after =
        kernel->getAttrOfType<IntegerAttr>(attrs::kSharedBytes).getInt();
    if (sharedMemoryBytes > 0) {
      int64_t wanted = ctasFitting(before, sharedMemoryBytes);
      if (kernel->hasAttr(attrs::kProducerWarps)) {
        auto ctas = kernel->getAttrOfType<IntegerAttr>(attrs::kCtasPerSM);
        wanted = std::min<int64_t>(wanted, ctas ? ctas.getInt() : 1);
      } else if (auto warps =
                     kernel->getAttrOfType<IntegerAttr>(attrs::kNumWarps)) {
        wanted = std::min<int64_t>(
            wanted, kRegistersPerSM / (32 * warps.getInt() * kMinRegisters));
      }
      if (ctasFitting(after, sharedMemoryBytes) < std::max<int64_t>(wanted, 1)) {
        for (auto &buffer : staged)
          buffer.first.erase();
        return layoutSharedBuffers(kernel, 0, "the kernel's buffers");
      }
    }

    llvm::SetVector<Block *> ends;
    for (auto &[staging, group] : staged) {
      for (tile::AtomicAddOp add : group) {
        b.setInsertionPoint(add);
        BulkReduceAddOp::create(b, add.getLoc(), add.getValue(), staging,
                                add.getDesc(), add.getOffsets());
        if (Block *end = regionEnd(add, kernel))
          ends.insert(end);
        add.erase();
      }
    }
    // The sums are complete before the kernel ends (the next kernel, dQ's
    // conversion, reads them).
    for (Block *end : ends) {
      if (!end->empty() && end->back().hasTrait<OpTrait::IsTerminator>())
        b.setInsertionPoint(&end->back());
      else
        b.setInsertionPointToEnd(end);
      BulkWaitOp::create(b, loc);
    }
    return success();
  }
};

} // namespace
