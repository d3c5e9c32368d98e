//===- TileAttrNames.h - attributes tile kernels carry ----------*- C++ -*-===//
//
// The tile dialect owns the discardable attributes that the attn -> tile
// lowerings put on kernel functions, their arguments and their loops. The
// launch-plan ones (grid, argument roles, shapes) are what the runtime's
// plan is built from (compiler/Emit/LaunchPlan); TileDialect verifies them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_TILE_IR_TILEATTRNAMES_H
#define KILN_DIALECTS_TILE_IR_TILEATTRNAMES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringRef.h"

namespace kiln::tile::attrs {

// --- on kernel functions ---------------------------------------------------
/// A function that is one program instance of a grid.
inline constexpr llvm::StringLiteral kKernel = "tile.kernel";
/// The attn.attention it was lowered from.
inline constexpr llvm::StringLiteral kVariant = "tile.variant";
inline constexpr llvm::StringLiteral kBlockM = "tile.block_m";
inline constexpr llvm::StringLiteral kBlockN = "tile.block_n";
inline constexpr llvm::StringLiteral kGqaGroup = "tile.gqa_group";
/// The variant's capture declarations (an array of #attn.capture).
inline constexpr llvm::StringLiteral kCaptures = "tile.captures";
/// Backward kernels: "preprocess", "dq", "dkdv" (or "dk" and "dv", split),
/// or "convert"; forward kernels have none.
inline constexpr llvm::StringLiteral kBackwardStage = "tile.bwd_stage";
/// The rows of a kernel's register tiles when they are not its query rows:
/// a dK/dV kernel keys by queries has its keys (BLOCK_N) as rows. GPU
/// schedules give each 16 of them a warp.
inline constexpr llvm::StringLiteral kTileRows = "tile.tile_rows";
/// A dK/dV kernel whose adds into a workspace take turns: {accumulator =
/// workspace name, turns = a zeroed i32 workspace [batch, heads, Q blocks]
/// counting the adds made to each Q block, rows = the Q block's rows}; each
/// add carries its turn (tile.atomic_add's `turn`; tgpu-ordered-adds).
inline constexpr llvm::StringLiteral kOrderedAdds = "tile.ordered_adds";
/// The grid: three size expressions (x, y, z) over the problem's symbols.
inline constexpr llvm::StringLiteral kGrid = "tile.grid";
/// Symbols the kernel's plan derives from the problem's: a dictionary from
/// name to a size expression over the problem's symbols ({kv_splits = ...}).
/// The kernel's other size expressions may name them; kernels of one program
/// that declare the same name must agree.
inline constexpr llvm::StringLiteral kSymbols = "tile.symbols";
/// A kernel that builds a block mask's lists (no attention output): the
/// forward's schedules leave it alone.
inline constexpr llvm::StringLiteral kBuildsBlockMask =
    "tile.builds_block_mask";
/// A size expression: the kernel is launched only when it is at least 1.
inline constexpr llvm::StringLiteral kWhen = "tile.when";
/// How a program's work changes along grid axis 0 ("grows": later blocks
/// have more steps, as a causal forward's query blocks; "shrinks": fewer,
/// under a band's lower bound alone), where the mask's band says so for
/// every (head, batch) alike. tgpu-longest-first orders the grid by it.
inline constexpr llvm::StringLiteral kBlockCost = "tile.block_cost";
inline constexpr llvm::StringLiteral kBlockCostGrows = "grows";
inline constexpr llvm::StringLiteral kBlockCostShrinks = "shrinks";

// --- on kernel arguments: exactly one role each -----------------------------
/// A tensor the caller passes, by name ("q", "dout", ...); with kShape.
inline constexpr llvm::StringLiteral kTensor = "tile.tensor";
/// Scratch memory the runtime allocates, by name; with kShape, and
/// kZeroFill when the runtime must clear it first.
inline constexpr llvm::StringLiteral kWorkspace = "tile.workspace";
inline constexpr llvm::StringLiteral kZeroFill = "tile.zero_fill";
/// The index of a captured tensor in kCaptures.
inline constexpr llvm::StringLiteral kCapture = "tile.capture";
/// An i64 the runtime passes: the value of a size expression.
inline constexpr llvm::StringLiteral kScalar = "tile.scalar";
/// The array's shape: one size expression per dimension.
inline constexpr llvm::StringLiteral kShape = "tile.shape";

// --- on loops ----------------------------------------------------------------
/// The role of a loop over KV blocks ("masked", "full", "leading_partial",
/// "trailing_partial", "full_then_partial": full steps, then a partial one
/// masked in a branch; "listed_partial" and "listed_full" run over a block
/// mask's lists, their induction variable a list position, not a key) or
/// over Q blocks.
inline constexpr llvm::StringLiteral kKvLoop = "tile.kv_loop";
inline constexpr llvm::StringLiteral kQLoop = "tile.q_loop";

/// A forward kernel's attribute: the size expression of its key range
/// ("seq_kv", or max_pages times the page size of a paged KV cache), which
/// tile-split-kv divides among the splits.
inline constexpr llvm::StringLiteral kKvExtent = "tile.kv_extent";

} // namespace kiln::tile::attrs

namespace kiln::tile {

/// The head dim of a kernel's queries: the last dimension of its argument
/// marked `tile.tensor = "q"`, or 0 where it has none.
int64_t queryHeadDim(mlir::FunctionOpInterface kernel);
/// Whether `op` lies in a kernel whose queries have fewer than `minHeadDim`
/// columns (the `min-head-dim` of tile passes; a kernel without queries is
/// not below any).
bool inKernelBelowHeadDim(mlir::Operation *op, int64_t minHeadDim);

/// Size expressions as attributes, spelled as in the runtime's plan
/// (kiln/LaunchPlan.h): an integer, a symbol ("seq_q") or ["op", a, b, ...]
/// with op one of add, sub, mul, ceildiv, max, min.
mlir::Attribute sizeSymbol(mlir::Builder &b, llvm::StringRef symbol);
mlir::Attribute sizeConstant(mlir::Builder &b, int64_t value);
mlir::Attribute sizeOp(mlir::Builder &b, llvm::StringRef op,
                       llvm::ArrayRef<mlir::Attribute> operands);
/// min(max(x, 0), 1): 1 where the integer x is at least 1, else 0, so that
/// conditions multiply (launch conditions, workspaces sized by one).
mlir::Attribute sizeClamp01(mlir::Builder &b, mlir::Attribute x);
/// floor(a / d) for a >= 0 and d >= 1, spelled ceildiv(a + 1, d) - 1 (the
/// plan has no floor division).
mlir::Attribute sizeFloorDiv(mlir::Builder &b, mlir::Attribute a,
                             mlir::Attribute d);

/// The kernel's i64 argument that the runtime sets to the size expression
/// `expr` (tile.scalar): an existing one, or a new one appended; null where
/// the argument cannot be added.
mlir::Value scalarArgument(mlir::FunctionOpInterface kernel,
                           mlir::Attribute expr);

/// The device symbol "ctas_per_sm.<kernel>": how many CTAs of that kernel one
/// multiprocessor holds, which the runtime binds from the driver's occupancy
/// when it loads the program.
inline constexpr llvm::StringLiteral kCtasPerSmPrefix = "ctas_per_sm.";
mlir::Attribute sizeCtasPerSm(mlir::Builder &b, llvm::StringRef kernel);

/// The symbols the runtime binds from a run's tensors (pages and max_pages
/// from a paged KV cache's pool and block table) and num_sms from the device.
inline constexpr llvm::StringLiteral kProblemSymbols[] = {
    "batch", "heads",     "kv_heads", "seq_q",    "seq_kv",
    "pages", "max_pages", "total_q",  "total_kv", "num_sms"};

/// Checks a size expression: known symbols (kProblemSymbols,
/// ctas_per_sm.<kernel>, and the `derived` ones) and
/// operators with the right number of operands.
mlir::LogicalResult
verifySizeExpr(mlir::Attribute expr,
               llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
               llvm::ArrayRef<llvm::StringRef> derived = {});

/// The names in `op`'s kSymbols (none when it has none).
llvm::SmallVector<llvm::StringRef> derivedSymbols(mlir::Operation *op);

} // namespace kiln::tile

#endif // KILN_DIALECTS_TILE_IR_TILEATTRNAMES_H
