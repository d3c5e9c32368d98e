//===- ModVectorizer.cpp - inline a scalar mod region over a tile ---------===//

#include "compiler/Conversion/AttnToTile/ModVectorizer.h"

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace kiln {

Value splatToTile(OpBuilder &builder, Location loc, Value scalar,
                  ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, scalar.getType());
  return tile::SplatOp::create(builder, loc, type, scalar);
}

static bool isTile(Value v) { return isa<RankedTensorType>(v.getType()); }

/// Builds `op` at the builder's point on the mapped operands: as is when no
/// operand is a tile (a uniform value, computed once), as a tile.gather for
/// a capture read at tile indices, else as the same op on tiles (scalars
/// splatted). Maps its results and returns the new op.
static Operation *vectorizeOp(OpBuilder &builder, Operation &op,
                              IRMapping &mapping, ArrayRef<int64_t> shape) {
  Location loc = op.getLoc();
  auto asTile = [&](Value v) {
    return isTile(v) ? v : splatToTile(builder, loc, v, shape);
  };
  SmallVector<Value> operands;
  for (Value operand : op.getOperands())
    operands.push_back(mapping.lookup(operand));
  Operation *built;
  auto load = dyn_cast<memref::LoadOp>(op);
  if (load && llvm::any_of(load.getIndices(), [&](Value i) {
        return isTile(mapping.lookup(i));
      })) {
    SmallVector<Value> indices;
    for (Value index : load.getIndices())
      indices.push_back(asTile(mapping.lookup(index)));
    built = tile::GatherOp::create(builder, loc,
                                   RankedTensorType::get(shape, load.getType()),
                                   mapping.lookup(load.getMemRef()), indices);
  } else if (load || llvm::none_of(operands, isTile)) {
    built = builder.clone(op, mapping);
    return built; // clone maps the results itself
  } else {
    SmallVector<Value> tileOperands;
    for (Value operand : operands)
      tileOperands.push_back(asTile(operand));
    SmallVector<Type> resultTypes;
    for (Type t : op.getResultTypes())
      resultTypes.push_back(RankedTensorType::get(shape, t));
    OperationState state(loc, op.getName(), tileOperands, resultTypes,
                         op.getAttrs());
    built = builder.create(state);
  }
  mapping.map(op.getResults(), built->getResults());
  return built;
}

Value inlineModOverTile(OpBuilder &builder, Location loc, Region &region,
                        ArrayRef<Value> args, ArrayRef<int64_t> shape) {
  Block &block = region.front();
  assert(block.getNumArguments() == args.size() && "one value per argument");
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    vectorizeOp(builder, op, mapping, shape);
  auto yield = cast<attn::YieldOp>(block.getTerminator());
  Value result = mapping.lookup(yield.getValues().front());
  return isTile(result) ? result : splatToTile(builder, loc, result, shape);
}

bool modIndexesMemoryWith(Region &mod, unsigned argument) {
  if (mod.empty() || argument >= mod.getNumArguments())
    return false;
  SmallVector<Value> work{mod.getArgument(argument)};
  llvm::SmallPtrSet<Value, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      // A memref operand other than the memref itself is an index; a region
      // may hide one (conservative).
      bool indexesMemory =
          llvm::any_of(user->getOperands(),
                       [](Value o) { return isa<MemRefType>(o.getType()); }) &&
          !isa<MemRefType>(use.get().getType());
      if (indexesMemory || user->getNumRegions() > 0)
        return true;
      llvm::append_range(work, user->getResults());
    }
  }
  return false;
}

namespace {

/// Forward-mode derivative rules on tiles. A null derivative means zero.
class TangentBuilder {
public:
  TangentBuilder(OpBuilder &b, Location loc, ArrayRef<int64_t> shape)
      : b(b), loc(loc), shape(shape) {}

  Value constant(double v, Type elt) {
    Value c = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, v));
    return splatToTile(b, loc, c, shape);
  }
  Value add(Value x, Value y) {
    if (!x)
      return y;
    if (!y)
      return x;
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) {
    if (!x || !y)
      return Value();
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value neg(Value x) { return x ? Value(arith::NegFOp::create(b, loc, x)) : x; }
  Value div(Value x, Value y) {
    return x ? Value(arith::DivFOp::create(b, loc, x, y)) : x;
  }

  OpBuilder &b;
  Location loc;
  ArrayRef<int64_t> shape;
};

} // namespace

/// d(value)/d(seed) for every value of a mod region already inlined over a
/// tile (`mapping`: the region's values to the inlined ones), by the
/// forward-mode rules below; `seed` is the score argument or a value the
/// mod loads from a capture. Fails with a diagnostic on an op that depends
/// on the seed and has no rule (`what` names the seed in it).
static FailureOr<Value> tangentOf(OpBuilder &builder, Location loc,
                                  Block &block, IRMapping &mapping, Value seed,
                                  ArrayRef<int64_t> shape, StringRef what) {
  DenseMap<Value, Value> tangent;
  TangentBuilder t(builder, loc, shape);
  tangent[seed] = t.constant(1.0, builder.getF32Type());
  auto tan = [&](Value v) { return tangent.lookup(v); };
  auto asTile = [&](Value v) {
    return isTile(v) ? v : splatToTile(builder, loc, v, shape);
  };
  for (Operation &op : block.without_terminator()) {
    bool dependsOnSeed =
        llvm::any_of(op.getOperands(), [&](Value v) { return tan(v); });
    if (!dependsOnSeed || op.getNumResults() != 1 ||
        !isa<FloatType>(op.getResult(0).getType()))
      continue; // integer/i1 results carry no derivative

    Value r = asTile(mapping.lookup(op.getResult(0)));
    auto a = [&](unsigned i) {
      return asTile(mapping.lookup(op.getOperand(i)));
    };
    auto da = [&](unsigned i) { return tan(op.getOperand(i)); };
    Type elt = op.getResult(0).getType();
    Value d =
        llvm::TypeSwitch<Operation *, Value>(&op)
            .Case([&](arith::AddFOp) { return t.add(da(0), da(1)); })
            .Case([&](arith::SubFOp) { return t.add(da(0), t.neg(da(1))); })
            .Case([&](arith::NegFOp) { return t.neg(da(0)); })
            .Case([&](arith::MulFOp) {
              return t.add(t.mul(da(0), a(1)), t.mul(a(0), da(1)));
            })
            .Case([&](arith::DivFOp) {
              // (a/b)' = a'/b - (a/b) b'/b
              return t.add(t.div(da(0), a(1)),
                           t.neg(t.div(t.mul(r, da(1)), a(1))));
            })
            .Case([&](math::TanhOp) {
              // 1 - tanh^2
              Value one = t.constant(1.0, elt);
              return t.mul(da(0),
                           arith::SubFOp::create(
                               builder, loc, one,
                               arith::MulFOp::create(builder, loc, r, r)));
            })
            .Case([&](math::ExpOp) { return t.mul(da(0), r); })
            .Case([&](math::Exp2Op) {
              return t.mul(da(0), t.mul(r, t.constant(M_LN2, elt)));
            })
            .Case([&](math::LogOp) { return t.div(da(0), a(0)); })
            .Case([&](math::Log2Op) {
              return t.div(da(0), t.mul(a(0), t.constant(M_LN2, elt)));
            })
            .Case([&](math::SqrtOp) {
              return t.div(da(0), t.mul(r, t.constant(2.0, elt)));
            })
            .Case([&](math::AbsFOp) {
              Value negative =
                  arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OLT,
                                        a(0), t.constant(0.0, elt));
              Value d0 = da(0) ? da(0) : t.constant(0.0, elt);
              return Value(arith::SelectOp::create(builder, loc, negative,
                                                   t.neg(d0), d0));
            })
            .Case<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                  arith::MinNumFOp>([&](Operation *o) {
              // The derivative of the operand that was picked.
              bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(o);
              Value firstWins = arith::CmpFOp::create(
                  builder, loc,
                  isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE,
                  a(0), a(1));
              Value d0 = da(0) ? da(0) : t.constant(0.0, elt);
              Value d1 = da(1) ? da(1) : t.constant(0.0, elt);
              return Value(
                  arith::SelectOp::create(builder, loc, firstWins, d0, d1));
            })
            .Case([&](arith::SelectOp sel) {
              Value d1 = da(1) ? da(1) : t.constant(0.0, elt);
              Value d2 = da(2) ? da(2) : t.constant(0.0, elt);
              return Value(arith::SelectOp::create(
                  builder, loc, asTile(mapping.lookup(sel.getCondition())), d1,
                  d2));
            })
            .Case<arith::ExtFOp, arith::TruncFOp>([&](Operation *o) -> Value {
              if (!da(0))
                return Value();
              OperationState state(loc, o->getName(), ValueRange{da(0)},
                                   TypeRange{r.getType()}, o->getAttrs());
              return builder.create(state)->getResult(0);
            })
            .Default([&](Operation *) { return Value(); });
    if (!d && !isa<arith::ConstantOp>(op) &&
        !isa<arith::AddFOp, arith::SubFOp, arith::NegFOp, arith::MulFOp,
             arith::DivFOp, arith::SelectOp, arith::ExtFOp, arith::TruncFOp>(
            op)) {
      op.emitError() << "cannot differentiate '" << op.getName()
                     << "' in score_mod with respect to " << what
                     << " for the backward pass; supported: "
                        "add, sub, mul, div, neg, tanh, exp, exp2, log, "
                        "log2, sqrt, abs, max/min, select, float casts";
      return failure();
    }
    if (d)
      tangent[op.getResult(0)] = d;
  }
  auto yield = cast<attn::YieldOp>(block.getTerminator());
  Value grad = tan(yield.getValues().front());
  return grad ? asTile(grad) : t.constant(0.0, builder.getF32Type());
}

FailureOr<std::pair<Value, Value>>
inlineScoreModWithGradient(OpBuilder &builder, Location loc, Region &region,
                           ArrayRef<Value> args, ArrayRef<int64_t> shape) {
  FailureOr<ScoreModGradients> all = inlineScoreModWithGradients(
      builder, loc, region, args, shape, /*captureTangents=*/false);
  if (failed(all))
    return failure();
  return std::make_pair(all->value, all->scoreTangent);
}

FailureOr<ScoreModGradients>
inlineScoreModWithGradients(OpBuilder &builder, Location loc, Region &region,
                            ArrayRef<Value> args, ArrayRef<int64_t> shape,
                            bool captureTangents) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    vectorizeOp(builder, op, mapping, shape);
  ScoreModGradients out;
  Value result = mapping.lookup(
      cast<attn::YieldOp>(block.getTerminator()).getValues().front());
  out.value =
      isTile(result) ? result : splatToTile(builder, loc, result, shape);
  FailureOr<Value> score = tangentOf(builder, loc, block, mapping,
                                     block.getArgument(0), shape, "the score");
  if (failed(score))
    return failure();
  out.scoreTangent = *score;
  if (!captureTangents)
    return out;
  // score_mod(score, b, h, q, kv, captures...): a float read of capture c
  // (argument 5 + c) is a seed of its own.
  for (Operation &op : block.without_terminator()) {
    auto load = dyn_cast<memref::LoadOp>(op);
    auto source = load ? dyn_cast<BlockArgument>(load.getMemRef()) : nullptr;
    if (!load || !source || source.getOwner() != &block ||
        source.getArgNumber() < 5 || !isa<FloatType>(load.getType()))
      continue;
    FailureOr<Value> d = tangentOf(builder, loc, block, mapping,
                                   load.getResult(), shape, "a captured value");
    if (failed(d))
      return failure();
    CaptureTangent c;
    c.capture = source.getArgNumber() - 5;
    for (Value index : load.getIndices())
      c.indices.push_back(mapping.lookup(index));
    c.tangent = *d;
    out.captures.push_back(std::move(c));
  }
  return out;
}

} // namespace kiln
