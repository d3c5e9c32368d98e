//===- EmitDialects.h - what the translations of kiln-translate read -*- C++
//-*-===//

#ifndef KILN_COMPILER_EMIT_EMITDIALECTS_H
#define KILN_COMPILER_EMIT_EMITDIALECTS_H

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"

namespace kiln {

/// The dialects of scheduled (or tile-level) kernels: what --emit-cuda and
/// --emit-launch-plan parse.
inline void registerEmitDialects(mlir::DialectRegistry &registry) {
  registry.insert<attn::AttnDialect, tile::TileDialect, tgpu::TileGPUDialect,
                  mlir::func::FuncDialect, mlir::scf::SCFDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect>();
}

} // namespace kiln

#endif // KILN_COMPILER_EMIT_EMITDIALECTS_H
