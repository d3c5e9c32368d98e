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

bool finite(Interval a) { return std::isfinite(a.lo) && std::isfinite(a.hi); }

/// `r` as f32 computes it, outward: widened by the op's error relative to
/// the result's magnitude (`log2Error`: -22 for a rounded arithmetic op, a
/// few ulps; -10 for the fast-math approximations of tanh, exp, ...), so
/// that errors amplified by later ops (a cancellation scaled up) stay
/// inside; a bound past f32's largest finite value is infinite (f32
/// overflows there).
Interval asF32(Interval r, int log2Error) {
  if (std::isnan(r.lo) || std::isnan(r.hi))
    return kAll;
  double e = std::ldexp(std::max(std::fabs(r.lo), std::fabs(r.hi)), log2Error);
  if (!std::isfinite(e))
    e = 0; // an infinite bound stays infinite
  r = {r.lo - e, r.hi + e};
  double top = std::numeric_limits<float>::max();
  if (r.lo < -top)
    r.lo = -kInf;
  if (r.hi > top)
    r.hi = kInf;
  return r;
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
    bool approximated = isa<math::TanhOp, math::ErfOp, math::ExpOp,
                            math::Exp2Op, math::SinOp, math::CosOp>(op);
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
            .Case<math::SinOp, math::CosOp>([&](Operation *o) {
              // sin(inf) and cos(inf) are NaN.
              return finite(of(o->getOperand(0))) ? Interval{-1, 1} : kAll;
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
    known[op.getResult(0)] = asF32(r, approximated ? -10 : -22);
  }
  auto yield = block.getTerminator();
  if (yield->getNumOperands() != 1)
    return std::nullopt;
  Interval r = of(yield->getOperand(0));
  if (!finite(r))
    return std::nullopt;
  return r;
}

} // namespace kiln
