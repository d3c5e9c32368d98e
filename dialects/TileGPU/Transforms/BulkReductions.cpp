//===- BulkReductions.cpp - f32 adds through shared memory, in bulk -------===//
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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <map>

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUBULKREDUCTIONS
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;
using namespace kiln::tgpu;

/// How an add goes through shared memory: not at all (it stays
/// red.global), as one contiguous run per warp, or through a tensor map of
/// the array it adds into, a box per warp and swizzle span.
enum class Staging { None, Run, TensorMap };

/// The view `add` adds into, where it is a plain view of an array's last two
/// dimensions as wide as the tile: rows one after the other in a dense
/// array (so a block of rows is one contiguous run), and a tensor TMA can
/// map.
static tile::ViewOp matrixView(tile::AtomicAddOp add) {
  auto tile = cast<RankedTensorType>(add.getValue().getType());
  tile::DescType desc = add.getDesc().getType();
  if (desc.getShape().size() != 2 || desc.isPaged() || desc.getGroup() != 1 ||
      add.getOffsets().size() != 2 || desc.getShape()[1] != tile.getDimSize(1))
    return nullptr;
  auto view = add.getDesc().getDefiningOp<tile::ViewOp>();
  if (!view || view.getPageTable() || view.getOffsets() || view.getPacked())
    return nullptr;
  int64_t rank = cast<MemRefType>(view.getBase().getType()).getRank();
  if (view.getKeep() != ArrayRef<int64_t>{rank - 2, rank - 1})
    return nullptr;
  return view;
}

/// How `add` can go through a staging buffer: a 2-D f32 register tile in
/// the accumulator layout whose rows are whole 16-byte chunks, into a
/// matrix view. A warp holding whole rows adds them as one contiguous run;
/// in column groups a warp holds a strided block (16 rows of its group's
/// columns), added through a tensor map of the kernel's argument. Per-row
/// bulk reductions (one per row, issued from uniform registers one lane at
/// a time) measured slower than red.global on the H100 both ways (0.82x
/// for whole rows, 0.85-0.98x in column groups), so other adds stay.
static Staging staging(tile::AtomicAddOp add, func::FuncOp kernel) {
  auto tile = dyn_cast<RankedTensorType>(add.getValue().getType());
  if (!tile || tile.getRank() != 2 || !tile.getElementType().isF32() ||
      !isa_and_nonnull<MmaLayoutAttr>(tile.getEncoding()) ||
      (tile.getDimSize(1) * 4) % 16 != 0)
    return Staging::None;
  tile::ViewOp view = matrixView(add);
  if (!view)
    return Staging::None;
  auto layout = cast<MmaLayoutAttr>(tile.getEncoding());
  if (layout.getColGroups() == 1)
    return Staging::Run;
  int64_t warpRows = warpBlockRows(tile);
  int64_t groupBytes = groupColumns(tile) * 4;
  if (!mappableBase(view, kernel) || !widestSwizzle(groupBytes) ||
      warpRows % 16 != 0 || warpRows > 256)
    return Staging::None;
  return Staging::TensorMap;
}

/// The staging buffer of `add`'s tile: unpadded (one contiguous run per
/// warp), or swizzled by the widest span dividing a column group's row (a
/// TMA box of one span: 128 bytes at D = 128 and D = 64 in two groups, 64
/// at D = 96), which also spreads a warp's fragment stores over the banks.
static MemRefType stagingType(tile::AtomicAddOp add, Staging how) {
  auto tile = cast<RankedTensorType>(add.getValue().getType());
  auto memorySpace =
      IntegerAttr::get(IntegerType::get(tile.getContext(), 64), 3);
  if (how == Staging::Run)
    return MemRefType::get(tile.getShape(), tile.getElementType(),
                           MemRefLayoutAttrInterface(), memorySpace);
  int64_t groupBytes = groupColumns(tile) * 4;
  return MemRefType::get(
      tile.getShape(), tile.getElementType(),
      SwizzleLayoutAttr::get(tile.getContext(), widestSwizzle(groupBytes)),
      memorySpace);
}

/// The fewest registers a thread of a kernel with an f32 accumulator tile
/// to add holds (the atomic dK/dV kernel's dK and dV accumulators alone take
/// 64 per thread at D = 64).
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
    maps.clear();
    auto arch = kernel->getAttrOfType<StringAttr>(attrs::kArch);
    if (!arch || arch.getValue() != "sm_90a" || kernel.getBody().empty())
      return success();
    // The adds by staging buffer type: one buffer for each.
    llvm::MapVector<Type, SmallVector<tile::AtomicAddOp>> adds;
    kernel.walk([&](tile::AtomicAddOp add) {
      Staging how = staging(add, kernel);
      if (how != Staging::None && stagingRegionEnd(add, kernel))
        adds[stagingType(add, how)].push_back(add);
    });
    if (adds.empty())
      return success();
    // The staging buffers (unpadded: one contiguous run for the copy
    // engine) go after the kernel's top-level buffers, where they cost no
    // CTA per multiprocessor; otherwise the adds stay red.global.
    SmallVector<SharedAllocOp> buffers;
    if (failed(addStagingBuffers(kernel,
                                 llvm::to_vector(llvm::make_first_range(adds)),
                                 sharedMemoryBytes, kMinRegisters, buffers)))
      return failure();
    if (buffers.empty())
      return success();
    SmallVector<std::pair<SharedAllocOp, SmallVector<tile::AtomicAddOp>>>
        staged;
    for (auto [buffer, entry] : llvm::zip(buffers, adds))
      staged.push_back({buffer, entry.second});

    OpBuilder b(kernel.getContext());
    llvm::SetVector<Block *> ends;
    for (auto &[buffer, group] : staged) {
      for (tile::AtomicAddOp add : group) {
        b.setInsertionPoint(add);
        if (swizzleBytes(buffer.getType()))
          addThroughMap(add, buffer, kernel, b);
        else
          BulkReduceAddOp::create(b, add.getLoc(), add.getValue(), buffer,
                                  add.getDesc(), add.getOffsets());
        if (Block *end = stagingRegionEnd(add, kernel))
          ends.insert(end);
        add.erase();
      }
    }
    // The sums are complete before the kernel ends (the next kernel, dQ's
    // conversion, reads them).
    waitAtEnds(ends.getArrayRef(), kernel.getLoc());
    return success();
  }

  /// `add` as a tgpu.tma_reduce_add through `buffer` and a tensor map of
  /// the argument its view reads (one per argument and box, appended to the
  /// kernel's arguments): dimensions innermost first, the box one swizzle
  /// span of columns by a warp's rows; the coordinates the tile's column
  /// and row, then the view's indices, innermost first.
  void addThroughMap(tile::AtomicAddOp add, SharedAllocOp buffer,
                     func::FuncOp kernel, OpBuilder &b) {
    tile::ViewOp view = matrixView(add);
    BlockArgument base = mappableBase(view, kernel);
    auto tile = cast<RankedTensorType>(add.getValue().getType());
    int64_t swizzle = swizzleBytes(buffer.getType());
    int64_t rank = cast<MemRefType>(base.getType()).getRank();
    SmallVector<int64_t> dims, box(rank, 1);
    for (int64_t d = rank - 1; d >= 0; --d)
      dims.push_back(d);
    box[0] = swizzle / 4;
    box[1] = warpBlockRows(tile);
    auto key = std::make_pair(base.getArgNumber(), box[1] * 1024 + box[0]);
    Value &map = maps[key];
    if (!map)
      map = appendTensorMap(kernel, base.getArgNumber(), dims, box, swizzle,
                            kernel.getLoc());
    SmallVector<Value> coords{add.getOffsets()[1], add.getOffsets()[0]};
    for (Value index : llvm::reverse(view.getIndices()))
      coords.push_back(index);
    TmaReduceAddOp::create(b, add.getLoc(), add.getValue(), buffer, map,
                           coords);
  }

  /// The tensor maps made for the kernel being rewritten, by argument and
  /// box.
  std::map<std::pair<unsigned, int64_t>, Value> maps;
};

} // namespace
