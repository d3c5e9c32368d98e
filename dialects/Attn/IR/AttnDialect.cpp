//===- AttnDialect.cpp - attn dialect registration ------------------------===//

#include "dialects/Attn/IR/AttnDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::attn;

#include "dialects/Attn/IR/AttnDialect.cpp.inc"
#include "dialects/Attn/IR/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Attn/IR/AttnAttrs.cpp.inc"

void AttnDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Attn/IR/AttnAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Attn/IR/AttnOps.cpp.inc"
      >();
}

/// Problem symbols a captured tensor's dimension may name.
static bool isProblemSymbol(StringRef name) {
  return name == "batch" || name == "heads" || name == "kv_heads" ||
         name == "seq_q" || name == "seq_kv";
}

LogicalResult CaptureAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  StringAttr name, MemRefType type,
                                  ArrayAttr dims) {
  if (!name || name.getValue().empty())
    return emitError() << "capture needs a non-empty name";
  if (type.getRank() != static_cast<int64_t>(dims.size()))
    return emitError() << "capture '" << name.getValue() << "' has rank "
                       << type.getRank() << " but " << dims.size()
                       << " dimension names";
  // The runtime passes captures as dense row-major buffers in the device's
  // global memory: another layout or memory space would make the mods read
  // the wrong elements.
  if (!type.getLayout().isIdentity())
    return emitError() << "capture '" << name.getValue()
                       << "' must have the identity (row-major) layout, got "
                       << type.getLayout();
  if (type.getMemorySpace())
    return emitError() << "capture '" << name.getValue()
                       << "' must be in the default memory space, got "
                       << type.getMemorySpace();
  Type elt = type.getElementType();
  if (!elt.isIntOrIndexOrFloat())
    return emitError() << "capture '" << name.getValue()
                       << "' must hold integers or floats, not " << elt;
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (auto str = dyn_cast<StringAttr>(dim)) {
      if (!isProblemSymbol(str.getValue()))
        return emitError() << "capture '" << name.getValue() << "' dimension "
                           << i << " names '" << str.getValue()
                           << "'; expected one of batch, heads, kv_heads, "
                              "seq_q, seq_kv or an integer";
      continue;
    }
    auto size = dyn_cast<IntegerAttr>(dim);
    if (!size || !size.getType().isSignlessInteger() || size.getInt() <= 0)
      return emitError() << "capture '" << name.getValue() << "' dimension "
                         << i
                         << " must be a problem symbol or a positive "
                            "integer";
    if (!type.isDynamicDim(i) && type.getDimSize(i) != size.getInt())
      return emitError() << "capture '" << name.getValue() << "' dimension "
                         << i << " is " << size.getInt()
                         << " but its type says " << type.getDimSize(i);
  }
  return success();
}

LogicalResult BandAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayAttr lower, ArrayAttr upper, bool exact) {
  for (ArrayAttr bounds : {lower, upper})
    for (Attribute attr : bounds) {
      auto bound = dyn_cast<KVBoundAttr>(attr);
      if (!bound)
        return emitError() << "band bounds must be #attn.kv_bound, got "
                           << attr;
      // The loop-bound math relies on bounds non-decreasing in q.
      if (bound.getQCoeff() != 0 && bound.getQCoeff() != 1)
        return emitError() << "kv_bound q_coeff must be 0 or 1, got "
                           << bound.getQCoeff();
    }
  return success();
}
