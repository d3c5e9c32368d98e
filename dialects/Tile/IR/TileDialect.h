//===- TileDialect.h - tile dialect ------------------------------*- C++
//-*-===//

#ifndef KILN_DIALECTS_TILE_IR_TILEDIALECT_H
#define KILN_DIALECTS_TILE_IR_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Tile/IR/TileDialect.h.inc"
#include "dialects/Tile/IR/TileEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Tile/IR/TileTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Tile/IR/TileAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/Tile/IR/TileOps.h.inc"

#include <optional>

namespace kiln::tile {
/// The float constant every element of a tile holds (a tile.splat of a
/// constant, or a dense splat constant), if any.
std::optional<llvm::APFloat> splatFloatConstant(mlir::Value v);
} // namespace kiln::tile

#endif // KILN_DIALECTS_TILE_IR_TILEDIALECT_H
