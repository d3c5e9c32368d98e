//===- Persistent.h - a warp-specialized kernel over many tiles -*- C++ -*-===//
//
// tgpu-warp-specialize's `persistent` option: one CTA per slot of the GPU,
// each running the kernel's tiles (its former CTAs) one after another, so
// that the producer loads the next tile's Q and first K/V while the
// consumers finish the current tile's epilogue.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_TILEGPU_TRANSFORMS_PERSISTENT_H
#define KILN_DIALECTS_TILEGPU_TRANSFORMS_PERSISTENT_H

#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::tgpu {

/// Values of a warp-specialized kernel's entry block (before `ws`) that
/// change from one tile to the next beside the program ids: each is a
/// placeholder op of its own that no other op shares.
struct TileCarried {
  /// The ring position of the tile's first step (0 for one tile).
  mlir::Value ringBase;
  /// The ring positions one tile takes (computed from ringBase).
  mlir::Value ringEnd;
  /// The phase parity the consumers wait for on a buffer loaded once per
  /// tile (Q): the tile's count mod 2.
  mlir::Value onceParity;
  /// The parity the producer waits for before reloading it: flipped, so the
  /// first tile finds it free.
  mlir::Value onceFreeParity;
};

/// Whether `kernel` (its program ids in the entry block's scalar setup,
/// with tile.grid) can run its tiles in a loop.
bool canRunTilesInLoop(mlir::func::FuncOp kernel);

/// Wraps each side of `ws` in a loop over the tiles `blockIdx.x + i *
/// ctas` of the kernel's grid (axis 0 fastest, as the hardware numbers
/// CTAs, so concurrent tiles share K and V in L2): the per-tile setup of the
/// entry block is computed again on each side from the tile's program ids,
/// the ring's positions continue from tile to tile. The grid becomes
/// min(tiles, num_sms * ctas_per_sm.<kernel>) CTAs on x; the tile counts
/// per axis and the CTA count become scalar arguments.
mlir::LogicalResult runTilesInLoop(mlir::func::FuncOp kernel,
                                   WarpSpecializeOp ws,
                                   const TileCarried &carried);

} // namespace kiln::tgpu

#endif // KILN_DIALECTS_TILEGPU_TRANSFORMS_PERSISTENT_H
