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
/// On a block-sparse variant: lower it to the program that builds its block
/// mask's lists from the mask (convert-attn-to-tile), not to its forward.
inline constexpr llvm::StringLiteral kBuildBlockMask = "attn.build_block_mask";

} // namespace kiln::attn::attrs

#endif // KILN_DIALECTS_ATTN_IR_ATTNATTRNAMES_H
