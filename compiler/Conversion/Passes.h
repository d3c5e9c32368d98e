//===- Passes.h - Kiln conversion passes ------------------------*- C++ -*-===//

#ifndef KILN_COMPILER_CONVERSION_PASSES_H
#define KILN_COMPILER_CONVERSION_PASSES_H

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Conversion/Passes.h.inc"

/// convert-tile-to-cpu gives every kernel K a launcher named K followed by
/// this, which runs K's whole grid (memrefs, then the grid's three sizes).
inline constexpr llvm::StringLiteral kCPULauncherSuffix = "_grid";

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_PASSES_H
