//===- DeviceDropoutTest.cpp - the device library's dropout bits ----------===//
//
// lib/kiln/random.cuh draws each dropout uniform in the register layout of
// a tile; the kernels' bits must be reference/Philox.h's, bit for bit. On a
// GPU only tolerances against float64 would see a wrong draw in a few
// elements, so the device code itself runs here, on the host (DeviceShim's
// types.cuh): 32 threads per warp, every warp of a tile in turn, each
// element against ref::dropoutUniform. Keys-by-queries tiles with lane
// pairs (two lanes sharing a patch's calls through __shfl_xor_sync) are the
// case this exists for.
//
//===----------------------------------------------------------------------===//

#include "kiln/random.cuh"
#include "reference/Philox.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace {

struct Draw {
  long long seed = 0x0123456789ABCDEFll, offset = (5ll << 32) + 9;
  int batch = 3, head = 11, q0 = 0, kv0 = 0;
};

/// Elements of every thread of an F tile whose uniform differs from the
/// reference's; `shuffles` counts the shuffles the threads made.
template <bool KEYS_BY_QUERIES, bool LANE_PAIRS, typename F, int BITS = 16>
int mismatches(const Draw &d, int &shuffles) {
  int bad = 0;
  shuffles = 0;
  for (int w = 0; w < F::kWarps; ++w) {
    device_shim::Warp warp;
    device_shim::warp = &warp;
    std::vector<F> out(32);
    std::vector<std::thread> lanes;
    for (int l = 0; l < 32; ++l)
      lanes.emplace_back([&, l] {
        threadIdx.x = 32 * w + l;
        kiln::for_each_dropout_uniform<KEYS_BY_QUERIES, F, 0, F::kSize,
                                       LANE_PAIRS, BITS>(
            w, l, d.seed, d.offset, d.batch, d.head, d.q0, d.kv0,
            [&](int e, int u) { out[l].x[e] = u; });
      });
    for (std::thread &t : lanes)
      t.join();
    for (int l = 0; l < 32; ++l) {
      shuffles += warp.shuffles[l];
      for (int e = 0; e < F::kSize; ++e) {
        unsigned row = F::row_of(e, w, l), col = F::col_of(e, w, l);
        unsigned q = KEYS_BY_QUERIES ? d.q0 + col : d.q0 + row;
        unsigned kv = KEYS_BY_QUERIES ? d.kv0 + row : d.kv0 + col;
        bad += unsigned(out[l].x[e]) !=
               kiln::ref::dropoutUniform(d.seed, d.offset, d.batch, d.head, q,
                                         kv, BITS);
      }
    }
  }
  return bad;
}

template <typename F> void checkKeysByQueries(const Draw &d, bool aligned) {
  int shuffles = 0;
  EXPECT_EQ((mismatches<true, true, F>(d, shuffles)), 0)
      << "lane pairs, q0 " << d.q0 << " kv0 " << d.kv0;
  // Tiles at multiples of 16 share calls; others draw one call per element
  // and must not shuffle.
  if (aligned)
    EXPECT_EQ(shuffles, 32 * F::kWarps * 2 * (F::kSize / 8));
  else
    EXPECT_EQ(shuffles, 0);
  EXPECT_EQ((mismatches<true, false, F>(d, shuffles)), 0)
      << "one call per 4 elements, q0 " << d.q0 << " kv0 " << d.kv0;
  EXPECT_EQ(shuffles, 0);
}

/// 8-bit uniforms, both orientations: lane pairs share every call of an
/// aligned tile (two shuffles per two patches, one call per lane for an odd
/// last patch), none elsewhere.
template <typename F> void checkBytes(const Draw &d, bool aligned) {
  for (bool keysByQueries : {false, true}) {
    int shuffles = 0;
    int bad = keysByQueries ? mismatches<true, false, F, 8>(d, shuffles)
                            : mismatches<false, false, F, 8>(d, shuffles);
    EXPECT_EQ(bad, 0) << (keysByQueries ? "keys" : "queries") << " by "
                      << (keysByQueries ? "queries" : "keys") << ", q0 " << d.q0
                      << " kv0 " << d.kv0;
    EXPECT_EQ(shuffles, aligned ? 32 * F::kWarps * 2 * (F::kSize / 16) : 0);
  }
}

/// Runs fn(thread) on `count` threads in warps of 32, one warp at a time
/// (each with its own shuffle barrier), thread i with threadIdx.x = base + i.
template <typename Fn> void runWarps(int base, int count, Fn fn) {
  for (int w = 0; w < count / 32; ++w) {
    device_shim::Warp warp;
    device_shim::warp = &warp;
    std::vector<std::thread> lanes;
    for (int l = 0; l < 32; ++l)
      lanes.emplace_back([&, l] {
        threadIdx.x = base + 32 * w + l;
        fn(32 * w + l);
      });
    for (std::thread &t : lanes)
      t.join();
  }
}

struct Slot {
  int *ptr;
};

/// tgpu.draw_keep_bits by a 128-thread producer warpgroup for the first
/// kPatches patches of each consumer thread of an F tile, then
/// tgpu.load_keep_bits in the consumers (the rest drawn there): keep bits
/// differing from the reference's uniform < threshold.
template <bool KEYS_BY_QUERIES, bool LANE_PAIRS, int kPatches, typename F>
int keepMismatches(const Draw &d, unsigned threshold) {
  constexpr int kThreads = 32 * F::kWarps;
  std::vector<int> words(kThreads * kiln::keep_words<kPatches>());
  Slot slot{words.data()};
  runWarps(kThreads, 128, [&](int thread) {
    kiln::draw_keep_bits<KEYS_BY_QUERIES, 128, F, kPatches, LANE_PAIRS>(
        slot, d.seed, d.offset, d.batch, d.head, d.q0, d.kv0, threshold,
        thread);
  });
  std::vector<F> out(kThreads);
  runWarps(0, kThreads, [&](int thread) {
    kiln::load_keep_bits<KEYS_BY_QUERIES, kPatches, LANE_PAIRS>(
        out[thread], slot, d.seed, d.offset, d.batch, d.head, d.q0, d.kv0,
        threshold);
  });
  int bad = 0;
  for (int t = 0; t < kThreads; ++t)
    for (int e = 0; e < F::kSize; ++e) {
      unsigned row = F::row_of(e, t / 32, t % 32),
               col = F::col_of(e, t / 32, t % 32);
      unsigned q = KEYS_BY_QUERIES ? d.q0 + col : d.q0 + row;
      unsigned kv = KEYS_BY_QUERIES ? d.kv0 + row : d.kv0 + col;
      bool keep = kiln::ref::dropoutUniform(d.seed, d.offset, d.batch, d.head,
                                            q, kv) < threshold;
      bad += out[t].x[e] != keep;
    }
  return bad;
}

} // namespace

TEST(DeviceDropout, KeepBitsSharedWithTheProducerMatchTheReference) {
  // The producer's share of the draw (--producer-bits-share), both
  // orientations, lane pairs in the dK/dV kernel's.
  Draw d;
  d.q0 = 64;
  d.kv0 = 128;
  const unsigned threshold = 58982; // p = 0.1
  EXPECT_EQ((keepMismatches<false, false, 3, kiln::Frag<bool, 128, 128, 8>>(
                d, threshold)),
            0);
  EXPECT_EQ((keepMismatches<true, true, 1, kiln::Frag<bool, 128, 64, 8>>(
                d, threshold)),
            0);
  EXPECT_EQ((keepMismatches<true, true, 4, kiln::Frag<bool, 128, 64, 8>>(
                d, threshold)),
            0);
  EXPECT_EQ((keepMismatches<true, false, 2, kiln::Frag<bool, 128, 64, 8>>(
                d, threshold)),
            0);
}

TEST(DeviceDropout, QueriesByKeysMatchTheReference) {
  int shuffles = 0;
  Draw d;
  d.q0 = 128;
  d.kv0 = 256;
  EXPECT_EQ(
      (mismatches<false, false, kiln::Frag<int, 128, 64, 8>>(d, shuffles)), 0);
  d.kv0 = 250; // not a multiple of 16: one call per element
  EXPECT_EQ((mismatches<false, false, kiln::Frag<int, 64, 32, 4>>(d, shuffles)),
            0);
}

TEST(DeviceDropout, KeysByQueriesWithLanePairsMatchTheReference) {
  Draw d;
  d.q0 = 64;
  d.kv0 = 128;
  // The dK/dV kernel's tiles: two warpgroups over 128 keys, one over 64.
  checkKeysByQueries<kiln::Frag<int, 128, 64, 8>>(d, true);
  checkKeysByQueries<kiln::Frag<int, 64, 64, 4>>(d, true);
  // Two m16 tiles per warp, and column groups.
  checkKeysByQueries<kiln::Frag<int, 64, 32, 2>>(d, true);
  checkKeysByQueries<kiln::Frag<int, 64, 64, 8, 2>>(d, true);
  // Another batch and head, seed and offset, and starts past 2^16 keys.
  d = Draw{42, 7, 0, 65535, 4096, 70000};
  checkKeysByQueries<kiln::Frag<int, 64, 64, 4>>(d, true);
  // A start that is not a multiple of 16.
  d.kv0 = 70001;
  checkKeysByQueries<kiln::Frag<int, 64, 64, 4>>(d, false);
}

TEST(DeviceDropout, BytesWithLanePairsMatchTheReference) {
  Draw d;
  d.q0 = 64;
  d.kv0 = 128;
  // The forward's tiles (two warpgroups over 128 keys; 192 rows), the dK/dV
  // kernel's, two m16 tiles per warp, column groups.
  checkBytes<kiln::Frag<int, 128, 128, 8>>(d, true);
  checkBytes<kiln::Frag<int, 192, 64, 12>>(d, true);
  checkBytes<kiln::Frag<int, 64, 64, 4>>(d, true);
  checkBytes<kiln::Frag<int, 64, 32, 2>>(d, true);
  checkBytes<kiln::Frag<int, 64, 64, 8, 2>>(d, true);
  // An odd number of patches per thread (48 columns: three), the last one
  // drawn by each lane alone.
  checkBytes<kiln::Frag<int, 64, 48, 4>>(d, true);
  d = Draw{42, 7, 0, 65535, 4096, 70000};
  checkBytes<kiln::Frag<int, 64, 64, 4>>(d, true);
  // Starts that are not multiples of 16.
  d.kv0 = 70001;
  checkBytes<kiln::Frag<int, 64, 64, 4>>(d, false);
  d.kv0 = 70000;
  d.q0 = 4098;
  checkBytes<kiln::Frag<int, 64, 64, 4>>(d, false);
}
