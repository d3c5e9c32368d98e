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

#endif // KILN_ATTN_PASSES
