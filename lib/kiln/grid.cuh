// kiln/grid.cuh - programmatic dependent launch (sm_90): a kernel the runtime
// launches with programmatic stream serialization may start while the
// stream's previous kernel is still running; these two order the pair
// (tgpu.launch_dependents, tgpu.wait_prior_grids).
#pragma once

namespace kiln {

/// Lets the stream's next kernel launch once every CTA of this grid has run
/// this (or exited). Orders no memory.
__device__ __forceinline__ void launch_dependents() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Blocks until the grids this one overlaps have completed and their writes
/// are visible; at once in a kernel launched without the overlap.
__device__ __forceinline__ void wait_prior_grids() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

} // namespace kiln
