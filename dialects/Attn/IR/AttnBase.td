//===- AttnBase.td - attn dialect, enums and attributes ----*- tablegen -*-===//
//
// The `attn` dialect is Kiln's user-facing level: one op specifies an attention
// kernel (FlexAttention's model: score_mod / mask_mod regions written with
// arith and math ops).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ATTN_BASE
#define KILN_ATTN_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::kiln::attn";
  let summary = "Attention specifications: shapes, scale, causality, score/mask mods";
  let description = [{
    An `attn.attention` op describes *what* attention a kernel computes; the
    passes in `compiler/Conversion/AttnToTile` decide *how* (the blocked
    FlashAttention-2 loop with a base-2 online softmax).
  }];
  // Attributes stay in the op's dictionary so that the custom printer can
  // show them as one readable `{...}` block.
  let usePropertiesForAttributes = 0;
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect"];
}

def Attn_CausalAlignment : I32EnumAttr<"CausalAlignment",
    "which diagonal a causal mask keeps when Lq != Lk", [
      I32EnumAttrCase<"none", 0>,
      // Query i sees keys j <= i (FlashAttention 1.x, PyTorch `is_causal`).
      I32EnumAttrCase<"top_left", 1>,
      // Query i sees keys j <= i + Lk - Lq (FlashAttention >= 2.1; decoding).
      I32EnumAttrCase<"bottom_right", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kiln::attn";
}

def Attn_CausalAttr : EnumAttr<Attn_Dialect, Attn_CausalAlignment, "causal"> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_CaptureAttr : AttrDef<Attn_Dialect, "Capture"> {
  let mnemonic = "capture";
  let summary = "an extra tensor read by score_mod / mask_mod";
  let description = [{
    Declares a tensor the mods capture (ALiBi slopes, document ids, a bias
    table). `dims` names each dimension by a problem symbol (`batch`,
    `heads`, `kv_heads`, `seq_q`, `seq_kv`) or gives it as an integer, so
    that drivers can allocate and validate it:
    `#attn.capture<"slopes", memref<?xf32>, ["heads"]>`.
  }];
  let parameters = (ins "::mlir::StringAttr":$name,
                        "::mlir::MemRefType":$type,
                        "::mlir::ArrayAttr":$dims);
  let assemblyFormat = "`<` $name `,` $type `,` $dims `>`";
  let genVerifyDecl = 1;
}

def Attn_KVBoundAttr : AttrDef<Attn_Dialect, "KVBound"> {
  let mnemonic = "kv_bound";
  let summary = "an affine bound on the key index: q_coeff*q + offset (+ Lk - Lq)";
  let parameters = (ins "int64_t":$q_coeff, "int64_t":$offset, "bool":$diag);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Attn_BandAttr : AttrDef<Attn_Dialect, "Band"> {
  let mnemonic = "band";
  let summary = "keys a query may see: max(lower) <= kv <= min(upper)";
  let description = [{
    Result of `attn-infer-mask-bounds`. Every key a query `q` keeps lies in
    `[max_i lower_i(q), min_j upper_j(q)]`; each bound is non-decreasing in
    `q` (its `q_coeff` is 0 or 1). When `exact` is true the mask *is* that
    band (plus `kv < Lk`), so KV blocks inside it need no per-element mask.
  }];
  let parameters = (ins "::mlir::ArrayAttr":$lower, "::mlir::ArrayAttr":$upper,
                        "bool":$exact);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // KILN_ATTN_BASE
