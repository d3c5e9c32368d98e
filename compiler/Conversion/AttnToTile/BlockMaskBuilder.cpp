//===- BlockMaskBuilder.cpp - the program that builds a block mask --------===//

#include "compiler/Conversion/AttnToTile/BlockMaskBuilder.h"

#include "compiler/Conversion/AttnToTile/BlockLists.h"
#include "compiler/Conversion/AttnToTile/KernelSignature.h"
#include "compiler/Conversion/AttnToTile/ProgramBuilder.h"
#include "dialects/Attn/Transforms/ChooseTiles.h"
#include "dialects/Tile/IR/TileAttrNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace kiln {
namespace {

/// One kernel: programs over blocks of `rowBlock` along the side named by
/// `byQueries`, each scanning the other side's blocks of `colBlock`.
LogicalResult buildLists(attn::AttentionOp spec, bool byQueries) {
  MLIRContext *ctx = spec.getContext();
  OpBuilder b(spec);
  Location loc = spec.getLoc();
  ProgramBuilder pb{b, loc};
  auto [qBlock, kBlock] = *spec.getSparseBlocks();
  int64_t rowBlock = byQueries ? qBlock : kBlock;
  int64_t colBlock = byQueries ? kBlock : qBlock;
  // Register tiles: up to 128 rows (8 warps) by up to 64 columns, each
  // dividing its block; a block is scanned in rowBlock / rows x colBlock /
  // cols tiles.
  int64_t rows = attn::fitTileToBlock(128, rowBlock);
  int64_t cols = attn::fitTileToBlock(64, colBlock);
  Type elt = spec.getElementType();
  int64_t dyn = ShapedType::kDynamic, dqk = spec.getQkHeadDim();
  using Role = KernelArgDecl::Role;
  KernelDecl decl;
  decl.name =
      (spec.getSymName() + (byQueries ? "_block_mask" : "_block_mask_t")).str();
  decl.args = {{Role::Tensor, stridedMemRef(ctx, {dyn, dyn, dyn, dqk}, elt),
                "q", queryShape(b, dqk)},
               {Role::Tensor, stridedMemRef(ctx, {dyn, dyn, dyn, dqk}, elt),
                "k", keyShape(b, dqk)}};
  // A mask that does not read the head (causality and the band do not) is
  // built once per batch: lists [batch, 1, ...], which broadcast.
  Region &mask = spec.getMaskMod();
  bool perHead = !mask.empty() && !mask.getArgument(1).use_empty();
  unsigned listsArg =
      addBlockListArgs(b, decl.args, {qBlock, kBlock}, byQueries, perHead);
  decl.withCaptures = true;
  decl.grid = {
      tile::sizeOp(b, "ceildiv",
                   {tile::sizeSymbol(b, byQueries ? "seq_q" : "seq_kv"),
                    tile::sizeConstant(b, rowBlock)}),
      perHead ? tile::sizeSymbol(b, "heads") : tile::sizeConstant(b, 1),
      tile::sizeSymbol(b, "batch")};
  decl.blockM = rows;
  decl.blockN = cols;
  func::FuncOp func = createKernel(b, spec, decl);
  func->setAttr(tile::attrs::kBuildsBlockMask, b.getUnitAttr());
  Block *entry = &func.front();
  b.setInsertionPointToStart(entry);
  SmallVector<Value> captures;
  for (unsigned i = decl.args.size(); i < entry->getNumArguments(); ++i)
    captures.push_back(entry->getArgument(i));

  Value rowProgram = tile::ProgramIdOp::create(b, loc, b.getIndexType(), 0);
  Value head = tile::ProgramIdOp::create(b, loc, b.getIndexType(), 1);
  Value batch = tile::ProgramIdOp::create(b, loc, b.getIndexType(), 2);
  Value kvHead = spec.getGqaGroup() > 1
                     ? Value(arith::DivUIOp::create(
                           b, loc, head, pb.index(spec.getGqaGroup())))
                     : head;
  Value qDesc = pb.view(entry->getArgument(0), batch, head, dqk, elt);
  Value kDesc = pb.view(entry->getArgument(1), batch, kvHead, dqk, elt);
  Value lenQ = tile::DimOp::create(b, loc, b.getIndexType(), qDesc, 0);
  Value lenK = tile::DimOp::create(b, loc, b.getIndexType(), kDesc, 0);
  Value lenCols = byQueries ? lenK : lenQ;
  Value numCols =
      arith::CeilDivSIOp::create(b, loc, lenCols, pb.index(colBlock));
  Value row0 = pb.mul(rowProgram, pb.index(rowBlock));
  SmallVector<int64_t> shape{rows, cols};
  Type f32 = b.getF32Type();
  Value one = pb.splatF32(1.0, shape), zero = pb.splatF32(0.0, shape);
  Value rowIota = pb.iota(0, shape), colIota = pb.iota(1, shape);

  // Over the other side's blocks: visible and valid elements counted, then
  // the block appended to the partial list, the full one or neither. Each
  // list's next entry is written whatever the block is (a later block or
  // nothing overwrites it): no branch, every thread stores the same.
  Value zeroIndex = pb.index(0);
  auto blocks = scf::ForOp::create(
      b, loc, zeroIndex, numCols, pb.index(1), ValueRange{zeroIndex, zeroIndex},
      [&](OpBuilder &ob, Location l, Value j, ValueRange counts) {
        ProgramBuilder op{ob, l};
        Value f0 = op.f32(0.0);
        auto rowTiles = scf::ForOp::create(
            ob, l, op.index(0), op.index(rowBlock), op.index(rows),
            ValueRange{f0, f0},
            [&](OpBuilder &rb, Location l2, Value r, ValueRange sums) {
              ProgramBuilder rp{rb, l2};
              auto colTiles = scf::ForOp::create(
                  rb, l2, rp.index(0), rp.index(colBlock), rp.index(cols), sums,
                  [&](OpBuilder &cb, Location l3, Value c, ValueRange acc) {
                    ProgramBuilder cp{cb, l3};
                    Value rowStart = cp.add(row0, r);
                    Value colStart = cp.add(cp.mul(j, cp.index(colBlock)), c);
                    Value rowIdx = cp.add(rowIota, cp.splat(rowStart, shape));
                    Value colIdx = cp.add(colIota, cp.splat(colStart, shape));
                    Value qIdx = byQueries ? rowIdx : colIdx;
                    Value kvIdx = byQueries ? colIdx : rowIdx;
                    Value valid = arith::AndIOp::create(
                        cb, l3,
                        arith::CmpIOp::create(cb, l3, arith::CmpIPredicate::slt,
                                              qIdx, cp.splat(lenQ, shape)),
                        arith::CmpIOp::create(cb, l3, arith::CmpIPredicate::slt,
                                              kvIdx, cp.splat(lenK, shape)));
                    // Mods that read captures see positions clamped into
                    // them (the invalid ones are not counted).
                    Value modQ = qIdx, modKv = kvIdx;
                    if (modsIndexMemoryWith(spec, /*query=*/true))
                      modQ = cp.minIndex(
                          qIdx, cp.splat(cp.sub(lenQ, cp.index(1)), shape));
                    if (modsIndexMemoryWith(spec, /*query=*/false))
                      modKv = cp.minIndex(
                          kvIdx, cp.splat(cp.sub(lenK, cp.index(1)), shape));
                    Value keep = buildKeepMask(cp, spec, qIdx, kvIdx, lenK,
                                               cp.sub(lenK, lenQ), batch, head,
                                               modQ, modKv, captures);
                    keep = arith::AndIOp::create(cb, l3, keep, valid);
                    auto count = [&](Value mask) -> Value {
                      Value ones =
                          arith::SelectOp::create(cb, l3, mask, one, zero);
                      return tile::ReduceAllOp::create(
                          cb, l3, f32, tile::ReduceKind::sum,
                          cp.reduce(tile::ReduceKind::sum, ones));
                    };
                    Value seen = cp.add(acc[0], count(keep));
                    Value all = cp.add(acc[1], count(valid));
                    scf::YieldOp::create(cb, l3, ValueRange{seen, all});
                  });
              scf::YieldOp::create(rb, l2, colTiles.getResults());
            });
        Value seen = rowTiles.getResult(0), all = rowTiles.getResult(1);
        Value any = arith::CmpFOp::create(ob, l, arith::CmpFPredicate::OGT,
                                          seen, op.f32(0.0));
        Value every =
            arith::CmpFOp::create(ob, l, arith::CmpFPredicate::OEQ, seen, all);
        Value full = arith::AndIOp::create(ob, l, any, every);
        Value partial = arith::AndIOp::create(
            ob, l, any,
            arith::XOrIOp::create(
                ob, l, every,
                arith::ConstantOp::create(ob, l, ob.getBoolAttr(true))));
        Value number = arith::IndexCastOp::create(ob, l, ob.getI32Type(), j);
        SmallVector<Value> next;
        for (auto [kind, list] :
             {std::pair<Value, unsigned>{partial, 1}, {full, 3}}) {
          Value at = counts[list == 1 ? 0 : 1];
          memref::StoreOp::create(ob, l, number,
                                  entry->getArgument(listsArg + list),
                                  ValueRange{batch, head, rowProgram, at});
          next.push_back(arith::SelectOp::create(ob, l, kind,
                                                 op.add(at, op.index(1)), at));
        }
        scf::YieldOp::create(ob, l, next);
      });
  for (auto [list, count] : {std::pair<unsigned, unsigned>{0, 0}, {2, 1}})
    memref::StoreOp::create(b, loc,
                            arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                                       blocks.getResult(count)),
                            entry->getArgument(listsArg + list),
                            ValueRange{batch, head, rowProgram});
  func::ReturnOp::create(b, loc);
  return success();
}

} // namespace

LogicalResult lowerBlockMaskBuilder(attn::AttentionOp spec) {
  if (!spec.getSparseBlocks())
    return spec.emitOpError()
           << "builds a block mask's lists, but is not block_sparse";
  if (failed(buildLists(spec, /*byQueries=*/true)) ||
      failed(buildLists(spec, /*byQueries=*/false)))
    return failure();
  return success();
}

} // namespace kiln
