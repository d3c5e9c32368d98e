//===- TileDialect.cpp - tile dialect and its types -----------------------===//

#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::tile;

#include "dialects/Tile/IR/TileDialect.cpp.inc"
#include "dialects/Tile/IR/TileEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Tile/IR/TileTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Tile/IR/TileAttrs.cpp.inc"

void TileDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Tile/IR/TileTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Tile/IR/TileAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Tile/IR/TileOps.cpp.inc"
      >();
}

// !tile.desc<?x64xbf16>
Type DescType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return DescType::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), shape, elementType);
}

void DescType::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printDimensionList(getShape());
  printer << 'x' << getElementType() << '>';
}

LogicalResult DescType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType) {
  if (shape.empty() || shape.size() > 2)
    return emitError() << "descriptors are 1-D or 2-D, got rank "
                       << shape.size();
  for (int64_t dim : shape)
    if (dim != ShapedType::kDynamic && dim <= 0)
      return emitError() << "descriptor dimensions must be positive or ?";
  if (!elementType.isIntOrIndexOrFloat())
    return emitError() << "descriptor elements must be scalars, got "
                       << elementType;
  return success();
}
