//===- WarpSpecialize.cpp - a TMA producer warpgroup and consumers --------===//
//
// See the pass description in Passes.td. The consumers keep the kernel as it
// was, less its copies and the waits and barriers that published them; the
// producer is built from the copies alone, in the same order and over the
// same loops, so the two sides count ring steps identically.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"
#include "dialects/TileGPU/Transforms/Persistent.h"
#include "dialects/TileGPU/Transforms/RegisterEstimate.h"
#include "dialects/TileGPU/Transforms/Rings.h"
#include "dialects/TileGPU/Transforms/SharedLayout.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <tuple>

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUWARPSPECIALIZE
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;
using namespace kiln::tgpu;

namespace {

/// The producer's warpgroup: TMA needs one thread, setmaxnreg a warpgroup.
constexpr int64_t kProducerWarps = 4;
/// What the producer keeps: its loop, coordinates and barrier indices.
constexpr int64_t kProducerRegisters = 24;
/// With the dropout's keep bits drawn by the producer (`producer-bits`): a
/// Philox call's counter, products and key, the consumer thread's words,
/// beside the loop's state; with two consumer warpgroups (one CTA per
/// multiprocessor) enough for several calls in flight, the consumers keeping
/// 208.
constexpr int64_t kProducerBitsRegisters = 40;
constexpr int64_t kProducerBitsRegistersWide = 96;
/// A persistent producer warpgroup's two words for its next tile
/// (tgpu.next_tile shares), as the shared layout aligns a buffer.
constexpr int64_t kTileWordsBytes = 128;
/// setmaxnreg's ceiling. Consumers always raise their budget (a lower value
/// than the compiler allocated at entry would be undefined): with one
/// consumer warpgroup and one CTA per multiprocessor that is 256.
constexpr int64_t kMaxRegisters = 256;

/// A copy the producer takes over.
struct Load {
  CopyAsyncOp copy;
  scf::ForOp loop; ///< null: issued once, before any loop
  tile::ViewOp view;
  unsigned argument; ///< the kernel argument the view reads
  /// The loop body's ops computing the step's rows when they are not the
  /// induction variable itself, and a per-step view's batch and head
  /// (stepRowsChain).
  SmallVector<Operation *> rowsChain;

  /// A paged KV cache's rows: boxes of min(page size, rows) rows, each from
  /// its own page (tgpu.tma_load_pages).
  bool paged() { return view.isPaged(); }
  /// One sequence of a packed (varlen) [T, H, D] argument: a 3-D map, the
  /// sequence's first row added to the tile's.
  bool ragged() { return view.isRagged(); }
  int64_t boxRows() {
    int64_t rows = copy.getDest().getType().getDimSize(0);
    return paged() ? std::min(view.getType().getPageSize(), rows) : rows;
  }
};

/// A buffer loaded in KV loops: it becomes a ring of `stages` buffers, each
/// with a "full" barrier (the producer's copy landed) and an "empty" one
/// (every consumer thread has read it).
struct Ring {
  Value buffer;
  SmallVector<Value> stages;
  int64_t index = 0; ///< position among the rings
};

/// A step's per-query vector (the backward's base-2 LSE and D) that the
/// producer copies beside a ring's tile (tgpu.bulk_load), completing on that
/// ring's barriers: the consumers read it from shared memory after the wait
/// they already do, instead of waiting on a load from global memory in front
/// of the step's first product. Each vector of a loop has a slot (a buffer
/// per stage), which vectors of other loops on the same ring share.
struct Vector {
  tile::LoadOp load;
  scf::ForOp loop;
  tile::ViewOp view;
  int64_t ring; ///< the ring whose barriers it shares
  int64_t slot; ///< its buffer among `VectorSlot`s
  /// The consumers' read and the ops computing its count, in order.
  SmallVector<Operation *> read;
  /// Read right after the ring's wait (else where the step first uses it).
  bool early = false;
  /// A view the step makes itself (GQA's dK/dV kernel: the step's query
  /// head): the loop body's ops computing it, the view last
  /// (stepRowsChain), which the producer computes again. Empty for a view
  /// made before the loops.
  SmallVector<Operation *> viewChain;
};
struct VectorSlot {
  int64_t ring;
  RankedTensorType type;
  Value buffer;
  SmallVector<Value> stages;
  /// The loops whose vectors use the slot (one vector per loop).
  SmallVector<Operation *> loops;
};

/// The dropout's keep bits of a step (`tile.philox` compared below a
/// constant threshold) that the producer draws on the consumers' behalf
/// (`producer-bits`) into a slot per stage beside a ring's tile, arriving
/// on that ring's full barrier: the consumers read a few words instead of
/// running Philox.
struct Bits {
  tile::PhiloxOp philox;
  arith::CmpIOp keep;
  scf::ForOp loop;
  int64_t ring;      ///< the ring whose barriers it shares
  int64_t slot = -1; ///< its buffer among `BitsSlot`s
  int64_t threshold;
  RankedTensorType tile; ///< the keep bits' i1 tile
  /// The loop body's ops computing the draw's step values (stepRowsChain).
  SmallVector<Operation *> chain;
  int64_t patches = 0; ///< each consumer thread's patches the producer draws
};
struct BitsSlot {
  int64_t ring;
  RankedTensorType tile;
  int64_t patches;
  Value buffer;
  SmallVector<Value> stages;
};

bool isRegisterTile(Type t) { return isa<RankedTensorType>(t); }

/// The index of the first of `slots` that `matches`, `fresh` appended
/// (and `added` set) where none does: copies that share a slot per stage.
template <typename Slot, typename Pred>
int64_t findOrAddSlot(SmallVectorImpl<Slot> &slots, Pred matches, Slot fresh,
                      bool &added) {
  for (auto [i, slot] : llvm::enumerate(slots))
    if (matches(slot)) {
      added = false;
      return int64_t(i);
    }
  slots.push_back(std::move(fresh));
  added = true;
  return int64_t(slots.size()) - 1;
}

/// Whether each row of argument `arg`'s last dimension starts a whole number
/// of 16-byte chunks after the previous one: its size expression is a
/// constant, or a product with a constant factor, that is a multiple of
/// 16 / `eltBytes` (the backward's per-query workspaces, padded to whole
/// query blocks).
bool rowsOfWholeChunks(func::FuncOp kernel, unsigned arg, int64_t eltBytes) {
  auto shape = kernel.getArgAttrOfType<ArrayAttr>(arg, tile::attrs::kShape);
  if (!shape || shape.empty() || 16 % eltBytes != 0)
    return false;
  int64_t chunk = 16 / eltBytes;
  auto multiple = [&](Attribute a) {
    auto c = dyn_cast<IntegerAttr>(a);
    return c && c.getInt() > 0 && c.getInt() % chunk == 0;
  };
  Attribute last = shape[shape.size() - 1];
  if (multiple(last))
    return true;
  auto product = dyn_cast<ArrayAttr>(last);
  if (!product || product.empty())
    return false;
  auto op = dyn_cast<StringAttr>(product[0]);
  return op && op.getValue() == "mul" &&
         llvm::any_of(product.getValue().drop_front(), multiple);
}

/// A scalar read of a kernel argument that the kernel only ever reads by
/// scalar loads (a capture: a mask's per-program key bound, VisibleBelow.h;
/// a block mask's lists): the producer may read it too.
bool isReadOnlyScalarLoad(Operation *op) {
  auto load = dyn_cast<memref::LoadOp>(op);
  auto arg = load ? dyn_cast<BlockArgument>(load.getMemRef()) : BlockArgument();
  return arg && isa<func::FuncOp>(arg.getOwner()->getParentOp()) &&
         llvm::all_of(arg.getUsers(), [](Operation *user) {
           return isa<memref::LoadOp>(user);
         });
}

/// Scalar setup every warp may run before the split: free of memory
/// effects (or a read-only scalar load), region-free, no register tiles. Setup
/// only moves up within the entry block, which every thread runs anyway, so it
/// need not be speculatable: a division by a run-time value (split-KV's batch =
/// z / kv_splits) qualifies.
bool isSetup(Operation *op) {
  if (isa<SharedAllocOp>(op) || isReadOnlyScalarLoad(op))
    return true;
  return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
         llvm::none_of(op->getResultTypes(), isRegisterTile);
}

/// The ops of `loop`'s body that compute `values` (a step's rows, and the
/// batch and head of a view the step makes) from the induction variable (in
/// body order), each a scalar the producer can compute (isSetup); null when
/// they need anything else. A block-sparse step's rows are its listed
/// block's: a load of the list at the induction variable.
std::optional<SmallVector<Operation *>> stepRowsChain(scf::ForOp loop,
                                                      ValueRange values) {
  llvm::SetVector<Operation *> chain;
  SmallVector<Value> work(values.begin(), values.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == loop.getInductionVar() || loop.isDefinedOutsideOfLoop(v))
      continue;
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != loop.getBody() || !isSetup(def) ||
        isa<SharedAllocOp>(def))
      return std::nullopt;
    if (chain.insert(def))
      llvm::append_range(work, def->getOperands());
  }
  SmallVector<Operation *> ordered(chain.begin(), chain.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// Whether `v`, defined before `loop`, is what the producer can compute
/// ahead of the split: a kernel argument, or setup of the entry block over
/// such values (the split's hoisting below moves it up).
bool producerComputable(Value v, Block &entry) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value next = work.pop_back_val();
    Operation *def = next.getDefiningOp();
    if (!def) {
      if (cast<BlockArgument>(next).getOwner() != &entry)
        return false;
      continue;
    }
    if (def->getBlock() != &entry || !isSetup(def))
      return false;
    if (seen.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return true;
}

/// The values the ops `ops` of `loop`'s body (a step's chain) read from
/// outside the loop, but its induction variable.
SmallVector<Value> readFromOutside(scf::ForOp loop, ArrayRef<Operation *> ops) {
  SmallVector<Value> outside;
  for (Operation *op : ops)
    for (Value v : op->getOperands())
      if (v != loop.getInductionVar() && loop.isDefinedOutsideOfLoop(v))
        outside.push_back(v);
  return outside;
}

/// Whether the producer can compute everything `ops` read from outside
/// `loop` (producerComputable).
bool producerComputesInputs(scf::ForOp loop, ArrayRef<Operation *> ops) {
  Block &entry = *loop->getBlock();
  return llvm::all_of(readFromOutside(loop, ops),
                      [&](Value v) { return producerComputable(v, entry); });
}

/// The vectors of `loops`' bodies the producer can copy beside a ring's tile
/// (see Vector): unmasked 1-D f32 loads, in a `#tgpu.rows` or `#tgpu.cols`
/// layout of whole 16-byte chunks, of the last dimension of a workspace
/// whose rows start 16-byte aligned, through a view made before the loops
/// or one the step makes from values the producer can compute too, at the
/// rows of a ring's copy in the same loop.
SmallVector<Vector> ringVectorsOf(func::FuncOp kernel,
                                  MutableArrayRef<Load> loads,
                                  ArrayRef<scf::ForOp> loops,
                                  const DenseMap<Value, int64_t> &ringOf) {
  SmallVector<Vector> vectors;
  Block &entry = kernel.front();
  // The ops computing a view the step makes, the view last, where the
  // producer can compute them all; null otherwise.
  auto perStepView =
      [&](scf::ForOp loop,
          tile::ViewOp view) -> std::optional<SmallVector<Operation *>> {
    auto chain = stepRowsChain(loop, view.getResult());
    if (!chain || chain->empty() || chain->back() != view ||
        !producerComputesInputs(loop, *chain))
      return std::nullopt;
    return chain;
  };
  for (scf::ForOp loop : loops)
    for (Operation &op : *loop.getBody()) {
      auto load = dyn_cast<tile::LoadOp>(&op);
      if (!load || load.getMask() || !isa<FloatAttr>(load.getFill()))
        continue;
      auto type = cast<RankedTensorType>(load.getType());
      if (type.getRank() != 1 || !type.getElementType().isF32() ||
          (type.getDimSize(0) * 4) % 16 != 0 ||
          !isa_and_nonnull<RowsLayoutAttr, ColsLayoutAttr>(type.getEncoding()))
        continue;
      auto view = load.getDesc().getDefiningOp<tile::ViewOp>();
      auto arg =
          view ? dyn_cast<BlockArgument>(view.getBase()) : BlockArgument();
      auto base = arg ? dyn_cast<MemRefType>(arg.getType()) : MemRefType();
      if (!base || arg.getOwner() != &entry ||
          (view->getBlock() != &entry && view->getBlock() != loop.getBody()) ||
          view.isPaged() || view.isRagged() ||
          view.getKeep() != ArrayRef<int64_t>{base.getRank() - 1} ||
          !kernel.getArgAttr(arg.getArgNumber(), tile::attrs::kWorkspace) ||
          !rowsOfWholeChunks(kernel, arg.getArgNumber(), 4))
        continue;
      SmallVector<Operation *> viewChain;
      if (view->getBlock() == loop.getBody()) {
        auto chain = perStepView(loop, view);
        if (!chain)
          continue;
        viewChain = std::move(*chain);
      }
      for (Load &host : loads)
        if (host.loop == loop &&
            host.copy.getOffsets()[0] == load.getOffsets()[0]) {
          Vector v{load, loop, view, ringOf.lookup(host.copy.getDest()), -1};
          v.viewChain = std::move(viewChain);
          vectors.push_back(std::move(v));
          break;
        }
    }
  return vectors;
}

/// The steps' keep bits the producer can draw (see Bits): a `tile.philox`
/// whose one user is `arith.cmpi ult` against a splat of a constant, in a
/// `#tgpu.mma` tile of all `consumerWarps` (one column group), in a loop
/// that loads a ring, its step values computed from the induction variable
/// by scalars the producer can compute too.
SmallVector<Bits> ringBitsOf(MutableArrayRef<Load> loads,
                             ArrayRef<scf::ForOp> loops,
                             const DenseMap<Value, int64_t> &ringOf,
                             int64_t consumerWarps) {
  SmallVector<Bits> found;
  for (scf::ForOp loop : loops)
    loop.getBody()->walk([&](tile::PhiloxOp philox) {
      // 8-bit uniforms stay with the consumers: kiln::draw_keep_bits draws
      // 16-bit ones.
      if (philox->getBlock() != loop.getBody() || !philox->hasOneUse() ||
          philox.getBits() != 16)
        return;
      auto keep = dyn_cast<arith::CmpIOp>(*philox->getUsers().begin());
      if (!keep || keep.getPredicate() != arith::CmpIPredicate::ult ||
          keep.getLhs() != philox.getResult() ||
          keep->getBlock() != loop.getBody())
        return;
      auto splat = keep.getRhs().getDefiningOp<tile::SplatOp>();
      IntegerAttr threshold;
      if (!splat || !loop.isDefinedOutsideOfLoop(splat.getResult()) ||
          !matchPattern(splat->getOperand(0), m_Constant(&threshold)) ||
          threshold.getInt() < 0 || threshold.getInt() > (1 << 16))
        return;
      auto type = cast<RankedTensorType>(philox.getType());
      auto mma = dyn_cast_or_null<MmaLayoutAttr>(type.getEncoding());
      if (!mma || mma.getColGroups() != 1 || mma.getWarps() != consumerWarps ||
          type.getRank() != 2 || type.getDimSize(0) % (16 * consumerWarps) ||
          type.getDimSize(1) % 16)
        return;
      auto chain = stepRowsChain(loop, philox->getOperands());
      if (!chain)
        return;
      if (!producerComputesInputs(loop, *chain) ||
          !producerComputesInputs(loop, philox.getOperation()))
        return;
      // The ring of the loop's first copy: its wait comes before the step's
      // first product, which the bits follow.
      Load *host = nullptr;
      for (Load &load : loads)
        if (load.loop == loop &&
            (!host || load.copy->isBeforeInBlock(host->copy)))
          host = &load;
      if (!host)
        return;
      found.push_back({philox, keep, loop, ringOf.lookup(host->copy.getDest()),
                       -1, threshold.getInt(),
                       cast<RankedTensorType>(keep.getType()),
                       std::move(*chain)});
    });
  return found;
}

/// Why the kernel is left to the other schedules, or null when it fits.
const char *unsupported(func::FuncOp kernel, SmallVectorImpl<Load> &loads) {
  Block &entry = kernel.front();
  bool bad = false;
  const char *why = nullptr;
  auto reject = [&](const char *reason) {
    if (!why)
      why = reason;
    bad = true;
  };
  kernel.walk([&](Operation *op) {
    if (isa<MmaOp, WarpSpecializeOp>(op))
      reject("shared memory read by mma.sync");
    // Threads may write a buffer of their own (the atomic backward's dS for
    // dS K), never one the producer fills.
    if (auto store = dyn_cast<StoreSharedOp>(op)) {
      if (!store.getDest().getDefiningOp<SharedAllocOp>() ||
          llvm::any_of(store.getDest().getUsers(),
                       [](Operation *user) { return isa<CopyAsyncOp>(user); }))
        reject("shared memory written by threads and by copies");
    }
    if (auto mma = dyn_cast<WarpgroupMmaOp>(op); mma && mma.getAsync())
      reject("asynchronous products");
    auto copy = dyn_cast<CopyAsyncOp>(op);
    if (!copy)
      return;
    Load load{
        copy, nullptr, copy.getSource().getDefiningOp<tile::ViewOp>(), 0, {}};
    Block *block = copy->getBlock();
    if (block != &entry) {
      load.loop = dyn_cast<scf::ForOp>(block->getParentOp());
      if (!load.loop || load.loop->getBlock() != &entry)
        return reject("copies outside the kernel's top level or its loops");
    }
    auto arg = load.view ? dyn_cast<BlockArgument>(load.view.getBase())
                         : BlockArgument();
    auto type = arg ? dyn_cast<MemRefType>(arg.getType()) : MemRefType();
    bool dense = type && type.getRank() == 4 && !load.ragged() &&
                 load.view.getKeep() == ArrayRef<int64_t>{1, 3};
    // (A ragged view of packed GQA rows would be a 3-D box too; no lowering
    // makes one.)
    bool packedBatch = type && type.getRank() == 3 && load.ragged() &&
                       load.view.getKeep() == ArrayRef<int64_t>{0, 2} &&
                       load.view.getType().getGroup() == 1;
    if (!arg || arg.getOwner() != &entry || !(dense || packedBatch))
      return reject("copies from other than a [B, N, H, D] kernel argument "
                    "or a sequence of a packed [T, H, D] one");
    // Packed rows (GQA) are a 3-D box: columns, the group's heads, queries.
    int64_t group = load.view.getType().getGroup();
    if (group > 1 &&
        (load.view.getPacked() != 2 ||
         copy.getDest().getType().getDimSize(0) % group != 0 || group > 256))
      return reject("copies of packed rows other than whole groups of heads");
    load.argument = arg.getArgNumber();
    if (!swizzleBytes(copy.getDest().getType()) ||
        !copy.getDest().getDefiningOp<SharedAllocOp>() ||
        copy.getDest().getType().getDimSize(0) > 256)
      return reject("copies into buffers a TMA box cannot fill");
    if (copy.getOffsets().size() != 2)
      return reject("copies of other than a 2-D tile");
    // Paged: whole 8-row swizzle atoms of whole pages, in KV loops.
    if (load.paged()) {
      int64_t rows = copy.getDest().getType().getDimSize(0);
      int64_t box = load.boxRows();
      if (!load.loop || box % 8 != 0 || rows % box != 0 ||
          load.view.getType().getPageSize() % box != 0)
        return reject("paged copies a TMA box of whole pages cannot take");
    }
    auto column = copy.getOffsets()[1].getDefiningOp<arith::ConstantIndexOp>();
    if (!column || column.value() != 0)
      return reject("copies of part of a row");
    // A loop's copy loads the step's own rows: the induction variable, or
    // (not paged or ragged, whose producer and clears index by it) rows
    // computed from it by scalars the producer can compute too; likewise
    // the batch and head of a view the step makes itself (GQA's dK/dV
    // kernel: one loop over the group's heads and their Q blocks).
    if (load.loop) {
      SmallVector<Value> stepValues;
      if (copy.getOffsets()[0] != load.loop.getInductionVar())
        stepValues.push_back(copy.getOffsets()[0]);
      if (!load.loop.isDefinedOutsideOfLoop(load.view.getResult())) {
        if (load.view->getBlock() != load.loop.getBody())
          return reject("copies through a view made in a nested region");
        llvm::append_range(stepValues, load.view.getIndices());
      }
      if (!stepValues.empty()) {
        auto chain = stepRowsChain(load.loop, stepValues);
        if (!chain || load.paged() || load.ragged())
          return reject("copies of rows only the consumers can compute");
        load.rowsChain = std::move(*chain);
      }
    }
    loads.push_back(load);
  });
  if (bad)
    return why;
  if (loads.empty())
    return "no copies";
  // A buffer is loaded once before the loops or once per loop, and read
  // only by products in the loop (or anywhere, when loaded once).
  llvm::MapVector<Value, SmallVector<Load *>> byBuffer;
  for (Load &load : loads)
    byBuffer[load.copy.getDest()].push_back(&load);
  for (auto &[buffer, writers] : byBuffer) {
    bool once = !writers.front()->loop;
    llvm::SmallPtrSet<Operation *, 4> loops;
    for (Load *w : writers)
      if (bool(w->loop) == once || !loops.insert(w->loop).second)
        return "a buffer loaded both once and in loops, or twice in a loop";
    if (once && writers.size() != 1)
      return "a buffer loaded twice";
    for (Operation *user : buffer.getUsers()) {
      if (isa<CopyAsyncOp>(user))
        continue;
      if (!isa<WarpgroupMmaOp>(user))
        return "a buffer read by other than a product";
      if (!once && !llvm::any_of(writers, [&](Load *w) {
            return w->loop->isAncestor(user);
          }))
        return "a ring buffer read outside the loop that loads it";
    }
    // Each loop reads what it loaded, after loading it: a slot nobody reads
    // would never be released, and a read before the copy wants the
    // previous step's data.
    for (Load *w : writers) {
      if (once)
        continue;
      Block *body = w->loop.getBody();
      bool read = false;
      for (Operation *user : buffer.getUsers()) {
        Operation *top = body->findAncestorOpInBlock(*user);
        if (!top || isa<CopyAsyncOp>(user))
          continue;
        if (!w->copy->isBeforeInBlock(top))
          return "a ring buffer read before its copy in a step";
        read = true;
      }
      if (!read)
        return "a ring buffer its loop never reads";
    }
  }
  return nullptr;
}

struct TileGPUWarpSpecialize
    : public kiln::tgpu::impl::TileGPUWarpSpecializeBase<
          TileGPUWarpSpecialize> {
  using Base::Base;

  void runOnOperation() override {
    if (maxCtasPerSM < 1) {
      getOperation()->emitError()
          << "tgpu-warp-specialize: max-ctas-per-sm must be at least 1, got "
          << maxCtasPerSM;
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> kernels;
    getOperation()->walk([&](func::FuncOp f) {
      auto arch = f->getAttrOfType<StringAttr>(attrs::kArch);
      if (f->hasAttr(attrs::kSharedBytes) && arch && arch.getValue() == "sm_90a")
        kernels.push_back(f);
    });
    for (func::FuncOp kernel : kernels)
      if (failed(runOnKernel(kernel)))
        return signalPassFailure();
  }

  LogicalResult runOnKernel(func::FuncOp kernel);
};

/// The ring position of a step of a loop (the ring's use number base +
/// (iv - lb) / step).
RingPosition stepIndex(OpBuilder &b, Location loc, Value iv, Value lb,
                       Value step, Value base, int64_t stages) {
  return ringPosition(b, loc, stepNumber(b, loc, iv, lb, step, base), stages);
}

/// The TMA coordinates of `load` (column, row, head, batch: the map's
/// order), with the loop's induction variable mapped. Packed rows (group G)
/// are (column, first head, row / G, batch): the map orders the head
/// dimension before the queries.
SmallVector<Value> coordinates(OpBuilder &b, Location loc, Load load,
                               IRMapping &mapping) {
  auto offsets = load.copy.getOffsets();
  auto indices = load.view.getIndices(); // dims 0 and 2
  Value row = mapping.lookupOrDefault(offsets[0]);
  int64_t group = load.view.getType().getGroup();
  if (load.ragged()) {
    // [T, H, D]: (column, row, head), the sequence's rows starting at its
    // first row of the array.
    Value first = tile::FirstRowOp::create(b, loc, b.getIndexType(),
                                           load.view.getResult());
    return {mapping.lookupOrDefault(offsets[1]),
            arith::AddIOp::create(b, loc, row, first),
            mapping.lookupOrDefault(indices[0])};
  }
  Value head = mapping.lookupOrDefault(indices[1]);
  if (group > 1)
    return {mapping.lookupOrDefault(offsets[1]), head,
            arith::DivUIOp::create(
                b, loc, row, arith::ConstantIndexOp::create(b, loc, group)),
            mapping.lookupOrDefault(indices[0])};
  return {mapping.lookupOrDefault(offsets[1]), row, head,
          mapping.lookupOrDefault(indices[0])};
}

LogicalResult TileGPUWarpSpecialize::runOnKernel(func::FuncOp kernel) {
  SmallVector<Load> loads;
  if (unsupported(kernel, loads))
    return success();
  auto warpsAttr = kernel->getAttrOfType<IntegerAttr>(attrs::kNumWarps);
  auto sharedAttr = kernel->getAttrOfType<IntegerAttr>(attrs::kSharedBytes);
  if (!warpsAttr || !sharedAttr)
    return kernel.emitError() << attrs::kNumWarps << " and "
                              << attrs::kSharedBytes
                              << " must be integer attributes";
  int64_t consumerWarps = warpsAttr.getInt();
  if (consumerWarps % 4 != 0)
    return success();
  MLIRContext *ctx = kernel.getContext();
  Block &entry = kernel.front();
  Location loc = kernel.getLoc();

  // Rings, loops (in order) and the loads issued once.
  SmallVector<Ring> rings;
  DenseMap<Value, int64_t> ringOf;
  SmallVector<scf::ForOp> loops;
  SmallVector<Load *> once;
  for (Load &load : loads) {
    if (!load.loop) {
      once.push_back(&load);
      continue;
    }
    if (!llvm::is_contained(loops, load.loop))
      loops.push_back(load.loop);
    Value buffer = load.copy.getDest();
    if (!ringOf.count(buffer)) {
      ringOf[buffer] = int64_t(rings.size());
      rings.push_back({buffer, {buffer}, int64_t(rings.size())});
    }
  }
  llvm::sort(loops, [](scf::ForOp a, scf::ForOp b) {
    return a->isBeforeInBlock(b);
  });

  // The vectors copied beside the rings' tiles, their slots, and the bytes
  // those take per stage.
  SmallVector<Vector> vectors;
  SmallVector<VectorSlot> slots;
  int64_t vectorBytes = 0;
  if (ringVectors)
    vectors = ringVectorsOf(kernel, loads, loops, ringOf);
  for (Vector &v : vectors) {
    auto type = cast<RankedTensorType>(v.load.getType());
    bool added;
    // (The loops' steps take turns in the ring's stages, so vectors of
    // different loops may share a slot: one per loop.)
    v.slot = findOrAddSlot(
        slots,
        [&](const VectorSlot &slot) {
          return slot.ring == v.ring && slot.type == type &&
                 !llvm::is_contained(slot.loops, v.loop);
        },
        VectorSlot{v.ring, type, Value(), {}, {}}, added);
    slots[v.slot].loops.push_back(v.loop);
    if (added)
      vectorBytes += llvm::alignTo(type.getDimSize(0) * 4, 128);
  }

  // The keep bits the producer draws, their slots and the bytes those take
  // per stage.
  SmallVector<Bits> bits;
  SmallVector<BitsSlot> bitsSlots;
  int64_t bitsBytes = 0;
  if (producerBits)
    bits = ringBitsOf(loads, loops, ringOf, consumerWarps);
  // (At most one draw per loop and ring, and one in every loop that loads
  // a ring with draws: its full barrier counts the producer's arrivals.)
  for (Ring &ring : rings) {
    bool complete = true;
    bool any = false;
    for (scf::ForOp loop : loops) {
      bool loadsRing = llvm::any_of(loads, [&](Load &l) {
        return l.loop == loop && ringOf.lookup(l.copy.getDest()) == ring.index;
      });
      auto count = llvm::count_if(bits, [&](Bits &d) {
        return d.loop == loop && d.ring == ring.index;
      });
      any |= count > 0;
      if (count > 1 || (loadsRing && count == 0))
        complete = false;
    }
    if (any && !complete)
      llvm::erase_if(bits, [&](Bits &d) { return d.ring == ring.index; });
  }
  for (Bits &d : bits) {
    // The producer's share: `producer-bits-share` eighths of each consumer
    // thread's patches, at least one.
    d.patches = std::max<int64_t>(
        1, tgpu::keepBitsPatches(d.tile) *
               std::clamp<int64_t>(producerBitsShare, 1, 8) / 8);
    bool added;
    d.slot = findOrAddSlot(
        bitsSlots,
        [&](const BitsSlot &slot) {
          return slot.ring == d.ring && slot.tile == d.tile &&
                 slot.patches == d.patches;
        },
        BitsSlot{d.ring, d.tile, d.patches, Value(), {}}, added);
    if (added)
      bitsBytes +=
          llvm::alignTo(tgpu::keepBitsSlotWords(d.tile, d.patches) * 4, 128);
  }
  int64_t producerRegisters = kProducerRegisters;

  // As many stages as the shared memory holds, up to two; more (up to
  // `stages`) below, after the loaded-once buffers' second copies.
  int64_t ringBytes = 0;
  for (Ring &ring : rings)
    ringBytes += sharedBufferBytes(cast<MemRefType>(ring.buffer.getType()));
  int64_t limit = sharedMemoryBytes;
  // Persistent: a buffer loaded once per tile also gets a "free" barrier
  // (every consumer past its last read) before the next tile's copy.
  // (And three words for the program ids of the tile the producer
  // publishes with the first one's copy.)
  bool loopTiles = persistent && !once.empty() && canRunTilesInLoop(kernel);
  int64_t onceBarriers =
      loopTiles ? 2 * int64_t(once.size()) + 3 : int64_t(once.size());
  int64_t barrierBytes =
      8 * (2 * int64_t(rings.size()) * stages + onceBarriers) + 128;
  int64_t baseStages = std::max<int64_t>(std::min<int64_t>(stages, 2), 1);
  // One consumer warpgroup (the backward's kernels, the decode program)
  // would leave a multiprocessor with four warps to hide latency: two CTAs
  // share it where their shared memory fits, halving the registers, and
  // up to `max-ctas-per-sm` where the registers left per consumer thread still
  // hold the tiles a step keeps across steps (the accumulators, and the
  // tiles read from before the loop), twice its largest own tile (S and dP
  // live together) and 32 for the 16-bit copies, indices and addresses.
  // Calibrated on ptxas -v at three CTAs (136 registers): the D = 64 dQ
  // kernel (32 + 2 x 32 + 32, and its LSE and D) compiles without a
  // spill, its dK/dV kernel (64 carried) spills; at two CTAs every kernel
  // fits, as before.
  int64_t stepRegisters = 32;
  for (scf::ForOp loop : loops)
    stepRegisters = std::max(stepRegisters, tgpu::stepRegisters(loop));
  // The CTA's registers are what each thread gets at entry times its
  // threads; the consumers take what the producer leaves
  // (tgpu.warp_specialize's verifier).
  int64_t threads = 32 * (consumerWarps + kProducerWarps);
  auto consumerRegistersFor = [&](int64_t ctas) -> int64_t {
    return std::min<int64_t>(kMaxRegisters,
                             ((entryRegisters(ctas, threads) * threads -
                               32 * kProducerWarps * producerRegisters) /
                              (32 * consumerWarps)) /
                                 8 * 8);
  };
  // (At most 2048 threads per multiprocessor, and never a budget below
  // the entry allocation, which setmaxnreg.inc cannot lower.)
  auto ctasFor = [&](int64_t bytes) -> int64_t {
    if (32 * consumerWarps != 128 || limit <= 0)
      return 1;
    int64_t ctas = std::min({ctasFitting(bytes, limit), int64_t(maxCtasPerSM),
                             int64_t(2048) / threads});
    auto fits = [&](int64_t c) {
      int64_t registers = consumerRegistersFor(c);
      return registers >= stepRegisters &&
             registers >= entryRegisters(c, threads);
    };
    while (ctas > 2 && !fits(ctas))
      --ctas;
    return ctas >= 2 ? ctas : 1;
  };
  // The stages, shared memory and loaded-once copies with `extra` bytes per
  // stage beside the rings' tiles (the vectors' slots).
  struct Sizing {
    int64_t stages = 0, bytes = 0, onceSlots = 1;
  };
  auto size = [&](int64_t extra, int64_t fixed = 0) {
    Sizing z;
    int64_t perStage = ringBytes + extra;
    for (int64_t s = 1; s <= baseStages; ++s) {
      int64_t needed = sharedAttr.getInt() + fixed + extra +
                       (s - 1) * (perStage + 1024) + barrierBytes;
      if (limit > 0 && needed > limit)
        break;
      z.stages = s;
      z.bytes = needed;
    }
    if (z.stages == 0)
      return z;
    // Persistent: two copies of each loaded-once buffer where the shared
    // memory holds them after the ring's stages, used by turns (slot = the
    // tile's round mod 2), each with its own barriers and program-id words.
    // The producer then loads the next tile's Q as soon as it has issued
    // this tile's last K and V, instead of once the consumers are past their
    // last step: a tile no longer starts on a whole TMA round trip. Not
    // where it would cost a kernel of one consumer warpgroup a CTA per
    // multiprocessor (below): measured slower (the persistent backward at
    // D = 128, docs/performance.md).
    if (loopTiles && doubleTileBuffers) {
      int64_t more = 8 * onceBarriers;
      for (Load *load : once)
        more += sharedBufferBytes(load->copy.getDest().getType()) + 1024;
      bool losesCta = ctasFor(z.bytes + more) < ctasFor(z.bytes);
      if ((limit <= 0 || z.bytes + more <= limit) && !losesCta) {
        z.onceSlots = 2;
        z.bytes += more;
      }
    }
    // Deeper rings (`stages` above two, opt-in: measured no faster, see
    // docs/performance.md) where the shared memory holds them without
    // costing a CTA per multiprocessor.
    for (; z.stages >= 2 && z.stages < stages; ++z.stages) {
      int64_t needed = z.bytes + perStage + 1024;
      if ((limit > 0 && needed > limit) || ctasFor(needed) < ctasFor(z.bytes))
        break;
      z.bytes = needed;
    }
    return z;
  };
  Sizing sizing = size(0);
  if (sizing.stages == 0)
    return success(); // not even the barriers fit: keep cp.async
  // The vectors' slots only where they cost no stage, loaded-once copy or
  // CTA per multiprocessor; else the consumers keep loading them.
  if (!vectors.empty()) {
    Sizing with = size(vectorBytes);
    if (with.stages == sizing.stages && with.onceSlots == sizing.onceSlots &&
        ctasFor(with.bytes) == ctasFor(sizing.bytes)) {
      sizing = with;
    } else {
      vectors.clear();
      slots.clear();
      vectorBytes = 0;
    }
  }
  // The keep bits likewise, with the producer's larger register budget
  // counted too.
  if (!bits.empty()) {
    int64_t ctasBefore = ctasFor(sizing.bytes);
    // (A persistent producer warpgroup shares its tiles through two words,
    // once per CTA.)
    int64_t tileWordsBytes = loopTiles ? kTileWordsBytes : 0;
    producerRegisters = consumerWarps >= 8 ? kProducerBitsRegistersWide
                                           : kProducerBitsRegisters;
    Sizing with = size(vectorBytes + bitsBytes, tileWordsBytes);
    if (with.stages == sizing.stages && with.onceSlots == sizing.onceSlots &&
        ctasFor(with.bytes) == ctasBefore) {
      sizing = with;
    } else {
      producerRegisters = kProducerRegisters;
      bits.clear();
      bitsSlots.clear();
    }
  }
  int64_t numStages = sizing.stages, sharedBytes = sizing.bytes;
  int64_t onceSlots = sizing.onceSlots;
  int64_t numRingBarriers = 2 * int64_t(rings.size()) * numStages;
  int64_t numBarriers = numRingBarriers + onceBarriers * onceSlots;
  auto onceFullIndex = [&](size_t i) {
    return numRingBarriers + int64_t(i) * onceSlots;
  };
  auto onceFreeIndex = [&](size_t i) {
    return numRingBarriers + int64_t(once.size() + i) * onceSlots;
  };
  auto fullIndex = [&](const Ring &r) { return r.index * numStages; };
  auto emptyIndex = [&](const Ring &r) {
    return (int64_t(rings.size()) + r.index) * numStages;
  };

  // Where the split goes: after the kernel's leading scalar setup, with the
  // setup the producer needs further down moved up to it.
  Operation *split = nullptr;
  for (Operation &op : entry)
    if (!isSetup(&op)) {
      split = &op;
      break;
    }
  if (!split || isa<func::ReturnOp>(split))
    return success();
  llvm::SetVector<Value> needed;
  for (scf::ForOp loop : loops)
    needed.insert_range(ValueRange{loop.getLowerBound(), loop.getUpperBound(),
                                   loop.getStep()});
  for (Load &load : loads) {
    // (A step's own view: its indices come from the step's chain below.)
    for (Value index : load.view.getIndices())
      if (!load.loop || load.loop.isDefinedOutsideOfLoop(index))
        needed.insert(index);
    // The producer looks pages up in the view's block table.
    if (load.paged() || load.ragged())
      needed.insert(load.view.getResult());
    for (Value offset : load.copy.getOffsets())
      if (!load.loop || (offset != load.loop.getInductionVar() &&
                         load.loop.isDefinedOutsideOfLoop(offset)))
        needed.insert(offset);
    // The step's rows: what their ops read from outside the loop.
    if (load.loop)
      needed.insert_range(readFromOutside(load.loop, load.rowsChain));
  }
  // The producer copies the vectors through their views (a step's own view
  // computed again from what its ops read from outside the loop).
  for (Vector &v : vectors) {
    if (v.viewChain.empty())
      needed.insert(v.view.getResult());
    needed.insert_range(readFromOutside(v.loop, v.viewChain));
  }
  // It draws the keep bits from the step's values.
  for (Bits &d : bits) {
    needed.insert_range(readFromOutside(d.loop, d.chain));
    needed.insert_range(readFromOutside(d.loop, d.philox.getOperation()));
  }
  llvm::SmallPtrSet<Operation *, 16> hoist;
  for (size_t i = 0; i < needed.size(); ++i) {
    Operation *def = needed[i].getDefiningOp();
    if (!def) {
      // A kernel argument, or the induction variable of a loop the
      // producer copies; any other block argument is the consumers' own.
      auto arg = cast<BlockArgument>(needed[i]);
      if (arg.getOwner() != &entry &&
          !llvm::any_of(loops, [&](scf::ForOp loop) {
            return arg == loop.getInductionVar();
          }))
        return success();
      continue;
    }
    if (def->getBlock() != &entry || !isSetup(def))
      return success(); // the producer would need what only consumers compute
    if (!split->isBeforeInBlock(def) && def != split)
      continue;
    hoist.insert(def);
    needed.insert_range(def->getOperands());
  }
  for (Operation &op : llvm::make_early_inc_range(
           llvm::make_range(split->getIterator(), entry.end())))
    if (hoist.contains(&op))
      op.moveBefore(split);

  OpBuilder b(ctx);
  // Stage buffers, then the barriers, all laid out again below.
  for (Ring &ring : rings) {
    auto alloc = ring.buffer.getDefiningOp<SharedAllocOp>();
    b.setInsertionPointAfter(alloc);
    for (int64_t s = 1; s < numStages; ++s)
      ring.stages.push_back(b.clone(*alloc)->getResult(0));
  }
  for (VectorSlot &slot : slots) {
    b.setInsertionPoint(split);
    auto type = MemRefType::get(
        slot.type.getShape(), slot.type.getElementType(),
        MemRefLayoutAttrInterface(), b.getI64IntegerAttr(kSharedMemorySpace));
    for (int64_t s = 0; s < numStages; ++s)
      slot.stages.push_back(SharedAllocOp::create(b, loc, type, 0));
    slot.buffer = slot.stages.front();
  }
  // Whether the producer draws keep bits into a slot beside `ring`'s tile.
  auto drawsBeside = [&](const Ring &ring) {
    return llvm::any_of(
        bitsSlots, [&](const BitsSlot &d) { return d.ring == ring.index; });
  };
  for (BitsSlot &slot : bitsSlots) {
    b.setInsertionPoint(split);
    auto type = MemRefType::get(
        {tgpu::keepBitsSlotWords(slot.tile, slot.patches)}, b.getI32Type(),
        MemRefLayoutAttrInterface(), b.getI64IntegerAttr(kSharedMemorySpace));
    for (int64_t s = 0; s < numStages; ++s)
      slot.stages.push_back(SharedAllocOp::create(b, loc, type, 0));
    slot.buffer = slot.stages.front();
  }
  Value tileWords;
  if (!bits.empty() && loopTiles) {
    b.setInsertionPoint(split);
    tileWords = SharedAllocOp::create(
        b, loc,
        MemRefType::get({2}, b.getI32Type(), MemRefLayoutAttrInterface(),
                        b.getI64IntegerAttr(kSharedMemorySpace)),
        0);
  }
  b.setInsertionPoint(split);
  auto barrierType = MemRefType::get(
      {numBarriers}, b.getI64Type(), MemRefLayoutAttrInterface(),
      b.getI64IntegerAttr(kSharedMemorySpace));
  Value barriers = SharedAllocOp::create(b, loc, barrierType, 0);
  auto index = [&](int64_t i) -> Value {
    return arith::ConstantIndexOp::create(b, loc, i);
  };
  // The barrier of `ring`'s slot for this step's stage.
  auto fullSlot = [&](const Ring &ring, Value stage) -> Value {
    return arith::AddIOp::create(b, loc, index(fullIndex(ring)), stage);
  };
  auto emptySlot = [&](const Ring &ring, Value stage) -> Value {
    return arith::AddIOp::create(b, loc, index(emptyIndex(ring)), stage);
  };
  int64_t consumerThreads = 32 * consumerWarps;
  for (Ring &ring : rings)
    for (int64_t s = 0; s < numStages; ++s) {
      // (Where the producer draws keep bits beside the ring's tile, each of
      // its threads arrives once they are written.)
      MbarrierInitOp::create(b, loc, barriers, index(fullIndex(ring) + s),
                             drawsBeside(ring) ? 1 + 32 * kProducerWarps : 1);
      MbarrierInitOp::create(b, loc, barriers, index(emptyIndex(ring) + s),
                             consumerThreads);
    }
  for (size_t i = 0; i < once.size(); ++i)
    for (int64_t slot = 0; slot < onceSlots; ++slot) {
      MbarrierInitOp::create(b, loc, barriers, index(onceFullIndex(i) + slot),
                             1);
      if (loopTiles)
        MbarrierInitOp::create(b, loc, barriers,
                               index(onceFreeIndex(i) + slot), consumerThreads);
    }
  BarrierOp::create(b, loc);

  // What changes from tile to tile when the CTA loops over tiles: each a
  // constant of its own here, replaced by runTilesInLoop (only the ring's
  // first position and Q's parity exist without the loop).
  TileCarried carried;
  carried.tileWords = tileWords;
  carried.onceParity = index(0);
  if (loopTiles) {
    for (Value &id : carried.tileIds)
      id = index(0);
    carried.onceFreeParity = index(1);
    carried.barriers = barriers;
    carried.onceFull = index(onceFullIndex(0));
    carried.onceFree = index(onceFreeIndex(0));
    carried.tileSlot =
        index(numRingBarriers + 2 * int64_t(once.size()) * onceSlots);
    carried.onceSlots = onceSlots;
  }
  // The tile's copy of each loaded-once buffer (a select on the tile's slot,
  // per-tile setup that runTilesInLoop computes again on each side), and
  // the index of its barrier `base` for slot 0 in the tile's slot.
  SmallVector<Value> onceBuffers;
  for (Load *load : once)
    onceBuffers.push_back(load->copy.getDest());
  if (onceSlots == 2) {
    carried.onceSlot = index(0);
    Value second = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         carried.onceSlot, index(1));
    for (Value &buffer : onceBuffers) {
      auto alloc = buffer.getDefiningOp<SharedAllocOp>();
      OpBuilder after(alloc->getBlock(), std::next(alloc->getIterator()));
      Value copy = after.clone(*alloc)->getResult(0);
      Value tiles = arith::SelectOp::create(b, loc, second, copy, buffer);
      buffer.replaceUsesWithIf(tiles, [&](OpOperand &use) {
        return use.getOwner() != tiles.getDefiningOp() &&
               !isa<CopyAsyncOp>(use.getOwner());
      });
      buffer = tiles;
    }
  }
  auto inSlot = [&](int64_t base) -> Value {
    if (onceSlots == 1)
      return index(base);
    return arith::AddIOp::create(b, loc, index(base), carried.onceSlot);
  };

  // Each loop's first ring position: the steps of the loops before it.
  SmallVector<Value> bases;
  Value base = carried.ringBase = index(0);
  for (scf::ForOp loop : loops) {
    bases.push_back(base);
    Value span = arith::MaxSIOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, loop.getUpperBound(),
                              loop.getLowerBound()),
        index(0));
    base = arith::AddIOp::create(
        b, loc, base, arith::CeilDivSIOp::create(b, loc, span, loop.getStep()));
  }
  carried.ringEnd = base;

  // One tensor map per (argument, box rows, group): the box is a swizzle
  // span of columns by the buffer's rows; packed, by the group's heads by
  // rows / group queries, which TMA lays out as the buffer's rows.
  std::map<std::tuple<unsigned, int64_t, int64_t>, Value> maps;
  auto mapFor = [&](Load load) {
    MemRefType dest = load.copy.getDest().getType();
    int64_t rows = load.boxRows();
    int64_t group = load.view.getType().getGroup();
    auto key = std::make_tuple(load.argument, rows, group);
    if (Value map = maps[key])
      return map;
    int64_t swizzle = swizzleBytes(dest);
    int64_t spanCols = swizzle / (dest.getElementTypeBitWidth() / 8);
    SmallVector<int64_t> dims{3, 1, 2, 0}, box{spanCols, rows};
    if (load.ragged()) {
      dims = {2, 0, 1};
    } else if (group > 1) {
      dims = {3, 2, 1, 0};
      box = {spanCols, group, rows / group};
    }
    return maps[key] =
               appendTensorMap(kernel, load.argument, dims, box, swizzle, loc);
  };

  int64_t ctas = ctasFor(sharedBytes);
  auto ws = WarpSpecializeOp::create(b, loc, kProducerWarps, producerRegisters,
                                     consumerRegistersFor(ctas));
  Block *producer = b.createBlock(&ws.getProducer());
  Block *consumer = b.createBlock(&ws.getConsumer());

  // Consumers: the kernel from the split on, with each copy replaced by a
  // wait for its data and a release after its last reader.
  for (Operation &op : llvm::make_early_inc_range(
           llvm::make_range(split->getIterator(), entry.end())))
    if (!isa<func::ReturnOp>(&op))
      op.moveBefore(consumer, consumer->end());
  // Paged copies in masked steps, and a packed batch's copies but in full
  // steps: after the wait, the consumers zero the rows past the sequence
  // (tgpu.zero_rows_past), added once the old barriers are gone. (A packed
  // batch's rows past a sequence are the next sequence's, or whatever lies
  // past the last: a product with probability or dO 0 would still carry a
  // NaN there, and in the backward they would add to dK, dV and the
  // captures' gradients.)
  struct Clear {
    Operation *wait;
    Value buffer;
    Load *load;
    Value row;
  };
  SmallVector<Clear> clears;
  for (auto [i, load] : llvm::enumerate(once)) {
    b.setInsertionPoint(load->copy);
    auto wait = MbarrierWaitOp::create(b, loc, barriers,
                                       inSlot(onceFullIndex(i)),
                                       carried.onceParity);
    if (loopTiles && i == 0)
      carried.consumerOnceWait = wait;
    if (loopTiles) {
      // Free for the next tile's copy after the last top-level op that
      // reads it (products complete inside it).
      Operation *last = nullptr;
      for (Operation *user : onceBuffers[i].getUsers()) {
        Operation *top = consumer->findAncestorOpInBlock(*user);
        if (top && !isa<CopyAsyncOp>(user) &&
            (!last || last->isBeforeInBlock(top)))
          last = top;
      }
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfter(last ? last : wait.getOperation());
      MbarrierArriveOp::create(b, loc, barriers, inSlot(onceFreeIndex(i)),
                               onceBuffers[i]);
    }
    if (load->ragged())
      clears.push_back(
          {wait, onceBuffers[i], load, load->copy.getOffsets()[0]});
  }
  // Each vector read from its slot where the step first uses it (after the
  // wait for the ring's tile, which the first product already needs), the
  // elements past the view's end filled as the load filled them; read
  // right after that wait instead (below), so that the shared loads'
  // latency runs under the step's products, where the registers hold the
  // vector from there on: the loop's tiles across steps, the step's tiles
  // live at its first use (S and dP, issued asynchronously, and what the
  // mod keeps from S), the vectors read early before it and itself, with 8
  // to spare, within the consumers' budget. (Calibrated on the H200: read
  // early, the D = 128 dK/dV kernels of softcap and ALiBi spilled 68 and 184
  // bytes and ALiBi's backward ran 8% slower, and this rule reads theirs
  // where used; plain's and causal's at D = 128 (224 and 234 of 240) and
  // every D = 64 kernel compile without a spill and ran 1-7% faster read
  // early.)
  int64_t budget = consumerRegistersFor(ctas);
  DenseMap<Operation *, int64_t> earlyRegisters; // per loop
  auto isVectorRead = [&](Operation *op) {
    if (isa<LoadSharedOp>(op))
      return true;
    return llvm::any_of(vectors, [&](const Vector &v) { return v.load == op; });
  };
  for (Vector &v : vectors) {
    Block *body = v.load->getBlock();
    Operation *first = nullptr;
    for (Operation *user : v.load->getUsers()) {
      Operation *top = body->findAncestorOpInBlock(*user);
      if (top && (!first || top->isBeforeInBlock(first)))
        first = top;
    }
    int64_t live = 0;
    for (Operation &op : *body) {
      if (first && !op.isBeforeInBlock(first))
        break;
      if (isVectorRead(&op))
        continue;
      for (Value result : op.getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              Operation *top = body->findAncestorOpInBlock(*user);
              return top && first && !top->isBeforeInBlock(first);
            }))
          live += registersPerThread(result.getType());
    }
    int64_t own = registersPerThread(v.load.getType());
    int64_t &early = earlyRegisters[v.loop];
    v.early = registersAcrossSteps(v.loop) + live + early + own + 8 <= budget;
    if (v.early)
      early += own;
    b.setInsertionPoint(first ? first : v.load.getOperation());
    Value rows = tile::DimOp::create(b, v.load.getLoc(), b.getIndexType(),
                                     v.view.getResult(), 0);
    Value count =
        arith::SubIOp::create(b, v.load.getLoc(), rows, v.load.getOffsets()[0]);
    auto fill = cast<FloatAttr>(v.load.getFill());
    auto read = LoadSharedOp::create(
        b, v.load.getLoc(), v.load.getType(), slots[v.slot].buffer, count,
        b.getF32FloatAttr(float(fill.getValueAsDouble())));
    v.load.getResult().replaceAllUsesWith(read.getResult());
    v.load.erase();
    v.load = nullptr;
    v.read = {rows.getDefiningOp(), count.getDefiningOp(), read};
  }
  // Each step's keep bits read from their slot where Philox ran.
  for (Bits &d : bits) {
    b.setInsertionPoint(d.philox);
    tile::PhiloxOp philox = d.philox;
    auto read = LoadKeepBitsOp::create(
        b, d.keep.getLoc(), d.tile, bitsSlots[d.slot].buffer, philox.getSeed(),
        philox.getOffset(), philox.getBatch(), philox.getHead(),
        philox.getQStart(), philox.getKvStart(),
        b.getI32IntegerAttr(int32_t(d.threshold)),
        b.getI64IntegerAttr(d.patches),
        philox.getKeysByQueries() ? b.getUnitAttr() : UnitAttr());
    d.keep.getResult().replaceAllUsesWith(read.getResult());
    d.keep.erase();
    d.keep = nullptr;
  }
  for (auto [k, loop] : llvm::enumerate(loops)) {
    Block &body = *loop.getBody();
    b.setInsertionPointToStart(&body);
    RingPosition step =
        stepIndex(b, loc, loop.getInductionVar(), loop.getLowerBound(),
                  loop.getStep(), bases[k], numStages);
    for (Load &load : loads) {
      if (load.loop != loop)
        continue;
      Ring &ring = rings[ringOf.lookup(load.copy.getDest())];
      // This step's readers (ops of the body) of the ring's tile and of the
      // vectors beside it, before any select of the stage's buffer reads
      // the buffer too.
      SmallVector<std::pair<Value, ArrayRef<Value>>> buffers{
          {ring.buffer, ring.stages}};
      for (VectorSlot &slot : slots)
        if (slot.ring == ring.index)
          buffers.push_back({slot.buffer, slot.stages});
      for (BitsSlot &slot : bitsSlots)
        if (slot.ring == ring.index)
          buffers.push_back({slot.buffer, slot.stages});
      Operation *first = nullptr, *last = nullptr;
      Value current;                    // the stage's tile
      SmallVector<Operation *> readers; // of either, ops of the body
      for (auto [buffer, stageBuffers] : buffers) {
        SmallVector<OpOperand *> reads;
        for (OpOperand &use : buffer.getUses()) {
          Operation *reader = body.findAncestorOpInBlock(*use.getOwner());
          if (!reader || isa<CopyAsyncOp>(use.getOwner()))
            continue;
          reads.push_back(&use);
          readers.push_back(reader);
          if (!first || reader->isBeforeInBlock(first))
            first = reader;
          if (!last || last->isBeforeInBlock(reader))
            last = reader;
        }
        if (reads.empty())
          continue;
        b.setInsertionPointAfter(step.parity.getDefiningOp());
        Value stageSlot = stageBuffer(b, loc, stageBuffers, step.stage);
        for (OpOperand *use : reads)
          use->set(stageSlot);
        if (buffer == ring.buffer)
          current = stageSlot;
      }
      assert(first && "unsupported() rejects rings their loop never reads");
      Value full = fullSlot(ring, step.stage);
      Value empty = emptySlot(ring, step.stage);
      b.setInsertionPoint(first);
      auto wait = MbarrierWaitOp::create(b, loc, barriers, full, step.parity);
      // The vectors read right after that wait (where the step's rows are
      // known there): the shared loads' latency runs under the products
      // issued next instead of in front of the first use.
      Operation *after = wait;
      for (Vector &v : vectors) {
        if (!v.early || v.ring != ring.index ||
            v.read.back()->getBlock() != &body)
          continue;
        // (The step's rows and, where the step makes it, its view must be
        // known there.)
        auto definedAfterWait = [&](Value value) {
          Operation *def = value.getDefiningOp();
          return def && def->getBlock() == &body && !def->isBeforeInBlock(wait);
        };
        if (definedAfterWait(v.read[1]->getOperand(1)) ||
            definedAfterWait(v.view.getResult()))
          continue;
        for (Operation *op : v.read) {
          op->moveAfter(after);
          after = op;
        }
      }
      auto role = loop->getAttrOfType<StringAttr>(tile::attrs::kKvLoop);
      if ((load.paged() || load.ragged()) &&
          !(role && role.getValue() == "full"))
        clears.push_back({wait, current, &load, loop.getInductionVar()});
      // Released after the last reader where it now stands (a vector read
      // early may have been the last).
      last = nullptr;
      for (Operation *reader : readers)
        if (!last || last->isBeforeInBlock(reader))
          last = reader;
      b.setInsertionPointAfter(last);
      MbarrierArriveOp::create(b, loc, barriers, empty);
    }
  }

  // The producer: the same copies over the same loops, through TMA, each
  // ring slot reused once its empty barrier's phase completes.
  b.setInsertionPointToStart(producer);
  for (auto [i, load] : llvm::enumerate(once)) {
    if (loopTiles) {
      MbarrierWaitOp::create(b, loc, barriers, inSlot(onceFreeIndex(i)),
                             carried.onceFreeParity);
      // The consumers read the tile's program ids after this copy's barrier.
      if (i == 0) {
        Value words = carried.tileSlot;
        if (onceSlots == 2)
          words = arith::AddIOp::create(
              b, loc, words,
              arith::MulIOp::create(b, loc, carried.onceSlot, index(3)));
        PublishTileOp::create(b, loc, carried.tileIds[0], carried.tileIds[1],
                              carried.tileIds[2], barriers, words, Value());
      }
    }
    IRMapping same;
    TmaLoadOp::create(b, loc, mapFor(*load), coordinates(b, loc, *load, same),
                      onceBuffers[i], barriers, inSlot(onceFullIndex(i)));
  }
  for (auto [k, loop] : llvm::enumerate(loops)) {
    b.setInsertionPointToEnd(producer);
    auto copyLoop = scf::ForOp::create(b, loc, loop.getLowerBound(),
                                       loop.getUpperBound(), loop.getStep());
    copyLoop->setAttrs(loop->getDiscardableAttrDictionary());
    b.setInsertionPointToStart(copyLoop.getBody());
    RingPosition step =
        stepIndex(b, loc, copyLoop.getInductionVar(), loop.getLowerBound(),
                  loop.getStep(), bases[k], numStages);
    Value emptyParity = arith::XOrIOp::create(b, loc, step.parity, index(1));
    IRMapping atStep;
    atStep.map(loop.getInductionVar(), copyLoop.getInductionVar());
    // The step's values (rows, views, a draw's operands), computed again
    // (ops shared by several chains once).
    auto computeAgain = [&](ArrayRef<Operation *> chain) {
      for (Operation *op : chain)
        if (!atStep.contains(op->getResult(0)))
          b.clone(*op, atStep);
    };
    for (Load &load : loads) {
      if (load.loop != loop)
        continue;
      computeAgain(load.rowsChain);
      Ring &ring = rings[ringOf.lookup(load.copy.getDest())];
      auto emptyWait = MbarrierWaitOp::create(
          b, loc, barriers, emptySlot(ring, step.stage), emptyParity);
      // (Where the producer draws keep bits into the ring's slot, its whole
      // warpgroup waits for the slot; every other wait stays with the
      // first warp, which alone reuses the other buffers.)
      if (drawsBeside(ring))
        emptyWait->setAttr(attrs::kWarpgroup, b.getUnitAttr());
      Value full = fullSlot(ring, step.stage);
      // The vectors first: their bytes must be expected before the tile's
      // copy arrives, or the phase could complete without them.
      for (Vector &v : vectors) {
        if (v.loop != loop || v.ring != ring.index)
          continue;
        computeAgain(v.viewChain);
        BulkLoadOp::create(
            b, loc, atStep.lookupOrDefault(v.view.getResult()),
            atStep.lookupOrDefault(load.copy.getOffsets()[0]),
            stageBuffer(b, loc, slots[v.slot].stages, step.stage), barriers,
            full);
      }
      if (load.paged())
        TmaLoadPagesOp::create(
            b, loc, mapFor(load), load.view.getResult(),
            atStep.lookupOrDefault(load.copy.getOffsets()[1]),
            copyLoop.getInductionVar(),
            atStep.lookupOrDefault(load.view.getIndices()[1]),
            stageBuffer(b, loc, ring.stages, step.stage), barriers, full);
      else
        TmaLoadOp::create(
            b, loc, mapFor(load), coordinates(b, loc, load, atStep),
            stageBuffer(b, loc, ring.stages, step.stage), barriers, full);
      // The keep bits beside the tile, drawn while its copy is in flight;
      // every producer thread arrives once its words are written.
      bool drew = false;
      for (Bits &d : bits) {
        if (d.loop != loop || d.ring != ring.index)
          continue;
        computeAgain(d.chain);
        auto at = [&](Value v) { return atStep.lookupOrDefault(v); };
        tile::PhiloxOp philox = d.philox;
        DrawKeepBitsOp::create(
            b, loc, at(philox.getSeed()), at(philox.getOffset()),
            at(philox.getBatch()), at(philox.getHead()), at(philox.getQStart()),
            at(philox.getKvStart()),
            stageBuffer(b, loc, bitsSlots[d.slot].stages, step.stage),
            b.getI32IntegerAttr(int32_t(d.threshold)),
            b.getI64IntegerAttr(d.patches), TypeAttr::get(d.tile),
            philox.getKeysByQueries() ? b.getUnitAttr() : UnitAttr());
        drew = true;
      }
      if (drew)
        MbarrierArriveOp::create(b, loc, barriers, full)
            ->setAttr(attrs::kWarpgroup, b.getUnitAttr());
    }
  }
  // Philox's draws the producer took over.
  for (Bits &d : bits)
    if (d.philox->use_empty())
      d.philox.erase();

  // The cp.async copies and what published them are gone: the consumers
  // synchronise on the barriers alone.
  for (Load &load : loads)
    load.copy.erase();
  consumer->walk([&](Operation *op) {
    if (isa<AsyncWaitOp, FenceAsyncSharedOp, BarrierOp>(op))
      op->erase();
  });
  // A buffer the consumers write themselves and products read: every
  // consumer past the previous step's reads before a write, and the writes
  // fenced (generic to async proxy) and complete before any product.
  consumer->walk([&](StoreSharedOp store) {
    b.setInsertionPoint(store);
    BarrierOp::create(b, store.getLoc());
    b.setInsertionPointAfter(store);
    FenceAsyncSharedOp::create(b, store.getLoc());
    BarrierOp::create(b, store.getLoc());
  });
  // Written by threads, read by products (the async proxy): fenced, and
  // every consumer done before any product.
  for (Clear &clear : clears) {
    // Only a tile that reaches past the sequence (the condition is the same
    // in every consumer thread, so the barrier inside it is too): most
    // steps of a long sequence skip the fence and the barrier.
    b.setInsertionPointAfter(clear.wait);
    Value view = clear.load->view.getResult();
    Value left = arith::SubIOp::create(
        b, loc, tile::DimOp::create(b, loc, b.getIndexType(), view, 0),
        clear.row);
    Value past = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt, left,
        index(cast<MemRefType>(clear.buffer.getType()).getDimSize(0)));
    auto ifPast = scf::IfOp::create(b, loc, past, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifPast.thenBlock());
    ZeroRowsPastOp::create(b, loc, clear.buffer, view, clear.row);
    FenceAsyncSharedOp::create(b, loc);
    BarrierOp::create(b, loc);
  }
  kernel->setAttr(attrs::kProducerWarps, b.getI64IntegerAttr(kProducerWarps));
  if (ctas > 1)
    kernel->setAttr(attrs::kCtasPerSM, b.getI64IntegerAttr(ctas));
  if (loopTiles && failed(runTilesInLoop(kernel, ws, carried)))
    return failure();
  return layoutSharedBuffers(kernel, limit, "the TMA ring");
}

} // namespace
