//===- OrderedAdds.h - a kernel's tile.ordered_adds, read -------*- C++ -*-===//
//
// convert-attn-to-tile-backward ordered-dq marks the atomic dK/dV kernel
// tile.ordered_adds; tile-check-turns (CPU) and tgpu-ordered-adds (GPU) read
// the mark the same way.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_TILE_TRANSFORMS_ORDEREDADDS_H
#define KILN_DIALECTS_TILE_TRANSFORMS_ORDEREDADDS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::tile {

/// A kernel's tile.ordered_adds: the accumulator workspace its adds take
/// turns at, the zeroed i32 [batch, heads, blocks] workspace that counts
/// them, the rows of a block, and the mark itself (for its other entries).
struct OrderedAdds {
  mlir::BlockArgument accumulator, turns;
  int64_t rows = 0;
  mlir::DictionaryAttr mark;
};

/// Calls `fn` on each kernel under `root` marked tile.ordered_adds, with the
/// mark read; fails (with an error on the kernel) at a malformed mark, or
/// where `fn` fails.
mlir::LogicalResult forEachOrderedKernel(
    mlir::Operation *root,
    llvm::function_ref<mlir::LogicalResult(mlir::func::FuncOp,
                                           const OrderedAdds &)>
        fn);

} // namespace kiln::tile

#endif // KILN_DIALECTS_TILE_TRANSFORMS_ORDEREDADDS_H
