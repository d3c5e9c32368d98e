//===- ChooseTiles.cpp - tile sizes from the spec and the target ----------===//

#include "dialects/Attn/Transforms/ChooseTiles.h"

#include "dialects/Attn/IR/AttnAttrNames.h"
#include "dialects/Attn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstdlib>

namespace kiln::attn {
#define GEN_PASS_DEF_ATTNCHOOSETILES
#include "dialects/Attn/Transforms/Passes.h.inc"
} // namespace kiln::attn

using namespace mlir;

namespace kiln::attn {

int64_t defaultSharedMemoryBytes(StringRef arch) {
  return arch == "sm_80" ? 166912 : 232448;
}

Tiles chooseForwardTiles(int64_t sharedBytes, int64_t headDimQK,
                         int64_t headDimV, int64_t elementBytes, int64_t blockM,
                         int64_t blockN) {
  // Each warp owns 16 query rows, so a thread holds (BLOCK_N + D_v) / 2
  // floats of S and the accumulator whatever BLOCK_M is; BLOCK_M sets how
  // many warps share each K/V tile loaded into shared memory.
  Tiles tiles{blockM > 0 ? blockM : 64, 64};
  auto sharedFor = [&](int64_t candidate) {
    // Q, K and V tiles, each row padded by 16 bytes.
    int64_t padQK = headDimQK + 16 / elementBytes;
    int64_t padV = headDimV + 16 / elementBytes;
    return (tiles.blockM * padQK + candidate * padQK + candidate * padV) *
           elementBytes;
  };
  if (blockN > 0) {
    tiles.blockN = blockN;
    return tiles;
  }
  // Larger KV blocks amortise the per-step barriers and row reductions, but
  // S (BLOCK_M x BLOCK_N f32) shares the register file with the
  // accumulator: keep their sum at most 160 floats per thread (measured: no
  // spills at 248-254 registers for D = 64, 128, 256).
  for (int64_t candidate : {128, 64, 32, 16}) {
    bool registersFit = (candidate + headDimV) / 2 <= 160;
    if (registersFit && sharedFor(candidate) <= sharedBytes) {
      tiles.blockN = candidate;
      return tiles;
    }
  }
  tiles.blockN = 16;
  return tiles;
}

/// Shared memory of a wgmma forward CTA's tiles: Q and `stages` copies of
/// the K and V tiles.
static int64_t warpgroupTileBytes(int64_t m, int64_t n, int64_t headDimQK,
                                  int64_t headDimV, int64_t elementBytes,
                                  int64_t stages) {
  return (m * headDimQK + stages * n * (headDimQK + headDimV)) * elementBytes;
}

Tiles chooseWarpgroupForwardTiles(int64_t sharedBytes, int64_t headDimQK,
                                  int64_t headDimV, int64_t elementBytes,
                                  int64_t blockM, int64_t blockN,
                                  bool elementTile) {
  // A thread holds S (BLOCK_N / 2 floats), P (BLOCK_N / 4 registers of
  // packed 16-bit pairs) and the accumulator (D_v / 2 floats) of its 16
  // rows, whatever BLOCK_M is, plus about 32 registers of indices, row
  // statistics and addresses (ptxas on the emitted kernels: 17-34). A mod
  // that reads the query or key position works on a 2-D index tile each
  // step, BLOCK_N / 2 more (measured on an H100 with a producer warpgroup,
  // D = 128: ALiBi, the document mask and the sliding window spill 240-756
  // bytes at 192 rows and run 17-200% faster at 128; softcap and causal
  // spill 68-184 bytes and run 4-13% faster at 192). Dropout's uniforms are
  // such a tile too (`elementTile`).
  auto registers = [&](int64_t n) {
    return 3 * n / 4 + headDimV / 2 + 32 + (elementTile ? n / 2 : 0);
  };
  auto sharedFor = [&](int64_t m, int64_t n) {
    return warpgroupTileBytes(m, n, headDimQK, headDimV, elementBytes, 1);
  };
  // One CTA per SM; its warpgroups share each K/V tile and take turns on
  // the tensor cores while the others run their softmax. The larger KV
  // block first (it amortises each step's barriers and row reductions),
  // then the most warpgroups whose registers fit the per-thread share of
  // the register file, min(255, 65536 / threads), with 15% to spare: a few
  // spilled bytes cost less than a warpgroup fewer (measured on an H100:
  // D = 128, 192 x 128 tiles spill 64 bytes and run 19% faster than
  // 128 x 128 without spills).
  for (int64_t n : {128, 64}) {
    if (blockN > 0 && n != blockN)
      continue;
    for (int64_t groups : {4, 3, 2, 1}) {
      int64_t m = 64 * groups;
      if (blockM > 0 && m != blockM)
        continue;
      int64_t cap = std::min<int64_t>(255, 65536 / (128 * groups));
      if (100 * registers(n) <= 115 * cap && sharedFor(m, n) <= sharedBytes)
        return {m, n};
    }
  }
  if (blockM > 0 && blockN > 0)
    return {blockM, blockN};
  // Nothing of whole warpgroups fits: the sm_80 rule.
  return chooseForwardTiles(sharedBytes, headDimQK, headDimV, elementBytes,
                            blockM, blockN);
}

std::optional<DiagonalBand> diagonalBand(BandAttr band) {
  // Only bounds that move with q (q_coeff = 1) give a width independent of
  // q; constant bounds (kv >= 0, kv < X) only narrow it further. Bounds of
  // both alignments would shift against each other with Lk - Lq.
  std::optional<int64_t> lo, hi;
  std::optional<bool> diag;
  auto take = [&](ArrayAttr bounds, std::optional<int64_t> &into, bool lower) {
    for (auto bound : bounds.getAsRange<KVBoundAttr>()) {
      if (bound.getQCoeff() != 1)
        continue;
      if (diag && *diag != bound.getDiag())
        return false;
      diag = bound.getDiag();
      int64_t offset = bound.getOffset();
      into = !into   ? offset
             : lower ? std::max(*into, offset)
                     : std::min(*into, offset);
    }
    return true;
  };
  // attn-infer-mask-bounds keeps offsets within 2^30; a band written by hand
  // beyond that is not narrow (and would overflow the key counts below).
  constexpr int64_t kLimit = int64_t(1) << 30;
  if (!band || !take(band.getLower(), lo, true) ||
      !take(band.getUpper(), hi, false) || !lo || !hi || *hi < *lo ||
      std::abs(*lo) > kLimit || std::abs(*hi) > kLimit)
    return std::nullopt;
  return DiagonalBand{*lo, *hi};
}

int64_t bandKeysPerRow(int64_t rows, int64_t keys, DiagonalBand band) {
  // Rows [q0, q0 + rows) with q0 a multiple of `keys` see keys
  // [q0 + lo, q0 + rows - 1 + hi]: the blocks from floor((q0 + lo) / keys)
  // to floor((q0 + rows - 1 + hi) / keys).
  return keys * (llvm::divideFloorSigned(rows - 1 + band.hi, keys) -
                 llvm::divideFloorSigned(band.lo, keys) + 1);
}

Tiles chooseNarrowBandTiles(Tiles chosen, DiagonalBand band,
                            int64_t sharedBytes, int64_t headDimQK,
                            int64_t headDimV, int64_t elementBytes,
                            int64_t keyPercent) {
  // 64 x 64 tiles: one consumer warpgroup, two CTAs per SM (Q and a
  // two-stage K/V ring each), so that one CTA's prologue and epilogue run
  // under the other's steps. They pay on a band only where they visit
  // enough fewer keys per row than the chosen tiles: on a long unmasked
  // loop they run at ~0.75x the speed of the wider tiles (plain, H200,
  // D = 64 and 128), and on the sliding window they measured 0.90-0.94x
  // the chosen tiles' time at 129 keys per row (keys visited 0.75x),
  // 0.97-0.98x at 257 (0.83x), 1.04-1.06x at 513 (0.90x) and 1.10-1.12x
  // at 1025 (0.94x).
  constexpr int64_t kNarrow = 64;
  // Measured at D = 64 and 128 only; a wider accumulator (Dv = 256) in one
  // of two CTAs' register shares would spill.
  if (std::max(headDimQK, headDimV) > 128)
    return chosen;
  if (2 * warpgroupTileBytes(kNarrow, kNarrow, headDimQK, headDimV,
                             elementBytes, /*stages=*/2) >
      sharedBytes)
    return chosen;
  int64_t narrowKeys = bandKeysPerRow(kNarrow, kNarrow, band);
  int64_t chosenKeys = bandKeysPerRow(chosen.blockM, chosen.blockN, band);
  if (100 * narrowKeys <= keyPercent * chosenKeys)
    return {kNarrow, kNarrow};
  return chosen;
}

int64_t fitTileToBlock(int64_t tile, int64_t block) {
  // Whole warpgroups (64 rows) first, then halves down to one mma tile.
  while (tile > 16 && block % tile != 0)
    tile = tile > 64 ? tile - 64 : tile / 2;
  return tile;
}

Tiles chooseBackwardTiles(int64_t headDimQK, int64_t headDimV, int64_t blockM,
                          int64_t blockN, bool warpgroups) {
  // BLOCK_N = 64 keys as FlashAttention-2's sm_80 backward: the dK/dV kernel
  // keeps both accumulators (BLOCK_N x D f32 each, 16 rows per warp: D
  // floats per thread together) plus S and dP in registers. At D <= 64 there
  // is room for 128-row Q blocks over the same 4 warps (two m16 tiles per
  // warp): each B fragment then feeds two mmas, halving the shared-memory
  // reads of S and dP per FLOP (measured on the H200: +8% fwd+bwd without a
  // mask band, level with causal, whose diagonal blocks grow). At D = 128
  // that spills ~400 bytes per thread, and at D = 256 the accumulators alone
  // fill the register file (the kernel spills even at 64 x 64; a warp layout
  // splitting columns would not). wgmma takes 64 rows per warpgroup, one
  // m16 tile per warp: with 128-row blocks over 4 warps every product of
  // the D = 64 kernels stayed on mma.sync (measured on the H100: 64-row
  // blocks on wgmma 1.17-1.22x fwd+bwd of those).
  int64_t defaultM =
      !warpgroups && std::max(headDimQK, headDimV) <= 64 ? 128 : 64;
  return {blockM > 0 ? blockM : defaultM, blockN > 0 ? blockN : 64};
}

int64_t chooseAtomicKeyBlock(int64_t headDimQK, int64_t headDimV) {
  // 128 keys per CTA over two consumer warpgroups (FlashAttention-3's
  // dK/dV CTA), dQ = dS K split by columns between them and added to L2 by
  // bulk reductions: at D = 128 (each warpgroup's dK and dV of 64 keys fill
  // 128 registers per thread) measured 1.00-1.12x the two-kernel backward
  // on the H100 for N = 2k-16k, plain and causal; at D = 64, once dQ's
  // accumulator was kept in core order (tgpu-bulk-reductions), 1.01-1.10x
  // on an H200 (0.87-1.03x before, the staging and the reductions
  // outweighing the products). D = 96 (0.87-1.03x then) is not measured
  // since; other head dims are not marked: not measured, and some
  // (Dqk != Dv, a share of 112 columns) have no 128-key atomic lowering.
  // docs/performance.md has the runs.
  return headDimQK == headDimV && (headDimQK == 64 || headDimQK == 128) ? 128
                                                                        : 0;
}

int64_t chooseAtomicQueryBlock(AttentionOp op) {
  // The atomic dK/dV kernel at D = 64 steps over 64 queries (one m64 wgmma
  // tile of Sᵀ per consumer warpgroup). 128 queries per step double each
  // product's N for the same waits, barriers and row bookkeeping (plain's
  // step: 625 SASS instructions per 64 queries, 1,017 per 128) and fit the
  // 240 registers only when the step holds no per-element tile beyond Sᵀ
  // and dPᵀ: measured on an H200 (forward + backward over 64 queries,
  // N = 2k-16k) 0.96-0.99x plain's time, backward alone 0.95-0.98x; causal
  // (its diagonal steps' positions: 192 bytes of spills) 0.97-1.04x, and
  // softcap and ALiBi spill ~1 KB. So: MHA without a band, mods, dropout,
  // block-sparse lists, a varlen batch or a paged cache, at D = 64 (the
  // atomic schedule's head dims; D = 128's accumulators leave no room).
  // docs/performance.md has the runs.
  // (attn-infer-mask-bounds, before or after this pass, gives every op a
  // band: one without bounds counts as none.)
  BandAttr band = op.getKvBandAttr();
  bool plainStep =
      !op.hasScoreMod() && !op.hasMaskMod() &&
      op.getCausal() == CausalAlignment::none &&
      (!band || (band.getLower().empty() && band.getUpper().empty())) &&
      !op.hasDropout() && op.getGqaGroup() == 1 && !op.getSparseBlocks() &&
      !op.getVarlen() && !op.getPageSize();
  return plainStep && op.getQkHeadDim() == 64 && op.getVHeadDim() == 64 ? 128
                                                                        : 0;
}

int64_t chooseTwoKernelKeyBlock(int64_t headDimQK, int64_t headDimV) {
  // At D = 128 the 64-key dK/dV kernel (one consumer warpgroup, two CTAs
  // per SM, 232 registers) holds dK and dV in 128 registers per thread, and
  // ptxas spills beside them: 24-35 local loads per step in its hottest
  // loop. 128 keys over two consumer warpgroups (one CTA per SM, 240
  // registers each, sharing each step's Q and dO tile) spill 11-14, and
  // measured on an H200 (forward + backward over the 64-key schedule, N =
  // 2k-16k) 0.90-0.91x plain, 0.89-0.94x causal, 0.89-0.95x GQA causal;
  // but 1.03-1.04x a sliding window, whose key blocks meet few query
  // blocks (convert-attn-to-tile-backward keeps windows at block-n). At
  // D = 64, where nothing spills, 0.96-1.08x (causal faster, plain level,
  // GQA and windows slower): not taken. docs/performance.md has the runs.
  return headDimQK == 128 && headDimV == 128 ? 128 : 0;
}

namespace {

struct AttnChooseTiles : public impl::AttnChooseTilesBase<AttnChooseTiles> {
  using Base::Base;
  void runOnOperation() override {
    if (arch != "sm_80" && arch != "sm_90a") {
      getOperation().emitError()
          << "arch must be sm_80 or sm_90a, got '" << arch << "'";
      return signalPassFailure();
    }
    if (program != "forward" && program != "backward") {
      getOperation().emitError()
          << "program must be forward or backward, got '" << program << "'";
      return signalPassFailure();
    }
    if (blockM < 0 || blockN < 0 || sharedMemoryBytes < 0) {
      getOperation().emitError()
          << "block-m, block-n and shared-memory-bytes must not be negative";
      return signalPassFailure();
    }
    int64_t shared = sharedMemoryBytes > 0 ? int64_t(sharedMemoryBytes)
                                           : defaultSharedMemoryBytes(arch);
    getOperation().walk([&](AttentionOp op) {
      int64_t dqk = op.getQkHeadDim(), dv = op.getVHeadDim();
      // score_mod(score, b, h, q, kv, ...), mask_mod(b, h, q, kv, ...).
      auto readsPositions = [](Region &mod, unsigned q) {
        return !mod.empty() && (!mod.getArgument(q).use_empty() ||
                                !mod.getArgument(q + 1).use_empty());
      };
      // A 2-D tile of indices or of dropout's uniforms per step.
      bool elementTile = readsPositions(op.getScoreMod(), 3) ||
                         readsPositions(op.getMaskMod(), 2) || op.hasDropout();
      int64_t elementBytes = op.getElementType().getIntOrFloatBitWidth() / 8;
      Tiles tiles =
          program == "backward"
              ? chooseBackwardTiles(dqk, dv, blockM, blockN, arch == "sm_90a")
          : arch == "sm_90a"
              ? chooseWarpgroupForwardTiles(shared, dqk, dv, elementBytes,
                                            blockM, blockN, elementTile)
              : chooseForwardTiles(shared, dqk, dv, elementBytes, blockM,
                                   blockN);
      // A narrow diagonal band (a sliding window): smaller tiles where
      // they visit enough fewer keys per row.
      // Not for GQA: 64-row prefill tiles leave no decode program, whose
      // rows pack a KV group's heads (convert-attn-to-tile gqa-pack).
      if (program == "forward" && arch == "sm_90a" && narrowBandTiles &&
          blockM <= 0 && blockN <= 0 && !op.getSparseBlocks() &&
          op.getGqaGroup() == 1)
        if (auto band = diagonalBand(op.getKvBandAttr()))
          tiles = chooseNarrowBandTiles(tiles, *band, shared, dqk, dv,
                                        elementBytes, narrowBandKeyPercent);
      // Block-sparse: a tile lies in one mask block, so the tiles divide the
      // mask's blocks (given tiles that do not are the lowering's error).
      if (auto blocks = op.getSparseBlocks()) {
        if (blockM <= 0)
          tiles.blockM = fitTileToBlock(tiles.blockM, blocks->first);
        if (blockN <= 0)
          tiles.blockN = fitTileToBlock(tiles.blockN, blocks->second);
      }
      Builder b(op);
      op->setAttr(attrs::kBlockM, b.getI64IntegerAttr(tiles.blockM));
      op->setAttr(attrs::kBlockN, b.getI64IntegerAttr(tiles.blockN));
      // The backward's keys per dK/dV program where more than block-n
      // measured faster, for the atomic schedule and for the two-kernel
      // one (a block-sparse variant's dK/dV tile lies in one mask block).
      if (program == "backward" && arch == "sm_90a") {
        auto mark = [&](StringRef name, int64_t keys) {
          if (auto blocks = op.getSparseBlocks();
              blocks && keys && blocks->second % keys != 0)
            keys = 0;
          if (keys)
            op->setAttr(name, b.getI64IntegerAttr(keys));
        };
        mark(attrs::kAtomicKeyBlock, chooseAtomicKeyBlock(dqk, dv));
        if (blockM <= 0)
          if (int64_t rows = chooseAtomicQueryBlock(op))
            op->setAttr(attrs::kAtomicQueryBlock, b.getI64IntegerAttr(rows));
        mark(attrs::kTwoKernelKeyBlock, chooseTwoKernelKeyBlock(dqk, dv));
      }
    });
  }
};

} // namespace
} // namespace kiln::attn
