//===- BlockMaskBuilder.h - the program that builds a block mask -*- C++
//-*-===//
//
// A block-sparse variant's lists (BlockLists.h), built from its own mask on
// the device: one program per block row evaluates the mask (keys past Lk,
// causality, the mask_mod with its captures) on every element of each block
// of the other side, counts the visible ones and appends the block to the
// partial list (some visible) or the full one (all). Two kernels: the
// forward's lists by query blocks, the backward's transposed ones by key
// blocks.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CONVERSION_ATTNTOTILE_BLOCKMASKBUILDER_H
#define KILN_COMPILER_CONVERSION_ATTNTOTILE_BLOCKMASKBUILDER_H

#include "dialects/Attn/IR/AttnDialect.h"

namespace kiln {

/// Lowers block-sparse `spec` to `<name>_block_mask` (kv_num_blocks,
/// kv_indices, full_kv_*) and `<name>_block_mask_t` (q_num_blocks, ...),
/// each taking q and k for their shapes, and the captures. A mask that
/// does not read the head gets lists of one head ([batch, 1, ...]).
mlir::LogicalResult lowerBlockMaskBuilder(attn::AttentionOp spec);

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_ATTNTOTILE_BLOCKMASKBUILDER_H
