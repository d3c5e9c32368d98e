//===- OrderedAdds.cpp - a kernel's tile.ordered_adds, read ---------------===//

#include "dialects/Tile/Transforms/OrderedAdds.h"

#include "dialects/Tile/IR/TileAttrNames.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace kiln::tile {

namespace {

/// The kernel argument that is the workspace named `name`, or null.
BlockArgument workspace(func::FuncOp kernel, StringAttr name) {
  if (!name)
    return nullptr;
  for (BlockArgument arg : kernel.getArguments())
    if (auto attr = kernel.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                        attrs::kWorkspace);
        attr && attr == name)
      return arg;
  return nullptr;
}

} // namespace

LogicalResult forEachOrderedKernel(
    Operation *root,
    llvm::function_ref<LogicalResult(func::FuncOp, const OrderedAdds &)> fn) {
  WalkResult walk = root->walk([&](func::FuncOp kernel) {
    auto mark = kernel->getAttrOfType<DictionaryAttr>(attrs::kOrderedAdds);
    if (!mark)
      return WalkResult::advance();
    OrderedAdds order;
    order.mark = mark;
    order.accumulator =
        workspace(kernel, mark.getAs<StringAttr>("accumulator"));
    order.turns = workspace(kernel, mark.getAs<StringAttr>("turns"));
    auto rows = mark.getAs<IntegerAttr>("rows");
    auto turnsType = order.turns ? dyn_cast<MemRefType>(order.turns.getType())
                                 : MemRefType();
    if (!order.accumulator || !turnsType || turnsType.getRank() != 3 ||
        !turnsType.getElementType().isInteger(32) || !rows ||
        rows.getInt() <= 0) {
      kernel.emitOpError()
          << "has a malformed " << attrs::kOrderedAdds
          << ": accumulator and turns must name its workspaces, turns an i32 "
             "[batch, heads, blocks], and rows be positive";
      return WalkResult::interrupt();
    }
    order.rows = rows.getInt();
    return failed(fn(kernel, order)) ? WalkResult::interrupt()
                                     : WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

} // namespace kiln::tile
