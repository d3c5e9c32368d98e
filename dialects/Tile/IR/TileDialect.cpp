//===- TileDialect.cpp - tile dialect and its types -----------------------===//

#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/Tile/IR/TileAttrNames.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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

// !tile.desc<?x64xbf16>, !tile.desc<?x64xbf16, group 4>
Type DescType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  int64_t group = 1, pageSize = 0;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return {};
    int64_t *value = keyword == "group"   ? &group
                     : keyword == "pages" ? &pageSize
                                          : nullptr;
    if (!value) {
      parser.emitError(parser.getCurrentLocation())
          << "expected 'group' or 'pages', got '" << keyword << "'";
      return {};
    }
    if (parser.parseInteger(*value))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return DescType::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), shape, elementType, group, pageSize);
}

void DescType::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printDimensionList(getShape());
  printer << 'x' << getElementType();
  if (getGroup() != 1)
    printer << ", group " << getGroup();
  if (isPaged())
    printer << ", pages " << getPageSize();
  printer << '>';
}

LogicalResult DescType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType,
                               int64_t group, int64_t pageSize) {
  if (group < 1)
    return emitError() << "a descriptor's group must be positive, got "
                       << group;
  if (pageSize < 0)
    return emitError() << "a descriptor's page size must be positive, got "
                       << pageSize;
  if (pageSize > 0 && (shape.size() != 2 || group != 1))
    return emitError() << "a paged descriptor is 2-D and not packed";
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

LogicalResult TileDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  auto emitError = [&] { return op->emitOpError(); };
  SmallVector<StringRef> derived = derivedSymbols(op);
  if (attr.getName() == attrs::kSymbols) {
    auto symbols = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!symbols)
      return op->emitOpError() << "'" << attrs::kSymbols
                               << "' must be a dictionary of size expressions";
    for (NamedAttribute symbol : symbols) {
      StringRef name = symbol.getName().getValue();
      if (llvm::is_contained(kiln::tile::kProblemSymbols, name))
        return op->emitOpError() << "'" << attrs::kSymbols << "' redefines '"
                                 << name << "', a problem symbol";
      // Over the problem's symbols only (the runtime evaluates derived
      // symbols in no particular order).
      if (failed(verifySizeExpr(symbol.getValue(), emitError)))
        return failure();
    }
    return success();
  }
  if (attr.getName() == attrs::kBlockCost) {
    auto cost = dyn_cast<StringAttr>(attr.getValue());
    if (!cost || (cost.getValue() != attrs::kBlockCostGrows &&
                  cost.getValue() != attrs::kBlockCostShrinks))
      return op->emitOpError() << "'" << attrs::kBlockCost << "' must be \""
                               << attrs::kBlockCostGrows << "\" or \""
                               << attrs::kBlockCostShrinks << "\"";
    return success();
  }
  if (attr.getName() == attrs::kWhen || attr.getName() == attrs::kKvExtent)
    return verifySizeExpr(attr.getValue(), emitError, derived);
  if (attr.getName() != attrs::kGrid)
    return success();
  auto grid = dyn_cast<ArrayAttr>(attr.getValue());
  if (!grid || grid.size() != 3)
    return op->emitOpError() << "'" << attrs::kGrid
                             << "' must be an array of 3 size expressions "
                                "(x, y, z)";
  for (Attribute axis : grid)
    if (failed(verifySizeExpr(axis, emitError, derived)))
      return failure();
  return success();
}

/// The type of argument `argIndex`: from the function's signature, so that
/// declarations without a body are checked too.
static Type argumentType(Operation *op, unsigned regionIndex,
                         unsigned argIndex) {
  if (auto function = dyn_cast<FunctionOpInterface>(op))
    if (argIndex < function.getNumArguments())
      return function.getArgumentTypes()[argIndex];
  Region &region = op->getRegion(regionIndex);
  if (!region.empty() && argIndex < region.getNumArguments())
    return region.getArgument(argIndex).getType();
  return Type();
}

LogicalResult TileDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  auto emitError = [&] {
    return op->emitOpError() << "argument " << argIndex << ": ";
  };
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  if (name == attrs::kTensor || name == attrs::kWorkspace) {
    if (!isa<StringAttr>(value))
      return emitError() << "'" << name << "' must be a string";
    auto type =
        dyn_cast_or_null<MemRefType>(argumentType(op, regionIndex, argIndex));
    if (!type)
      return emitError() << "'" << name << "' marks a memref argument";
    return success();
  }
  if (name == attrs::kShape) {
    auto shape = dyn_cast<ArrayAttr>(value);
    if (!shape)
      return emitError() << "'" << name
                         << "' must be an array of size expressions";
    Type argType = argumentType(op, regionIndex, argIndex);
    auto type = dyn_cast_or_null<MemRefType>(argType);
    if (!type || type.getRank() != static_cast<int64_t>(shape.size()))
      return emitError() << "'" << name << "' has " << shape.size()
                         << " dimensions; the argument's type is " << argType;
    SmallVector<StringRef> derived = derivedSymbols(op);
    for (auto [dim, expr] : llvm::enumerate(shape)) {
      if (failed(verifySizeExpr(expr, emitError, derived)))
        return failure();
      // A static dimension of the type must be the constant the plan says.
      auto constant = dyn_cast<IntegerAttr>(expr);
      if (!type.isDynamicDim(dim) &&
          (!constant || constant.getInt() != type.getDimSize(dim)))
        return emitError() << "dimension " << dim << " is "
                           << type.getDimSize(dim) << " in the type but "
                           << expr << " in '" << name << "'";
    }
    return success();
  }
  if (name == attrs::kCapture) {
    auto index = dyn_cast<IntegerAttr>(value);
    if (!index || index.getInt() < 0)
      return emitError() << "'" << name
                         << "' must be a non-negative capture index";
    return success();
  }
  if (name == attrs::kScalar) {
    Type argType = argumentType(op, regionIndex, argIndex);
    if (!argType || !argType.isInteger(64))
      return emitError() << "'" << name << "' marks an i64 argument, got "
                         << argType;
    return verifySizeExpr(value, emitError, derivedSymbols(op));
  }
  if (name == attrs::kZeroFill) {
    if (!isa<UnitAttr>(value))
      return emitError() << "'" << name << "' is a unit attribute";
    return success();
  }
  return emitError() << "unknown tile argument attribute '" << name << "'";
}
