//===- TileToTileGPU.cpp - the sm_80 schedule of a tile program -----------===//
//
// FlashAttention-2's schedule on Ampere-class tensor cores: one CTA of W
// warps per program, each warp owning BLOCK_M / W query rows; operand tiles
// staged in shared memory with cp.async and read with ldmatrix; S, P and the
// accumulator kept in registers in the mma accumulator layout, so the
// softmax never leaves registers and P feeds P*V without a shuffle. The
// backward's transposed products (P^T dO, dS^T Q) round-trip their register
// lhs through shared memory and read it back with ldmatrix.trans.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TileToTileGPU/ChunkAtomicProducts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTTILETOTILEGPU
#include "compiler/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Padding of each shared-memory row: 16 bytes shift consecutive rows by
/// four banks, so the eight row addresses of an ldmatrix hit distinct banks.
constexpr int64_t kRowPadBytes = 16;

class Scheduler {
public:
  Scheduler(func::FuncOp func, int64_t numWarps)
      : func(func), numWarps(numWarps), builder(func.getContext()) {}

  LogicalResult run(int64_t sharedLimit) {
    SmallVector<tile::DotOp> dots;
    func.walk([&](tile::DotOp dot) { dots.push_back(dot); });
    for (tile::DotOp dot : dots)
      if (failed(scheduleDot(dot)))
        return failure();
    for (tile::LoadOp load : staged)
      if (load->use_empty())
        load.erase();
    for (tile::LoadOp load : windowed)
      if (load->use_empty())
        load.erase();
    if (sharedBytes > sharedLimit)
      return func.emitError()
             << "the schedule needs " << sharedBytes
             << " bytes of shared memory but the target "
                "allows "
             << sharedLimit << "; use smaller tiles for this head dim";
    if (failed(assignLayouts()))
      return failure();
    func->setAttr(tgpu::attrs::kNumWarps, builder.getI64IntegerAttr(numWarps));
    func->setAttr(tgpu::attrs::kSharedBytes,
                  builder.getI64IntegerAttr(sharedBytes));
    return success();
  }

private:
  /// A new padded shared buffer of `type`'s shape at the next free offset.
  Value allocate(RankedTensorType type) {
    Type elt = type.getElementType();
    int64_t eltBytes = elt.getIntOrFloatBitWidth() / 8;
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    int64_t pitch = cols + kRowPadBytes / eltBytes;
    MLIRContext *ctx = func.getContext();
    auto memref = MemRefType::get(
        {rows, cols}, elt, StridedLayoutAttr::get(ctx, 0, {pitch, 1}),
        builder.getI64IntegerAttr(tgpu::kSharedMemorySpace));
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&func.front());
    Value buffer = tgpu::SharedAllocOp::create(builder, func.getLoc(), memref,
                                               sharedBytes);
    sharedBytes += (rows * pitch * eltBytes + 127) / 128 * 128;
    return buffer;
  }

  /// The shared buffer a load is staged into; loads of one descriptor with
  /// one tile shape (K in every KV loop) share it, unless that buffer is
  /// `busy` (the other operand of the same dot). Dense views of one
  /// argument that differ in their batch and head only count as one
  /// descriptor (GQA's dK/dV kernel makes Q's view per step, in each of its
  /// loops).
  Value bufferFor(tile::LoadOp load, Value busy) {
    if (Value staged = stagedBuffers.lookup(load.getOperation()))
      return staged;
    auto type = cast<RankedTensorType>(load.getResult().getType());
    std::tuple<Value, Attribute, Type> key{load.getDesc(), Attribute(),
                                           Type(type)};
    if (auto view = load.getDesc().getDefiningOp<tile::ViewOp>();
        view && !view.getPageTable() && !view.getLengths() &&
        !view.getOffsets() && !view.getSequence() && !view.getPackedAttr())
      key = {view.getBase(), view.getKeepAttr(), Type(type)};
    if (auto it = buffers.find(key);
        it != buffers.end() && it->second != busy && doneWith(it->second, load))
      return stagedBuffers[load.getOperation()] = it->second;
    Value buffer = allocate(type);
    buffers[key] = buffer;
    return stagedBuffers[load.getOperation()] = buffer;
  }

  /// The op of the function's entry block that contains `op`.
  Operation *topLevel(Operation *op) {
    return func.front().findAncestorOpInBlock(*op);
  }

  /// Whether everything that reads `buffer`, or the loads staged into it,
  /// lies in top-level ops before the one holding `load`, or in loops
  /// before the loop holding `load` inside one top-level op (sibling loops
  /// in a loop's body, as the GQA dK/dV kernel's query loops inside its
  /// heads loop): then `load` may overwrite it (K of the forward's
  /// consecutive KV loops), but not while an earlier tile in it is still
  /// live (K's column chunks, all read in the loop that follows their
  /// loads).
  bool doneWith(Value buffer, Operation *load) {
    Operation *next = topLevel(load);
    auto before = [&](Operation *user) {
      Operation *top = topLevel(user);
      if (!top)
        return false;
      if (top != next)
        return top->isBeforeInBlock(next);
      for (Block *block = load->getBlock(); block != &func.front();
           block = block->getParentOp()->getBlock()) {
        Operation *loop = block->findAncestorOpInBlock(*user);
        if (!loop)
          continue;
        Operation *loadLoop = block->findAncestorOpInBlock(*load);
        return loop != loadLoop && isa<scf::ForOp>(loop) &&
               isa<scf::ForOp>(loadLoop) && loop->isBeforeInBlock(loadLoop);
      }
      return false;
    };
    for (Operation *user : buffer.getUsers())
      if (!isa<tgpu::SharedAllocOp>(user) && !before(user))
        return false;
    for (auto [staged, stagedBuffer] : stagedBuffers)
      if (stagedBuffer == buffer)
        for (Operation *user : staged->getUsers())
          if (!before(user))
            return false;
    return true;
  }

  /// A load of columns [c, c + w) of rows that an earlier load of the same
  /// descriptor, in the same block, staged whole (the atomic schedule's
  /// column chunks of K): a window of that buffer, with no second copy and
  /// no second buffer.
  Value windowOfStaged(tile::LoadOp load) {
    auto type = cast<RankedTensorType>(load.getType());
    std::optional<int64_t> col = getConstantIntValue(load.getOffsets()[1]);
    if (!col)
      return Value();
    for (tile::LoadOp whole : staged) {
      auto wholeType = cast<RankedTensorType>(whole.getType());
      std::optional<int64_t> wholeCol =
          getConstantIntValue(whole.getOffsets()[1]);
      if (whole.getDesc() != load.getDesc() ||
          whole.getOffsets()[0] != load.getOffsets()[0] || !wholeCol ||
          whole->getBlock() != load->getBlock() ||
          !whole->isBeforeInBlock(load) ||
          wholeType.getDimSize(0) != type.getDimSize(0) || *col < *wholeCol ||
          *col + type.getDimSize(1) > *wholeCol + wholeType.getDimSize(1))
        continue;
      Value buffer = stagedBuffers.lookup(whole.getOperation());
      if (!llvm::is_contained(windowed, load))
        windowed.push_back(load);
      builder.setInsertionPoint(load);
      SmallVector<OpFoldResult> offsets{builder.getIndexAttr(0),
                                        builder.getIndexAttr(*col - *wholeCol)};
      SmallVector<OpFoldResult> sizes{builder.getIndexAttr(type.getDimSize(0)),
                                      builder.getIndexAttr(type.getDimSize(1))};
      SmallVector<OpFoldResult> strides{builder.getIndexAttr(1),
                                        builder.getIndexAttr(1)};
      return memref::SubViewOp::create(builder, load.getLoc(), buffer, offsets,
                                       sizes, strides);
    }
    return Value();
  }

  /// Replaces a register load by a staged copy into shared memory. Returns a
  /// null value when `operand` is not a load, failure after a diagnostic.
  FailureOr<Value> stage(Value operand, tile::DotOp dot, Value busy) {
    auto load = operand.getDefiningOp<tile::LoadOp>();
    if (!load)
      return Value();
    if (auto fill = dyn_cast<FloatAttr>(load.getFill());
        !fill || !fill.getValue().isZero())
      return dot.emitError()
             << "operands staged through shared memory are zero-filled; "
                "this load fills with "
             << load.getFill();
    if (cast<RankedTensorType>(load.getType()).getRank() != 2)
      return dot.emitError() << "mma operands must be 2-D tiles";
    if (load.getMask())
      return dot.emitError() << "operands staged through shared memory are "
                                "copied whole; this load has a mask";
    if (Value window = windowOfStaged(load))
      return window;
    Value buffer = bufferFor(load, busy);
    if (!llvm::is_contained(staged, load)) {
      builder.setInsertionPoint(load);
      Location loc = load.getLoc();
      // Wait for every warp to finish reading the buffer's old contents.
      tgpu::BarrierOp::create(builder, loc);
      tgpu::CopyAsyncOp::create(builder, loc, load.getDesc(), load.getOffsets(),
                                buffer);
      tgpu::AsyncWaitOp::create(builder, loc, 0);
      // Publish this thread's copies to the whole CTA.
      tgpu::BarrierOp::create(builder, loc);
      staged.push_back(load);
    }
    return buffer;
  }

  /// A register lhs of a transposed-lhs product (P in P^T dO) goes through
  /// shared memory: each warp holds whole rows of P, but the product's
  /// m16 tiles need its columns, which ldmatrix.trans reads from there.
  FailureOr<Value> storeTransposed(Value tile, tile::DotOp dot) {
    auto type = cast<RankedTensorType>(tile.getType());
    Type elt = type.getElementType();
    if (type.getRank() != 2)
      return dot.emitError() << "mma operands must be 2-D tiles";
    if (!elt.isBF16() && !elt.isF16())
      return dot.emitError()
             << "a transposed register lhs goes through shared memory in "
                "bf16 or f16 (ldmatrix.trans); round it first, got "
             << elt;
    // A buffer an earlier loop stored the same kind of tile in, and is done
    // with (the split loops of one kernel), or a new one.
    Value buffer;
    for (Value candidate : storedBuffers[type])
      if (doneWith(candidate, dot)) {
        buffer = candidate;
        break;
      }
    if (!buffer) {
      buffer = allocate(type);
      storedBuffers[type].push_back(buffer);
    }
    storedTiles[tile] = buffer;
    builder.setInsertionPoint(dot);
    Location loc = dot.getLoc();
    // Every warp must be done reading the buffer's previous contents...
    tgpu::BarrierOp::create(builder, loc);
    tgpu::StoreSharedOp::create(builder, loc, tile, buffer);
    // ... and sees every warp's rows before reading columns.
    tgpu::BarrierOp::create(builder, loc);
    return buffer;
  }

  /// Whether the store_shared of `tile` and `dot` sit in one block (the
  /// store first, as the walk order guarantees): then no loop iteration can
  /// reach the dot without passing the store.
  bool sameBlockAfterStore(Value tile, tile::DotOp dot) {
    for (Operation *user : tile.getUsers())
      if (auto store = dyn_cast<tgpu::StoreSharedOp>(user))
        if (store->getBlock() == dot->getBlock() && store->isBeforeInBlock(dot))
          return true;
    return false;
  }

  LogicalResult scheduleDot(tile::DotOp dot) {
    auto resultType = cast<RankedTensorType>(dot.getResult().getType());
    if (!resultType.getElementType().isF32())
      return dot.emitError() << "the GPU schedule accumulates in f32, not "
                             << resultType.getElementType();
    Value lhs = dot.getLhs();
    auto stagedLhs = stage(lhs, dot, Value());
    if (failed(stagedLhs))
      return failure();
    if (*stagedLhs) {
      lhs = *stagedLhs;
    } else if (Value stored = storedTiles.lookup(lhs);
               stored && sameBlockAfterStore(lhs, dot)) {
      // Already in shared memory for an earlier transposed product (dS for
      // dS^T Q, then dS K in the atomic schedule): read it from there, so
      // the register tile dies at its store instead of staying live.
      lhs = stored;
    } else if (dot.getTransposeLhs()) {
      auto storedLhs = storeTransposed(lhs, dot);
      if (failed(storedLhs))
        return failure();
      lhs = *storedLhs;
    }
    Value lhsBuffer = isa<MemRefType>(lhs.getType()) ? lhs : Value();
    auto rhs = stage(dot.getRhs(), dot, lhsBuffer);
    if (failed(rhs))
      return failure();
    if (!*rhs)
      return dot.emitError()
             << "the rhs of a tile.dot must be loaded from a descriptor to "
                "be staged in shared memory";
    builder.setInsertionPoint(dot);
    Value acc = dot.getAcc();
    if (!acc) {
      Value zero = arith::ConstantOp::create(builder, dot.getLoc(),
                                             builder.getF32FloatAttr(0.0));
      acc = tile::SplatOp::create(builder, dot.getLoc(), resultType, zero);
    }
    Value mma =
        tgpu::MmaOp::create(builder, dot.getLoc(), resultType, lhs, *rhs, acc,
                            dot.getTransposeRhs(), dot.getTransposeLhs());
    dot.replaceAllUsesWith(mma);
    dot.erase();
    return success();
  }

  /// The 1-D tiles that hold per-column values: those broadcast down the
  /// columns (`tile.broadcast` dim 0: the dK/dV kernel's per-query LSE and
  /// D across Sᵀ) and the elementwise chains they belong to. A tile that is
  /// also per row (a row reduction, a broadcast along rows) is an error.
  FailureOr<llvm::DenseSet<Value>> columnTiles() {
    llvm::DenseSet<Value> columns;
    SmallVector<Value> work;
    func.walk([&](tile::BroadcastOp b) {
      if (b.getDim() == 0)
        work.push_back(b.getSource());
    });
    auto oneD = [](Value v) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      return type && type.getRank() == 1;
    };
    auto elementwise = [](Operation *op) {
      return op && op->getNumResults() == 1 &&
             isa<arith::ArithDialect, math::MathDialect>(op->getDialect());
    };
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!columns.insert(v).second)
        continue;
      Operation *def = v.getDefiningOp();
      if (isa_and_nonnull<tile::ReduceOp>(def))
        return def->emitError() << "a row statistic cannot also be a "
                                   "per-column tile";
      if (elementwise(def))
        for (Value operand : def->getOperands())
          if (oneD(operand))
            work.push_back(operand);
      // A masked per-column load reads through a per-column mask.
      if (auto load = dyn_cast_or_null<tile::LoadOp>(def))
        if (Value mask = load.getMask())
          work.push_back(mask);
      // A splat is a constant: its other users need not be per column
      // (they get their own copy below).
      if (isa_and_nonnull<tile::SplatOp>(def))
        continue;
      for (Operation *user : v.getUsers()) {
        if (auto b = dyn_cast<tile::BroadcastOp>(user); b && b.getDim() == 1)
          return user->emitError() << "a per-column tile cannot also be "
                                      "broadcast along rows";
        if (elementwise(user) && oneD(user->getResult(0)))
          work.push_back(user->getResult(0));
      }
    }
    // Splats shared (after CSE) with per-row chains: a copy for those.
    for (Value v : llvm::to_vector(columns)) {
      auto splat = v.getDefiningOp<tile::SplatOp>();
      if (!splat)
        continue;
      for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
        Operation *user = use.getOwner();
        auto broadcast = dyn_cast<tile::BroadcastOp>(user);
        bool perColumn = (broadcast && broadcast.getDim() == 0) ||
                         llvm::any_of(user->getResults(), [&](Value r) {
                           return columns.contains(r);
                         });
        if (perColumn)
          continue;
        OpBuilder b(user);
        use.set(b.clone(*splat)->getResult(0));
      }
    }
    return columns;
  }

  /// Every register tile gets the mma layout (2-D), its row slice (1-D) or,
  /// for per-column values (columnTiles), its column slice. Rows split over
  /// the warps in m16 tiles: S and P have BLOCK_M rows, the backward's dK
  /// and dV accumulators and Sᵀ BLOCK_N.
  LogicalResult assignLayouts() {
    auto blockM = func->getAttrOfType<IntegerAttr>(tile::attrs::kBlockM);
    if (!blockM)
      return func.emitError() << "a tile kernel needs " << tile::attrs::kBlockM;
    int64_t m = blockM.getInt(), rowQuantum = 16 * numWarps;
    // Tiles whose rows are keys (keys by queries; per-query values are
    // columns): the warps split the keys.
    if (auto rows = func->getAttrOfType<IntegerAttr>(tile::attrs::kTileRows))
      m = std::max(m, rows.getInt());
    if (m % rowQuantum != 0)
      return func.emitError()
             << "block_m " << m << " must be a multiple of 16 * num_warps ("
             << rowQuantum << ") for the mma layout";
    MLIRContext *ctx = func.getContext();
    Attribute mmaLayout = tgpu::MmaLayoutAttr::get(ctx, numWarps);
    Attribute rowsLayout = tgpu::RowsLayoutAttr::get(ctx, numWarps);
    Attribute colsLayout = tgpu::ColsLayoutAttr::get(ctx, numWarps);
    FailureOr<llvm::DenseSet<Value>> columns = columnTiles();
    if (failed(columns))
      return failure();
    auto encode = [&](Value v, Operation *where) -> LogicalResult {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type)
        return success();
      if (columns->contains(v)) {
        if (type.getDimSize(0) % 16 != 0)
          return where->emitError()
                 << "no GPU register layout for per-column " << type
                 << ": columns must be a multiple of 16";
        v.setType(RankedTensorType::get(type.getShape(), type.getElementType(),
                                        colsLayout));
        return success();
      }
      bool rowsSplit = type.getRank() >= 1 && type.getDimSize(0) > 0 &&
                       type.getDimSize(0) % rowQuantum == 0;
      if (type.getRank() == 2 && rowsSplit && type.getDimSize(1) % 16 == 0) {
        v.setType(RankedTensorType::get(type.getShape(), type.getElementType(),
                                        mmaLayout));
        return success();
      }
      // Fewer rows than 16 per warp (the 64-query dQ share of a 128-key
      // dK/dV CTA): the warps split into column groups, each with all rows.
      if (type.getRank() == 2 && type.getDimSize(0) > 0 &&
          type.getDimSize(0) % 16 == 0 &&
          rowQuantum % type.getDimSize(0) == 0) {
        int64_t groups = rowQuantum / type.getDimSize(0);
        if (type.getDimSize(1) % (16 * groups) == 0) {
          if (failed(verifyColumnGroupUses(v)))
            return failure();
          v.setType(RankedTensorType::get(
              type.getShape(), type.getElementType(),
              tgpu::MmaLayoutAttr::get(ctx, numWarps, groups)));
          return success();
        }
      }
      if (type.getRank() == 1 && rowsSplit) {
        v.setType(RankedTensorType::get(type.getShape(), type.getElementType(),
                                        rowsLayout));
        return success();
      }
      return where->emitError()
             << "no GPU register layout for " << type
             << ": tiles must be RxN or R with R a multiple of " << rowQuantum
             << " (16 rows per warp) and N a multiple of 16, or RxN with R a "
                "multiple of 16 dividing "
             << rowQuantum << " and N of 16 per column group";
    };
    WalkResult result = func.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (failed(encode(arg, op)))
              return WalkResult::interrupt();
      for (Value v : op->getResults())
        if (failed(encode(v, op)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  /// A tile in column groups holds part of each row per warp: products
  /// (as the accumulator), elementwise ops, splats, index tiles, loops,
  /// loads, stores and atomic adds handle it element by element, but row
  /// statistics, broadcasts and a register lhs of a product would need
  /// other warps' values (and dropout's bits are drawn per whole-row
  /// fragment).
  LogicalResult verifyColumnGroupUses(Value v) {
    auto unsupported = [](Operation *op, Value v) {
      if (isa<tile::ReduceOp, tile::ReduceAllOp, tile::BroadcastOp>(op))
        return true;
      if (auto dot = dyn_cast<tile::DotOp>(op))
        return dot.getLhs() == v || dot.getRhs() == v;
      if (auto mma = dyn_cast<tgpu::MmaOp>(op))
        return mma.getLhs() == v;
      return false;
    };
    if (auto broadcast = v.getDefiningOp<tile::BroadcastOp>())
      return broadcast.emitError()
             << "no GPU register layout for " << v.getType()
             << " broadcast from a 1-D tile: with " << numWarps
             << " warps its rows split into column groups";
    if (auto philox = v.getDefiningOp<tile::PhiloxOp>())
      return philox.emitError() << "no GPU register layout for " << v.getType()
                                << " drawn by tile.philox: with " << numWarps
                                << " warps its rows split into column groups";
    for (Operation *user : v.getUsers())
      if (unsupported(user, v))
        return user->emitError()
               << "no GPU register layout for " << v.getType() << " read by "
               << user->getName() << ": with " << numWarps
               << " warps its rows split into column groups, whose rows "
                  "span several warps";
    return success();
  }

  func::FuncOp func;
  int64_t numWarps;
  OpBuilder builder;
  int64_t sharedBytes = 0;
  DenseMap<std::tuple<Value, Attribute, Type>, Value> buffers;
  DenseMap<Operation *, Value> stagedBuffers;
  /// Register tiles written to shared memory for a transposed product.
  DenseMap<Value, Value> storedTiles;
  /// The buffers of transposed lhs tiles, by tile type, for reuse by later
  /// loops.
  DenseMap<Type, SmallVector<Value>> storedBuffers;
  SmallVector<tile::LoadOp> staged;
  /// Loads read as windows of another's buffer (windowOfStaged).
  SmallVector<tile::LoadOp> windowed;
};

/// Warps of a kernel when the pass is not given a count: each warp owns 16
/// rows of the kernel's row block. A forward CTA's rows are its BLOCK_M
/// queries; the backward kernels use min(BLOCK_M, BLOCK_N), so that the dK/dV
/// kernel's BLOCK_N keys and the dQ kernel's BLOCK_M queries get the same
/// warps (at BLOCK_M = 128, BLOCK_N = 64: 4 warps of two m16 tiles each),
/// except that a kernel whose tile rows are keys (tile.tile_rows: keys by
/// queries) gives each 16 of them a warp.
int64_t warpsFor(func::FuncOp kernel) {
  auto m = kernel->getAttrOfType<IntegerAttr>(tile::attrs::kBlockM);
  auto n = kernel->getAttrOfType<IntegerAttr>(tile::attrs::kBlockN);
  if (!m)
    return 0;
  int64_t rows = m.getInt();
  if (kernel->hasAttr(tile::attrs::kBackwardStage) && n)
    rows = std::min(rows, n.getInt());
  auto tileRows = kernel->getAttrOfType<IntegerAttr>(tile::attrs::kTileRows);
  if (tileRows && tileRows.getInt() > rows)
    rows = tileRows.getInt();
  return std::max<int64_t>(1, rows / 16);
}

struct ConvertTileToTileGPU
    : public kiln::impl::ConvertTileToTileGPUBase<ConvertTileToTileGPU> {
  using Base::Base;
  void runOnOperation() override {
    if (arch != "sm_80" && arch != "sm_90a") {
      getOperation().emitError()
          << "unsupported arch '" << arch << "'; expected sm_80 or sm_90a";
      return signalPassFailure();
    }
    if (numWarps < 0 || numWarps > 16) {
      getOperation().emitError() << "num-warps must be in [0, 16]";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> kernels;
    getOperation().walk([&](func::FuncOp f) {
      if (f->hasAttr(tile::attrs::kKernel))
        kernels.push_back(f);
    });
    for (func::FuncOp kernel : kernels) {
      int64_t warps = numWarps > 0 ? int64_t(numWarps) : warpsFor(kernel);
      if (warps < 1 || warps > 16) {
        kernel.emitError() << "the kernel's tiles give " << warps
                           << " warps; expected 1 to 16";
        return signalPassFailure();
      }
      chunkAtomicProducts(kernel, atomicProductColumns,
                          atomicProductWholeColumns);
      Scheduler scheduler(kernel, warps);
      if (failed(scheduler.run(sharedMemoryBytes)))
        return signalPassFailure();
      kernel->setAttr(tgpu::attrs::kArch, StringAttr::get(&getContext(), arch));
      if (fastMath)
        kernel->setAttr(tgpu::attrs::kFastMath, UnitAttr::get(&getContext()));
      // Only key-row draws have calls to share (one per 4 elements).
      bool keyRowDraws = false;
      if (philoxLanePairs)
        kernel.walk([&](tile::PhiloxOp philox) {
          keyRowDraws |= philox.getKeysByQueries();
        });
      if (keyRowDraws)
        kernel->setAttr(tgpu::attrs::kPhiloxLanePairs,
                        UnitAttr::get(&getContext()));
    }
  }
};

} // namespace
