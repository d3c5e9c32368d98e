//===- Passes.td - Kiln conversion passes ------------------*- tablegen -*-===//

#ifndef KILN_CONVERSION_PASSES
#define KILN_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertAttnToTile : Pass<"convert-attn-to-tile", "::mlir::ModuleOp"> {
  let summary = "Lowers each attn.attention to a FlashAttention-2 forward tile program";
  let description = [{
    Replaces every `attn.attention @v` by `func.func @v_fwd(%Q, %K, %V, %O,
    %LSE, captures...)`, a tile program for one (Q block, head, batch)
    instance:

    * one Q block per program (`tile.program_id 0`), a `scf.for` over KV
      blocks carrying the running row max `m`, row sum `l` and accumulator;
    * base-2 online softmax: scores are multiplied by `scale * log2(e)` once
      (a single constant when there is no score_mod; with one, the mod sees
      `scale * QK^T` as in FlexAttention and `log2(e)` follows), then `exp2`;
    * `score_mod` and `mask_mod` are inlined elementwise into the S tile
      (scalar ops become ops on tiles, captured reads become `tile.gather`);
    * keys at or past `Lk` are set to -inf before the row max, and a row
      whose max is still -inf uses 0 as its reference so that
      `exp2(-inf - -inf)` never makes a NaN; fully masked rows yield O = 0 and
      LSE = -inf;
    * with a `kv_band` (from `attn-infer-mask-bounds`), the KV loop starts and
      stops at the band, and when the band is exact it splits into masked
      edge loops and an unmasked middle loop.

    Output O is `acc / l` in the input element type; LSE is natural-log
    `[B, H, Lq]` f32.

    With `decode-rows=R` below the chosen `BLOCK_M`, a second program
    `@v_fwd_decode` with R-row blocks is lowered too, and the launch plan
    picks one per run (`tile.when`): `@v_fwd` when `seq_q > R`,
    `@v_fwd_decode` otherwise. Decoding and verify steps have few query rows;
    a prefill tile of 192 rows would spend its products on rows that do not
    exist. With GQA (`gqa_group` G dividing R) the decode program packs:
    one program per (block of R / G queries, KV head, batch), its R rows the
    group's G query heads of each query (`tile.view ... packed`), so K and
    V cross memory once per group instead of once per query head; mods see
    each row's own head.

    With `short-rows=R` below the chosen `BLOCK_M` and `short-keys=K`, a
    masked variant (`causal` or a `mask_mod`; not varlen, not block-sparse)
    also gets
    `@v_fwd_short` with R-row blocks, launched instead of `@v_fwd` when
    `seq_kv <= K` (a paged cache: its capacity, `max_pages` x page size;
    and the decode program does not run): a masked variant's
    tiles each carry masked edge steps whatever their length, which short
    sequences' tiles pay for on few steps, and shorter blocks spread
    unequal tiles more evenly over the GPU (docs/performance.md).
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "0",
           "Query rows per program (0: the op's attn.block_m from "
           "attn-choose-tiles, else 64)">,
    Option<"decodeRows", "decode-rows", "int64_t", "0",
           "Also lower a program with blocks of this many query rows for "
           "problems with at most that many (0: none; ignored unless below "
           "the chosen block-m)">,
    Option<"shortRows", "short-rows", "int64_t", "0",
           "Masked variants: also lower a program with blocks of this many "
           "query rows for problems with at most short-keys keys (0: none; "
           "ignored unless below the chosen block-m)">,
    Option<"shortKeys", "short-keys", "int64_t", "0",
           "The most keys (seq_kv; a paged cache's capacity) for which the "
           "short-rows program runs">,
    Option<"blockN", "block-n", "int64_t", "0",
           "Keys per KV loop iteration (0: the op's attn.block_n, else 64)">,
    Option<"splitMaskedBlocks", "split-masked-blocks", "bool", "true",
           "Split the KV loop into masked and unmasked parts using an exact kv_band">,
    Option<"gqaPack", "gqa-pack", "bool", "true",
           "GQA: the decode program's rows are (query, head) pairs of one "
           "KV group, so K/V tiles are read once per group">,
    Option<"wideDecodeRows", "wide-decode-rows", "int64_t", "0",
           "With gqa-pack: also lower a decode program of this many packed "
           "rows, run instead of the decode-rows one when a step's packed "
           "rows (seq_q * group) exceed decode-rows (0: none; ignored "
           "unless above decode-rows, at most the chosen block-m and a "
           "multiple of the group)">,
    Option<"wideDecodeKeys", "wide-decode-keys", "int64_t", "0",
           "Keys per KV step of the wide decode program (0: the chosen "
           "block-n; else a multiple of 64 no larger than it)">,
    Option<"visibleBelow", "visible-below", "bool", "true",
           "With split-masked-blocks: a mask_mod `kv < X || ...` with X "
           "uniform per program runs its blocks below X unmasked">,
    Option<"branchMaskedSteps", "branch-masked-steps", "bool", "true",
           "With split-masked-blocks, no upper bound but the key count and "
           "no score_mod: the full loop also runs the last (partial) key "
           "block, masking it in a branch, instead of a loop of its own">,
    Option<"staticMax", "static-max", "bool", "true",
           "A score_mod whose results lie in an interval narrow enough for "
           "P's element type (ScoreRange.h: soft-capping with cap <= 33 in "
           "bf16) takes the interval's top as every row's maximum: no row "
           "maximum, correction factor or rescaling per step">,
    Option<"staticMaxFlopPerSfu", "static-max-flop-per-sfu", "int64_t", "0",
           "With static-max: only where a score's two products take at "
           "least this many FLOP per SFU operation of the score (the "
           "softmax's exp2 and the score_mod's transcendental ops), i.e. "
           "where the special-function unit is not the step's bound (the "
           "row maximum's ALU work then spaces out the SFU's bursts); 0: "
           "everywhere">,
  ];
  let dependentDialects = ["::kiln::tile::TileDialect", "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"];
}

def ConvertAttnToTileBackward : Pass<"convert-attn-to-tile-backward", "::mlir::ModuleOp"> {
  let summary = "Derives the backward tile programs (dQ, dK, dV) of each attn.attention";
  let description = [{
    Adds three tile kernels next to each `attn.attention @v` (which it keeps,
    so `convert-attn-to-tile` can lower the forward afterwards), the
    deterministic two-kernel schedule of FlashAttention-2 (no atomics,
    12·N²d FLOPs):

    * `@v_bwd_preprocess(O, dO, D)`: `D = rowsum(dO ∘ O)` per query row;
    * `@v_bwd_dq(Q, K, V, dO, LSE, D, dQ, captures...)`: one Q block per
      program looping over KV blocks: P is recomputed from Q, K and the
      saved LSE (base 2 inside), `dP = dO Vᵀ`, `dS = P ∘ (dP − D)`, and
      `dQ = scale · dS K`;
    * `@v_bwd_dkdv(Q, K, V, dO, LSE, D, dK, dV, captures...)`: one KV block
      per program looping over the query heads of its KV head (GQA sums
      there) and over Q blocks: `dV += Pᵀ dO`, `dK += scale · dSᵀ Q`.

    A score_mod is differentiated with respect to the score (forward mode,
    op by op); `dS` is multiplied by that derivative. Masking is the
    forward's (keys past Lk, causal, mask_mod) and masked entries get
    `P = 0`, `dS = 0`; rows with LSE = −inf (no visible key) and padded query
    rows (LSE read as +inf) recompute `P = 0`, never NaN. Every product
    takes its operands in the input type (P and dS rounded to it, as
    FlashAttention-2 does) and accumulates in f32; gradients are written in
    the input type. The mask band proven by `attn-infer-mask-bounds` bounds
    both loops: the dQ kernel visits only the KV blocks its rows' band
    reaches (as the forward), the dK/dV kernel only the Q blocks whose band
    reaches its KV block (causal: about half the blocks). Visited blocks
    apply the per-element mask (the forward's full-block split is not done
    here).

    `schedule=atomic` selects the other schedule: no dQ kernel; the
    preprocess also zeroes an f32 dQ accumulator (head-major `[B, H, Lq, D]`,
    a query block one contiguous run; varlen: as the queries), the dK/dV
    kernel adds each block's `dS K` into it with `tile.atomic_add`,
    and
    `@v_bwd_dq_convert(dQacc, dQ)` scales the sum once and rounds it to the
    input type — 10·N²d
    FLOPs instead of 12 (S and dP are computed once, not twice), at the
    price of atomics and a summation order that varies between runs on a
    GPU.

    With `split-dkdv-above`, a spec whose head dims sum to more than it
    gets `@v_bwd_dk` (dK, and the atomic schedule's dQ share) and
    `@v_bwd_dv` (dV alone) in place of `@v_bwd_dkdv`, each recomputing S:
    one accumulator per kernel where the two would not fit a GPU thread's
    registers.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "0",
           "Query rows per step (0: the op's attn.block_m, else 64)">,
    Option<"blockN", "block-n", "int64_t", "0",
           "Keys per step (0: the op's attn.block_n, else 64)">,
    Option<"schedule", "schedule", "std::string", "\"two-kernel\"",
           "two-kernel (deterministic, 12 N^2 d FLOPs), atomic (one kernel "
           "with atomic dQ, 10 N^2 d FLOPs) or auto (atomic at the op's "
           "attn.atomic_key_block keys where attn-choose-tiles set it and "
           "capture gradients need not be deterministic, two-kernel "
           "elsewhere) or deterministic (the same bits in every run: the "
           "atomic schedule with ordered-dq where auto would take it at "
           "head dims of 128 and more, dense, with the producer, not GQA: "
           "where ordered adds measured no slower than two kernels; "
           "two-kernel elsewhere)">,
    Option<"keysByQueries", "keys-by-queries", "bool", "false",
           "dK/dV kernel: compute S^T = K Q^T, so P^T and dS^T are the "
           "plain lhs of dV's and dK's products (default: S = Q K^T and "
           "transposed-lhs products; measured faster on the H100)">,
    Option<"keyBlock", "key-block", "int64_t", "0",
           "Keys per dK/dV program (0: block-n, or the op's "
           "attn.atomic_key_block where schedule=auto picks the atomic "
           "schedule, or its attn.two_kernel_key_block in the two-kernel "
           "schedule with keys by queries, but for a window or a varlen "
           "batch); the split dK and dV programs keep block-n">,
    Option<"splitDkdvAbove", "split-dkdv-above", "int64_t", "-1",
           "Compute dK and dV in two kernels (@v_bwd_dk, @v_bwd_dv, each "
           "recomputing S) when the qk and v head dims sum to more than "
           "this (-1: never, 0: always): one accumulator per kernel where "
           "both would not fit a GPU thread's registers">,
    Option<"captureGradients", "capture-gradients", "bool", "false",
           "Also the gradients of the float captures the score_mod reads "
           "(tensors grad_<name>, f32, the capture's shape, added to "
           "atomically by the dQ kernel, or the dK kernel of the atomic "
           "schedule: the caller passes zeros)">,
    Option<"deterministicCaptureGradients",
           "deterministic-capture-gradients", "bool", "false",
           "Capture gradients (implies capture-gradients) that are the same "
           "bit for bit in every run: the kernel adds fixed-point integers "
           "into a zeroed i64 workspace grad_<name>_fixed, and a last kernel "
           "per capture writes grad_<name> from it">,
    Option<"producer", "producer", "bool", "false",
           "The GPU schedule will give the kernels a TMA producer warpgroup "
           "(sm_90a with warp specialization): the atomic schedule for GQA "
           "and the two-kernel schedule's attn.two_kernel_key_block were "
           "measured with one and are taken only then">,
    Option<"groupSteps", "group-steps", "bool", "true",
           "GQA's dK/dV kernel: one loop per range of Q blocks over all of "
           "the group's heads (the step's head from the induction "
           "variable), so its copies sit in top-level loops a producer "
           "warpgroup can feed; false: a loop over the heads around the "
           "ranges' loops (ablation)">,
    Option<"orderedDq", "ordered-dq", "bool", "false",
           "The atomic schedule's dQ shares added in a fixed order, so that "
           "dQ is the same bit for bit in every run: each tile.atomic_add "
           "gets a turn (the order in which the key blocks reach its Q "
           "block: under a band's upper bound key blocks numbered from the "
           "last program id down, Q blocks first to last; otherwise Q "
           "blocks last to first, turns by key block) and the dK/dV kernel "
           "tile.ordered_adds with a zeroed dq_turns workspace "
           "(tgpu-ordered-adds); a band with a lower bound, block-sparse "
           "lists and varlen batches are errors">,
    Option<"splitMaskedBlocks", "split-masked-blocks", "bool", "true",
           "Where the band is exact, split each kernel's loop into the "
           "blocks inside every row's band and inside both lengths (no "
           "mask) and the partial ones before and after them (masked), as "
           "the forward does; false: one masked loop">,
    Option<"branchMaskedSteps", "branch-masked-steps", "bool", "false",
           "With split-masked-blocks, no band bounds and no score_mod: the "
           "dK/dV kernel's full Q loop also runs the partial steps (the "
           "last Q block, a key block past Lk), masking them in a branch, "
           "as convert-attn-to-tile's option of the same name (opt-in: a "
           "third less compile time, 1-5% slower on an H200)">,
  ];
  let dependentDialects = ["::kiln::tile::TileDialect", "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"];
}

def ConvertTileToCPU : Pass<"convert-tile-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Lowers tile programs to linalg/tensor/memref/scf for the CPU JIT";
  let description = [{
    Gives every `tile.kernel` function a CPU schedule: program ids become
    function arguments and a `<name>_grid(args..., gx, gy, gz)` launcher
    (with a C interface) loops over the grid. Descriptors become strided
    memref subviews; `tile.load` becomes a guarded `tensor.generate` (fill
    outside the bounds), `tile.store` a guarded loop nest, `tile.dot` a
    `linalg.generic` contraction widening its inputs, `tile.reduce` a
    `linalg.reduce`, `tile.broadcast` a `linalg.broadcast`, `tile.splat` a
    `linalg.fill`, `tile.iota` an index `tensor.generate`, `tile.gather` a
    `tensor.generate` of loads. Elementwise arith/math on tiles is left for
    `convert-elementwise-to-linalg`; bufferization follows.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect"];
}

def ConvertTileToTileGPU : Pass<"convert-tile-to-tgpu", "::mlir::ModuleOp"> {
  let summary = "Gives tile programs the sm_80 GPU schedule: layouts, shared memory, cp.async, mma";
  let description = [{
    For every `tile.kernel` function:

    * each `tile.load` that feeds a `tile.dot` becomes a shared-memory buffer
      (`tgpu.shared_alloc`, rows padded by 16 bytes against bank conflicts;
      loads of the same descriptor share one buffer) filled by
      `tgpu.copy_async`, bracketed by barriers: one so no warp still reads
      the old contents, one after `tgpu.async_wait` to publish the new;
    * each `tile.dot` becomes `tgpu.mma` (A from shared memory or, for P,
      from registers; B from shared memory);
    * every register tile gets a layout: 2-D tiles `#tgpu.mma<warps>`
      (with fewer than 16 rows per warp, `#tgpu.mma<warps, col_groups>`:
      the warps in groups, each with all rows of its share of the columns;
      row reductions, broadcasts, Philox bits and a register product lhs on
      such a tile are errors), 1-D row vectors `#tgpu.rows<warps>`.

    The function records `tgpu.num_warps`, `tgpu.arch` and
    `tgpu.shared_bytes` for the emitter and the launcher.

    ```mlir
    %k = tile.load %kd[%j, %c0] fill 0.0 : bf16 : ... -> tensor<64x64xbf16>
    %s = tile.dot %q, %k {transpose_rhs} : ... -> tensor<64x64xf32>
    ```
    becomes
    ```mlir
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %kbuf : !tile.desc<?x64xbf16>, memref<64x64xbf16, strided<[72, 1]>, 3>
    tgpu.async_wait
    tgpu.barrier
    %s = tgpu.mma %qbuf, %kbuf, %zero {transpose_rhs} : ... -> tensor<64x64xf32, #tgpu.mma<warps = 4>>
    ```
  }];
  let options = [
    Option<"arch", "arch", "std::string", "\"sm_90a\"", "Target architecture: sm_80 or sm_90a">,
    Option<"numWarps", "num-warps", "int64_t", "0",
           "Warps per CTA (0: 16 rows per warp of the kernel's row block: "
           "tile.block_m, or min(tile.block_m, tile.block_n) for backward "
           "kernels)">,
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t", "232448",
           "Shared memory a CTA may use on the target (sm_90: 227 KiB)">,
    Option<"fastMath", "fast-math", "bool", "true",
           "Mark the kernels tgpu.fast_math: math.tanh and math.exp print as "
           "the hardware approximations (bf16/fp16 outputs do not see their "
           "error)">,
    Option<"atomicProductColumns", "atomic-product-columns", "int64_t", "32",
           "Split a tile.atomic_add of a product wider than this into column "
           "chunks (0: never); 32 keeps the atomic backward's dQ share at 16 "
           "f32 registers per thread per m16 tile">,
    Option<"atomicProductWholeColumns", "atomic-product-whole-columns",
           "int64_t", "0",
           "Keep a tile.atomic_add of a product at most this wide whole even "
           "above atomic-product-columns (sm_90a pipelines: 128, so that "
           "wgmma reads K's whole swizzled tile for dS K)">,
    Option<"philoxLanePairs", "philox-lane-pairs", "bool", "true",
           "Mark the kernels with a tile.philox of keys_by_queries "
           "tgpu.philox_lane_pairs: such a draw (the dK/dV kernel's dropout) "
           "runs one Philox call "
           "per 8 elements, the lanes of keys r and r ^ 1 each running one "
           "query column's call and exchanging halves by a shuffle, instead "
           "of one call per 4 elements (false: the ablation)">,
  ];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect", "::mlir::memref::MemRefDialect"];
}

#endif // KILN_CONVERSION_PASSES
