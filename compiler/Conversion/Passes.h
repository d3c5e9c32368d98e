//===- Passes.h - Kiln conversion passes ------------------------*- C++ -*-===//

#ifndef KILN_COMPILER_CONVERSION_PASSES_H
#define KILN_COMPILER_CONVERSION_PASSES_H

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Tile/IR/TileDialect.h"
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

/// Attribute names the tile program carries for its launchers.
namespace attrs {
inline constexpr llvm::StringLiteral kKernel = "tile.kernel";
inline constexpr llvm::StringLiteral kBlockM = "tile.block_m";
inline constexpr llvm::StringLiteral kBlockN = "tile.block_n";
inline constexpr llvm::StringLiteral kGqaGroup = "kiln.gqa_group";
inline constexpr llvm::StringLiteral kCaptures = "kiln.captures";
/// Backward kernels: "preprocess", "dq" or "dkdv".
inline constexpr llvm::StringLiteral kBackwardStage = "kiln.bwd_stage";
inline constexpr llvm::StringLiteral kNumWarps = "tgpu.num_warps";
inline constexpr llvm::StringLiteral kArch = "tgpu.arch";
inline constexpr llvm::StringLiteral kSharedBytes = "tgpu.shared_bytes";
} // namespace attrs

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_PASSES_H
