//===- BlockLists.cpp - loops over a block mask's lists -------------------===//

#include "compiler/Conversion/AttnToTile/BlockLists.h"

#include "dialects/Tile/IR/TileAttrNames.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace kiln {

unsigned addBlockListArgs(Builder &b, SmallVectorImpl<KernelArgDecl> &args,
                          std::pair<int64_t, int64_t> blocks, bool byQueries,
                          bool perHead) {
  MLIRContext *ctx = b.getContext();
  int64_t dyn = ShapedType::kDynamic;
  Type i32 = b.getI32Type();
  StringRef rows = byQueries ? "seq_q" : "seq_kv";
  StringRef cols = byQueries ? "seq_kv" : "seq_q";
  int64_t rowBlock = byQueries ? blocks.first : blocks.second;
  int64_t colBlock = byQueries ? blocks.second : blocks.first;
  std::string side = byQueries ? "kv" : "q";
  unsigned at = args.size();
  for (std::string list : {side, "full_" + side}) {
    args.push_back(
        {KernelArgDecl::Role::Tensor, stridedMemRef(ctx, {dyn, dyn, dyn}, i32),
         list + "_num_blocks", blockCountShape(b, rows, rowBlock, perHead)});
    args.push_back(
        {KernelArgDecl::Role::Tensor,
         stridedMemRef(ctx, {dyn, dyn, dyn, dyn}, i32), list + "_indices",
         blockListShape(b, rows, rowBlock, cols, colBlock, perHead)});
  }
  return at;
}

scf::ForOp buildListedLoop(ProgramBuilder &pb, Value countArg, Value indicesArg,
                           ValueRange row, int64_t blockSize, int64_t tile,
                           Value numBlocks, ValueRange init, Value enabled,
                           StringRef roleAttr, StringRef role,
                           const ListedStep &step) {
  OpBuilder &b = pb.b;
  Location loc = pb.loc;
  // (Signed casts and compares: the GPU's index is 32 bits, the CPU's 64.)
  Value count = pb.minIndex(
      pb.maxIndex(arith::IndexCastOp::create(
                      b, loc, b.getIndexType(),
                      memref::LoadOp::create(b, loc, countArg, row)),
                  pb.index(0)),
      numBlocks);
  int64_t tilesPerBlock = blockSize / tile;
  Value steps = pb.mul(count, pb.index(tilesPerBlock));
  if (enabled)
    steps = arith::SelectOp::create(b, loc, enabled, steps, pb.index(0));
  auto loop = scf::ForOp::create(
      b, loc, pb.index(0), steps, pb.index(1), init,
      [&](OpBuilder &nested, Location l, Value t, ValueRange carried) {
        ProgramBuilder inner{nested, l};
        Value position = t, part;
        if (tilesPerBlock > 1) {
          Value r = inner.index(tilesPerBlock);
          position = arith::DivUIOp::create(nested, l, t, r);
          part = arith::RemUIOp::create(nested, l, t, r);
        }
        SmallVector<Value> at(row);
        at.push_back(position);
        Value listed = arith::IndexCastOp::create(
            nested, l, nested.getIndexType(),
            memref::LoadOp::create(nested, l, indicesArg, at));
        Value negative = arith::CmpIOp::create(
            nested, l, arith::CmpIPredicate::slt, listed, inner.index(0));
        Value block = inner.minIndex(
            arith::SelectOp::create(nested, l, negative, numBlocks, listed),
            numBlocks);
        Value start = inner.mul(block, inner.index(blockSize));
        if (part)
          start = inner.add(start, inner.mul(part, inner.index(tile)));
        SmallVector<Value> next = step(inner, start, carried);
        scf::YieldOp::create(nested, l, next);
      });
  loop->setAttr(roleAttr, b.getStringAttr(role));
  return loop;
}

SmallVector<Value> buildPartialAndFullLoops(ProgramBuilder &pb,
                                            ValueRange lists, ValueRange row,
                                            int64_t blockSize, int64_t tile,
                                            Value numBlocks, ValueRange init,
                                            StringRef roleAttr,
                                            const ListedMaskedStep &step) {
  SmallVector<Value> carried(init);
  for (bool full : {false, true}) {
    scf::ForOp loop = buildListedLoop(
        pb, lists[full ? 2 : 0], lists[full ? 3 : 1], row, blockSize, tile,
        numBlocks, carried, Value(), roleAttr,
        full ? "listed_full" : "listed_partial",
        [&](ProgramBuilder &inner, Value start, ValueRange values) {
          return step(inner, start, values, full);
        });
    carried = SmallVector<Value>(loop.getResults());
  }
  return carried;
}

} // namespace kiln
