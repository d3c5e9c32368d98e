//===- TileGPUAttrNames.h - attributes scheduled kernels carry --*- C++ -*-===//
//
// The tgpu dialect owns the discardable attributes convert-tile-to-tgpu puts
// on the kernels it schedules; the CUDA emitter and the launch plan read them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_TILEGPU_IR_TILEGPUATTRNAMES_H
#define KILN_DIALECTS_TILEGPU_IR_TILEGPUATTRNAMES_H

#include "llvm/ADT/StringRef.h"

namespace kiln::tgpu::attrs {

/// Warps per CTA (the block is 32 times this many threads).
inline constexpr llvm::StringLiteral kNumWarps = "tgpu.num_warps";
/// The target ("sm_80", "sm_90a").
inline constexpr llvm::StringLiteral kArch = "tgpu.arch";
/// Dynamic shared memory the kernel is launched with.
inline constexpr llvm::StringLiteral kSharedBytes = "tgpu.shared_bytes";
/// The kernel's math.tanh and math.exp run on the hardware approximations
/// (tanh.approx, ex2.approx) rather than libdevice's precise functions.
inline constexpr llvm::StringLiteral kFastMath = "tgpu.fast_math";
/// The kernel's tile.philox draws keyed by key rows (keys_by_queries) share
/// each patch's two Philox calls between the lanes of keys r and r ^ 1, a
/// call each and a shuffle (convert-tile-to-tgpu philox-lane-pairs).
inline constexpr llvm::StringLiteral kPhiloxLanePairs =
    "tgpu.philox_lane_pairs";
/// On a producer's tgpu.mbarrier_arrive or tgpu.mbarrier_wait: every thread
/// of the producer warpgroup arrives (after drawing keep bits,
/// tgpu.draw_keep_bits) or waits (for the bits' slot), not only its first
/// warp's.
inline constexpr llvm::StringLiteral kWarpgroup = "tgpu.warpgroup";
/// The kernel's wgmma products pack a register A operand into each k16
/// step's fragments at the step (tgpu-warpgroup-mma pack-lhs-first=false,
/// an ablation) instead of all of it before the products' fence.
inline constexpr llvm::StringLiteral kLhsPackedPerStep =
    "tgpu.lhs_packed_per_step";
/// The register tiles computed under a kernel's asynchronous wgmma products
/// and read after their wait are kept before the wait in ptxas's schedule
/// too (tgpu-warpgroup-mma order-before-waits, opt-in), not only for the
/// CUDA front end.
inline constexpr llvm::StringLiteral kOrderedWaits = "tgpu.ordered_waits";
/// Warps after the tgpu.num_warps consumers that tgpu.warp_specialize runs
/// as producers: the CTA launches with both.
inline constexpr llvm::StringLiteral kProducerWarps = "tgpu.producer_warps";
/// CTAs of a warp-specialized kernel per multiprocessor (absent: 1): the
/// register budgets of tgpu.warp_specialize share entryRegisters(this,
/// threads) per thread.
inline constexpr llvm::StringLiteral kCtasPerSM = "tgpu.ctas_per_sm";
/// A warp-specialized kernel whose CTAs loop over the grid's tiles
/// (tgpu-warp-specialize persistent=true): tile.grid is its CTAs.
inline constexpr llvm::StringLiteral kPersistent = "tgpu.persistent";
/// The kernel waits for the stream's previous grids itself
/// (tgpu.wait_prior_grids, tgpu-overlap-launches): the runtime may launch it
/// with programmatic stream serialization, overlapping their tails (the
/// launch plan's `overlaps_prior`).
inline constexpr llvm::StringLiteral kOverlapsPriorGrid =
    "tgpu.overlaps_prior_grid";
/// On a !tgpu.tensor_map kernel argument: {tensor, dims, box, swizzle}, how
/// the runtime encodes it (see TensorMapType).
inline constexpr llvm::StringLiteral kTensorMap = "tgpu.tensor_map";
/// Its entries.
inline constexpr llvm::StringLiteral kTensorMapTensor = "tensor";
inline constexpr llvm::StringLiteral kTensorMapDims = "dims";
inline constexpr llvm::StringLiteral kTensorMapBox = "box";
inline constexpr llvm::StringLiteral kTensorMapSwizzle = "swizzle";

} // namespace kiln::tgpu::attrs

#endif // KILN_DIALECTS_TILEGPU_IR_TILEGPUATTRNAMES_H
