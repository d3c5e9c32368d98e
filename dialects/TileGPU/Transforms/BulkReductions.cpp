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
#include "dialects/TileGPU/Transforms/DeferFlush.h"
#include "dialects/TileGPU/Transforms/ProducerReductions.h"
#include "dialects/TileGPU/Transforms/SharedLayout.h"
#include "dialects/TileGPU/Transforms/Staging.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

#include <map>

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUBULKREDUCTIONS
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;
using namespace kiln::tgpu;

/// How an add goes through shared memory: not at all (it stays
/// red.global), as one contiguous run per warp, through a tensor map of
/// the array it adds into, a box per warp and swizzle span, or into an
/// array in core order (tgpu.core_reduce_add), a run per warp and band.
enum class Staging { None, Run, TensorMap, Core };

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
  if (how == Staging::Run || how == Staging::Core)
    return MemRefType::get(tile.getShape(), tile.getElementType(),
                           MemRefLayoutAttrInterface(), memorySpace);
  int64_t groupBytes = groupColumns(tile) * 4;
  return MemRefType::get(
      tile.getShape(), tile.getElementType(),
      SwizzleLayoutAttr::get(tile.getContext(), widestSwizzle(groupBytes)),
      memorySpace);
}

/// Whether `v` is a multiple of `unit` (a positive constant) by the ops
/// that compute it: constants, products with such a factor, sums, selects,
/// minima and maxima of multiples, and loop counters starting at a multiple
/// and stepping by one.
static bool knownMultiple(Value v, int64_t unit, int depth = 0) {
  if (depth > 16)
    return false;
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c % unit == 0;
  if (auto iv = dyn_cast<BlockArgument>(v)) {
    auto loop = dyn_cast<scf::ForOp>(iv.getOwner()->getParentOp());
    return loop && loop.getInductionVar() == iv &&
           knownMultiple(loop.getLowerBound(), unit, depth + 1) &&
           knownMultiple(loop.getStep(), unit, depth + 1);
  }
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (isa<arith::MulIOp>(op))
    return knownMultiple(op->getOperand(0), unit, depth + 1) ||
           knownMultiple(op->getOperand(1), unit, depth + 1);
  if (isa<arith::AddIOp, arith::SubIOp, arith::MinSIOp, arith::MaxSIOp>(op))
    return knownMultiple(op->getOperand(0), unit, depth + 1) &&
           knownMultiple(op->getOperand(1), unit, depth + 1);
  if (auto select = dyn_cast<arith::SelectOp>(op))
    return knownMultiple(select.getTrueValue(), unit, depth + 1) &&
           knownMultiple(select.getFalseValue(), unit, depth + 1);
  return false;
}

/// Whether `add` can go into an array in core order: a 2-D f32 #tgpu.mma
/// tile as wide as a matrix view.
static bool coreStageable(tile::AtomicAddOp add) {
  auto tile = dyn_cast<RankedTensorType>(add.getValue().getType());
  return tile && tile.getRank() == 2 && tile.getElementType().isF32() &&
         isa_and_nonnull<MmaLayoutAttr>(tile.getEncoding()) && matrixView(add);
}

/// Whether a tile at `offsets` (row, column) starts on a core block.
static bool onCoreBlocks(ValueRange offsets) {
  return offsets.size() == 2 && knownMultiple(offsets[0], 16) &&
         knownMultiple(offsets[1], 8);
}

/// The name of the workspace `add` adds into through a matrix view, or null.
static StringAttr addedWorkspace(tile::AtomicAddOp add) {
  tile::ViewOp view = matrixView(add);
  auto arg = view ? dyn_cast<BlockArgument>(view.getBase()) : nullptr;
  auto kernel =
      arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : nullptr;
  if (!kernel)
    return nullptr;
  return kernel.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                             tile::attrs::kWorkspace);
}

/// The names of the f32 workspaces that can be kept in core order: each
/// is added into, in one sm_90a kernel only, by adds `tgpu-bulk-reductions`
/// stages, and otherwise only loaded as #tgpu.mma f32 tiles or filled with
/// one value (the preprocess's zeros), every access at core-block offsets
/// through a view of the array's last two dimensions, and its rows dimension
/// has a shape expression to pad to whole bands. Nothing else reads it, so
/// its order is the compiler's to choose.
static llvm::StringSet<> coreOrderWorkspaces(Operation *module) {
  llvm::StringMap<bool> ok;
  llvm::StringMap<func::FuncOp> writer;
  module->walk([&](func::FuncOp kernel) {
    if (kernel.getBody().empty())
      return;
    auto arch = kernel->getAttrOfType<StringAttr>(attrs::kArch);
    for (BlockArgument arg : kernel.getArguments()) {
      auto name = kernel.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      tile::attrs::kWorkspace);
      if (!name)
        continue;
      bool &good = ok.try_emplace(name.getValue(), true).first->second;
      auto type = dyn_cast<MemRefType>(arg.getType());
      auto shape = kernel.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                      tile::attrs::kShape);
      if (!type || type.getRank() < 2 || !type.getElementType().isF32() ||
          !shape || shape.size() != static_cast<size_t>(type.getRank())) {
        good = false;
        continue;
      }
      for (Operation *user : arg.getUsers()) {
        auto view = dyn_cast<tile::ViewOp>(user);
        int64_t rank = type.getRank();
        if (!view || view.getPageTable() || view.getOffsets() ||
            view.getPacked() ||
            view.getKeep() != ArrayRef<int64_t>{rank - 2, rank - 1}) {
          good = false;
          break;
        }
        for (Operation *use : view->getUsers()) {
          if (auto add = dyn_cast<tile::AtomicAddOp>(use)) {
            func::FuncOp &first = writer[name.getValue()];
            if (!arch || arch.getValue() != "sm_90a" ||
                (first && first != kernel) || add.getDesc() != view ||
                matrixView(add) != view || !coreStageable(add) ||
                !stagingRegionEnd(add, kernel) ||
                !onCoreBlocks(add.getOffsets())) {
              good = false;
              break;
            }
            first = kernel;
            continue;
          }
          if (auto load = dyn_cast<tile::LoadOp>(use)) {
            auto tile = dyn_cast<RankedTensorType>(load.getType());
            if (load.getMask() || !tile || tile.getRank() != 2 ||
                !tile.getElementType().isF32() ||
                !isa_and_nonnull<MmaLayoutAttr>(tile.getEncoding()) ||
                !isa<FloatAttr>(load.getFill()) ||
                !onCoreBlocks(load.getOffsets())) {
              good = false;
              break;
            }
            continue;
          }
          if (auto store = dyn_cast<tile::StoreOp>(use)) {
            // One value everywhere is the same in any order, where the
            // tile covers whole bands (masked at the padded rows): whole
            // rows of the array, from a band's first.
            auto tile = dyn_cast<RankedTensorType>(store.getValue().getType());
            std::optional<int64_t> col =
                store.getOffsets().size() == 2
                    ? getConstantIntValue(store.getOffsets()[1])
                    : std::nullopt;
            if (store.getDesc() != view ||
                !store.getValue().getDefiningOp<tile::SplatOp>() || !tile ||
                tile.getRank() != 2 || tile.getDimSize(0) % 16 != 0 ||
                tile.getDimSize(1) != type.getShape().back() || col != 0 ||
                !onCoreBlocks(store.getOffsets())) {
              good = false;
              break;
            }
            continue;
          }
          good = false;
          break;
        }
        if (!good)
          break;
      }
    }
  });
  llvm::StringSet<> names;
  for (auto &[name, good] : ok)
    if (good && writer.count(name))
      names.insert(name);
  return names;
}

/// Whether `add` adds into a workspace of `names`.
static bool intoCoreWorkspace(tile::AtomicAddOp add,
                              const llvm::StringSet<> &names) {
  StringAttr name = addedWorkspace(add);
  return name && names.contains(name.getValue());
}

/// Keeps the workspaces of `names` in core order in every kernel of
/// `module`: their loads become tgpu.core_load, and their rows dimension is
/// padded to whole bands (the last band's rows past the sequence are
/// allocated, zeroed with the rest and added into, never stored out).
static void useCoreOrder(Operation *module, const llvm::StringSet<> &names) {
  module->walk([&](func::FuncOp kernel) {
    for (BlockArgument arg : kernel.getArguments()) {
      unsigned i = arg.getArgNumber();
      auto name =
          kernel.getArgAttrOfType<StringAttr>(i, tile::attrs::kWorkspace);
      if (!name || !names.contains(name.getValue()))
        continue;
      auto shape = kernel.getArgAttrOfType<ArrayAttr>(i, tile::attrs::kShape);
      SmallVector<Attribute> dims(shape.begin(), shape.end());
      MLIRContext *ctx = kernel.getContext();
      auto i64 = [&](int64_t v) {
        return IntegerAttr::get(IntegerType::get(ctx, 64), v);
      };
      Attribute &rows = dims[dims.size() - 2];
      rows = ArrayAttr::get(
          ctx, {StringAttr::get(ctx, "mul"),
                ArrayAttr::get(
                    ctx, {StringAttr::get(ctx, "ceildiv"), rows, i64(16)}),
                i64(16)});
      kernel.setArgAttr(i, tile::attrs::kShape, ArrayAttr::get(ctx, dims));
      for (Operation *view : arg.getUsers())
        for (Operation *use : llvm::make_early_inc_range(view->getUsers()))
          if (auto load = dyn_cast<tile::LoadOp>(use)) {
            OpBuilder b(load);
            auto fill = cast<FloatAttr>(load.getFill());
            Value core = CoreLoadOp::create(
                b, load.getLoc(), load.getType(), load.getDesc(),
                load.getOffsets(), b.getF32FloatAttr(fill.getValueAsDouble()));
            load.replaceAllUsesWith(core);
            load.erase();
          }
    }
  });
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
    coreNames.clear();
    if (coreOrder)
      coreNames = coreOrderWorkspaces(getOperation());
    getOperation()->walk([&](func::FuncOp kernel) {
      if (failed(runOnKernel(kernel)))
        signalPassFailure();
    });
    // A workspace whose adds all became tgpu.core_reduce_add is read in core
    // order too (its writer's staging may not have fitted).
    llvm::StringSet<> staged;
    for (auto &entry : coreNames)
      staged.insert(entry.getKey());
    getOperation()->walk([&](tile::AtomicAddOp add) {
      if (StringAttr name = addedWorkspace(add))
        staged.erase(name.getValue());
    });
    useCoreOrder(getOperation(), staged);
  }

  LogicalResult runOnKernel(func::FuncOp kernel) {
    maps.clear();
    auto arch = kernel->getAttrOfType<StringAttr>(attrs::kArch);
    if (!arch || arch.getValue() != "sm_90a" || kernel.getBody().empty())
      return success();
    // The adds by staging buffer type and order: one buffer for each (a
    // warp's part of a buffer in core order is not its part in rows).
    llvm::MapVector<std::pair<Type, unsigned>, SmallVector<tile::AtomicAddOp>>
        adds;
    kernel.walk([&](tile::AtomicAddOp add) {
      Staging how = intoCoreWorkspace(add, coreNames) ? Staging::Core
                                                      : staging(add, kernel);
      if (how != Staging::None && stagingRegionEnd(add, kernel))
        adds[{stagingType(add, how), unsigned(how == Staging::Core)}].push_back(
            add);
    });
    if (adds.empty())
      return success();
    // The staging buffers (unpadded: one contiguous run for the copy
    // engine) go after the kernel's top-level buffers, where they cost no
    // CTA per multiprocessor; otherwise the adds stay red.global.
    SmallVector<SharedAllocOp> buffers;
    SmallVector<Type> types;
    for (auto &entry : adds)
      types.push_back(entry.first.first);
    if (failed(addStagingBuffers(kernel, types, sharedMemoryBytes,
                                 kMinRegisters, buffers)))
      return failure();
    if (buffers.empty())
      return success();
    SmallVector<std::pair<SharedAllocOp, SmallVector<tile::AtomicAddOp>>>
        staged;
    for (auto [buffer, entry] : llvm::zip(buffers, adds))
      staged.push_back({buffer, entry.second});

    OpBuilder b(kernel.getContext());
    llvm::SetVector<Block *> ends;
    SmallVector<CoreReduceAddOp> coreAdds;
    for (auto &[buffer, group] : staged) {
      for (tile::AtomicAddOp add : group) {
        b.setInsertionPoint(add);
        if (intoCoreWorkspace(add, coreNames))
          coreAdds.push_back(CoreReduceAddOp::create(
              b, add.getLoc(), add.getValue(), buffer, add.getDesc(),
              add.getOffsets(), add.getTurn()));
        else if (swizzleBytes(buffer.getType()))
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
    // After the waits: a split add's last flush follows its loop, inside the
    // region whose end waits for the reductions.
    if (producerReductions &&
        issueFromProducer(kernel, coreAdds, sharedMemoryBytes))
      return success();
    if (deferFlush)
      for (CoreReduceAddOp add : coreAdds)
        (void)deferCoreFlush(add); // Those it leaves stay whole.
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
  /// The workspaces kept in core order where their adds are staged.
  llvm::StringSet<> coreNames;
};

} // namespace
