//===- Persistent.cpp - a warp-specialized kernel over many tiles ---------===//
//
// See Persistent.h. A CTA that runs one tile waits for its Q and first K/V
// with idle tensor cores and ends on an epilogue with an idle copy engine;
// looping over tiles lets the producer run ahead into the next tile, as
// FlashAttention-3's persistent kernels do.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Persistent.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace kiln;

namespace kiln::tgpu {
namespace {

/// Per-tile setup each side may compute again: no region, and no effect
/// but reads (a capture's scalar, a block table's entry).
bool recomputable(Operation *op) {
  if (op->getNumRegions() != 0)
    return false;
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  SmallVector<MemoryEffects::EffectInstance> list;
  if (effects)
    effects.getEffects(list);
  return effects && llvm::all_of(list, [](const auto &e) {
           return isa<MemoryEffects::Read>(e.getEffect());
         });
}

/// The ops of `entry` before `end` computed from `roots`, in order.
SmallVector<Operation *> perTile(Block &entry, Operation *end,
                                 const llvm::SmallPtrSetImpl<Value> &roots) {
  llvm::SmallPtrSet<Value, 32> varying(roots.begin(), roots.end());
  SmallVector<Operation *> ops;
  for (Operation &op : entry) {
    if (&op == end)
      break;
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return varying.contains(v); })) {
      ops.push_back(&op);
      varying.insert(op.result_begin(), op.result_end());
    }
  }
  return ops;
}

SmallVector<tile::ProgramIdOp> programIds(func::FuncOp kernel) {
  SmallVector<tile::ProgramIdOp> ids;
  kernel.walk([&](tile::ProgramIdOp id) { ids.push_back(id); });
  return ids;
}

} // namespace

bool canRunTilesInLoop(func::FuncOp kernel) {
  auto grid = kernel->getAttrOfType<ArrayAttr>(tile::attrs::kGrid);
  if (!grid || grid.size() != 3 || kernel.getBody().empty())
    return false;
  return llvm::all_of(programIds(kernel), [&](tile::ProgramIdOp id) {
    return id->getBlock() == &kernel.front();
  });
}

LogicalResult runTilesInLoop(func::FuncOp kernel, WarpSpecializeOp ws,
                             const TileCarried &carried) {
  MLIRContext *ctx = kernel.getContext();
  Block &entry = kernel.front();
  Location loc = ws.getLoc();
  OpBuilder b(ctx);

  // The grid's tile counts and the CTAs, as scalar arguments, and the
  // counter the producers draw tiles from: one i32 the runtime zeroes, or
  // none when the CTAs take every tile at once or the kernel does not run
  // (its tile.when).
  auto grid = kernel->getAttrOfType<ArrayAttr>(tile::attrs::kGrid);
  Attribute tiles = tile::sizeOp(b, "mul", {grid[0], grid[1], grid[2]});
  Attribute slots = tile::sizeOp(
      b, "mul",
      {tile::sizeSymbol(b, "num_sms"),
       tile::sizeSymbol(b, ("ctas_per_sm." + kernel.getName()).str())});
  Attribute ctas = tile::sizeOp(b, "min", {tiles, slots});
  SmallVector<Value> scalars;
  // (tgpu-longest-first may have added the grid's already.)
  for (Attribute expr : {grid[0], grid[1], grid[2], ctas}) {
    scalars.push_back(tile::scalarArgument(kernel, expr));
    if (!scalars.back())
      return failure();
  }
  Attribute counters = tile::sizeClamp01(b, tile::sizeOp(b, "sub", {tiles, ctas}));
  if (Attribute when = kernel->getAttr(tile::attrs::kWhen))
    counters = tile::sizeOp(b, "mul", {tile::sizeClamp01(b, when), counters});
  unsigned position = kernel.getNumArguments();
  auto counterType =
      MemRefType::get({ShapedType::kDynamic}, b.getI32Type(),
                      StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                                             {ShapedType::kDynamic}));
  if (failed(kernel.insertArgument(
          position, counterType,
          b.getDictionaryAttr(
              {b.getNamedAttr(tile::attrs::kWorkspace,
                              b.getStringAttr(kernel.getName() + "_tiles")),
               b.getNamedAttr(tile::attrs::kShape, b.getArrayAttr({counters})),
               b.getNamedAttr(tile::attrs::kZeroFill, b.getUnitAttr())}),
          loc)))
    return failure();
  Value counter = kernel.getArgument(position);
  kernel->setAttr(tile::attrs::kGrid,
                  b.getArrayAttr({ctas, tile::sizeConstant(b, 1),
                                  tile::sizeConstant(b, 1)}));
  kernel->setAttr(attrs::kPersistent, b.getUnitAttr());

  // Program ids the split moved into a side (setup the producer did not
  // need) go back above it, where each side maps them to the tile's.
  SmallVector<tile::ProgramIdOp> inSides;
  ws->walk([&](tile::ProgramIdOp id) { inSides.push_back(id); });
  for (tile::ProgramIdOp id : inSides)
    id->moveBefore(ws);

  b.setInsertionPoint(ws);
  SmallVector<Value> extent;
  for (Value s : scalars)
    extent.push_back(arith::IndexCastOp::create(b, loc, b.getIndexType(), s));
  Value first = tile::ProgramIdOp::create(b, loc, b.getIndexType(), 0);
  Value total = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, extent[0], extent[1]), extent[2]);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value ctaCount = extent[3];

  SmallVector<tile::ProgramIdOp> ids;
  for (tile::ProgramIdOp id : programIds(kernel))
    if (id.getResult() != first)
      ids.push_back(id);
  llvm::SmallPtrSet<Value, 8> roots{carried.ringBase, carried.onceParity,
                                    carried.onceFreeParity};
  if (carried.onceSlot)
    roots.insert(carried.onceSlot);
  roots.insert(std::begin(carried.tileIds), std::end(carried.tileIds));
  for (tile::ProgramIdOp id : ids)
    roots.insert(id.getResult());
  SmallVector<Operation *> setup = perTile(entry, ws, roots);
  for (Operation *op : setup)
    if (!recomputable(op))
      return op->emitError("per-tile setup before the warp-specialized "
                           "region that its sides cannot compute again");

  Type idx = b.getIndexType();
  auto constant = [](OpBuilder &nb, Location l, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(nb, l, v);
  };
  // With two copies of the loaded-once buffers a tile uses copy round mod
  // 2, whose barriers complete a phase every other round.
  bool twoSlots = carried.onceSlots == 2;
  auto parityOf = [&](OpBuilder &nb, Location l, Value round) -> Value {
    if (twoSlots)
      round = arith::ShRUIOp::create(nb, l, round, constant(nb, l, 1));
    return arith::AndIOp::create(nb, l, round, constant(nb, l, 1));
  };
  auto slotOf = [&](OpBuilder &nb, Location l, Value round) -> Value {
    return arith::AndIOp::create(nb, l, round, constant(nb, l, 1));
  };
  // A barrier (`stride` 1) or the program-id words (3) of round's copy.
  auto inSlot = [&](OpBuilder &nb, Location l, Value base, Value round,
                    int64_t stride) -> Value {
    if (!twoSlots)
      return base;
    Value slot = slotOf(nb, l, round);
    if (stride != 1)
      slot = arith::MulIOp::create(nb, l, slot, constant(nb, l, stride));
    return arith::AddIOp::create(nb, l, base, slot);
  };
  // One tile's work on one side: its setup from its program ids, then the
  // side's ops (less `skip`); returns the ring's position after it.
  auto runTile = [&](OpBuilder &nb, Location l, ValueRange axes, Value base,
                     Value round, ArrayRef<Operation *> old,
                     Operation *skip) -> Value {
    Value parity = parityOf(nb, l, round);
    IRMapping map;
    for (tile::ProgramIdOp id : ids)
      map.map(id.getResult(), axes[id.getAxis()]);
    for (auto [placeholder, axis] : llvm::zip(carried.tileIds, axes))
      map.map(placeholder, axis);
    map.map(carried.ringBase, base);
    map.map(carried.onceParity, parity);
    map.map(carried.onceFreeParity,
            arith::XOrIOp::create(nb, l, parity, constant(nb, l, 1)));
    if (twoSlots)
      map.map(carried.onceSlot, slotOf(nb, l, round));
    for (Operation *op : setup)
      nb.clone(*op, map);
    for (Operation *op : old)
      if (op != skip)
        nb.clone(*op, map);
    return map.lookupOrDefault(carried.ringEnd);
  };
  auto oldOps = [](Region &side) {
    SmallVector<Operation *> ops;
    for (Operation &op : side.front())
      ops.push_back(&op);
    return ops;
  };
  // Each side gets all of the per-tile setup; what it does not read goes.
  auto eraseUnused = [](Block *block) {
    SmallVector<Operation *> ops;
    for (Operation &op : *block)
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty() && !op->hasTrait<OpTrait::IsTerminator>() &&
          recomputable(op))
        op->erase();
  };

  // The producer: its own tile first, then each one it draws, until one is
  // past the last; that one is published with an arrival of its own, which
  // ends the consumers' loop.
  {
    Region &side = ws.getProducer();
    SmallVector<Operation *> old = oldOps(side);
    b.setInsertionPointToStart(&side.front());
    auto loop = scf::WhileOp::create(
        b, loc, TypeRange{idx, idx, idx}, ValueRange{first, zero, zero},
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value more = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult,
                                             args[0], total);
          scf::ConditionOp::create(nb, l, more, args);
        },
        [&](OpBuilder &nb, Location l, ValueRange args) {
          // The tile's program ids, axis 0 fastest.
          Value t = args[0];
          Value x = arith::RemUIOp::create(nb, l, t, extent[0]);
          Value rest = arith::DivUIOp::create(nb, l, t, extent[0]);
          Value y = arith::RemUIOp::create(nb, l, rest, extent[1]);
          Value z = arith::DivUIOp::create(nb, l, rest, extent[1]);
          Value end = runTile(nb, l, ValueRange{x, y, z}, args[1], args[2], old,
                              nullptr);
          Value next = NextTileOp::create(nb, l, idx, counter, ctaCount, total,
                                          carried.tileWords);
          Value round =
              arith::AddIOp::create(nb, l, args[2], constant(nb, l, 1));
          scf::YieldOp::create(nb, l, ValueRange{next, end, round});
        });
    for (Operation *op : llvm::reverse(old))
      op->erase();
    eraseUnused(&loop.getAfter().front());
    b.setInsertionPointAfter(loop);
    Value freeParity = arith::XOrIOp::create(
        b, loc, parityOf(b, loc, loop.getResult(2)), constant(b, loc, 1));
    Value last = loop.getResult(2);
    MbarrierWaitOp::create(b, loc, carried.barriers,
                           inSlot(b, loc, carried.onceFree, last, 1),
                           freeParity);
    Value none = arith::ConstantIndexOp::create(b, loc, -1);
    PublishTileOp::create(b, loc, none, zero, zero, carried.barriers,
                          inSlot(b, loc, carried.tileSlot, last, 3),
                          inSlot(b, loc, carried.onceFull, last, 1));
  }
  // The consumers: wait for Q's barrier, read the program ids the producer
  // published with it, stop at x = -1.
  {
    Region &side = ws.getConsumer();
    SmallVector<Operation *> old = oldOps(side);
    b.setInsertionPointToStart(&side.front());
    auto loop = scf::WhileOp::create(
        b, loc, TypeRange{idx, idx, idx, idx, idx}, ValueRange{zero, zero},
        [&](OpBuilder &nb, Location l, ValueRange args) {
          MbarrierWaitOp::create(
              nb, l, carried.barriers,
              inSlot(nb, l, carried.onceFull, args[1], 1),
              parityOf(nb, l, args[1]));
          Value words = inSlot(nb, l, carried.tileSlot, args[1], 3);
          SmallVector<Value> values;
          for (int64_t axis = 0; axis < 3; ++axis)
            values.push_back(ReadTileOp::create(nb, l, idx, carried.barriers,
                                                words,
                                                nb.getI64IntegerAttr(axis)));
          Value more = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                             values[0], constant(nb, l, 0));
          values.append({args[0], args[1]});
          scf::ConditionOp::create(nb, l, more, values);
        },
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value end = runTile(nb, l, args.take_front(3), args[3], args[4], old,
                              carried.consumerOnceWait);
          Value round =
              arith::AddIOp::create(nb, l, args[4], constant(nb, l, 1));
          scf::YieldOp::create(nb, l, ValueRange{end, round});
        });
    for (Operation *op : llvm::reverse(old))
      op->erase();
    eraseUnused(&loop.getAfter().front());
  }
  for (Operation *op : llvm::reverse(setup)) {
    if (!op->use_empty())
      return op->emitError("per-tile setup used after the warp-specialized "
                           "region");
    op->erase();
  }
  for (tile::ProgramIdOp id : ids)
    if (id->use_empty())
      id->erase();
  SmallVector<Value> placeholders{carried.ringBase, carried.onceParity,
                                  carried.onceFreeParity};
  if (carried.onceSlot)
    placeholders.push_back(carried.onceSlot);
  placeholders.append(std::begin(carried.tileIds), std::end(carried.tileIds));
  for (Value placeholder : placeholders)
    if (placeholder.use_empty())
      placeholder.getDefiningOp()->erase();
  return success();
}

} // namespace kiln::tgpu
