//===- turns.cuh - programs taking turns at an accumulator ----------------===//
//
// tgpu-ordered-adds: the atomic backward's key blocks add their dQ shares to
// a query block one after another, in a fixed order, so that every sum is
// formed in the same order in every run. A zeroed i32 counter per query
// block says how many key blocks have added to it; a program waits until it
// equals its add's turn (acquire), adds, waits for its sums to be in global
// memory and increments it (release).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TURNS_CUH
#define KILN_TURNS_CUH
#include "kiln/types.cuh"

namespace kiln {

/// Lane 0 waits until turns[index] == turn, then the warp goes on. What it
/// read is ordered before the async proxy's later operations (the bulk
/// reductions it issues next see the previous program's sums).
template <typename T>
__device__ __forceinline__ void turn_wait(const Desc<T> &turns, int index,
                                          int turn) {
  static_assert(sizeof(T) == 4, "an i32 counter");
#if __CUDA_ARCH__ >= 900
  if (lane_id() == 0) {
    const T *counter = turns.ptr + turns.row_offset(index);
    int seen;
    do {
      asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n"
                   : "=r"(seen)
                   : "l"(counter)
                   : "memory");
    } while (seen != turn);
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
  }
  __syncwarp();
#else
  __trap(); // tgpu-ordered-adds orders sm_90a's bulk reductions only
#endif
}

/// Run by one thread: waits until its bulk groups are complete in global
/// memory, orders those writes before its own, and adds 1 to *counter with
/// release semantics, so that the next program's turn_wait sees the sums.
__device__ __forceinline__ void pass_turn(void *counter) {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
  asm volatile("red.release.gpu.global.add.s32 [%0], 1;\n"
               :
               : "l"(counter)
               : "memory");
#endif
}

/// Lane 0 passes the turn on at turns[index] (pass_turn), then the warp
/// goes on.
template <typename T>
__device__ __forceinline__ void turn_signal(const Desc<T> &turns, int index) {
  static_assert(sizeof(T) == 4, "an i32 counter");
#if __CUDA_ARCH__ >= 900
  if (lane_id() == 0)
    pass_turn(turns.ptr + turns.row_offset(index));
  __syncwarp();
#else
  __trap();
#endif
}

/// A producer warp's turn passed on later (tgpu.turn_signal deferred): lane
/// 0 notes the counter and increments it, once its sums are complete, at
/// its next turn_wait or at turn_flush, so the warp never stops for them.
struct TurnLater {
  int *pending = nullptr;
};

/// Lane 0 passes on the noted turn, if any (pass_turn).
__device__ __forceinline__ void turn_flush(TurnLater &later) {
  if (lane_id() == 0 && later.pending) {
    pass_turn(later.pending);
    later.pending = nullptr;
  }
}

/// turn_wait, after passing on the noted turn (a program waiting for this
/// one's turn must not wait for this one's wait).
template <typename T>
__device__ __forceinline__ void
turn_wait(TurnLater &later, const Desc<T> &turns, int index, int turn) {
  turn_flush(later);
  turn_wait(turns, index, turn);
}

/// Notes turns[index] for turn_flush.
template <typename T>
__device__ __forceinline__ void
turn_signal_later(TurnLater &later, const Desc<T> &turns, int index) {
  static_assert(sizeof(T) == 4, "an i32 counter");
  if (lane_id() == 0)
    later.pending =
        reinterpret_cast<int *>(turns.ptr + turns.row_offset(index));
}

} // namespace kiln

#endif // KILN_TURNS_CUH
