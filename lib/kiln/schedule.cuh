// kiln/schedule.cuh - tiles handed out at run time in a persistent kernel
// (tgpu-warp-specialize persistent=true): the producer warp takes the next
// tile from a counter and publishes its program ids to the consumers in shared
// memory, ahead of the mbarrier arrival that gives them the tile's Q.
#pragma once
#include "kiln/tma.cuh"

namespace kiln {

/// The producer warp's next tile: the first `ctas` tiles are the CTAs' own
/// (blockIdx.x), the rest go in the order lane 0 draws them from `counter`
/// (zeroed before the launch). With no more tiles than CTAs the counter is
/// not read (it may be absent): every CTA is done after its own.
__device__ __forceinline__ int next_tile(int *counter, int ctas, int total) {
  if (total <= ctas)
    return total;
  int drawn = 0;
  if (lane_id() == 0)
    drawn = atomicAdd(counter, 1);
  return __shfl_sync(0xffffffffu, drawn, 0) + ctas;
}

/// next_tile for a whole producer warpgroup of kThreads (one that draws keep
/// bits, tgpu.draw_keep_bits): the leader draws, writes the tile to a
/// shared word of `drawn` (two) and every thread reads it after hardware
/// barrier ID. The words alternate by round: a round's write follows the
/// previous round's barrier, which every thread passed after its read of
/// the same word two rounds ago.
template <int ID, int kThreads>
__device__ __forceinline__ int next_tile_warpgroup(int *counter, int ctas,
                                                   int total, bool leader,
                                                   int &round, int *drawn) {
  if (total <= ctas)
    return total;
  const int slot = round & 1;
  ++round;
  if (leader)
    drawn[slot] = atomicAdd(counter, 1);
  named_barrier<ID, kThreads>();
  return drawn[slot] + ctas;
}

/// Lane 0 writes the tile's program ids to `slot[0..2]` (24 bytes of shared
/// memory beside the mbarriers); its next arrival at the barrier the
/// consumers wait on releases them.
__device__ __forceinline__ void publish_tile(unsigned long long *slot, int x,
                                             int y, int z) {
  if (lane_id() == 0) {
    volatile long long *words = reinterpret_cast<volatile long long *>(slot);
    words[0] = x;
    words[1] = y;
    words[2] = z;
  }
}

/// Likewise, and lane 0 then arrives at `bar` itself (no copy follows: x is
/// -1, there is no tile left, and the consumers stop).
__device__ __forceinline__ void publish_tile(unsigned long long *slot, int x,
                                             int y, int z,
                                             unsigned long long *bar) {
  publish_tile(slot, x, y, z);
  if (lane_id() == 0)
    mbarrier_arrive(bar);
}

/// A program id published in `slot`, after the wait that acquired it.
__device__ __forceinline__ int read_tile(const unsigned long long *slot) {
  return static_cast<int>(*reinterpret_cast<const volatile long long *>(slot));
}

} // namespace kiln
