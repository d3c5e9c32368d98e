//===- AttnOps.td - attn dialect operations ----------------*- tablegen -*-===//

#ifndef KILN_ATTN_OPS
#define KILN_ATTN_OPS

include "dialects/Attn/IR/AttnBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Attn_AttentionOp : Attn_Op<"attention",
    [Symbol, IsolatedFromAbove]> {
  let summary = "an attention kernel: softmax(score_mod(scale * Q K^T) masked) V";
  let description = [{
    Specifies one attention variant. Q is `[B, Lq, H, D_qk]`, K is
    `[B, Lk, H / gqa_group, D_qk]`, V is `[B, Lk, H / gqa_group, D_v]`, the
    output is `[B, Lq, H, D_v]` and the log-sum-exp `[B, H, Lq]` (natural log).

    Attributes: `qk_head_dim`, `v_head_dim`, `element_type` (bf16 or f16),
    `scale` (default `1/sqrt(qk_head_dim)`), `causal`
    (`#attn.causal<top_left|bottom_right>`), `gqa_group` (query heads per KV
    head), `captures` (extra tensors the mods read), `page_size` (K and V
    in a paged KV cache: pools `[P, page_size, H / gqa_group, D]` read
    through a block table `[B, max_pages]` of i32 page numbers, with each
    sequence's key count in `kv_lens` `[B]` of i32), `dropout_p` (the
    probability that dropout zeroes an attention weight: each P[q, kv] is
    kept with probability 1 - p and kept weights are scaled by 1 / (1 - p);
    the bits come from Philox4x32-10 keyed by the run's `dropout_rng` tensor
    `[2]` of i64, (seed, offset), and by (batch, head, q, kv), so the
    backward regenerates the forward's mask; `reference/Philox.h` defines
    them), `dropout_bits` (16, the default, or 8: the width of each
    weight's uniform; 8 bits, as FlashAttention-2 draws them, take half the
    Philox calls and round p to a multiple of 1/256), `varlen` (a packed batch of sequences of different lengths, as
    FlashAttention's varlen API: Q and the output `[T_q, H, D]`, K and V
    `[T_kv, H / gqa_group, D]`, the log-sum-exp `[H, T_q]`, sequence b the
    rows `cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1` of Q and
    `cu_seqlens_kv[b] ..` of K and V, two `[B + 1]` tensors of i32; the mods
    see b and positions within the sequence, causal aligns per sequence).
    With `page_size` too, only the queries are packed (`cu_seqlens_q`): K
    and V are the paged cache, each sequence's keys counted by `kv_lens`
    (chunked prefill). `block_sparse = array<i64: QB, KB>` (FlexAttention's
    BlockMask, the seeds' Algorithm 5): the run passes, per (batch, query
    head, block of QB queries), the KV blocks of KB keys to visit as two
    lists: `kv_num_blocks` `[B, H, ceil(Lq / QB)]` and `kv_indices`
    `[B, H, ceil(Lq / QB), ceil(Lk / KB)]` of i32 for partial blocks (the
    mask, causality and the mask_mod applied), `full_kv_num_blocks` and
    `full_kv_indices` (same shapes) for full blocks (only keys past Lk
    masked); keys of blocks on neither list are not visited. The backward
    takes the transposed lists too `q_num_blocks` `[B, H, ceil(Lk / KB)]`,
    `q_indices` `[B, H, ceil(Lk / KB), ceil(Lq / QB)]`, `full_q_num_blocks`
    and `full_q_indices`, which must describe the same blocks.

    `score_mod(%score: f32, %b, %h, %q_idx, %kv_idx: index, captures...)`
    yields the new score (applied after scaling, as in FlexAttention);
    `mask_mod(%b, %h, %q_idx, %kv_idx: index, captures...)` yields `i1`
    (true = keep). Both are written with scalar `arith` / `math` ops and
    `memref.load` from the captures.

    ```mlir
    attn.attention @softcap {qk_head_dim = 64, v_head_dim = 64,
                             element_type = bf16, causal = #attn.causal<top_left>}
      score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) {
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %r = arith.mulf %t, %cap : f32
        attn.yield %r : f32
      }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    ConfinedAttr<I64Attr, [IntPositive]>:$qk_head_dim,
    ConfinedAttr<I64Attr, [IntPositive]>:$v_head_dim,
    TypeAttr:$element_type,
    OptionalAttr<F64Attr>:$scale,
    DefaultValuedAttr<Attn_CausalAttr, "CausalAlignment::none">:$causal,
    DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>, "1">:$gqa_group,
    OptionalAttr<TypedArrayAttrBase<Attn_CaptureAttr, "captured tensors">>:$captures,
    OptionalAttr<Attn_BandAttr>:$kv_band,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$page_size,
    OptionalAttr<F64Attr>:$dropout_p,
    OptionalAttr<I64Attr>:$dropout_bits,
    UnitAttr:$varlen,
    OptionalAttr<DenseI64ArrayAttr>:$block_sparse);
  let regions = (region MaxSizedRegion<1>:$score_mod, MaxSizedRegion<1>:$mask_mod);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the explicit one or 1/sqrt(qk_head_dim).
    double getEffectiveScale();
    bool hasScoreMod() { return !getScoreMod().empty(); }
    bool hasMaskMod() { return !getMaskMod().empty(); }
    /// Dropout: whether the variant has it (dropout_p > 0), and an element
    /// is kept when its uniform of getDropoutWidth() bits (dropout_bits: 16
    /// or 8) is below getDropoutThreshold() = round((1 - p) * 2^bits);
    /// kept weights are scaled by getDropoutScale() = 2^bits / threshold,
    /// so the mask's mean is 1.
    bool hasDropout();
    unsigned getDropoutWidth();
    uint32_t getDropoutThreshold();
    double getDropoutScale();
    /// Captured tensor declarations, empty when there are none.
    ::llvm::SmallVector<CaptureAttr> getCaptureDecls();
    /// The types the regions' trailing block arguments must have.
    ::llvm::SmallVector<::mlir::Type> getCaptureTypes();
    /// block_sparse's (query rows, keys) per mask block; nullopt without.
    std::optional<std::pair<int64_t, int64_t>> getSparseBlocks();
  }];
}

def Attn_YieldOp : Attn_Op<"yield",
    [Pure, Terminator, ReturnLike, HasParent<"AttentionOp">]> {
  let summary = "returns the value of a score_mod or mask_mod region";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // KILN_ATTN_OPS
