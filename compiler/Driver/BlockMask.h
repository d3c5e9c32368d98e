//===- BlockMask.h - kiln run's block-sparse lists ---------------*- C++
//-*-===//
//
// A block-sparse variant (block_sparse = [QB, KB]) reads, per (batch, head,
// block of QB queries), the lists of partial and of full KV blocks
// (FlexAttention's BlockMask). `kiln run` makes them from the variant's own
// mask (each block classified by evaluating the float64 reference's mask on
// its elements: none visible, some, all), or at random at a given density;
// the reference then applies the lists' meaning: keys of unlisted blocks
// unseen, partial blocks masked as the variant says, full blocks only past
// the keys.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_BLOCKMASK_H
#define KILN_COMPILER_DRIVER_BLOCKMASK_H

#include "compiler/Driver/HostBuffer.h"
#include "reference/ReferenceAttention.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kiln::driver {

struct Problem;

/// What a mask block is to one block row's lists.
enum class BlockKind : uint8_t { Skipped, Partial, Full };

/// The four lists (i32): kv_num_blocks / full_kv_num_blocks [B, H, QBn],
/// kv_indices / full_kv_indices [B, H, QBn, KBn]; and the backward's
/// transposed ones, q_num_blocks / full_q_num_blocks [B, H, KBn] and
/// q_indices / full_q_indices [B, H, KBn, QBn] (ascending); entries past a
/// list's count hold -1. `kinds` is the same mask as one kind per block.
struct BlockMaskLists {
  int64_t rowsPerBlock = 0, keysPerBlock = 0;
  int64_t queryBlocks = 0, keyBlocks = 0;
  HostBuffer kvNum, kvIdx, fullNum, fullIdx;
  HostBuffer qNum, qIdx, fullQNum, fullQIdx;
  std::vector<BlockKind> kinds; ///< [B, H, QBn, KBn]

  BlockKind kind(int64_t b, int64_t h, int64_t heads, int64_t q,
                 int64_t kv) const {
    return kinds[((b * heads + h) * queryBlocks + q / rowsPerBlock) *
                     keyBlocks +
                 kv / keysPerBlock];
  }
};

/// The lists of the mask `visible` (the reference's variant: causality and
/// mask_mod) over `p`'s queries and keys. `perBatch` / `perHead`: whether
/// the mask may differ between batches / heads (else evaluated once).
BlockMaskLists blockMaskFromMask(const Problem &p, int64_t rowsPerBlock,
                                 int64_t keysPerBlock,
                                 const ref::AttentionSpec &visible,
                                 bool perBatch, bool perHead);

/// Lists choosing each block with probability `density`, chosen ones
/// partial or full at even odds, in shuffled order.
BlockMaskLists randomBlockMask(const Problem &p, int64_t rowsPerBlock,
                               int64_t keysPerBlock, double density,
                               std::mt19937_64 &rng);

/// Lists of `p`'s shape (one head unless `perHead`: a mask the same in
/// every head) for a builder to fill: counts and numbers poisoned (-2), so
/// that an entry it leaves unwritten is caught.
BlockMaskLists poisonedLists(const Problem &p, int64_t rowsPerBlock,
                             int64_t keysPerBlock, bool perHead);

/// The rows (of both orientations) whose count or listed numbers differ
/// between `got` (one head broadcast, or every head) and `want`; `first`
/// names the first.
int64_t differingRows(const BlockMaskLists &got, const BlockMaskLists &want,
                      std::string &first);

/// The reference's variant under `lists`: `spec`'s causality and mask_mod
/// only in partial blocks, every key below Lk in full ones, no key
/// elsewhere (causality folded into the mask).
void applyBlockMask(const Problem &p, const BlockMaskLists &lists,
                    ref::AttentionSpec &spec);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_BLOCKMASK_H
