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

/// What tgpu-warp-specialize tells runTilesInLoop of the kernel it built.
/// The first four are placeholder constants of their own in the entry block
/// (before `ws`), replaced per tile.
struct TileCarried {
  /// The ring position of the tile's first step (0 for one tile).
  mlir::Value ringBase;
  /// The tile's program ids (the producer publishes them before Q's copy).
  mlir::Value tileIds[3];
  /// The phase parity the consumers wait for on a buffer loaded once per
  /// tile: the tile's round mod 2.
  mlir::Value onceParity;
  /// The parity the producer waits for before reloading it: flipped, so the
  /// first tile finds it free.
  mlir::Value onceFreeParity;
  /// With two copies of the loaded-once buffers (`onceSlots` = 2), the
  /// copy this tile uses: its round mod 2. Barrier and word indices below
  /// are then those of slot 0; slot s adds s (3 s for the words), and the
  /// parities above are those of round / 2.
  mlir::Value onceSlot;
  int64_t onceSlots = 1;
  /// The ring positions one tile takes (computed from ringBase).
  mlir::Value ringEnd;
  /// The mbarrier array, and indices in it (entry-block constants): the
  /// first loaded-once buffer's "full" and "free" barriers, and the first
  /// of the three words that hold the published program ids.
  mlir::Value barriers, onceFull, onceFree, tileSlot;
  /// Two shared i32 words through which a producer warpgroup that draws
  /// keep bits shares each next tile (tgpu.next_tile shares), or null.
  mlir::Value tileWords;
  /// The consumers' wait on onceFull, which moves to the top of their loop.
  mlir::Operation *consumerOnceWait = nullptr;
};

/// Whether `kernel` (its program ids in the entry block's scalar setup,
/// with tile.grid) can run its tiles in a loop.
bool canRunTilesInLoop(mlir::func::FuncOp kernel);

/// Wraps each side of `ws` in a loop over tiles (its former CTAs): the grid
/// becomes min(tiles, num_sms * ctas_per_sm.<kernel>) CTAs on x, each
/// starting on tile blockIdx.x; the producer warp then draws the next tile
/// from a zeroed i32 workspace (`<kernel>_tiles`, tgpu.next_tile) and
/// publishes its program ids (axis 0 fastest) to the consumers with the
/// tile's Q (tgpu.publish_tile, read after the wait on Q's barrier, so the
/// consumers keep no grid sizes live), so tiles go out in the grid's order
/// as CTAs free up. Each side computes the entry block's per-tile setup
/// again from the program ids; the ring's positions and
/// Q's barrier phases continue from tile to tile. The tile counts per grid
/// axis and the CTA count become scalar arguments.
mlir::LogicalResult runTilesInLoop(mlir::func::FuncOp kernel,
                                   WarpSpecializeOp ws,
                                   const TileCarried &carried);

} // namespace kiln::tgpu

#endif // KILN_DIALECTS_TILEGPU_TRANSFORMS_PERSISTENT_H
