//===- SplitDkDv.h - dK and dV in one backward kernel or two ----*- C++ -*-===//

#ifndef KILN_COMPILER_PIPELINES_SPLITDKDV_H
#define KILN_COMPILER_PIPELINES_SPLITDKDV_H

#include <cstdint>

namespace kiln {

/// Whether the backward computes dK and dV in two kernels, each recomputing
/// S (convert-attn-to-tile-backward split-dkdv-above). `Auto`: on sm_90a
/// where the two f32 accumulators of a 64-key block, (Dqk + Dv) / 2
/// registers per thread, exceed 128 (D > 128): at D = 256 one kernel
/// spills and ptxas serializes its products.
enum class SplitDkDv { Auto, On, Off };

/// The head-dim sum above which `Auto` splits.
inline constexpr int64_t kSplitDkDvAutoAbove = 256;

} // namespace kiln

#endif // KILN_COMPILER_PIPELINES_SPLITDKDV_H
