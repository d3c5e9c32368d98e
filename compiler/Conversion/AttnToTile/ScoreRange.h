//===- ScoreRange.h - the values a score_mod can return --------*- C++ -*-===//
//
// A score_mod such as logit soft-capping (`cap * tanh(score / cap)`) returns
// values in a known interval whatever the score. The online softmax then
// needs no running row maximum: the interval's top is an upper bound of every
// row's scores, and with the interval narrow enough, exp2(score - top) of the
// row's largest score stays a normal float. `convert-attn-to-tile static-max`
// uses this to drop each step's row maximum, its correction factor and the
// accumulator's rescaling.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CONVERSION_ATTNTOTILE_SCORERANGE_H
#define KILN_COMPILER_CONVERSION_ATTNTOTILE_SCORERANGE_H

#include "mlir/IR/Region.h"

#include <optional>

namespace kiln {

/// A closed interval of reals; bounds may be infinite.
struct Interval {
  double lo, hi;
};

/// The interval holding every value the score_mod region `(score, b, h, q,
/// kv, captures...) -> f32` yields in f32, for any finite score, positions
/// and captured values, by interval arithmetic over its ops in order. Each
/// op's interval is widened outward by its error (a relative 2^-22 for
/// arithmetic, 2^-10 for the fast-math approximations of tanh, exp, sin,
/// ...), so that a cancellation scaled up by a later op stays inside, and a
/// bound past f32's range becomes infinite. nullopt when a bound of the
/// result is not finite. Ops whose results the analysis does not bound
/// (integer-derived floats, capture reads, ...) count as unbounded.
std::optional<Interval> scoreModRange(mlir::Region &scoreMod);

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_ATTNTOTILE_SCORERANGE_H
