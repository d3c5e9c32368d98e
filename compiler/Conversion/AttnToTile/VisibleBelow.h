//===- VisibleBelow.h - a per-program key bound under which a mask holds --===//
//
// A mask_mod of the form `kv < X || ...`, with X the same for every row of a
// program (read from the batch, constants and captures: the committed length
// of a sequence's KV cache in a speculative verify step), is true for every
// key below X whatever the rest says. `attn-infer-mask-bounds` cannot bound
// such a mask (it is data dependent), so without this every KV block would
// evaluate it per element; with it the forward runs the blocks below X
// unmasked and masks only the rest.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CONVERSION_ATTNTOTILE_VISIBLEBELOW_H
#define KILN_COMPILER_CONVERSION_ATTNTOTILE_VISIBLEBELOW_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"

#include <optional>

namespace kiln {

/// X of a mask_mod `(b, h, q, kv, captures...) -> i1` whose yielded value is
/// an `arith.ori` tree with a leaf `kv < X` (`cmpi slt|ult %kv, X`, `cmpi
/// sgt|ugt X, %kv` or `cmpi slt (subi %kv, X), 0`), X an index computed from
/// b (and h when `headUniform`), constants and capture reads at such
/// indices, by side-effect-free ops. The ops computing X come in order.
struct VisibleBelow {
  mlir::Value bound;
  llvm::SmallVector<mlir::Operation *> ops;
};
std::optional<VisibleBelow> findVisibleBelow(mlir::Region &maskMod,
                                             bool headUniform);

/// Builds X at `builder`'s point, the mod's batch, head and capture
/// arguments mapped to `batch`, `head` and `captures`.
mlir::Value buildVisibleBelow(mlir::OpBuilder &builder,
                              const VisibleBelow &below, mlir::Region &maskMod,
                              mlir::Value batch, mlir::Value head,
                              mlir::ArrayRef<mlir::Value> captures);

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_ATTNTOTILE_VISIBLEBELOW_H
