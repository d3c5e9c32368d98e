//===- PhiloxTest.cpp - the dropout's generator against known answers -----===//
//
// reference/Philox.h defines the dropout's random bits; the CPU backend and
// the device library are checked against it, so it is checked here against
// Random123's published known-answer vectors, and the counter layout
// against its documented properties.
//
//===----------------------------------------------------------------------===//

#include "reference/Philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace kiln::ref;

TEST(Philox, Random123KnownAnswers) {
  using W = std::array<uint32_t, 4>;
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (W{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                          {0xffffffffu, 0xffffffffu}),
            (W{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                          {0xa4093822u, 0x299f31d0u}),
            (W{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

// The 8 elements of one patch {q0, q0+8} x {k0, k0+1, k0+8, k0+9} take the 8
// halves of one call, each exactly once.
TEST(Philox, PatchSpendsOneCallOnEightElements) {
  uint64_t seed = 0x0123456789abcdefull, offset = 7;
  for (uint64_t q0 : {0ull, 16ull + 5}) {
    for (uint64_t k0 : {0ull, 32ull + 6}) {
      auto ctr =
          std::array<uint32_t, 4>{uint32_t((k0 >> 4) << 2 | ((k0 >> 1) & 3)),
                                  uint32_t((q0 >> 4) << 3 | (q0 & 7)),
                                  uint32_t(2u << 16 | 3u), uint32_t(offset)};
      auto words = philox4x32_10(ctr, {uint32_t(seed), uint32_t(seed >> 32)});
      std::multiset<uint32_t> want, got;
      for (uint32_t w : words)
        want.insert({w & 0xffffu, w >> 16});
      for (uint64_t dq : {0, 8})
        for (uint64_t dk : {0, 1, 8, 9})
          got.insert(dropoutUniform(seed, offset, 2, 3, q0 + dq, k0 + dk));
      EXPECT_EQ(got, want) << "q0 " << q0 << " k0 " << k0;
    }
  }
}

// Over many elements the uniforms are uniform: the fraction below a
// threshold is within 5 standard deviations of it, and the seed, the
// offset, the batch and the head each change the bits.
TEST(Philox, KeptFractionAndStreams) {
  const uint32_t threshold = 52429; // p = 0.2
  int64_t kept = 0, n = 0;
  for (uint64_t q = 0; q < 128; ++q)
    for (uint64_t kv = 0; kv < 512; ++kv, ++n)
      kept += dropoutUniform(42, 0, 1, 5, q, kv) < threshold;
  double want = threshold / 65536.0;
  double sigma = std::sqrt(want * (1 - want) / n);
  EXPECT_NEAR(double(kept) / n, want, 5 * sigma);

  auto differs = [](auto f) {
    int same = 0;
    for (uint64_t kv = 0; kv < 256; ++kv)
      same += f(kv, false) == f(kv, true);
    return same < 16; // a 16-bit value repeats by chance 1 in 65536
  };
  EXPECT_TRUE(differs([](uint64_t kv, bool other) {
    return dropoutUniform(other ? 43 : 42, 0, 0, 0, 3, kv);
  }));
  EXPECT_TRUE(differs([](uint64_t kv, bool other) {
    return dropoutUniform(42, other ? 1ull << 32 : 0, 0, 0, 3, kv);
  }));
  EXPECT_TRUE(differs([](uint64_t kv, bool other) {
    return dropoutUniform(42, other ? 1 : 0, 0, 0, 3, kv);
  }));
  EXPECT_TRUE(differs([](uint64_t kv, bool other) {
    return dropoutUniform(42, 0, other ? 1 : 0, 0, 3, kv);
  }));
  EXPECT_TRUE(differs([](uint64_t kv, bool other) {
    return dropoutUniform(42, 0, 0, other ? 1 : 0, 3, kv);
  }));
}

// With 8-bit uniforms the 16 elements of one patch {q0, q0+1, q0+8, q0+9} x
// {k0, k0+1, k0+8, k0+9} (q0, k0 even) take the 16 bytes of one call, each
// exactly once; over many elements the bytes are uniform, and the threshold
// and scale round p to a multiple of 2^-8 with a mean-one mask.
TEST(Philox, BytesSpendOneCallOnSixteenElements) {
  uint64_t seed = 0x0123456789abcdefull, offset = 7;
  for (uint64_t q0 : {0ull, 16ull + 4}) {
    for (uint64_t k0 : {0ull, 32ull + 6}) {
      auto ctr =
          std::array<uint32_t, 4>{uint32_t((k0 >> 4) << 2 | ((k0 >> 1) & 3)),
                                  uint32_t((q0 >> 4) << 2 | ((q0 >> 1) & 3)),
                                  uint32_t(2u << 16 | 3u), uint32_t(offset)};
      auto words = philox4x32_10(ctr, {uint32_t(seed), uint32_t(seed >> 32)});
      std::multiset<uint32_t> want, got;
      for (uint32_t w : words)
        for (int b = 0; b < 4; ++b)
          want.insert((w >> (8 * b)) & 0xffu);
      for (uint64_t dq : {0, 1, 8, 9})
        for (uint64_t dk : {0, 1, 8, 9})
          got.insert(dropoutUniform(seed, offset, 2, 3, q0 + dq, k0 + dk, 8));
      EXPECT_EQ(got, want) << "q0 " << q0 << " k0 " << k0;
    }
  }

  EXPECT_EQ(dropoutThreshold(0.1, 8), 230u);
  EXPECT_DOUBLE_EQ(dropoutScale(0.1, 8), 256.0 / 230.0);
  EXPECT_EQ(dropoutThreshold(0.1), 58982u);
  const uint32_t threshold = dropoutThreshold(0.2, 8);
  int64_t kept = 0, n = 0;
  for (uint64_t q = 0; q < 128; ++q)
    for (uint64_t kv = 0; kv < 512; ++kv, ++n)
      kept += dropoutUniform(42, 0, 1, 5, q, kv, 8) < threshold;
  double want = threshold / 256.0;
  double sigma = std::sqrt(want * (1 - want) / n);
  EXPECT_NEAR(double(kept) / n, want, 5 * sigma);
}
