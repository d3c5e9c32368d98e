//===- ChooseTiles.h - tile sizes of the GPU schedules ----------*- C++ -*-===//

#ifndef KILN_DIALECTS_ATTN_TRANSFORMS_CHOOSETILES_H
#define KILN_DIALECTS_ATTN_TRANSFORMS_CHOOSETILES_H

#include "dialects/Attn/IR/AttnDialect.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace kiln::attn {

struct Tiles {
  int64_t blockM, blockN;
};

/// The largest of `tile`, then tile - 64, ... (above 64) and tile / 2, ...
/// that divides `block` (at least 16): a block-sparse variant's tiles lie
/// in one mask block each.
int64_t fitTileToBlock(int64_t tile, int64_t block);

/// A band whose bounds move with the query: q + lo <= kv <= q + hi.
struct DiagonalBand {
  int64_t lo, hi;
};

/// The tightest diagonal band within `band` (its bounds with q_coeff = 1,
/// of one alignment), or none.
std::optional<DiagonalBand> diagonalBand(BandAttr band);

/// Keys per row that a tile of `rows` query rows, starting at a multiple of
/// `keys`, visits in steps of `keys` over `band`.
int64_t bandKeysPerRow(int64_t rows, int64_t keys, DiagonalBand band);

/// 64 x 64 tiles instead of `chosen` where two such CTAs fit the shared
/// memory and visit at most `keyPercent` % of `chosen`'s keys per row.
Tiles chooseNarrowBandTiles(Tiles chosen, DiagonalBand band,
                            int64_t sharedBytes, int64_t headDimQK,
                            int64_t headDimV, int64_t elementBytes,
                            int64_t keyPercent);

/// The opt-in shared memory per block of `arch`: 227 KiB on sm_90, 163 KiB
/// on sm_80.
int64_t defaultSharedMemoryBytes(llvm::StringRef arch);

/// The forward's tiles (attn-choose-tiles explains the rule); a positive
/// `blockM` / `blockN` is taken as given.
Tiles chooseForwardTiles(int64_t sharedBytes, int64_t headDimQK,
                         int64_t headDimV, int64_t elementBytes,
                         int64_t blockM = 0, int64_t blockN = 0);

/// The forward's tiles on sm_90a, where the products run on wgmma
/// (tgpu-warpgroup-mma): BLOCK_M in whole warpgroups, as many as the
/// register file allows for the larger BLOCK_N (attn-choose-tiles);
/// `elementTile`: each step works on one more 2-D tile of registers (the
/// score_mod or mask_mod reads q or kv, or the variant has dropout).
Tiles chooseWarpgroupForwardTiles(int64_t sharedBytes, int64_t headDimQK,
                                  int64_t headDimV, int64_t elementBytes,
                                  int64_t blockM = 0, int64_t blockN = 0,
                                  bool elementTile = false);

/// The backward's tiles, likewise; `warpgroups`: the products run on wgmma
/// (sm_90a), which takes one m16 tile per warp.
Tiles chooseBackwardTiles(int64_t headDimQK, int64_t headDimV,
                          int64_t blockM = 0, int64_t blockN = 0,
                          bool warpgroups = false);

/// Keys per dK/dV program of the atomic backward where, on sm_90a (wgmma
/// and the TMA producer), that schedule is the faster one for these head
/// dims; 0 where the two-kernel schedule is (attn-choose-tiles explains the
/// rule).
int64_t chooseAtomicKeyBlock(int64_t headDimQK, int64_t headDimV);

/// Query rows per step of the atomic backward's dK/dV kernel (and per
/// program of its other kernels) on sm_90a where more than the backward's
/// block-m measured faster: 128 for a dense, unmasked MHA step without mods
/// or dropout at head dims of 64; 0 elsewhere (attn-choose-tiles explains).
int64_t chooseAtomicQueryBlock(AttentionOp op);

/// Keys per dK/dV program of the two-kernel backward on sm_90a where more
/// than block-n measured faster for these head dims; 0 elsewhere.
int64_t chooseTwoKernelKeyBlock(int64_t headDimQK, int64_t headDimV);

} // namespace kiln::attn

#endif // KILN_DIALECTS_ATTN_TRANSFORMS_CHOOSETILES_H
