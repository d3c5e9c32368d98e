//===- Passes.td - attn dialect passes ---------------------*- tablegen -*-===//

#ifndef KILN_ATTN_PASSES
#define KILN_ATTN_PASSES

include "mlir/Pass/PassBase.td"

def AttnInferMaskBounds : Pass<"attn-infer-mask-bounds", "::mlir::ModuleOp"> {
  let summary = "Proves which keys each query can see from causal and affine mask_mods";
  let description = [{
    Reads `causal` and the `mask_mod` region of every `attn.attention` and
    attaches a `kv_band` attribute: bounds `q_coeff*q + offset (+ Lk - Lq)`
    with `q_coeff` in {0, 1} such that every kept key of query `q` lies in
    `[max(lower), min(upper)]`. The mask_mod must be a conjunction
    (`arith.andi`) of signed comparisons of affine index expressions;
    conjuncts it cannot read leave the band sound but mark it inexact.

    The attn-to-tile lowering turns the band into loop bounds (no work on
    empty KV blocks) and, when `exact`, into a masked/unmasked loop split
    (no per-element mask on full blocks).

    Before:
    ```mlir
    attn.attention @window {..., causal = #attn.causal<top_left>}
      mask_mod(%b: index, %h: index, %q: index, %kv: index) {
        %w = arith.constant 128 : index
        %d = arith.subi %q, %kv : index
        %in = arith.cmpi sle, %d, %w : index
        attn.yield %in : i1
      }
    ```
    After: the same op with
    `kv_band = #attn.band<lower = [#attn.kv_bound<q_coeff = 1, offset = -128, diag = false>],
                          upper = [#attn.kv_bound<q_coeff = 1, offset = 0, diag = false>],
                          exact = true>`.
  }];
  let dependentDialects = ["::kiln::attn::AttnDialect"];
}

def AttnGuardDivision : Pass<"attn-guard-division", "::mlir::ModuleOp"> {
  let summary = "Integer division by zero (and signed INT_MIN / -1) in the mods defined";
  let description = [{
    `arith` leaves an integer division or remainder by zero undefined, and a
    signed one of INT_MIN by -1: on the CPU backend they trap (the process
    dies of SIGFPE), on a GPU they return unspecified values. A mod may
    divide by a position (`q % kv` at kv = 0), so every `divsi`, `divui`,
    `remsi`, `remui`, `floordivsi` and `ceildivsi` in a `score_mod` or
    `mask_mod` whose divisor is not a constant other than 0 (and, signed,
    -1) gets a divisor of 1 in those cases and the result the float64
    reference computes (`compiler/Driver/ModInterpreter.cpp`): 0 where the
    divisor is 0; where it is -1, the wrapping negation of the dividend (a
    remainder: 0). Divisions by other constants, such as
    `examples/tree_verify.mlir`'s word index, are left alone.

    Before:
    ```mlir
    %r = arith.remui %q, %kv : index
    ```
    After:
    ```mlir
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.cmpi eq, %kv, %c0 : index
    %d = arith.select %z, %c1, %kv : index
    %q1 = arith.remui %q, %d : index
    %r = arith.select %z, %c0, %q1 : index
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttnSplitPositionDifferences
    : Pass<"attn-split-position-differences", "::mlir::ModuleOp"> {
  let summary = "Converts positions to float before subtracting them in the mods";
  let description = [{
    In the `score_mod` and `mask_mod` regions of every `attn.attention`,
    rewrites `sitofp(index_cast(subi(a, b)))` with `a` and `b` index
    arguments of the region (positions) into `subf(sitofp(index_cast(a)),
    sitofp(index_cast(b)))`. Over a tile the conversions then depend on the
    column or the row alone, which the GPU compiler computes once per column
    or row a thread holds instead of once per element (ALiBi's step: 986 ->
    853 SASS instructions per thread at 128 x 128, D = 128). Exact while
    positions stay below 2^24.

    Before:
    ```mlir
    %d = arith.subi %kv, %q : index
    %i = arith.index_cast %d : index to i64
    %f = arith.sitofp %i : i64 to f32
    ```
    After:
    ```mlir
    %ki = arith.index_cast %kv : index to i64
    %kf = arith.sitofp %ki : i64 to f32
    %qi = arith.index_cast %q : index to i64
    %qf = arith.sitofp %qi : i64 to f32
    %f = arith.subf %kf, %qf : f32
    ```
  }];
  let dependentDialects = ["::kiln::attn::AttnDialect", "::mlir::arith::ArithDialect"];
}

def AttnChooseTiles : Pass<"attn-choose-tiles", "::mlir::ModuleOp"> {
  let summary = "Chooses each attn.attention's tile sizes for a GPU target from its own head dims and dtype";
  let description = [{
    Sizes the blocked program of every `attn.attention` for `program`
    (forward or backward) on `arch`, from the op's `qk_head_dim`,
    `v_head_dim` and `element_type` and the target's shared memory, and
    records the choice on the op as `attn.block_m` / `attn.block_n`. The
    attn -> tile lowerings take their tiles from there (their own options,
    when positive, win). Because the choice is read from the IR, `kiln-opt
    -kiln-cuda-fwd-pipeline` and `kiln compile` give the same kernel for the
    same file.

    Forward on sm_80: BLOCK_M = 64 query rows (4 warps of 16 rows) and the
    largest BLOCK_N in {128, 64, 32, 16} whose Q, K and V tiles fit the
    shared memory and whose S tile and accumulator fit 160 floats per
    thread. Forward on sm_90a (wgmma): one CTA per SM of whole
    warpgroups; the larger BLOCK_N in {128, 64}, then the most warpgroups
    (BLOCK_M = 64 per warpgroup, up to 256) whose per-thread registers (S,
    P, the accumulator and ~32 more, plus BLOCK_N / 2 for the index tile of
    a score_mod or mask_mod that reads the query or key position) fit
    min(255, 65536 / threads) with 15% to spare, and whose Q, K, V tiles fit
    the shared memory.
    Backward: BLOCK_N = 64 keys and BLOCK_M = 128 query rows at head dims
    up to 64, 64 above (the dK/dV accumulators share the register file).
    `block-m` / `block-n` override either choice. Backward on sm_90a at
    Dqk = Dv = 64 or 128: also `attn.atomic_key_block = 128`, the atomic
    schedule with 128 keys per dK/dV program having measured faster there
    than the two-kernel one (convert-attn-to-tile-backward `schedule=auto`
    takes it; at D = 64 since dQ's accumulator is kept in core order,
    1.01-1.10x; 0.87-1.03x at D = 96 before that, so not there; other head
    dims unmeasured). At Dqk = Dv = 128 also `attn.two_kernel_key_block =
    128`: the two-kernel schedule's dK/dV kernel over 128 keys in two
    consumer warpgroups, where its 64-key kernel spills (0.89-0.95x the
    64-key schedule forward + backward on an H200; the backward
    conversion keeps windows and varlen batches at block-n).

    Forward on sm_90a with `narrow-band-tiles`: where the op's `kv_band`
    has lower and upper bounds that both move with q (q + lo <= kv <= q +
    hi, one alignment: a sliding window), 64 x 64 tiles (one consumer
    warpgroup, two CTAs per SM) where both head dims are at most 128, two
    such CTAs fit the shared memory, the op is not GQA (whose decode
    program packs a group's heads) and they visit at most `narrow-band-key-percent` % of the chosen tiles'
    keys per row (a tile of m rows from a multiple of n visits n *
    (floor((m - 1 + hi) / n) - floor(lo / n) + 1)): for 129 keys per row,
    192 keys in three blocks, the middle one unmasked, against two masked
    128-key blocks. Measured on an H200 (sliding windows of 129 to 1025
    keys, plain's long loops): 0.90-0.94x the time at 75% of the keys,
    0.97-0.98x at 83%, 1.04-1.06x at 90%.

    Before:
    ```mlir
    attn.attention @plain {qk_head_dim = 128, v_head_dim = 128, element_type = bf16}
    ```
    After (`program=forward arch=sm_90a`):
    ```mlir
    attn.attention @plain {attn.block_m = 192 : i64, attn.block_n = 128 : i64, ...}
    ```
  }];
  let options = [
    Option<"arch", "arch", "std::string", "\"sm_90a\"", "Target: sm_80 or sm_90a">,
    Option<"program", "program", "std::string", "\"forward\"",
           "The program the tiles are for: forward or backward">,
    Option<"blockM", "block-m", "int64_t", "0", "Query rows per program (0: chosen)">,
    Option<"blockN", "block-n", "int64_t", "0", "Keys per step (0: chosen)">,
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t", "0",
           "Shared memory per CTA (0: the arch's opt-in maximum)">,
    Option<"narrowBandTiles", "narrow-band-tiles", "bool", "true",
           "Forward on sm_90a: 64 x 64 tiles for a narrow diagonal band">,
    Option<"narrowBandKeyPercent", "narrow-band-key-percent", "int64_t", "85",
           "With narrow-band-tiles: only where they visit at most this "
           "percentage of the chosen tiles' keys per row">
  ];
  let dependentDialects = ["::kiln::attn::AttnDialect"];
}

#endif // KILN_ATTN_PASSES
