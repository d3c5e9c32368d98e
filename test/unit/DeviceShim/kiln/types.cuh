//===- types.cuh - a host stand-in for lib/kiln's device basics ----------===//
//
// Lets a unit test compile lib/kiln's random.cuh, layout.cuh, chunks.cuh
// and (for f32 and bf16 tiles) load.cuh on the host
// (they include "kiln/types.cuh", found here first): one std::thread per
// lane of a warp, `threadIdx.x` thread-local, and __shfl_xor_sync exchanging
// values among the 32 threads of the warp under test at a barrier.
//
//===----------------------------------------------------------------------===//

#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

#define __device__
#define __host__
#define __forceinline__ inline

struct DeviceShimDim3 {
  unsigned x = 0;
};
inline thread_local DeviceShimDim3 threadIdx;

struct uint2 {
  unsigned x, y;
};
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) {
  return {x, y, z, w};
}

inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((uint64_t(a) * b) >> 32);
}

/// PTX prmt's default mode: byte i of the result is byte (s >> 4i) & 7 of
/// y:x.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  uint64_t bytes = uint64_t(y) << 32 | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i)
    r |= unsigned((bytes >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return r;
}

namespace device_shim {
/// The 32 lanes of the warp under test: a barrier, their values in flight,
/// and how many shuffles each made.
struct Warp {
  std::mutex mutex;
  std::condition_variable cv;
  int arrived = 0;
  unsigned generation = 0;
  unsigned slots[32] = {};
  int shuffles[32] = {};

  void sync() {
    std::unique_lock<std::mutex> lock(mutex);
    unsigned mine = generation;
    if (++arrived == 32) {
      arrived = 0;
      ++generation;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != mine; });
    }
  }
};
inline Warp *warp = nullptr;
} // namespace device_shim

inline unsigned __shfl_xor_sync(unsigned, unsigned value, int laneMask) {
  device_shim::Warp &w = *device_shim::warp;
  int lane = threadIdx.x & 31;
  ++w.shuffles[lane];
  w.slots[lane] = value;
  w.sync();
  unsigned other = w.slots[lane ^ laneMask];
  w.sync();
  return other;
}

// The real device library's array window (host-safe as it is).
#include "kiln/desc.cuh"

namespace kiln {
inline int lane_id() { return threadIdx.x & 31; }
inline int warp_id() { return threadIdx.x >> 5; }
/// 16-bit elements by their bits (kiln/chunks.cuh moves them as they are).
struct bf16 {
  unsigned short bits;
};
struct f16 {
  unsigned short bits;
};
/// kiln::load's fill: f32 exactly; bf16 by truncation (the device rounds,
/// with PTX; the tests' fills are exact in bf16).
template <typename T> T from_float(float x);
template <> inline float from_float<float>(float x) { return x; }
template <> inline bf16 from_float<bf16>(float x) {
  unsigned u;
  static_assert(sizeof(u) == sizeof(x));
  __builtin_memcpy(&u, &x, sizeof(u));
  return bf16{static_cast<unsigned short>(u >> 16)};
}
} // namespace kiln
