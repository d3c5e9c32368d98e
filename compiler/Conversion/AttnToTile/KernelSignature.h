//===- KernelSignature.h - tile kernels with their launch roles -*- C++ -*-===//
//
// Every kernel the attn -> tile lowerings create says how it is launched:
// its grid as size expressions of the problem, and for each argument its
// role (a tensor the caller passes, a workspace the runtime allocates, a
// capture) and shape. The launch plan (compiler/Emit/LaunchPlan) is read off
// these attributes, so no later stage hard-codes an argument order.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CONVERSION_ATTNTOTILE_KERNELSIGNATURE_H
#define KILN_COMPILER_CONVERSION_ATTNTOTILE_KERNELSIGNATURE_H

#include "dialects/Attn/IR/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace kiln {

/// One non-capture argument of a kernel.
struct KernelArgDecl {
  enum class Role { Tensor, Workspace };
  Role role = Role::Tensor;
  mlir::Type type; ///< a strided memref
  std::string name;
  llvm::SmallVector<mlir::Attribute> shape; ///< size expressions
  bool zeroFill = false;                    ///< workspaces only
};

/// What a kernel of a variant is: name, arguments, grid, tiles.
struct KernelDecl {
  std::string name;
  llvm::SmallVector<KernelArgDecl> args;
  bool withCaptures = false; ///< the variant's captures follow `args`
  llvm::SmallVector<mlir::Attribute, 3> grid;
  int64_t blockM = 0, blockN = 0;
  std::string backwardStage; ///< empty for forward kernels
  /// A size expression: launched only when it is at least 1 (tile.when);
  /// null: always.
  mlir::Attribute when;
};

/// Creates the kernel function (with an entry block) after the builder's
/// insertion point, with its launch attributes.
mlir::func::FuncOp createKernel(mlir::OpBuilder &b, attn::AttentionOp spec,
                                const KernelDecl &decl);

/// The tiles a lowering uses for `spec`: the pass options when positive,
/// else the op's attn.block_m / attn.block_n (attn-choose-tiles), else 64.
std::pair<int64_t, int64_t> chosenTiles(attn::AttentionOp spec, int64_t blockM,
                                        int64_t blockN);

/// [batch, seq_q, heads, cols]: q, out, dout, dq.
llvm::SmallVector<mlir::Attribute> queryShape(mlir::Builder &b, int64_t cols);
/// [batch, heads, seq_q, cols]: the atomic backward's f32 dQ accumulator,
/// whose query blocks are then contiguous (one bulk reduction each).
llvm::SmallVector<mlir::Attribute> headMajorQueryShape(mlir::Builder &b,
                                                       int64_t cols);
/// [batch, seq_kv, kv_heads, cols]: k, v, dk, dv.
llvm::SmallVector<mlir::Attribute> keyShape(mlir::Builder &b, int64_t cols);
/// [pages, pageSize, kv_heads, cols]: k and v as pools of a paged KV cache.
llvm::SmallVector<mlir::Attribute>
pagedKeyShape(mlir::Builder &b, int64_t pageSize, int64_t cols);
/// [batch, max_pages]: a paged KV cache's block table.
llvm::SmallVector<mlir::Attribute> blockTableShape(mlir::Builder &b);
/// [batch, heads, seq_q]: lse and D.
llvm::SmallVector<mlir::Attribute> rowShape(mlir::Builder &b);
/// [rows, heads, cols] of a packed (varlen) batch: [total_q, heads, D] for
/// q, out, dout, dq; [total_kv, kv_heads, D] for k, v, dk, dv.
llvm::SmallVector<mlir::Attribute> packedShape(mlir::Builder &b,
                                               llvm::StringRef rows,
                                               llvm::StringRef heads,
                                               int64_t cols);
/// [heads, total_q]: a packed batch's lse and D.
llvm::SmallVector<mlir::Attribute> packedRowShape(mlir::Builder &b);
/// [batch + 1]: cu_seqlens_q, cu_seqlens_kv.
llvm::SmallVector<mlir::Attribute> seqOffsetsShape(mlir::Builder &b);
/// [batch, heads, ceildiv(rows, block)]: a block mask's list lengths
/// (kv_num_blocks: rows "seq_q"; the backward's q_num_blocks: "seq_kv").
llvm::SmallVector<mlir::Attribute> blockCountShape(mlir::Builder &b,
                                                   llvm::StringRef rows,
                                                   int64_t block,
                                                   bool perHead = true);
/// [batch, heads, ceildiv(rows, block), ceildiv(cols, colBlock)]: a block
/// mask's lists of block numbers (kv_indices, q_indices). (`perHead`
/// false: one head, [batch, 1, ...], for a mask the same in every head.)
llvm::SmallVector<mlir::Attribute>
blockListShape(mlir::Builder &b, llvm::StringRef rows, int64_t block,
               llvm::StringRef cols, int64_t colBlock, bool perHead = true);
/// One program per block of `block` rows of each sequence of a packed
/// batch, and per head: (ceildiv(rows, block) + batch, heads, 1), at least
/// as many as the sequences have blocks (tile.ragged_block).
llvm::SmallVector<mlir::Attribute, 3> raggedBlockGrid(mlir::Builder &b,
                                                      llvm::StringRef rows,
                                                      llvm::StringRef heads,
                                                      int64_t block);
/// One program per block of `blockM` query rows: (ceildiv(seq_q, blockM),
/// heads, batch).
llvm::SmallVector<mlir::Attribute, 3> queryBlockGrid(mlir::Builder &b,
                                                     int64_t blockM);
/// One program per block of `blockM` packed rows of a KV head's `group`
/// query heads: (ceildiv(seq_q * group, blockM), kv_heads, batch).
llvm::SmallVector<mlir::Attribute, 3>
packedQueryBlockGrid(mlir::Builder &b, int64_t blockM, int64_t group);
/// One program per block of `blockN` keys of a KV head: (ceildiv(seq_kv,
/// blockN), kv_heads, batch).
llvm::SmallVector<mlir::Attribute, 3> keyBlockGrid(mlir::Builder &b,
                                                   int64_t blockN);

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_ATTNTOTILE_KERNELSIGNATURE_H
