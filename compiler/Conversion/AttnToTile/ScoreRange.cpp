//===- ScoreRange.cpp - the values a score_mod can return -----------------===//

#include "compiler/Conversion/AttnToTile/ScoreRange.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr Interval kAll{-kInf, kInf};

/// The hull of a few candidate bounds; any NaN among them (inf - inf,
/// 0 * inf) gives the whole line.
Interval hull(std::initializer_list<double> xs) {
  Interval r{kInf, -kInf};
  for (double x : xs) {
    if (std::isnan(x))
      return kAll;
    r.lo = std::min(r.lo, x);
    r.hi = std::max(r.hi, x);
  }
  return r;
}

Interval mul(Interval a, Interval b) {
  return hull({a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi});
}

} // namespace

std::optional<Interval> scoreModRange(Region &scoreMod) {
  if (scoreMod.empty())
    return std::nullopt;
  Block &block = scoreMod.front();
  llvm::DenseMap<Value, Interval> known;
  auto of = [&](Value v) {
    auto it = known.find(v);
    return it == known.end() ? kAll : it->second;
  };
  for (Operation &op : block.without_terminator()) {
    if (op.getNumResults() != 1 || !op.getResult(0).getType().isF32())
      continue;
    Interval r =
        llvm::TypeSwitch<Operation *, Interval>(&op)
            .Case([&](arith::ConstantOp c) {
              auto f = dyn_cast<FloatAttr>(c.getValue());
              if (!f)
                return kAll;
              double x = f.getValueAsDouble();
              return std::isfinite(x) ? Interval{x, x} : kAll;
            })
            .Case([&](arith::AddFOp o) {
              Interval a = of(o.getLhs()), b = of(o.getRhs());
              return hull({a.lo + b.lo, a.hi + b.hi});
            })
            .Case([&](arith::SubFOp o) {
              Interval a = of(o.getLhs()), b = of(o.getRhs());
              return hull({a.lo - b.hi, a.hi - b.lo});
            })
            .Case([&](arith::MulFOp o) {
              return mul(of(o.getLhs()), of(o.getRhs()));
            })
            .Case([&](arith::DivFOp o) {
              Interval b = of(o.getRhs());
              if (!(b.lo > 0 || b.hi < 0))
                return kAll; // the divisor may be 0
              return mul(of(o.getLhs()), hull({1 / b.lo, 1 / b.hi}));
            })
            .Case([&](arith::NegFOp o) {
              Interval a = of(o.getOperand());
              return Interval{-a.hi, -a.lo};
            })
            .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](Operation *o) {
              Interval a = of(o->getOperand(0)), b = of(o->getOperand(1));
              return Interval{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
            })
            .Case<arith::MinimumFOp, arith::MinNumFOp>([&](Operation *o) {
              Interval a = of(o->getOperand(0)), b = of(o->getOperand(1));
              return Interval{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
            })
            .Case([&](arith::SelectOp o) {
              Interval a = of(o.getTrueValue()), b = of(o.getFalseValue());
              return Interval{std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
            })
            .Case<math::TanhOp, math::ErfOp, math::ExpOp, math::Exp2Op>(
                [&](Operation *o) {
                  // Increasing functions: applied to both bounds.
                  auto f = [o](double x) {
                    if (isa<math::TanhOp>(o))
                      return std::tanh(x);
                    if (isa<math::ErfOp>(o))
                      return std::erf(x);
                    return isa<math::ExpOp>(o) ? std::exp(x) : std::exp2(x);
                  };
                  Interval a = of(o->getOperand(0));
                  return Interval{f(a.lo), f(a.hi)};
                })
            .Case<math::SinOp, math::CosOp>([&](Operation *) {
              return Interval{-1, 1};
            })
            .Case([&](math::AbsFOp o) {
              Interval a = of(o.getOperand());
              double top = std::max(std::fabs(a.lo), std::fabs(a.hi));
              return a.lo <= 0 && a.hi >= 0
                         ? Interval{0, top}
                         : Interval{std::min(std::fabs(a.lo), std::fabs(a.hi)),
                                    top};
            })
            .Default([](Operation *) { return kAll; });
    known[op.getResult(0)] = r;
  }
  auto yield = block.getTerminator();
  if (yield->getNumOperands() != 1)
    return std::nullopt;
  Interval r = of(yield->getOperand(0));
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi))
    return std::nullopt;
  // f32 evaluation rounds each op; a relative 2^-10 (and an absolute 2^-20
  // around 0) covers a mod of a few dozen ops.
  double slack = std::ldexp(std::max(std::fabs(r.lo), std::fabs(r.hi)), -10) +
                 std::ldexp(1.0, -20);
  return Interval{r.lo - slack, r.hi + slack};
}

} // namespace kiln
