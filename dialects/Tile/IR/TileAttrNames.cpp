//===- TileAttrNames.cpp - size expressions and their verification --------===//

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace kiln::tile {

Attribute sizeSymbol(Builder &b, StringRef symbol) {
  return b.getStringAttr(symbol);
}

Attribute sizeCtasPerSm(Builder &b, StringRef kernel) {
  return b.getStringAttr(kCtasPerSmPrefix + kernel);
}

Attribute sizeConstant(Builder &b, int64_t value) {
  return b.getI64IntegerAttr(value);
}

Attribute sizeClamp01(Builder &b, Attribute x) {
  return sizeOp(b, "min",
                {sizeOp(b, "max", {x, sizeConstant(b, 0)}), sizeConstant(b, 1)});
}

Attribute sizeFloorDiv(Builder &b, Attribute a, Attribute d) {
  return sizeOp(
      b, "sub",
      {sizeOp(b, "ceildiv", {sizeOp(b, "add", {a, sizeConstant(b, 1)}), d}),
       sizeConstant(b, 1)});
}

Attribute sizeOp(Builder &b, StringRef op, ArrayRef<Attribute> operands) {
  SmallVector<Attribute> all{b.getStringAttr(op)};
  all.append(operands.begin(), operands.end());
  return b.getArrayAttr(all);
}

Value scalarArgument(FunctionOpInterface kernel, Attribute expr) {
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
    if (kernel.getArgAttr(i, attrs::kScalar) == expr)
      return kernel.getArgument(i);
  Builder b(kernel.getContext());
  unsigned position = kernel.getNumArguments();
  if (failed(kernel.insertArgument(
          position, b.getI64Type(),
          b.getDictionaryAttr(b.getNamedAttr(attrs::kScalar, expr)),
          kernel.getLoc())))
    return Value();
  return kernel.getArgument(position);
}

SmallVector<StringRef> derivedSymbols(Operation *op) {
  SmallVector<StringRef> names;
  if (auto symbols = op->getAttrOfType<DictionaryAttr>(attrs::kSymbols))
    for (NamedAttribute symbol : symbols)
      names.push_back(symbol.getName().getValue());
  return names;
}

LogicalResult verifySizeExpr(Attribute expr,
                             function_ref<InFlightDiagnostic()> emitError,
                             ArrayRef<StringRef> derived) {
  if (isa<IntegerAttr>(expr))
    return success();
  if (auto symbol = dyn_cast<StringAttr>(expr)) {
    // ctas_per_sm.<kernel>: the runtime checks that the plan has the kernel.
    if (llvm::is_contained(kProblemSymbols, symbol.getValue()) ||
        (symbol.getValue().starts_with(kCtasPerSmPrefix) &&
         symbol.getValue().size() > kCtasPerSmPrefix.size()) ||
        llvm::is_contained(derived, symbol.getValue()))
      return success();
    InFlightDiagnostic diag = emitError();
    diag << "size expression names '" << symbol.getValue() << "'; expected ";
    for (StringRef name : kProblemSymbols)
      diag << name << ", ";
    diag << "ctas_per_sm.<kernel>";
    for (StringRef name : derived)
      diag << ", " << name;
    diag << " (the kernel's 'tile.symbols' declares derived ones)";
    return diag;
  }
  auto array = dyn_cast<ArrayAttr>(expr);
  if (!array || array.empty() || !isa<StringAttr>(array[0]))
    return emitError() << "a size expression is an integer, a symbol or "
                          "[\"op\", operands...], got "
                       << expr;
  StringRef op = cast<StringAttr>(array[0]).getValue();
  bool known = llvm::is_contained(
      {"add", "sub", "mul", "ceildiv", "max", "min"}, op);
  if (!known)
    return emitError() << "size expression operator '" << op
                       << "' is not add, sub, mul, ceildiv, max or min";
  size_t operands = array.size() - 1;
  if (operands < 2 || (op == "ceildiv" && operands != 2))
    return emitError() << "'" << op << "' has " << operands << " operands";
  for (Attribute operand : array.getValue().drop_front())
    if (failed(verifySizeExpr(operand, emitError, derived)))
      return failure();
  return success();
}

int64_t queryHeadDim(mlir::FunctionOpInterface kernel) {
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i) {
    auto role = kernel.getArgAttrOfType<mlir::StringAttr>(i, attrs::kTensor);
    auto type = llvm::dyn_cast<mlir::MemRefType>(kernel.getArgumentTypes()[i]);
    if (role && role.getValue() == "q" && type && type.getRank() > 0 &&
        !type.isDynamicDim(type.getRank() - 1))
      return type.getShape().back();
  }
  return 0;
}

bool inKernelBelowHeadDim(mlir::Operation *op, int64_t minHeadDim) {
  auto kernel = op->getParentOfType<mlir::FunctionOpInterface>();
  int64_t headDim = kernel ? queryHeadDim(kernel) : 0;
  return headDim != 0 && headDim < minHeadDim;
}

} // namespace kiln::tile
