// kiln/grid.cuh - programmatic dependent launch: a kernel and the one
// before it on the stream.
//
// A kernel launched with programmatic stream serialization may start while
// the previous kernel's last CTAs run; it must not read what that kernel
// writes before wait_for_previous_grid, which returns once the previous grid
// has completed and its memory is visible. allow_next_grid lets the
// stream's next kernel be scheduled once every CTA of this grid has called it
// (or exited). Both are no-ops in a kernel launched normally, and before
// sm_90.
#pragma once

namespace kiln {

__device__ __forceinline__ void wait_for_previous_grid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void allow_next_grid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

} // namespace kiln
