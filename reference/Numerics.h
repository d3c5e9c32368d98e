//===- Numerics.h - half-precision conversion and error metrics -*- C++ -*-===//

#ifndef KILN_REFERENCE_NUMERICS_H
#define KILN_REFERENCE_NUMERICS_H

#include <cstddef>
#include <cstdint>

namespace kiln::ref {

/// float <-> bfloat16 / IEEE half bit patterns, rounding to nearest even.
uint16_t floatToBF16(float value);
float bf16ToFloat(uint16_t bits);
uint16_t floatToF16(float value);
float f16ToFloat(uint16_t bits);

/// How far a result is from the reference.
struct ErrorStats {
  double maxAbs = 0.0;  ///< max |got - want| over finite entries
  double relL2 = 0.0;   ///< ||got - want|| / ||want|| (absolute when want is 0)
  size_t nonFinite = 0; ///< entries of `got` that are NaN or +-inf where
                        ///< `want` is finite
  size_t infMismatch = 0; ///< entries where want is +-inf and got differs
};

/// Compares `n` values; an infinity in `want` must be matched exactly.
ErrorStats compare(const double *got, const double *want, size_t n);

} // namespace kiln::ref

#endif // KILN_REFERENCE_NUMERICS_H
