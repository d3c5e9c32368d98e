//===- BlockLists.h - loops over a block mask's lists -----------*- C++ -*-===//
//
// A block-sparse variant (block_sparse = [QB, KB]) reads FlexAttention's
// BlockMask: per (batch, head, block of one side), the numbers of the blocks
// of the other side to visit, partial and full. The forward and the dQ
// kernel visit key blocks listed per query block (kv_num_blocks,
// kv_indices, full_kv_*); the dK/dV kernels visit query blocks listed per
// key block (q_num_blocks, q_indices, full_q_*, the transposed lists).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CONVERSION_ATTNTOTILE_BLOCKLISTS_H
#define KILN_COMPILER_CONVERSION_ATTNTOTILE_BLOCKLISTS_H

#include "compiler/Conversion/AttnToTile/KernelSignature.h"
#include "compiler/Conversion/AttnToTile/ProgramBuilder.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>

namespace kiln {

/// Appends a block mask's four lists, partial then full, each a count and
/// the numbers: keyed by query blocks (`byQueries`: kv_num_blocks [batch,
/// heads, ceil(seq_q / QB)], kv_indices [..., ceil(seq_kv / KB)], the
/// full_kv_ pair) or by key blocks (q_num_blocks, q_indices, full_q_*);
/// returns the first one's position.
unsigned addBlockListArgs(mlir::Builder &b,
                          llvm::SmallVectorImpl<KernelArgDecl> &args,
                          std::pair<int64_t, int64_t> blocks, bool byQueries,
                          bool perHead = true);

/// The body of one step of a listed loop: the first row (or key) of its
/// tile and the loop-carried values; returns the values to carry on.
using ListedStep = std::function<llvm::SmallVector<mlir::Value>(
    ProgramBuilder &, mlir::Value start, mlir::ValueRange carried)>;

/// One list of a block row: `count` blocks of `blockSize` whose numbers are
/// indices[row..., 0 .. count - 1], each visited in blockSize / tile steps
/// of `tile`. The loop runs over list positions, so each step loads its
/// block's number (a scalar read the schedules repeat where they need the
/// step's rows: the TMA producer). Counts and numbers are clamped to the
/// `numBlocks` blocks there are: a bad list visits blocks past the last one
/// (which hold nothing), never memory outside an array. With `enabled`, the
/// loop runs only when it holds (a choice uniform over the grid). The loop
/// carries `init`; `role` names it (`roleAttr`: tile.kv_loop or
/// tile.q_loop).
mlir::scf::ForOp buildListedLoop(ProgramBuilder &pb, mlir::Value countArg,
                                 mlir::Value indicesArg, mlir::ValueRange row,
                                 int64_t blockSize, int64_t tile,
                                 mlir::Value numBlocks, mlir::ValueRange init,
                                 mlir::Value enabled, llvm::StringRef roleAttr,
                                 llvm::StringRef role, const ListedStep &step);

/// The step of a block row's partial list (`full` false) or full one.
using ListedMaskedStep = std::function<llvm::SmallVector<mlir::Value>(
    ProgramBuilder &, mlir::Value start, mlir::ValueRange carried, bool full)>;

/// The partial list's loop then the full list's, of the four lists from
/// `lists[0]` on (count, numbers, full count, full numbers), carrying
/// `init` through both (roles "listed_partial", "listed_full"); returns
/// what the second carries out.
llvm::SmallVector<mlir::Value>
buildPartialAndFullLoops(ProgramBuilder &pb, mlir::ValueRange lists,
                         mlir::ValueRange row, int64_t blockSize, int64_t tile,
                         mlir::Value numBlocks, mlir::ValueRange init,
                         llvm::StringRef roleAttr,
                         const ListedMaskedStep &step);

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_ATTNTOTILE_BLOCKLISTS_H
