//===- AttnDialect.h - attn dialect ------------------------------*- C++
//-*-===//
//
// The attn dialect: Kiln's attention specification level.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ATTN_IR_ATTNDIALECT_H
#define KILN_DIALECTS_ATTN_IR_ATTNDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Attn/IR/AttnDialect.h.inc"
#include "dialects/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Attn/IR/AttnAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/Attn/IR/AttnOps.h.inc"

#endif // KILN_DIALECTS_ATTN_IR_ATTNDIALECT_H
