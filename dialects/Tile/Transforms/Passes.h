//===- Passes.h - tile dialect passes ---------------------------*- C++ -*-===//

#ifndef KILN_DIALECTS_TILE_TRANSFORMS_PASSES_H
#define KILN_DIALECTS_TILE_TRANSFORMS_PASSES_H

#include "dialects/Tile/IR/TileDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln::tile {

#define GEN_PASS_DECL
#include "dialects/Tile/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/Tile/Transforms/Passes.h.inc"

} // namespace kiln::tile

#endif // KILN_DIALECTS_TILE_TRANSFORMS_PASSES_H
