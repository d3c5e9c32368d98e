//===- NumericsTest.cpp - tests of half conversions and error metrics -----===//
//
// kiln::ref converts kernel inputs to bf16 / f16 and back, and judges kernel
// outputs with compare(). Expected bit patterns below are worked out from
// the formats: bf16 = 1 sign, 8 exponent (bias 127), 7 mantissa bits; f16 =
// 1 sign, 5 exponent (bias 15), 10 mantissa bits.
//
//===----------------------------------------------------------------------===//

#include "reference/Numerics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

using namespace kiln::ref;

namespace {

const float kInfF = std::numeric_limits<float>::infinity();
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

bool isF16NaN(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }
bool isBF16NaN(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu); }

} // namespace

//===----------------------------------------------------------------------===//
// bfloat16
//===----------------------------------------------------------------------===//

TEST(BF16, ExactValuesRoundTrip) {
  // bf16 is the top half of a float, so these are the float's high 16 bits:
  // 1.0 = 0x3f800000, -2.5 = -1.25 * 2^1 = 0xc0200000.
  struct Case {
    float value;
    uint16_t bits;
  } cases[] = {{1.0f, 0x3f80},      {-2.5f, 0xc020}, {0.0f, 0x0000},
               {-0.0f, 0x8000},     {0.5f, 0x3f00},  {256.0f, 0x4380},
               {1.0078125f, 0x3f81}}; // 1 + 2^-7: the last mantissa bit
  for (const Case &c : cases) {
    SCOPED_TRACE(c.value);
    EXPECT_EQ(floatToBF16(c.value), c.bits);
    float back = bf16ToFloat(c.bits);
    EXPECT_EQ(back, c.value);
    EXPECT_EQ(std::signbit(back), std::signbit(c.value)); // keeps -0.0
  }
}

TEST(BF16, EveryNonNaNPatternRoundTrips) {
  // Each finite or infinite bf16 is a float exactly, so converting it back
  // must give the same bits.
  for (uint32_t b = 0; b <= 0xffffu; ++b) {
    uint16_t bits = static_cast<uint16_t>(b);
    if (isBF16NaN(bits))
      continue;
    ASSERT_EQ(floatToBF16(bf16ToFloat(bits)), bits) << std::hex << b;
  }
}

TEST(BF16, TiesRoundToEven) {
  // Near 1.0 the bf16 step is 2^-7. 1 + 2^-8 is halfway between 1 (mantissa
  // 0, even) and 1 + 2^-7 (mantissa 1, odd): it goes down to 1.0.
  EXPECT_EQ(floatToBF16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (mantissa
  // 2, even): it goes up to 1 + 2^-6.
  EXPECT_EQ(floatToBF16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(bf16ToFloat(0x3f82), 1.0f + std::ldexp(1.0f, -6));
  // Negative ties behave the same on the magnitude.
  EXPECT_EQ(floatToBF16(-(1.0f + std::ldexp(1.0f, -8))), 0xbf80);
}

TEST(BF16, NonTiesRoundToNearest) {
  // Just above the 1 + 2^-8 tie is nearer 1 + 2^-7; just below is nearer 1.
  EXPECT_EQ(floatToBF16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)),
            0x3f81);
  EXPECT_EQ(floatToBF16(1.0f + std::ldexp(1.0f, -8) - std::ldexp(1.0f, -20)),
            0x3f80);
  // Rounding up can carry into the exponent: 2 - 2^-9 is nearer 2.0.
  EXPECT_EQ(floatToBF16(2.0f - std::ldexp(1.0f, -9)), 0x4000);
}

TEST(BF16, InfinityAndNaN) {
  EXPECT_EQ(floatToBF16(kInfF), 0x7f80);
  EXPECT_EQ(floatToBF16(-kInfF), 0xff80);
  EXPECT_EQ(bf16ToFloat(0x7f80), kInfF);
  EXPECT_EQ(bf16ToFloat(0xff80), -kInfF);
  // A NaN must stay a NaN, even one whose payload is only in the low 16 bits
  // that bf16 drops (truncating that would give infinity).
  EXPECT_TRUE(isBF16NaN(floatToBF16(std::numeric_limits<float>::quiet_NaN())));
  uint32_t lowPayload = 0x7f800001u;
  float sNaN;
  std::memcpy(&sNaN, &lowPayload, sizeof(sNaN));
  EXPECT_TRUE(isBF16NaN(floatToBF16(sNaN))) << std::hex << floatToBF16(sNaN);
  EXPECT_TRUE(std::isnan(bf16ToFloat(0x7fc0)));
  // The largest float is more than half a bf16 step above the largest bf16
  // (0x7f7f), so it rounds to infinity.
  EXPECT_EQ(floatToBF16(std::numeric_limits<float>::max()), 0x7f80);
}

//===----------------------------------------------------------------------===//
// IEEE half
//===----------------------------------------------------------------------===//

TEST(F16, ExactValuesRoundTrip) {
  // 1.0 = exponent 15 -> 0x3c00; -2.5 = -1.25 * 2^1 -> sign, exponent 16,
  // mantissa 0.25 * 1024 = 0x100 -> 0xc100; 65504 = (2 - 2^-10) * 2^15 is
  // the largest half, 0x7bff; 2^-14 is the smallest normal, 0x0400; 2^-24 is
  // the smallest subnormal, 0x0001; 1023 * 2^-24 the largest subnormal.
  struct Case {
    float value;
    uint16_t bits;
  } cases[] = {{1.0f, 0x3c00},
               {-2.5f, 0xc100},
               {65504.0f, 0x7bff},
               {-65504.0f, 0xfbff},
               {std::ldexp(1.0f, -14), 0x0400},
               {std::ldexp(1.0f, -24), 0x0001},
               {-std::ldexp(1.0f, -24), 0x8001},
               {std::ldexp(1023.0f, -24), 0x03ff},
               {0.0f, 0x0000},
               {-0.0f, 0x8000}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.value);
    EXPECT_EQ(floatToF16(c.value), c.bits);
    float back = f16ToFloat(c.bits);
    EXPECT_EQ(back, c.value);
    EXPECT_EQ(std::signbit(back), std::signbit(c.value));
  }
}

TEST(F16, EveryNonNaNPatternRoundTrips) {
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    uint16_t bits = static_cast<uint16_t>(h);
    if (isF16NaN(bits))
      continue;
    ASSERT_EQ(floatToF16(f16ToFloat(bits)), bits) << std::hex << h;
  }
}

TEST(F16, TiesRoundToEven) {
  // Near 1.0 the half step is 2^-10. 1 + 2^-11 is halfway between 1 (even)
  // and 1 + 2^-10 (odd): down to 0x3c00. 1 + 3 * 2^-11 is halfway between
  // 1 + 2^-10 (odd) and 1 + 2^-9 (even): up to 0x3c02.
  EXPECT_EQ(floatToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(floatToF16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just past a tie rounds to nearest.
  EXPECT_EQ(floatToF16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
            0x3c01);
  // Rounding up carries into the exponent: 2 - 2^-12 is nearer 2.0.
  EXPECT_EQ(floatToF16(2.0f - std::ldexp(1.0f, -12)), 0x4000);
}

TEST(F16, SubnormalsRoundToEvenMultiplesOf2ToThe24) {
  // Subnormal halves are k * 2^-24. 2^-25 is half a step: a tie between 0
  // (even) and 2^-24, so 0. 3 * 2^-25 = 1.5 steps goes up to 2 (even);
  // 5 * 2^-25 = 2.5 steps goes down to 2 (even).
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(floatToF16(std::ldexp(3.0f, -25)), 0x0002);
  EXPECT_EQ(floatToF16(std::ldexp(5.0f, -25)), 0x0002);
  EXPECT_EQ(floatToF16(-std::ldexp(3.0f, -25)), 0x8002);
  // Anything under half a step, e.g. 2^-26, underflows to (signed) zero.
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(floatToF16(-std::ldexp(1.0f, -26)), 0x8000);
  // Just below 2^-14 rounds up to the smallest normal, 0x0400.
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)), 0x0400);
}

TEST(F16, OverflowsToInfinityFrom65520) {
  // 65520 is halfway between 65504 (mantissa 0x3ff, odd) and 65536 (which
  // would be the even neighbour but is out of range): it rounds to inf.
  // Anything below it rounds to 65504.
  EXPECT_EQ(floatToF16(65519.0f), 0x7bff);
  EXPECT_EQ(floatToF16(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(floatToF16(65520.0f), 0x7c00);
  EXPECT_EQ(floatToF16(-65520.0f), 0xfc00);
  EXPECT_EQ(floatToF16(1e6f), 0x7c00);
  EXPECT_EQ(floatToF16(std::numeric_limits<float>::max()), 0x7c00);
}

TEST(F16, InfinityAndNaN) {
  EXPECT_EQ(floatToF16(kInfF), 0x7c00);
  EXPECT_EQ(floatToF16(-kInfF), 0xfc00);
  EXPECT_EQ(f16ToFloat(0x7c00), kInfF);
  EXPECT_EQ(f16ToFloat(0xfc00), -kInfF);
  EXPECT_TRUE(isF16NaN(floatToF16(std::numeric_limits<float>::quiet_NaN())));
  // A float NaN whose payload is only in bits f16 drops must not become inf.
  uint32_t lowPayload = 0x7f800001u;
  float sNaN;
  std::memcpy(&sNaN, &lowPayload, sizeof(sNaN));
  EXPECT_TRUE(isF16NaN(floatToF16(sNaN))) << std::hex << floatToF16(sNaN);
  EXPECT_TRUE(std::isnan(f16ToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(f16ToFloat(0x7c01)));
}

//===----------------------------------------------------------------------===//
// compare()
//===----------------------------------------------------------------------===//

TEST(Compare, IdenticalArraysHaveZeroError) {
  double v[] = {1.0, -2.0, 0.0, kInf, -kInf};
  ErrorStats s = compare(v, v, 5);
  EXPECT_EQ(s.maxAbs, 0.0);
  EXPECT_EQ(s.relL2, 0.0);
  EXPECT_EQ(s.nonFinite, 0u);
  EXPECT_EQ(s.infMismatch, 0u);
}

TEST(Compare, RelativeL2AndMaxAbsByHand) {
  // Differences {-1, 0, 1}: ||d|| = sqrt(2), ||want|| = sqrt(9 + 16) = 5,
  // so relL2 = sqrt(2) / 5 and maxAbs = 1.
  double want[] = {3.0, 4.0, 0.0};
  double got[] = {2.0, 4.0, 1.0};
  ErrorStats s = compare(got, want, 3);
  EXPECT_DOUBLE_EQ(s.maxAbs, 1.0);
  EXPECT_DOUBLE_EQ(s.relL2, std::sqrt(2.0) / 5.0);
  EXPECT_EQ(s.nonFinite, 0u);
  EXPECT_EQ(s.infMismatch, 0u);
}

TEST(Compare, AllZeroReferenceGivesAbsoluteL2) {
  // ||want|| = 0: relL2 falls back to ||got - want|| = sqrt(9 + 16) = 5.
  double want[] = {0.0, 0.0};
  double got[] = {3.0, -4.0};
  ErrorStats s = compare(got, want, 2);
  EXPECT_DOUBLE_EQ(s.relL2, 5.0);
  EXPECT_DOUBLE_EQ(s.maxAbs, 4.0);
}

TEST(Compare, InfinityInWantMustBeMatchedExactly) {
  // A fully masked row has lse = -inf: a kernel giving +inf, a huge finite
  // value or NaN there is wrong, and those entries are kept out of the
  // finite metrics.
  double want[] = {-kInf, kInf, -kInf, -kInf, 2.0};
  double got[] = {-kInf, -kInf, -1e308, kNaN, 2.0};
  ErrorStats s = compare(got, want, 5);
  EXPECT_EQ(s.infMismatch, 3u);
  EXPECT_EQ(s.nonFinite, 0u);
  EXPECT_EQ(s.maxAbs, 0.0);
  EXPECT_EQ(s.relL2, 0.0);
}

TEST(Compare, NonFiniteGotIsCountedAndKeptOutOfTheMetrics) {
  // NaN and inf where want is finite are counted in nonFinite and left out
  // of both norms. The one finite pair differs by 0.5 on a reference entry
  // of 2, so maxAbs = 0.5 and relL2 = 0.5 / 2 = 0.25.
  double want[] = {1.0, 1.0, 2.0};
  double got[] = {kNaN, kInf, 2.5};
  ErrorStats s = compare(got, want, 3);
  EXPECT_EQ(s.nonFinite, 2u);
  EXPECT_EQ(s.infMismatch, 0u);
  EXPECT_DOUBLE_EQ(s.maxAbs, 0.5);
  EXPECT_DOUBLE_EQ(s.relL2, 0.25);
  EXPECT_FALSE(std::isnan(s.relL2));
}

TEST(Compare, EmptyInputIsNoError) {
  ErrorStats s = compare(nullptr, nullptr, 0);
  EXPECT_EQ(s.maxAbs, 0.0);
  EXPECT_EQ(s.relL2, 0.0);
  EXPECT_EQ(s.nonFinite + s.infMismatch, 0u);
}
