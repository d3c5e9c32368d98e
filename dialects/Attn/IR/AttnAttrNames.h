//===- AttnAttrNames.h - attributes passes put on attn ops ------*- C++ -*-===//
//
// The attn dialect owns the discardable attributes its passes record on an
// attn.attention for the lowerings that follow.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ATTN_IR_ATTNATTRNAMES_H
#define KILN_DIALECTS_ATTN_IR_ATTNATTRNAMES_H

#include "llvm/ADT/StringRef.h"

namespace kiln::attn::attrs {

/// Tile sizes chosen by attn-choose-tiles: query rows per program and keys
/// per step (the attn -> tile lowerings read them).
inline constexpr llvm::StringLiteral kBlockM = "attn.block_m";
inline constexpr llvm::StringLiteral kBlockN = "attn.block_n";
/// Backward on sm_90a, set by attn-choose-tiles where the atomic schedule
/// measured faster than the two-kernel one: its keys per dK/dV program
/// (convert-attn-to-tile-backward schedule=auto takes it).
inline constexpr llvm::StringLiteral kAtomicKeyBlock = "attn.atomic_key_block";
/// Backward on sm_90a, set by attn-choose-tiles (when no block-m is given)
/// where the atomic schedule's dK/dV steps measured faster over more queries
/// than block-m: its query rows per step and program (convert-attn-to-tile-
/// backward takes it where schedule=auto picks the atomic schedule at its
/// chosen keys).
inline constexpr llvm::StringLiteral kAtomicQueryBlock =
    "attn.atomic_query_block";
/// Backward on sm_90a, set by attn-choose-tiles where the two-kernel
/// schedule's dK/dV kernel measured faster over more keys than block-n: its
/// keys per dK/dV program (convert-attn-to-tile-backward takes it where it
/// lowers the two-kernel schedule and no key-block is given).
inline constexpr llvm::StringLiteral kTwoKernelKeyBlock =
    "attn.two_kernel_key_block";
/// On a block-sparse variant: lower it to the program that builds its block
/// mask's lists from the mask (convert-attn-to-tile), not to its forward.
inline constexpr llvm::StringLiteral kBuildBlockMask = "attn.build_block_mask";

} // namespace kiln::attn::attrs

#endif // KILN_DIALECTS_ATTN_IR_ATTNATTRNAMES_H
