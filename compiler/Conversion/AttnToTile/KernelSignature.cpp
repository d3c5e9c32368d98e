//===- KernelSignature.cpp - tile kernels with their launch roles ---------===//

#include "compiler/Conversion/AttnToTile/KernelSignature.h"

#include "dialects/Attn/IR/AttnAttrNames.h"
#include "dialects/Tile/IR/TileAttrNames.h"

using namespace mlir;

namespace kiln {

func::FuncOp createKernel(OpBuilder &b, attn::AttentionOp spec,
                          const KernelDecl &decl) {
  SmallVector<Type> types;
  for (const KernelArgDecl &arg : decl.args)
    types.push_back(arg.type);
  if (decl.withCaptures)
    llvm::append_range(types, spec.getCaptureTypes());
  auto func = func::FuncOp::create(b, spec.getLoc(), decl.name,
                                   b.getFunctionType(types, {}));
  func->setAttr(tile::attrs::kKernel, b.getUnitAttr());
  func->setAttr(tile::attrs::kVariant, b.getStringAttr(spec.getSymName()));
  func->setAttr(tile::attrs::kBlockM, b.getI64IntegerAttr(decl.blockM));
  func->setAttr(tile::attrs::kBlockN, b.getI64IntegerAttr(decl.blockN));
  func->setAttr(tile::attrs::kGqaGroup,
                b.getI64IntegerAttr(spec.getGqaGroup()));
  if (!decl.backwardStage.empty())
    func->setAttr(tile::attrs::kBackwardStage,
                  b.getStringAttr(decl.backwardStage));
  func->setAttr(tile::attrs::kGrid, b.getArrayAttr(decl.grid));
  if (decl.when)
    func->setAttr(tile::attrs::kWhen, decl.when);
  for (auto [i, arg] : llvm::enumerate(decl.args)) {
    bool tensor = arg.role == KernelArgDecl::Role::Tensor;
    func.setArgAttr(i, tensor ? tile::attrs::kTensor : tile::attrs::kWorkspace,
                    b.getStringAttr(arg.name));
    func.setArgAttr(i, tile::attrs::kShape, b.getArrayAttr(arg.shape));
    if (arg.zeroFill)
      func.setArgAttr(i, tile::attrs::kZeroFill, b.getUnitAttr());
  }
  if (decl.withCaptures) {
    if (auto captures = spec.getCapturesAttr())
      func->setAttr(tile::attrs::kCaptures, captures);
    for (unsigned c = 0; c < spec.getCaptureTypes().size(); ++c)
      func.setArgAttr(decl.args.size() + c, tile::attrs::kCapture,
                      b.getI64IntegerAttr(c));
  }
  func.addEntryBlock();
  return func;
}

std::pair<int64_t, int64_t> chosenTiles(attn::AttentionOp spec, int64_t blockM,
                                        int64_t blockN) {
  auto pick = [&](int64_t option, StringRef name) -> int64_t {
    if (option > 0)
      return option;
    if (auto chosen = spec->getAttrOfType<IntegerAttr>(name))
      return chosen.getInt();
    return 64;
  };
  return {pick(blockM, attn::attrs::kBlockM),
          pick(blockN, attn::attrs::kBlockN)};
}

SmallVector<Attribute> queryShape(Builder &b, int64_t cols) {
  return {tile::sizeSymbol(b, "batch"), tile::sizeSymbol(b, "seq_q"),
          tile::sizeSymbol(b, "heads"), tile::sizeConstant(b, cols)};
}

SmallVector<Attribute> headMajorQueryShape(Builder &b, int64_t cols) {
  return {tile::sizeSymbol(b, "batch"), tile::sizeSymbol(b, "heads"),
          tile::sizeSymbol(b, "seq_q"), tile::sizeConstant(b, cols)};
}

SmallVector<Attribute> keyShape(Builder &b, int64_t cols) {
  return {tile::sizeSymbol(b, "batch"), tile::sizeSymbol(b, "seq_kv"),
          tile::sizeSymbol(b, "kv_heads"), tile::sizeConstant(b, cols)};
}

SmallVector<Attribute> pagedKeyShape(Builder &b, int64_t pageSize,
                                     int64_t cols) {
  return {tile::sizeSymbol(b, "pages"), tile::sizeConstant(b, pageSize),
          tile::sizeSymbol(b, "kv_heads"), tile::sizeConstant(b, cols)};
}

SmallVector<Attribute> blockTableShape(Builder &b) {
  return {tile::sizeSymbol(b, "batch"), tile::sizeSymbol(b, "max_pages")};
}

SmallVector<Attribute> rowShape(Builder &b) {
  return {tile::sizeSymbol(b, "batch"), tile::sizeSymbol(b, "heads"),
          tile::sizeSymbol(b, "seq_q")};
}

SmallVector<Attribute> packedShape(Builder &b, StringRef rows, StringRef heads,
                                   int64_t cols) {
  return {tile::sizeSymbol(b, rows), tile::sizeSymbol(b, heads),
          tile::sizeConstant(b, cols)};
}

SmallVector<Attribute> packedRowShape(Builder &b) {
  return {tile::sizeSymbol(b, "heads"), tile::sizeSymbol(b, "total_q")};
}

SmallVector<Attribute> seqOffsetsShape(Builder &b) {
  return {tile::sizeOp(
      b, "add", {tile::sizeSymbol(b, "batch"), tile::sizeConstant(b, 1)})};
}

SmallVector<Attribute> blockCountShape(Builder &b, StringRef rows,
                                       int64_t block, bool perHead) {
  return {
      tile::sizeSymbol(b, "batch"),
      perHead ? tile::sizeSymbol(b, "heads") : tile::sizeConstant(b, 1),
      tile::sizeOp(b, "ceildiv",
                   {tile::sizeSymbol(b, rows), tile::sizeConstant(b, block)})};
}

SmallVector<Attribute> blockListShape(Builder &b, StringRef rows, int64_t block,
                                      StringRef cols, int64_t colBlock,
                                      bool perHead) {
  SmallVector<Attribute> shape = blockCountShape(b, rows, block, perHead);
  shape.push_back(tile::sizeOp(
      b, "ceildiv",
      {tile::sizeSymbol(b, cols), tile::sizeConstant(b, colBlock)}));
  return shape;
}

SmallVector<Attribute, 3> raggedBlockGrid(Builder &b, StringRef rows,
                                          StringRef heads, int64_t block) {
  return {tile::sizeOp(b, "add",
                       {tile::sizeOp(b, "ceildiv",
                                     {tile::sizeSymbol(b, rows),
                                      tile::sizeConstant(b, block)}),
                        tile::sizeSymbol(b, "batch")}),
          tile::sizeSymbol(b, heads), tile::sizeConstant(b, 1)};
}

SmallVector<Attribute, 3> queryBlockGrid(Builder &b, int64_t blockM) {
  return {tile::sizeOp(
              b, "ceildiv",
              {tile::sizeSymbol(b, "seq_q"), tile::sizeConstant(b, blockM)}),
          tile::sizeSymbol(b, "heads"), tile::sizeSymbol(b, "batch")};
}

SmallVector<Attribute, 3> packedQueryBlockGrid(Builder &b, int64_t blockM,
                                               int64_t group) {
  Attribute rows = tile::sizeOp(
      b, "mul", {tile::sizeSymbol(b, "seq_q"), tile::sizeConstant(b, group)});
  return {tile::sizeOp(b, "ceildiv", {rows, tile::sizeConstant(b, blockM)}),
          tile::sizeSymbol(b, "kv_heads"), tile::sizeSymbol(b, "batch")};
}

SmallVector<Attribute, 3> keyBlockGrid(Builder &b, int64_t blockN) {
  return {tile::sizeOp(
              b, "ceildiv",
              {tile::sizeSymbol(b, "seq_kv"), tile::sizeConstant(b, blockN)}),
          tile::sizeSymbol(b, "kv_heads"), tile::sizeSymbol(b, "batch")};
}

} // namespace kiln
