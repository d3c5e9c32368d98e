//===- VisibleBelow.cpp - a per-program key bound under which a mask holds ===//

#include "compiler/Conversion/AttnToTile/VisibleBelow.h"

#include "dialects/Attn/IR/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace kiln {

namespace {

/// Collects, in order, the ops `v` is computed by when it depends only on
/// the mod's batch (argument 0), head (argument 1, when `headUniform`) and
/// captures (arguments 4 on, as the memref of a load); false otherwise.
bool collectUniform(Value v, Block &body, bool headUniform,
                    llvm::SetVector<Operation *> &ops) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != &body)
      return false;
    unsigned n = arg.getArgNumber();
    return n == 0 || (n == 1 && headUniform) || n >= 4;
  }
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &body || def->getNumRegions() != 0 ||
      def->getNumResults() != 1)
    return false;
  if (ops.contains(def))
    return true;
  auto load = dyn_cast<memref::LoadOp>(def);
  if (!load && !isMemoryEffectFree(def))
    return false;
  for (Value operand : def->getOperands()) {
    // A capture is only read, never used as a value.
    if (auto arg = dyn_cast<BlockArgument>(operand);
        arg && arg.getArgNumber() >= 4 &&
        (!load || operand != load.getMemRef()))
      return false;
    if (!collectUniform(operand, body, headUniform, ops))
      return false;
  }
  ops.insert(def);
  return true;
}

/// X when `leaf` says `kv < X`.
std::optional<Value> keyBelow(Value leaf, Value kv) {
  auto cmp = leaf.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return std::nullopt;
  Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::slt:
    if (lhs == kv)
      return rhs;
    // kv - X < 0.
    if (auto sub = lhs.getDefiningOp<arith::SubIOp>();
        sub && sub.getLhs() == kv && matchPattern(rhs, m_Zero()))
      return sub.getRhs();
    return std::nullopt;
  case arith::CmpIPredicate::ult:
    return lhs == kv ? std::optional<Value>(rhs) : std::nullopt;
  case arith::CmpIPredicate::sgt:
  case arith::CmpIPredicate::ugt:
    return rhs == kv ? std::optional<Value>(lhs) : std::nullopt;
  default:
    return std::nullopt;
  }
}

} // namespace

std::optional<VisibleBelow> findVisibleBelow(Region &maskMod,
                                             bool headUniform) {
  if (maskMod.empty())
    return std::nullopt;
  Block &body = maskMod.front();
  Value kv = body.getArgument(3);
  auto yield = cast<attn::YieldOp>(body.getTerminator());
  // The leaves of the ori tree the mod yields.
  SmallVector<Value> work{yield.getValues().front()};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto orOp = v.getDefiningOp<arith::OrIOp>()) {
      work.push_back(orOp.getLhs());
      work.push_back(orOp.getRhs());
      continue;
    }
    std::optional<Value> bound = keyBelow(v, kv);
    if (!bound || !bound->getType().isIndex())
      continue;
    llvm::SetVector<Operation *> ops;
    if (collectUniform(*bound, body, headUniform, ops))
      return VisibleBelow{*bound, SmallVector<Operation *>(ops.begin(),
                                                           ops.end())};
  }
  return std::nullopt;
}

Value buildVisibleBelow(OpBuilder &builder, const VisibleBelow &below,
                        Region &maskMod, Value batch, Value head,
                        ArrayRef<Value> captures) {
  Block &body = maskMod.front();
  IRMapping mapping;
  mapping.map(body.getArgument(0), batch);
  mapping.map(body.getArgument(1), head);
  for (auto [i, capture] : llvm::enumerate(captures))
    mapping.map(body.getArgument(4 + i), capture);
  for (Operation *op : below.ops)
    builder.clone(*op, mapping);
  return mapping.lookupOrDefault(below.bound);
}

} // namespace kiln
