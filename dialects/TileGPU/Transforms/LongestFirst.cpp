//===- LongestFirst.cpp - hand out the longest blocks of the grid first ---===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPULONGESTFIRST
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln;

namespace {

struct TileGPULongestFirst
    : public kiln::tgpu::impl::TileGPULongestFirstBase<TileGPULongestFirst> {
  using TileGPULongestFirstBase::TileGPULongestFirstBase;

  void runOnOperation() override {
    getOperation()->walk([&](func::FuncOp kernel) { runOnKernel(kernel); });
  }

  void runOnKernel(func::FuncOp kernel) {
    auto cost = kernel->getAttrOfType<StringAttr>(tile::attrs::kBlockCost);
    auto grid = kernel->getAttrOfType<ArrayAttr>(tile::attrs::kGrid);
    // Ordered adds wait for turns in the order their key blocks are
    // numbered (convert-attn-to-tile-backward), not in this one.
    if (!cost || !grid || grid.size() != 3 || kernel.getBody().empty() ||
        kernel->hasAttr(tile::attrs::kOrderedAdds))
      return;
    // In grid order the CTAs at work run consecutive blocks of a few
    // heads, which share their heads' K and V (or Q, dO and dQ) in L2;
    // with the block slowest they run one block of many heads, which share
    // nothing unless the heads are a GQA group's query heads reading one
    // KV head. Measured on an H200 (docs/performance.md): GQA causal's
    // forward 2-7% faster, causal's backward up to 1.33x the time and its
    // forward 3-7% slower at 16k.
    // With wave-chunks the other kernels keep about a wave's heads at work
    // together: the chunked order.
    auto group = kernel->getAttrOfType<IntegerAttr>(tile::attrs::kGqaGroup);
    OpBuilder b(kernel.getContext());
    bool sharedHeads =
        group && group.getInt() > 1 && grid[1] == tile::sizeSymbol(b, "heads");
    bool chunked = waveChunks && !sharedHeads;
    if (sharedHeadsOnly && !sharedHeads && !chunked)
      return;
    Block &entry = kernel.front();
    SmallVector<tile::ProgramIdOp> ids;
    kernel.walk([&](tile::ProgramIdOp id) { ids.push_back(id); });
    if (ids.empty() || llvm::any_of(ids, [&](tile::ProgramIdOp id) {
          return id->getBlock() != &entry;
        }))
      return;

    // The grid's extents, as scalars the runtime passes (the launch's own
    // size expressions), so that a persistent kernel, whose grid becomes
    // its CTAs, still numbers its tiles over this grid.
    Location loc = kernel.getLoc();
    SmallVector<Value, 3> extent;
    for (Attribute expr : grid) {
      extent.push_back(tile::scalarArgument(kernel, expr));
      if (!extent.back())
        return signalPassFailure();
    }
    b.setInsertionPointToStart(&entry);
    for (Value &e : extent)
      e = arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
    Value axis[3];
    for (int64_t a = 0; a < 3; ++a)
      axis[a] = tile::ProgramIdOp::create(b, loc, b.getIndexType(), a);
    // The CTA's place in launch order (x fastest), then the same place
    // with the block slowest: every (head, batch)'s block 0 first, then
    // every block 1, ...
    Value linear = arith::AddIOp::create(
        b, loc, axis[0],
        arith::MulIOp::create(
            b, loc, extent[0],
            arith::AddIOp::create(
                b, loc, axis[1],
                arith::MulIOp::create(b, loc, extent[1], axis[2]))));
    Value perBlock = arith::MulIOp::create(b, loc, extent[1], extent[2]);
    Value rank, pair;
    if (chunked) {
      // C pairs per chunk: floor(S / X), at least 1 (X at least 1 in the
      // plan's arithmetic; an empty grid has no CTA).
      Attribute slots =
          tile::sizeOp(b, "mul",
                       {tile::sizeSymbol(b, "num_sms"),
                        tile::sizeCtasPerSm(b, kernel.getName())});
      Attribute blocks =
          tile::sizeOp(b, "max", {grid[0], tile::sizeConstant(b, 1)});
      Attribute perChunk = tile::sizeOp(
          b, "max",
          {tile::sizeFloorDiv(b, slots, blocks), tile::sizeConstant(b, 1)});
      Value chunkPairs = tile::scalarArgument(kernel, perChunk);
      if (!chunkPairs)
        return signalPassFailure();
      chunkPairs =
          arith::IndexCastOp::create(b, loc, b.getIndexType(), chunkPairs);
      Value chunkBlocks = arith::MulIOp::create(b, loc, chunkPairs, extent[0]);
      Value chunk = arith::DivUIOp::create(b, loc, linear, chunkBlocks);
      Value inChunk = arith::RemUIOp::create(b, loc, linear, chunkBlocks);
      Value first = arith::MulIOp::create(b, loc, chunk, chunkPairs);
      Value pairsHere = arith::MinSIOp::create(
          b, loc, chunkPairs, arith::SubIOp::create(b, loc, perBlock, first));
      rank = arith::DivUIOp::create(b, loc, inChunk, pairsHere);
      pair = arith::AddIOp::create(
          b, loc, first, arith::RemUIOp::create(b, loc, inChunk, pairsHere));
    } else {
      rank = arith::DivUIOp::create(b, loc, linear, perBlock);
      pair = arith::RemUIOp::create(b, loc, linear, perBlock);
    }
    Value mapped[3];
    mapped[1] = arith::RemUIOp::create(b, loc, pair, extent[1]);
    mapped[2] = arith::DivUIOp::create(b, loc, pair, extent[1]);
    // Block 0 first where the work shrinks along the axis, the last block
    // first where it grows.
    mapped[0] = rank;
    if (cost.getValue() == tile::attrs::kBlockCostGrows)
      mapped[0] = arith::SubIOp::create(
          b, loc,
          arith::SubIOp::create(b, loc, extent[0],
                                arith::ConstantIndexOp::create(b, loc, 1)),
          rank);
    for (tile::ProgramIdOp id : ids) {
      id.getResult().replaceAllUsesWith(mapped[id.getAxis()]);
      id->erase();
    }
  }
};

} // namespace
