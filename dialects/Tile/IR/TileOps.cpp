//===- TileOps.cpp - tile operation verifiers
//------------------------------===//

#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kiln::tile;

#define GET_OP_CLASSES
#include "dialects/Tile/IR/TileOps.cpp.inc"

/// A packed batch's sequence offsets (cu_seqlens): [S + 1] of i32.
static LogicalResult verifyOffsets(Operation *op, Type type) {
  auto offsets = cast<MemRefType>(type);
  if (offsets.getRank() != 1 || !offsets.getElementType().isInteger(32))
    return op->emitOpError() << "the sequence offsets must be a [sequences + "
                                "1] array of i32, got "
                             << offsets;
  return success();
}

LogicalResult ViewOp::verify() {
  auto baseType = cast<MemRefType>(getBase().getType());
  DescType descType = getResult().getType();
  ArrayRef<int64_t> keep = getKeep();
  if (static_cast<int64_t>(keep.size()) != descType.getRank())
    return emitOpError() << "keeps " << keep.size()
                         << " dimensions but the descriptor has rank "
                         << descType.getRank();
  if (keep.size() + getIndices().size() !=
      static_cast<size_t>(baseType.getRank()))
    return emitOpError() << "needs one index per dimension not kept: base has "
                            "rank "
                         << baseType.getRank() << ", keeps " << keep.size()
                         << ", got " << getIndices().size() << " indices";
  std::optional<int64_t> packed = getPacked();
  int64_t previous = -1;
  for (auto [i, dim] : llvm::enumerate(keep)) {
    if (dim < 0 || dim >= baseType.getRank() ||
        llvm::is_contained(keep.take_front(i), dim))
      return emitOpError() << "keep must list distinct dimensions of the "
                              "base, got "
                           << dim << " at position " << i;
    if (packed && dim <= previous)
      return emitOpError() << "a packed view keeps increasing dimensions, got "
                           << dim << " at position " << i;
    previous = dim;
    int64_t want = descType.getShape()[i];
    int64_t have = baseType.getDimSize(dim);
    if (want != ShapedType::kDynamic && have != ShapedType::kDynamic &&
        want != have)
      return emitOpError() << "descriptor dimension " << i << " is " << want
                           << " but base dimension " << dim << " is " << have;
  }
  if (baseType.getElementType() != descType.getElementType())
    return emitOpError() << "element type " << descType.getElementType()
                         << " differs from the base's "
                         << baseType.getElementType();
  if (packed.has_value() != (descType.getGroup() > 1))
    return emitOpError() << "a descriptor of group " << descType.getGroup()
                         << (packed ? " cannot pack a dimension"
                                    : " needs the dimension it packs "
                                      "(`packed`)");
  if (packed && (*packed < 0 || *packed >= baseType.getRank() ||
                 llvm::is_contained(keep, *packed)))
    return emitOpError() << "packs dimension " << *packed
                         << ", which must be a dimension of the base that is "
                            "not kept";
  if (packed && baseType.getDimSize(*packed) != ShapedType::kDynamic &&
      baseType.getDimSize(*packed) < descType.getGroup())
    return emitOpError() << "packs " << descType.getGroup()
                         << " positions of dimension " << *packed
                         << ", which has " << baseType.getDimSize(*packed);
  if (isRagged()) {
    if (isPaged() || !getSequence())
      return emitOpError() << "a ragged view names its sequence and has no "
                              "pages";
    if (failed(verifyOffsets(*this, getOffsets().getType())))
      return failure();
  }
  if (!isPaged()) {
    if (descType.isPaged())
      return emitOpError() << "a paged descriptor needs `pages`";
    return success();
  }
  // A pool [P, S, H, D]: the rows are a sequence's, through its block table.
  int64_t pageSize = baseType.getRank() == 4 ? baseType.getDimSize(1) : 0;
  if (keep != ArrayRef<int64_t>{1, 3} || packed ||
      ShapedType::isDynamic(pageSize))
    return emitOpError() << "pages need a [pages, page_size, heads, cols] "
                            "base with a static page size, kept [1, 3] and "
                            "not packed";
  if (descType.getPageSize() != pageSize)
    return emitOpError() << "the descriptor's page size "
                         << descType.getPageSize() << " is not the base's "
                         << pageSize;
  auto table = cast<MemRefType>(getPageTable().getType());
  auto lengths = cast<MemRefType>(getLengths().getType());
  if (table.getRank() != 2 || !table.getElementType().isInteger(32))
    return emitOpError() << "the block table must be a [sequences, pages] "
                            "array of i32, got "
                         << table;
  if (lengths.getRank() != 1 || !lengths.getElementType().isInteger(32))
    return emitOpError() << "the lengths must be a [sequences] array of i32, "
                            "got "
                         << lengths;
  return success();
}

LogicalResult RaggedBlockOp::verify() {
  return verifyOffsets(*this, getOffsets().getType());
}

unsigned ViewOp::getPackedIndexPosition() {
  int64_t packed = *getPacked();
  unsigned position = 0;
  for (int64_t d = 0; d < packed; ++d)
    if (!llvm::is_contained(getKeep(), d))
      ++position;
  return position;
}

LogicalResult DimOp::verify() {
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim >= getDesc().getType().getRank())
    return emitOpError() << "dimension " << dim << " is out of range for rank "
                         << getDesc().getType().getRank();
  return success();
}

/// Shared by load and store: the tile and the descriptor agree in rank and
/// element type, and there is one offset per dimension.
static LogicalResult verifyTileAccess(Operation *op, RankedTensorType tile,
                                      DescType desc, size_t numOffsets) {
  if (tile.getRank() != desc.getRank())
    return op->emitOpError()
           << "tile rank " << tile.getRank() << " differs from descriptor rank "
           << desc.getRank();
  if (numOffsets != static_cast<size_t>(desc.getRank()))
    return op->emitOpError()
           << "needs " << desc.getRank() << " offsets, got " << numOffsets;
  if (tile.getElementType() != desc.getElementType())
    return op->emitOpError()
           << "tile element type " << tile.getElementType()
           << " differs from descriptor element type " << desc.getElementType();
  return success();
}

/// Shared by load and store: an optional mask is an i1 tile of the tile's
/// shape.
static LogicalResult verifyMask(Operation *op, RankedTensorType tile,
                                Value mask) {
  if (!mask)
    return success();
  auto maskType = cast<RankedTensorType>(mask.getType());
  if (maskType.getShape() != tile.getShape() ||
      !maskType.getElementType().isInteger(1))
    return op->emitOpError() << "mask must be an i1 tile of the tile's shape "
                             << tile.getShape() << ", got " << maskType;
  return success();
}

LogicalResult LoadOp::verify() {
  auto tile = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyTileAccess(*this, tile, getDesc().getType(),
                              getOffsets().size())))
    return failure();
  if (getFill().getType() != tile.getElementType())
    return emitOpError() << "fill value type " << getFill().getType()
                         << " differs from the tile element type "
                         << tile.getElementType();
  return verifyMask(*this, tile, getMask());
}

LogicalResult StoreOp::verify() {
  auto tile = cast<RankedTensorType>(getValue().getType());
  if (failed(verifyTileAccess(*this, tile, getDesc().getType(),
                              getOffsets().size())))
    return failure();
  if (getDesc().getType().isPaged())
    return emitOpError() << "stores into a paged descriptor (a KV cache's "
                            "pool is read, never written, by attention)";
  return verifyMask(*this, tile, getMask());
}

LogicalResult AtomicAddOp::verify() {
  auto tile = cast<RankedTensorType>(getValue().getType());
  if (failed(verifyTileAccess(*this, tile, getDesc().getType(),
                              getOffsets().size())))
    return failure();
  if (getDesc().getType().isPaged())
    return emitOpError() << "adds into a paged descriptor (a KV cache's pool "
                            "is read, never written, by attention)";
  if (!tile.getElementType().isF32())
    return emitOpError() << "adds f32 tiles (the accumulation precision), "
                            "got "
                         << tile.getElementType();
  return success();
}

LogicalResult DotOp::verify() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (lhs.getRank() != 2 || rhs.getRank() != 2 || result.getRank() != 2)
    return emitOpError() << "operands and result must be 2-D tiles";
  int64_t m = getTransposeLhs() ? lhs.getDimSize(1) : lhs.getDimSize(0);
  int64_t k = getTransposeLhs() ? lhs.getDimSize(0) : lhs.getDimSize(1);
  int64_t rhsK = getTransposeRhs() ? rhs.getDimSize(1) : rhs.getDimSize(0);
  int64_t n = getTransposeRhs() ? rhs.getDimSize(0) : rhs.getDimSize(1);
  if (k != rhsK)
    return emitOpError() << "contraction sizes differ: lhs has " << k
                         << ", rhs has " << rhsK
                         << (getTransposeRhs() ? " (transposed)" : "");
  if (result.getDimSize(0) != m || result.getDimSize(1) != n)
    return emitOpError() << "result must be " << m << "x" << n << ", got "
                         << result;
  if (!isa<FloatType>(result.getElementType()) ||
      !isa<FloatType>(lhs.getElementType()) ||
      !isa<FloatType>(rhs.getElementType()))
    return emitOpError() << "operates on floating-point tiles";
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError() << "lhs and rhs element types differ: "
                         << lhs.getElementType() << " vs "
                         << rhs.getElementType();
  if (lhs.getElementType().getIntOrFloatBitWidth() >
      result.getElementType().getIntOrFloatBitWidth())
    return emitOpError() << "accumulator " << result.getElementType()
                         << " is narrower than the inputs";
  if (getAcc() && getAcc().getType() != result)
    return emitOpError() << "accumulator type " << getAcc().getType()
                         << " differs from the result type " << result;
  return success();
}

LogicalResult ReduceOp::verify() {
  auto source = cast<RankedTensorType>(getSource().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (source.getRank() != 2 || result.getRank() != 1)
    return emitOpError() << "reduces a 2-D tile to a 1-D tile";
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim > 1)
    return emitOpError() << "dimension must be 0 or 1, got " << dim;
  int64_t kept = source.getDimSize(1 - dim);
  if (result.getDimSize(0) != kept ||
      result.getElementType() != source.getElementType()) {
    std::string expected;
    llvm::raw_string_ostream os(expected);
    os << RankedTensorType::get({kept}, source.getElementType());
    return emitOpError() << "result must be " << expected;
  }
  if (!isa<FloatType>(source.getElementType()))
    return emitOpError() << "reduces floating-point tiles";
  return success();
}

LogicalResult ReduceAllOp::verify() {
  auto source = cast<RankedTensorType>(getSource().getType());
  if (source.getRank() != 1)
    return emitOpError() << "reduces a 1-D tile to a scalar";
  if (getResult().getType() != source.getElementType())
    return emitOpError() << "result must be " << source.getElementType();
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto source = cast<RankedTensorType>(getSource().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (source.getRank() != 1 || result.getRank() != 2)
    return emitOpError() << "broadcasts a 1-D tile to a 2-D tile";
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim > 1)
    return emitOpError() << "dimension must be 0 or 1, got " << dim;
  if (result.getDimSize(1 - dim) != source.getDimSize(0) ||
      result.getElementType() != source.getElementType())
    return emitOpError() << "source " << source << " does not fit result "
                         << result << " along dimension " << 1 - dim;
  return success();
}

std::optional<APFloat> kiln::tile::splatFloatConstant(Value v) {
  if (auto splat = v.getDefiningOp<SplatOp>()) {
    FloatAttr value;
    if (matchPattern(splat.getValue(), m_Constant(&value)))
      return value.getValue();
    return std::nullopt;
  }
  DenseFPElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat())
    return dense.getSplatValue<APFloat>();
  return std::nullopt;
}

LogicalResult SplatOp::verify() {
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getElementType() != getValue().getType())
    return emitOpError() << "result elements must be " << getValue().getType();
  return success();
}

LogicalResult IotaOp::verify() {
  auto result = cast<RankedTensorType>(getResult().getType());
  if (!result.getElementType().isIndex())
    return emitOpError() << "produces an index tile";
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim >= result.getRank())
    return emitOpError() << "dimension " << dim << " is out of range for rank "
                         << result.getRank();
  return success();
}

LogicalResult PhiloxOp::verify() {
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getRank() != 2 || !result.getElementType().isInteger(32))
    return emitOpError() << "produces a 2-D tile of i32, got " << result;
  if (getBits() != 16 && getBits() != 8)
    return emitOpError() << "draws 16- or 8-bit uniforms, got bits = "
                         << getBits();
  return success();
}

LogicalResult ScatterAddOp::verify() {
  auto values = cast<RankedTensorType>(getValues().getType());
  auto dest = cast<MemRefType>(getDest().getType());
  if (getFixedPoint()) {
    if (!values.getElementType().isF32() ||
        !dest.getElementType().isInteger(64) || dest.getRank() < 2 ||
        dest.getShape().back() != 3)
      return emitOpError() << "with fixed_point adds f32 values into an i64 "
                              "memref whose last dimension is 3, got "
                           << values << " into " << dest;
  } else if (!isa<FloatType>(values.getElementType()) ||
             values.getElementType() != dest.getElementType()) {
    return emitOpError() << "adds float values into a memref of their type, "
                            "got "
                         << values << " into " << dest;
  }
  int64_t indexed = dest.getRank() - (getFixedPoint() ? 1 : 0);
  if (static_cast<int64_t>(getIndices().size()) != indexed)
    return emitOpError() << "needs one index tile per dimension of the "
                            "destination"
                         << (getFixedPoint() ? " but the last" : "") << " ("
                         << indexed << "), got " << getIndices().size();
  for (Value index : getIndices()) {
    auto type = cast<RankedTensorType>(index.getType());
    if (!type.getElementType().isIndex() ||
        type.getShape() != values.getShape())
      return emitOpError() << "index tiles are index tiles shaped like the "
                              "values, got "
                           << type;
  }
  return success();
}

LogicalResult GatherOp::verify() {
  auto source = cast<MemRefType>(getSource().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (source.getRank() == 0)
    return emitOpError() << "gathers from a memref of rank >= 1";
  if (getIndices().size() != static_cast<size_t>(source.getRank()))
    return emitOpError() << "needs " << source.getRank() << " index tiles, got "
                         << getIndices().size();
  for (Value index : getIndices()) {
    auto type = cast<RankedTensorType>(index.getType());
    if (type.getShape() != result.getShape() ||
        !type.getElementType().isIndex())
      return emitOpError() << "index tiles must be index tiles shaped like "
                              "the result";
  }
  if (result.getElementType() != source.getElementType())
    return emitOpError() << "result elements must be "
                         << source.getElementType();
  return success();
}
