//===- ColumnBounds.cpp - a masked step's positions as per-row bounds -----===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tile/Transforms/Passes.h"

#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstdlib>

namespace kiln::tile {
#define GEN_PASS_DEF_TILECOLUMNBOUNDS
#include "dialects/Tile/Transforms/Passes.h.inc"
} // namespace kiln::tile

using namespace mlir;
using namespace kiln;

namespace {

/// A 2-D integer tile as `col * iota(dim 1) + sum(sign * term)`, each term
/// the same along a row (row-uniform).
struct ColumnAffine {
  int64_t col = 0;
  SmallVector<std::pair<Value, int64_t>> terms;
};

/// The deepest expression the analysis walks (the masks' arithmetic is a
/// few ops deep).
constexpr int kMaxDepth = 12;

bool isTile2D(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 2 &&
         (type.getElementType().isIndex() ||
          type.getElementType().isSignlessInteger());
}

/// The largest constant a bound may hold. The rewrite adds and subtracts
/// the compares' terms (a window's width from a query position, say) where
/// the compares did not, so every term must be far from overflow: positions
/// and offsets, not a "no window" INT_MAX.
constexpr int64_t kMaxConstant = int64_t(1) << 24;

bool isSmallConstant(Attribute value) {
  if (auto splat = dyn_cast<SplatElementsAttr>(value))
    value = splat.getSplatValue<Attribute>();
  auto integer = dyn_cast<IntegerAttr>(value);
  return integer && integer.getValue().getSignificantBits() <= 25 &&
         std::abs(integer.getValue().getSExtValue()) <= kMaxConstant;
}

/// Whether scalar `s` is a position-sized value: a small constant, a block
/// argument (a loop's index, a kernel's sizes) or arithmetic of such that
/// reads no memory.
/// Values read from memory (a captured window width) are not: their
/// magnitude is the user's.
bool isSmallScalar(Value s, int depth = 0) {
  if (depth > kMaxDepth)
    return false;
  Operation *op = s.getDefiningOp();
  if (!op)
    return true;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isSmallConstant(constant.getValue());
  if (!isMemoryEffectFree(op))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    return isSmallScalar(operand, depth + 1);
  });
}

/// Whether every row of `v` holds one value, of a position's size: splats
/// of small scalars, row iotas, and integer arithmetic of such.
bool isRowUniform(Value v, int depth = 0) {
  if (depth > kMaxDepth)
    return false;
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (auto splat = dyn_cast<tile::SplatOp>(op))
    return isSmallScalar(splat.getValue());
  if (auto iota = dyn_cast<tile::IotaOp>(op))
    return iota.getDim() == 0;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<SplatElementsAttr>(constant.getValue()) &&
           isSmallConstant(constant.getValue());
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::MaxSIOp,
          arith::MinSIOp>(op))
    return llvm::all_of(op->getOperands(), [&](Value operand) {
      return isRowUniform(operand, depth + 1);
    });
  return false;
}

/// `v` as a ColumnAffine, or nullopt.
std::optional<ColumnAffine> analyze(Value v, int depth = 0) {
  if (depth > kMaxDepth || !isTile2D(v))
    return std::nullopt;
  Operation *op = v.getDefiningOp();
  if (auto iota = dyn_cast_or_null<tile::IotaOp>(op);
      iota && iota.getDim() == 1)
    return ColumnAffine{1, {}};
  if (isa_and_nonnull<arith::AddIOp, arith::SubIOp>(op)) {
    auto lhs = analyze(op->getOperand(0), depth + 1);
    auto rhs = analyze(op->getOperand(1), depth + 1);
    if (!lhs || !rhs)
      return std::nullopt;
    int64_t sign = isa<arith::SubIOp>(op) ? -1 : 1;
    lhs->col += sign * rhs->col;
    for (auto [term, s] : rhs->terms)
      lhs->terms.push_back({term, sign * s});
    return lhs;
  }
  if (isRowUniform(v, depth))
    return ColumnAffine{0, {{v, 1}}};
  return std::nullopt;
}

/// `pred` with its operands swapped (a < b is b > a).
arith::CmpIPredicate swapped(arith::CmpIPredicate pred) {
  switch (pred) {
  case arith::CmpIPredicate::slt:
    return arith::CmpIPredicate::sgt;
  case arith::CmpIPredicate::sle:
    return arith::CmpIPredicate::sge;
  case arith::CmpIPredicate::sgt:
    return arith::CmpIPredicate::slt;
  case arith::CmpIPredicate::sge:
    return arith::CmpIPredicate::sle;
  case arith::CmpIPredicate::ult:
    return arith::CmpIPredicate::ugt;
  case arith::CmpIPredicate::ule:
    return arith::CmpIPredicate::uge;
  case arith::CmpIPredicate::ugt:
    return arith::CmpIPredicate::ult;
  case arith::CmpIPredicate::uge:
    return arith::CmpIPredicate::ule;
  default:
    return pred; // eq, ne
  }
}

/// The bound a compare puts on the column index: col >= X + add (lower),
/// col <= X + add (upper) or both (eq), X the row-uniform terms in `value`.
struct Bound {
  ColumnAffine value; // col's coefficient 0
  int64_t add = 0;
  bool lower = false, upper = false;
};

/// `cmp` as bounds on the column index, where its sides differ by exactly
/// one column index: `col + T pred 0` gives col pred -T; `-col + T pred 0`
/// gives col pred' T (pred' swapped). Signed predicates only (positions
/// are far from overflow).
std::optional<Bound> columnBound(arith::CmpIOp cmp) {
  auto lhs = analyze(cmp.getLhs());
  auto rhs = analyze(cmp.getRhs());
  if (!lhs || !rhs)
    return std::nullopt;
  int64_t col = lhs->col - rhs->col;
  if (col != 1 && col != -1)
    return std::nullopt;
  // T = lhs - rhs without the column index.
  ColumnAffine t{0, lhs->terms};
  for (auto [term, s] : rhs->terms)
    t.terms.push_back({term, -s});
  arith::CmpIPredicate pred = cmp.getPredicate();
  Bound bound;
  if (col == 1) {
    // col pred -T.
    for (auto &term : t.terms)
      term.second = -term.second;
  } else {
    // -col + T pred 0  <=>  col pred' T.
    pred = swapped(pred);
  }
  bound.value = t;
  switch (pred) {
  case arith::CmpIPredicate::slt:
    bound.upper = true;
    bound.add = -1;
    break;
  case arith::CmpIPredicate::sle:
    bound.upper = true;
    break;
  case arith::CmpIPredicate::sgt:
    bound.lower = true;
    bound.add = 1;
    break;
  case arith::CmpIPredicate::sge:
    bound.lower = true;
    break;
  case arith::CmpIPredicate::eq:
    bound.lower = bound.upper = true;
    break;
  default:
    return std::nullopt;
  }
  return bound;
}

/// The conjuncts of `v`: the operands of an arith.andi tree of i1 tiles.
void conjuncts(Value v, SmallVectorImpl<Value> &leaves) {
  if (auto andi = v.getDefiningOp<arith::AndIOp>()) {
    conjuncts(andi.getLhs(), leaves);
    conjuncts(andi.getRhs(), leaves);
    return;
  }
  leaves.push_back(v);
}

/// Whether `cmp` compares the column index with a row-uniform tile already
/// (nothing to fold).
bool isNormalized(arith::CmpIOp cmp) {
  auto iota = cmp.getLhs().getDefiningOp<tile::IotaOp>();
  return iota && iota.getDim() == 1 && isRowUniform(cmp.getRhs());
}

struct TileColumnBounds
    : public kiln::tile::impl::TileColumnBoundsBase<TileColumnBounds> {
  using TileColumnBoundsBase::TileColumnBoundsBase;

  void runOnOperation() override {
    // The roots: i1 2-D tiles that are a compare or a conjunction, read by
    // something other than a conjunction.
    SmallVector<Value> roots;
    getOperation()->walk([&](Operation *op) {
      if (!isa<arith::AndIOp, arith::CmpIOp>(op) || op->getNumResults() != 1)
        return;
      Value v = op->getResult(0);
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || type.getRank() != 2 || !type.getElementType().isInteger(1))
        return;
      if (llvm::all_of(v.getUsers(), [](Operation *user) {
            return isa<arith::AndIOp>(user);
          }))
        return;
      roots.push_back(v);
    });
    for (Value root : roots)
      rewrite(root);
  }

  /// Whether a conjunction bounded on one side is merged where `root` lies:
  /// in a loop nest each of whose loops carries 2-D f32 tiles (the output's
  /// accumulator; dK's and dV's) of at most `oneSidedElements` elements in
  /// all, where the CUDA compiler has registers to spare for a hoisted tile
  /// of column indices.
  bool mergesOneSided(Value root) {
    auto loop = root.getDefiningOp()->getParentOfType<scf::ForOp>();
    if (!loop || oneSidedElements <= 0)
      return false;
    for (; loop; loop = loop->getParentOfType<scf::ForOp>()) {
      int64_t elements = 0;
      for (Value carried : loop.getRegionIterArgs())
        if (auto tile = dyn_cast<RankedTensorType>(carried.getType());
            tile && tile.getRank() == 2 && tile.getElementType().isF32())
          elements += tile.getNumElements();
      if (elements > oneSidedElements)
        return false;
    }
    return true;
  }

  /// Replaces `root`'s compares of column positions by one interval test of
  /// the column index against per-row bounds, ANDed with its other
  /// conjuncts.
  void rewrite(Value root) {
    SmallVector<Value> leaves;
    conjuncts(root, leaves);
    SmallVector<Bound> bounds;
    SmallVector<Value> others;
    bool folds = false;
    Type positionType; // the compared tiles' type
    for (Value leaf : leaves) {
      auto cmp = leaf.getDefiningOp<arith::CmpIOp>();
      std::optional<Bound> bound = cmp ? columnBound(cmp) : std::nullopt;
      if (!bound || (positionType && cmp.getLhs().getType() != positionType)) {
        others.push_back(leaf);
        continue;
      }
      positionType = cmp.getLhs().getType();
      folds |= !isNormalized(cmp);
      bounds.push_back(*bound);
    }
    // A conjunction bounded on one side only (the causal diagonal and the
    // partial block) keeps its compares in loops carrying more than
    // `oneSidedElements` accumulator elements. Merged into one compare of
    // the column index, NVIDIA's compiler folds the key offset out of both
    // sides and hoists a tile of column indices out of the KV loop, which
    // spilled in the 192-row kernel at D = 128 (192 x 128 accumulators in
    // three consumer warpgroups at 160 registers: 2.6-3.7% slower causal
    // forwards at N = 16k on an H200) and in the 128-row one at D = 256,
    // while the 128-row kernels at D <= 128 gained 1-16%
    // (docs/performance.md).
    bool lower = llvm::any_of(bounds, [](const Bound &x) { return x.lower; });
    bool upper = llvm::any_of(bounds, [](const Bound &x) { return x.upper; });
    bool oneSided = (lower != upper) && mergesOneSided(root);
    if ((!oneSided && (!lower || !upper)) || (bounds.size() == 1 && !folds))
      return;

    Operation *at = root.getDefiningOp();
    OpBuilder b(at);
    Location loc = at->getLoc();
    auto boolType = cast<RankedTensorType>(root.getType());
    auto type = cast<RankedTensorType>(positionType);
    Type element = type.getElementType();
    auto splat = [&](int64_t k) -> Value {
      Value scalar = arith::ConstantOp::create(b, loc, element,
                                               b.getIntegerAttr(element, k));
      return tile::SplatOp::create(b, loc, type, scalar);
    };
    auto build = [&](const Bound &bound) -> Value {
      Value sum;
      for (auto [term, sign] : bound.value.terms) {
        if (!sum)
          sum = sign > 0 ? term : arith::SubIOp::create(b, loc, splat(0), term);
        else if (sign > 0)
          sum = arith::AddIOp::create(b, loc, sum, term);
        else
          sum = arith::SubIOp::create(b, loc, sum, term);
      }
      if (!sum)
        sum = splat(0);
      if (bound.add)
        sum = arith::AddIOp::create(b, loc, sum, splat(bound.add));
      return sum;
    };
    Value lo, hi;
    for (const Bound &bound : bounds) {
      Value x = build(bound);
      if (bound.lower)
        lo = lo ? arith::MaxSIOp::create(b, loc, lo, x).getResult() : x;
      if (bound.upper)
        hi = hi ? arith::MinSIOp::create(b, loc, hi, x).getResult() : x;
    }
    // lo <= col <= hi as one unsigned compare: col - lo < hi - lo + 1, the
    // count clamped at 0 for rows with no visible column; one bound alone
    // as one signed compare.
    Value col = tile::IotaOp::create(b, loc, type, b.getI64IntegerAttr(1));
    Value inside;
    if (!lo) {
      inside =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, col, hi);
    } else if (!hi) {
      inside =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, col, lo);
    } else {
      Value count = arith::MaxSIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, arith::SubIOp::create(b, loc, hi, lo),
                                splat(1)),
          splat(0));
      inside =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                arith::SubIOp::create(b, loc, col, lo), count);
    }
    for (Value other : others)
      inside = arith::AndIOp::create(b, loc, inside, other);
    if (inside.getType() != boolType)
      return;
    root.replaceAllUsesWith(inside);
  }
};

} // namespace
