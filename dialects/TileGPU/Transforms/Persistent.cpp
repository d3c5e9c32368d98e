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
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

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

  // The grid's tile counts and the CTAs, as scalar arguments.
  auto grid = kernel->getAttrOfType<ArrayAttr>(tile::attrs::kGrid);
  Attribute tiles = tile::sizeOp(b, "mul", {grid[0], grid[1], grid[2]});
  Attribute slots = tile::sizeOp(
      b, "mul",
      {tile::sizeSymbol(b, "num_sms"),
       tile::sizeSymbol(b, ("ctas_per_sm." + kernel.getName()).str())});
  Attribute ctas = tile::sizeOp(b, "min", {tiles, slots});
  SmallVector<Value> scalars;
  for (Attribute expr : {grid[0], grid[1], grid[2], ctas}) {
    unsigned position = kernel.getNumArguments();
    if (failed(kernel.insertArgument(
            position, b.getI64Type(),
            b.getDictionaryAttr(b.getNamedAttr(tile::attrs::kScalar, expr)),
            loc)))
      return failure();
    scalars.push_back(kernel.getArgument(position));
  }
  kernel->setAttr(tile::attrs::kGrid,
                  b.getArrayAttr({ctas, tile::sizeConstant(b, 1),
                                  tile::sizeConstant(b, 1)}));
  kernel->setAttr(attrs::kPersistent, b.getUnitAttr());

  b.setInsertionPoint(ws);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  SmallVector<Value> extent;
  for (Value s : scalars)
    extent.push_back(arith::IndexCastOp::create(b, loc, b.getIndexType(), s));
  // Tiles are dealt in rounds of one per CTA, the order reversed in every
  // other round (boustrophedon): a CTA that drew one of the first (short,
  // causal) query blocks of a head in one round draws one of the last in
  // the next, where strided dealing could give a CTA the same block of
  // every head (the CTAs a multiple of the blocks per head).
  Value first = tile::ProgramIdOp::create(b, loc, b.getIndexType(), 0);
  Value total = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, extent[0], extent[1]), extent[2]);
  Value zero = index(0), one = index(1);
  Value ctaCount = extent[3];
  Value mirrored = arith::SubIOp::create(
      b, loc, arith::SubIOp::create(b, loc, ctaCount, one), first);
  auto isOdd = [&](OpBuilder &ob, Location l, Value v) -> Value {
    Value bit = arith::AndIOp::create(ob, l, v,
                                      arith::ConstantIndexOp::create(ob, l, 1));
    return arith::CmpIOp::create(ob, l, arith::CmpIPredicate::eq, bit,
                                 arith::ConstantIndexOp::create(ob, l, 1));
  };
  // Whole rounds, and this CTA's place in the last, partial one.
  Value rounds = arith::DivUIOp::create(b, loc, total, ctaCount);
  Value rest = arith::RemUIOp::create(b, loc, total, ctaCount);
  Value lastPlace =
      arith::SelectOp::create(b, loc, isOdd(b, loc, rounds), mirrored, first);
  Value inLast =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lastPlace, rest);
  Value myRounds = arith::AddIOp::create(
      b, loc, rounds, arith::SelectOp::create(b, loc, inLast, one, zero));

  SmallVector<tile::ProgramIdOp> ids;
  for (tile::ProgramIdOp id : programIds(kernel))
    if (id.getResult() != first)
      ids.push_back(id);
  llvm::SmallPtrSet<Value, 8> roots{carried.ringBase, carried.onceParity,
                                    carried.onceFreeParity};
  for (tile::ProgramIdOp id : ids)
    roots.insert(id.getResult());
  SmallVector<Operation *> setup = perTile(entry, ws, roots);
  for (Operation *op : setup)
    if (!recomputable(op))
      return op->emitError("per-tile setup before the warp-specialized "
                           "region that its sides cannot compute again");

  for (Region *side : {&ws.getProducer(), &ws.getConsumer()}) {
    Block &body = side->front();
    SmallVector<Operation *> old;
    for (Operation &op : body)
      old.push_back(&op);
    b.setInsertionPointToStart(&body);
    auto loop = scf::ForOp::create(
        b, loc, zero, myRounds, one, ValueRange{zero},
        [&](OpBuilder &nb, Location l, Value round, ValueRange ring) {
          Value place = arith::SelectOp::create(nb, l, isOdd(nb, l, round),
                                                mirrored, first);
          Value t = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, round, ctaCount), place);
          // The tile's program ids, axis 0 fastest.
          Value x = arith::RemUIOp::create(nb, l, t, extent[0]);
          Value rest = arith::DivUIOp::create(nb, l, t, extent[0]);
          Value y = arith::RemUIOp::create(nb, l, rest, extent[1]);
          Value z = arith::DivUIOp::create(nb, l, rest, extent[1]);
          Value axes[] = {x, y, z};
          // Q's barriers complete once per tile: the round's parity.
          Value parity = arith::AndIOp::create(
              nb, l, round, arith::ConstantIndexOp::create(nb, l, 1));
          IRMapping map;
          for (tile::ProgramIdOp id : ids)
            map.map(id.getResult(), axes[id.getAxis()]);
          map.map(carried.ringBase, ring[0]);
          map.map(carried.onceParity, parity);
          map.map(carried.onceFreeParity,
                  arith::XOrIOp::create(
                      nb, l, parity, arith::ConstantIndexOp::create(nb, l, 1)));
          for (Operation *op : setup)
            nb.clone(*op, map);
          for (Operation *op : old)
            nb.clone(*op, map);
          scf::YieldOp::create(nb, l, map.lookupOrDefault(carried.ringEnd));
        });
    for (Operation *op : llvm::reverse(old))
      op->erase();
    // The setup this side does not use.
    SmallVector<Operation *> cloned;
    for (Operation &op : *loop.getBody())
      cloned.push_back(&op);
    for (Operation *op : llvm::reverse(cloned))
      if (op->use_empty() && !op->hasTrait<OpTrait::IsTerminator>() &&
          recomputable(op))
        op->erase();
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
  for (Value placeholder :
       {carried.ringBase, carried.onceParity, carried.onceFreeParity})
    if (placeholder.use_empty())
      placeholder.getDefiningOp()->erase();
  return success();
}

} // namespace kiln::tgpu
