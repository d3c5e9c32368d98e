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
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "64", "Query rows per program">,
    Option<"blockN", "block-n", "int64_t", "64", "Keys per KV loop iteration">,
    Option<"splitMaskedBlocks", "split-masked-blocks", "bool", "true",
           "Split the KV loop into masked and unmasked parts using an exact kv_band">,
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
    `linalg.fill`, `tile.iota` an index `linalg.generic`, `tile.gather` a
    `tensor.generate` of loads. Elementwise arith/math on tiles is left for
    `convert-elementwise-to-linalg`; bufferization follows.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect"];
}

#endif // KILN_CONVERSION_PASSES
