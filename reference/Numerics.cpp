//===- Numerics.cpp - half-precision conversion and error metrics ---------===//

#include "reference/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln::ref {

uint16_t floatToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40); // stay a (quiet) NaN
  // Round to nearest even: add 0x7fff plus the lowest kept bit.
  uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7fffu + lsb;
  return static_cast<uint16_t>(bits >> 16);
}

float bf16ToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}

uint16_t floatToF16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof(x));
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absBits = x & 0x7fffffffu;
  if (absBits >= 0x7f800000u) // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (absBits > 0x7f800000u ? 0x200u : 0u));
  if (absBits >= 0x477ff000u) // rounds to >= 65520: overflow to inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (absBits < 0x38800000u) { // below the smallest normal half: subnormal
    float mag;
    std::memcpy(&mag, &absBits, sizeof(mag));
    // Subnormal halves are multiples of 2^-24; nearbyint rounds to even.
    uint32_t units = static_cast<uint32_t>(std::nearbyint(mag * 16777216.0f));
    return static_cast<uint16_t>(sign | units);
  }
  // Normal: rebias the exponent (127 -> 15), round the mantissa to 10 bits.
  uint32_t rounded = absBits + 0xfffu + ((absBits >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

float f16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  float value;
  if (exponent == 0) {
    value = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -value : value;
  }
  uint32_t bits;
  if (exponent == 31)
    bits = sign | 0x7f800000u | (mantissa << 13);
  else
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

ErrorStats compare(const double *got, const double *want, size_t n) {
  ErrorStats stats;
  double diff2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (std::isinf(want[i])) {
      if (got[i] != want[i])
        ++stats.infMismatch;
      continue;
    }
    if (!std::isfinite(got[i])) {
      ++stats.nonFinite;
      continue;
    }
    double d = got[i] - want[i];
    stats.maxAbs = std::max(stats.maxAbs, std::fabs(d));
    diff2 += d * d;
    ref2 += want[i] * want[i];
  }
  stats.relL2 = ref2 > 0.0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return stats;
}

} // namespace kiln::ref
