//===- ModRegion.cpp - rules shared by score_mod / mask_mod users ---------===//

#include "dialects/Attn/IR/ModRegion.h"
#include "dialects/Attn/IR/AttnDialect.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace kiln::attn {

unsigned getNumLeadingModArgs(ModKind kind) {
  return kind == ModKind::Score ? 5 : 4;
}

bool isSupportedModOp(Operation *op) {
  return isa<
      // arith: floating point
      arith::ConstantOp, arith::AddFOp, arith::SubFOp, arith::MulFOp,
      arith::DivFOp, arith::NegFOp, arith::RemFOp, arith::MaximumFOp,
      arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp, arith::CmpFOp,
      arith::SelectOp,
      // arith: integers and index
      arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp,
      arith::DivUIOp, arith::RemSIOp, arith::RemUIOp, arith::FloorDivSIOp,
      arith::CeilDivSIOp, arith::AndIOp, arith::OrIOp, arith::XOrIOp,
      arith::CmpIOp, arith::MaxSIOp, arith::MinSIOp, arith::ShLIOp,
      arith::ShRSIOp, arith::ShRUIOp,
      // arith: casts
      arith::IndexCastOp, arith::SIToFPOp, arith::UIToFPOp, arith::FPToSIOp,
      arith::ExtFOp, arith::TruncFOp, arith::ExtSIOp, arith::ExtUIOp,
      arith::TruncIOp,
      // math
      math::ExpOp, math::Exp2Op, math::LogOp, math::Log2Op, math::TanhOp,
      math::SqrtOp, math::RsqrtOp, math::AbsFOp, math::AbsIOp, math::SinOp,
      math::CosOp, math::ErfOp, math::PowFOp, math::FloorOp, math::CeilOp,
      // reads of captured tensors
      memref::LoadOp>(op);
}

static bool isScalar(Type type) { return type.isIntOrIndexOrFloat(); }

LogicalResult verifyModRegion(Operation *owner, Region &region, ModKind kind,
                              ArrayRef<Type> captureTypes) {
  const char *name = kind == ModKind::Score ? "score_mod" : "mask_mod";
  Block &block = region.front();
  Builder b(owner->getContext());
  SmallVector<Type> expected;
  if (kind == ModKind::Score)
    expected.push_back(b.getF32Type());
  expected.append(4, b.getIndexType());
  expected.append(captureTypes.begin(), captureTypes.end());

  if (block.getNumArguments() != expected.size())
    return owner->emitOpError()
           << name << " takes " << expected.size() << " arguments ("
           << (kind == ModKind::Score ? "score: f32, " : "")
           << "b, h, q_idx, kv_idx: index, then one per capture) but has "
           << block.getNumArguments();
  for (auto [i, arg] : llvm::enumerate(block.getArguments()))
    if (arg.getType() != expected[i])
      return emitError(arg.getLoc())
             << name << " argument #" << i << " must be " << expected[i]
             << ", got " << arg.getType();

  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return owner->emitOpError() << name << " must end with attn.yield";
  Type resultType =
      kind == ModKind::Score ? Type(b.getF32Type()) : Type(b.getI1Type());
  if (yield.getValues().size() != 1 ||
      yield.getValues().front().getType() != resultType)
    return yield.emitOpError()
           << "in " << name << " must yield exactly one " << resultType;

  for (Operation &op : block.without_terminator()) {
    if (!isSupportedModOp(&op))
      return op.emitOpError()
             << "is not allowed in " << name
             << "; mods are scalar programs of arith and math ops and "
                "memref.load from captures";
    for (Type t : op.getResultTypes())
      if (!isScalar(t))
        return op.emitOpError()
               << "in " << name << " must produce scalars, got " << t;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      auto arg = dyn_cast<BlockArgument>(load.getMemRef());
      if (!arg || arg.getOwner() != &block ||
          arg.getArgNumber() < getNumLeadingModArgs(kind))
        return op.emitOpError()
               << "in " << name << " may only read a captured tensor";
    }
  }
  return success();
}

} // namespace kiln::attn
