//===- TileGPUDialect.h - tgpu dialect ---------------------------*- C++
//-*-===//

#ifndef KILN_DIALECTS_TILEGPU_IR_TILEGPUDIALECT_H
#define KILN_DIALECTS_TILEGPU_IR_TILEGPUDIALECT_H

#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/TileGPU/IR/TileGPUDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/TileGPU/IR/TileGPUAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/TileGPU/IR/TileGPUTypes.h.inc"

#define GET_OP_CLASSES
#include "dialects/TileGPU/IR/TileGPUOps.h.inc"

namespace kiln::tgpu {
/// Shared memory is memref memory space 3 (as in NVVM).
inline constexpr unsigned kSharedMemorySpace = 3;
bool isSharedMemRef(mlir::Type type);

/// The i32 words of a slot of the dropout's keep bits for `tile` (an i1
/// #tgpu.mma tile), the first `patches` 8-element patches of each thread
/// of the tile drawn: ceil(8 * patches / 32) per thread
/// (tgpu.draw_keep_bits, tgpu.load_keep_bits).
int64_t keepBitsSlotWords(mlir::RankedTensorType tile, int64_t patches);
/// The 8-element patches each thread of `tile` holds.
int64_t keepBitsPatches(mlir::RankedTensorType tile);
/// The swizzle width of a shared buffer in #tgpu.swizzle layout, or 0.
int64_t swizzleBytes(mlir::Type type);
/// The widest swizzle (128, 64 or 32 bytes) that divides a row of
/// `rowBytes`, or 0 when none does.
int64_t widestSwizzle(int64_t rowBytes);

/// Whether a 2-D accumulator of `rows` x `cols` in `layout` is wgmma's
/// accumulator layout: each column group whole warpgroups with one m16
/// tile per warp, and a group's columns a wgmma N (a multiple of 16 up to
/// 256).
bool hasWarpgroupRows(int64_t rows, MmaLayoutAttr layout);
bool hasWarpgroupColumns(int64_t cols, MmaLayoutAttr layout);

/// The block of a 2-D `#tgpu.mma` tile one warp holds: its rows (each column
/// group's warps split the tile's rows) and its group's columns.
int64_t warpBlockRows(mlir::RankedTensorType tile);
int64_t groupColumns(mlir::RankedTensorType tile);

/// The registers each of a CTA's `threads` threads gets at entry with
/// `ctasPerSM` CTAs per multiprocessor: its share of the 65536, at most
/// 255, in steps of 8 (ptxas takes that maximum for a kernel with
/// setmaxnreg; 248 where the hardware would give 256 is a lower bound, on
/// the safe side). The CTA's pool for tgpu.warp_specialize's budgets is
/// that many per thread.
int64_t entryRegisters(int64_t ctasPerSM, int64_t threads);

/// Appends to `kernel` a `!tgpu.tensor_map` argument describing its argument
/// `tensor` (dimensions innermost first, the box over them, the swizzle in
/// bytes), which the runtime encodes per launch; returns it.
mlir::BlockArgument appendTensorMap(mlir::FunctionOpInterface kernel,
                                    unsigned tensor,
                                    llvm::ArrayRef<int64_t> dims,
                                    llvm::ArrayRef<int64_t> box,
                                    int64_t swizzle, mlir::Location loc);
} // namespace kiln::tgpu

#endif // KILN_DIALECTS_TILEGPU_IR_TILEGPUDIALECT_H
