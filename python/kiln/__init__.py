"""Kiln from PyTorch: attention variants written in Kiln's `attn` dialect,
run as a torch custom op on CPU (the CPU backend) and CUDA tensors.

    import kiln
    causal = kiln.Variant.from_file("examples/causal.mlir")
    out = kiln.attention(q, k, v, causal)            # q [B, Lq, H, D], bf16/fp16
    out.float().sum().backward()                     # dQ, dK, dV by Kiln's backward

The op is `torch.ops.kiln.attention` (and `kiln.attention_backward`), in C++
(python/csrc/, built into kiln._C): it traces under
torch.compile(fullgraph=True) and passes torch.library.opcheck. Called
directly, its errors are RuntimeErrors whose message starts with "kiln: "
(the functions here raise them as KilnError).
"""
import os
from dataclasses import dataclass
from typing import Optional, Sequence

import torch

from ._capi import KilnError
from . import mods, ops
from . import _C  # after ops, which loads libkiln.so first (see ops.py)

__all__ = ["Variant", "attention", "attention_with_lse", "make_dropout_rng", "paged_attention", "paged_attention_with_lse",
           "varlen_attention", "varlen_attention_with_lse", "block_sparse_attention",
           "block_sparse_attention_with_lse", "create_block_mask", "flex_attention", "flex_variant", "KilnError"]


@dataclass(frozen=True)
class Variant:
    """An attn.attention variant: its MLIR text and, when the text holds
    several, which one."""

    text: str
    name: Optional[str] = None

    @staticmethod
    def from_file(path, name=None):
        with open(path) as f:
            return Variant(f.read(), name)


def _variant(variant):
    if type(variant) is Variant:
        return variant
    if isinstance(variant, Variant):
        return variant
    if isinstance(variant, str):
        return Variant(variant)
    raise TypeError(f"variant must be a kiln.Variant or MLIR text, got {type(variant).__name__}")


# kiln._C.attention: the op through the dispatcher without torch.ops'
# generic binding, for eager calls on plain tensors ($KILN_DIRECT_CALL=0: the
# ablation, always torch.ops). nn.Parameter disables __torch_function__, so
# it counts as plain.
_DIRECT = os.environ.get("KILN_DIRECT_CALL", "1") != "0"
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)
_is_compiling = torch.compiler.is_compiling
_function_mode = torch._C._is_torch_function_mode_enabled


def _plain(*groups):
    """Whether a call may take kiln._C's direct path: eager, no torch
    function mode, and every tensor (in `groups`, sequences of tensors) of a
    plain type (other subclasses' Python overrides need torch.ops' generic
    binding)."""
    if not _DIRECT or _is_compiling() or _function_mode():
        return False
    for group in groups:
        for t in group:
            if type(t) not in _PLAIN_TYPES:
                return False
    return True


def _kiln_error(e):
    """A C++ op's RuntimeError("kiln: ...") as KilnError; others as they are."""
    message = str(e)
    return KilnError(message[len("kiln: "):]) if message.startswith("kiln: ") else e


def _attention_op(q, k, v, captures, variant, name, dropout_p, dropout_rng, cu_seqlens):
    """torch.ops.kiln.attention (a C++ op, python/csrc/); its errors, which
    reach Python as RuntimeError("kiln: ..."), as KilnError."""
    args = (q, k, v, captures, variant, name, dropout_p, dropout_rng, cu_seqlens)
    try:
        if _plain((q, k, v), captures, dropout_rng, cu_seqlens):
            return _C.attention(*args)
        return torch.ops.kiln.attention(*args)
    except RuntimeError as e:
        raise _kiln_error(e) from None


def _paged_attention_op(q, k_pages, v_pages, block_table, kv_lens, captures, variant, name, cu_seqlens_q):
    """torch.ops.kiln.paged_attention, as _attention_op."""
    args = (q, k_pages, v_pages, block_table, kv_lens, captures, variant, name, cu_seqlens_q)
    try:
        if _plain((q, k_pages, v_pages, block_table, kv_lens), captures, cu_seqlens_q):
            return _C.paged_attention(*args)
        return torch.ops.kiln.paged_attention(*args)
    except RuntimeError as e:
        raise _kiln_error(e) from None


def make_dropout_rng(device=None, generator=None):
    """A fresh dropout_rng: an int64 tensor [2] (seed, offset) on `device`,
    drawn from torch's generator (on the device, so no host sync)."""
    return torch.randint(-2**63, 2**63 - 1, (2,), dtype=torch.int64, device=device, generator=generator)


def attention_with_lse(q, k, v, variant, captures: Sequence[torch.Tensor] = (), dropout_p: float = 0.0,
                       dropout_rng: Optional[torch.Tensor] = None):
    """(out, lse): attention of the variant, and the natural-log
    log-sum-exp of each query row's scores [B, H, Lq] (not differentiated;
    before dropout). See attention() for dropout."""
    v_ = _variant(variant)
    if dropout_p > 0 and dropout_rng is None:
        dropout_rng = make_dropout_rng(q.device)
    return _attention_op(q, k, v, list(captures), v_.text, v_.name or "", float(dropout_p),
                         [] if dropout_rng is None else [dropout_rng], [])


def attention(q, k, v, variant, captures: Sequence[torch.Tensor] = (), dropout_p: float = 0.0,
              dropout_rng: Optional[torch.Tensor] = None):
    """out [B, Lq, H, Dv] = softmax(score_mod(scale * Q Kᵀ) masked by
    mask_mod) V, as the variant defines it. `captures` are the tensors its
    mods read, in its order. dropout_p > 0 zeroes each attention weight with
    that probability (and scales the kept ones by 1 / (1 - p)); the mask is a
    function of `dropout_rng` (int64 [2], seed and offset; a fresh one from
    kiln.make_dropout_rng() when not given) and of each weight's position, and the
    backward regenerates it. A variant whose text sets dropout_p needs
    dropout_rng."""
    # attention_with_lse's body, not a call to it: one Python frame less on
    # every call's path.
    v_ = _variant(variant)
    if dropout_p > 0 and dropout_rng is None:
        dropout_rng = make_dropout_rng(q.device)
    return _attention_op(q, k, v, list(captures), v_.text, v_.name or "", float(dropout_p),
                         [] if dropout_rng is None else [dropout_rng], [])[0]


def varlen_attention_with_lse(q, k, v, cu_seqlens_q, cu_seqlens_kv, variant, captures: Sequence[torch.Tensor] = (),
                              dropout_p: float = 0.0, dropout_rng: Optional[torch.Tensor] = None):
    """(out, lse) of the variant on a packed batch of sequences of different
    lengths, as FlashAttention's varlen API takes it: q [T_q, H, D], k and v
    [T_kv, H / G, D] / [..., Dv], sequence b the rows cu_seqlens_q[b] ..
    cu_seqlens_q[b + 1] - 1 of q and cu_seqlens_kv[b] .. of k and v (int32
    [B + 1] each, on q's device); out [T_q, H, Dv], lse [H, T_q]. One launch
    for all sequences, no padding; the mods see b and positions within the
    sequence, and bottom-right causal aligns with each sequence's lengths.
    Differentiable in q, k, v (and float captures), with dropout as
    attention(). No maximum length is needed. Offsets on the CPU are
    checked (non-decreasing, within the packed rows); on the GPU they are
    clamped into the arrays, so bad ones read no memory outside them but
    give wrong sequences."""
    v_ = _variant(variant)
    if dropout_p > 0 and dropout_rng is None:
        dropout_rng = make_dropout_rng(q.device)
    return _attention_op(q, k, v, list(captures), v_.text, v_.name or "", float(dropout_p),
                         [] if dropout_rng is None else [dropout_rng], [cu_seqlens_q, cu_seqlens_kv])


def varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_kv, variant, captures: Sequence[torch.Tensor] = (),
                     dropout_p: float = 0.0, dropout_rng: Optional[torch.Tensor] = None):
    """out [T_q, H, Dv] of varlen_attention_with_lse."""
    return varlen_attention_with_lse(q, k, v, cu_seqlens_q, cu_seqlens_kv, variant, captures, dropout_p,
                                     dropout_rng)[0]


def paged_attention_with_lse(q, k_pages, v_pages, block_table, kv_lens, variant,
                             captures: Sequence[torch.Tensor] = (), cu_seqlens_q: Optional[torch.Tensor] = None):
    """(out, lse) of the variant with K and V in a paged KV cache (vLLM's and
    FlashInfer's layout): k_pages and v_pages [pages, page_size, H / G, D],
    block_table [B, max_pages] and kv_lens [B] (int32): key j of sequence b
    is row j % page_size of page block_table[b, j // page_size], and the
    sequence has kv_lens[b] keys (bottom-right causal aligns with it). q is
    [B, Lq, H, D]: the new tokens of a decode or verify step; or, with
    cu_seqlens_q (int32 [B + 1]), [T, H, D]: each sequence's new tokens
    packed as varlen_attention packs them (chunked prefill), out [T, H, Dv]
    and lse [H, T]. Forward only; compiled once per page size."""
    v_ = _variant(variant)
    return _paged_attention_op(q, k_pages, v_pages, block_table, kv_lens, list(captures), v_.text, v_.name or "",
                               [] if cu_seqlens_q is None else [cu_seqlens_q])


def paged_attention(q, k_pages, v_pages, block_table, kv_lens, variant, captures: Sequence[torch.Tensor] = (),
                    cu_seqlens_q: Optional[torch.Tensor] = None):
    """out of paged_attention_with_lse: [B, Lq, H, Dv], or [T, H, Dv] with cu_seqlens_q."""
    return paged_attention_with_lse(q, k_pages, v_pages, block_table, kv_lens, variant, captures, cu_seqlens_q)[0]


def _transposed_lists(num, idx, columns):
    """(num, indices) of the transposed lists of (num, idx): per block of
    the other side, the blocks that list it, ascending."""
    listed = torch.arange(idx.shape[-1], device=idx.device) < num[..., None].to(torch.int64)
    at = torch.where(listed & (idx >= 0) & (idx < columns), idx.to(torch.int64), columns)
    dense = torch.zeros(*idx.shape[:-1], columns + 1, dtype=torch.int32, device=idx.device)
    dense.scatter_(-1, at, 1)
    dense = dense[..., :columns].transpose(-1, -2)
    order = torch.sort(1 - dense, dim=-1, stable=True).indices.to(torch.int32)
    return dense.sum(-1, dtype=torch.int32), order


def _block_lists(block_mask, lk):
    """The eight lists (kv_num_blocks, kv_indices, full_kv_num_blocks,
    full_kv_indices, then the transposed q_ ones) and (QB, KB) of a
    FlexAttention BlockMask or of a tuple of the first four and (QB, KB);
    missing full lists (None) become empty ones, missing transposed ones are
    computed."""
    if hasattr(block_mask, "kv_num_blocks"):
        lists = [block_mask.kv_num_blocks, block_mask.kv_indices, block_mask.full_kv_num_blocks,
                 block_mask.full_kv_indices, block_mask.q_num_blocks, block_mask.q_indices,
                 block_mask.full_q_num_blocks, block_mask.full_q_indices]
        size = block_mask.BLOCK_SIZE
    else:
        *lists, size = block_mask
        lists = list(lists) + [None] * (8 - len(lists))  # four or eight lists
    if isinstance(size, int):
        size = (size, size)
    size = (int(size[0]), int(size[1]))
    if lists[2] is None:
        lists[2], lists[3] = torch.zeros_like(lists[0]), torch.zeros_like(lists[1])
    for i in (4, 6):
        if lists[i] is None:
            lists[i], lists[i + 1] = _transposed_lists(lists[i - 4], lists[i - 3], -(-lk // size[1]))
    return lists, size


def create_block_mask(q, k, variant, captures: Sequence[torch.Tensor] = (), block_size=(128, 128)):
    """The block mask of the variant's own mask (its mask_mod, causality and
    band), built on q's device by a program Kiln generates from the variant:
    per (batch, head, block of QB queries) the blocks of KB keys with some
    visible element (partial) and with all (full), and the transposed lists
    for the backward. Returns what block_sparse_attention takes: (kv_num_blocks,
    kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks, q_indices,
    full_q_num_blocks, full_q_indices, (QB, KB)), the lists [B, 1, ...]
    when the mask does not read the head. q [B, Lq, H, D] and k
    [B, Lk, H / G, D] are read for their shapes only."""
    v_ = _variant(variant)
    if isinstance(block_size, int):
        block_size = (block_size, block_size)
    lists = ops.build_block_mask(q, k, list(captures), v_.text, v_.name or "", int(block_size[0]),
                                 int(block_size[1]))
    return (*lists, (int(block_size[0]), int(block_size[1])))


def block_sparse_attention_with_lse(q, k, v, block_mask, variant, captures: Sequence[torch.Tensor] = (),
                                    dropout_p: float = 0.0, dropout_rng: Optional[torch.Tensor] = None):
    """(out, lse) of the variant visiting only the blocks `block_mask` lists
    (the seeds' Algorithm 5): a FlexAttention BlockMask (kv_num_blocks,
    kv_indices, full_kv_num_blocks, full_kv_indices, BLOCK_SIZE), or the
    tuple (kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices,
    (QB, KB)) of int32 tensors [B or 1, H or 1, ceil(Lq / QB)(, ceil(Lk /
    KB))]. Partial blocks are masked as the variant says (its mask_mod,
    causality, keys past Lk), full blocks only past Lk, unlisted blocks
    cost nothing. q [B, Lq, H, D] as kiln.attention. Differentiable in q,
    k and v (the backward visits the same blocks through the transposed
    lists, the BlockMask's q_num_blocks / q_indices / full_q_*, computed
    when a tuple lacks them); compiled once per block size."""
    v_ = _variant(variant)
    lists, (block_q, block_kv) = _block_lists(block_mask, k.shape[1])
    return torch.ops.kiln.block_sparse_attention(q, k, v, lists, list(captures), v_.text, v_.name or "", block_q,
                                                 block_kv, float(dropout_p),
                                                 [] if dropout_rng is None else [dropout_rng])


def block_sparse_attention(q, k, v, block_mask, variant, captures: Sequence[torch.Tensor] = (),
                           dropout_p: float = 0.0, dropout_rng: Optional[torch.Tensor] = None):
    """out [B, Lq, H, Dv] of block_sparse_attention_with_lse."""
    if dropout_p > 0 and dropout_rng is None:
        dropout_rng = make_dropout_rng(q.device)
    return block_sparse_attention_with_lse(q, k, v, block_mask, variant, captures, dropout_p, dropout_rng)[0]


def flex_variant(score_mod=None, mask_mod=None, *, head_dim, head_dim_v=None, dtype=torch.bfloat16, scale=None,
                 gqa_group=1):
    """(Variant, captures): Python mods translated to a Kiln variant
    (kiln.mods), and the tensors they index in its capture order. Call it
    outside torch.compile and pass both to kiln.attention inside."""
    text, captures = mods.cached_variant_text(score_mod, mask_mod, head_dim, head_dim_v or head_dim, dtype, scale,
                                              gqa_group)
    return Variant(text), captures


# Dynamo reads a nested function's closure from torch 2.14 on; before, the
# translation runs eagerly under torch.compile (one graph break).
_DYNAMO_READS_CLOSURES = torch.torch_version.TorchVersion(torch.__version__) >= (2, 14)


@torch.compiler.disable
def _flex_variant_eager(score_mod, mask_mod, head_dim, head_dim_v, dtype, scale, gqa_group):
    return flex_variant(score_mod, mask_mod, head_dim=head_dim, head_dim_v=head_dim_v, dtype=dtype, scale=scale,
                        gqa_group=gqa_group)


def _flex_variant_any(score_mod, mask_mod, head_dim, head_dim_v, dtype, scale, gqa_group):
    """flex_variant, or under torch.compile its traced form: the text a
    constant of the graph, the captures traced tensors (no graph break)."""
    if _is_compiling():
        if not _DYNAMO_READS_CLOSURES:
            return _flex_variant_eager(score_mod, mask_mod, head_dim, head_dim_v, dtype, scale, gqa_group)
        traced = mods.traced_variant_text(score_mod, mask_mod, head_dim, head_dim_v, dtype, scale, gqa_group)
        if traced is None:
            return _flex_variant_eager(score_mod, mask_mod, head_dim, head_dim_v, dtype, scale, gqa_group)
        return Variant(traced[0]), traced[1]
    return flex_variant(score_mod, mask_mod, head_dim=head_dim, head_dim_v=head_dim_v, dtype=dtype, scale=scale,
                        gqa_group=gqa_group)


def flex_attention(query, key, value, score_mod=None, *, mask_mod=None, scale=None, enable_gqa=False,
                   return_lse=False):
    """FlexAttention's call with Python mods (mask_mod, keyword-only, takes
    the place of Flex's block_mask): query [B, H, Lq, D], key and
    value [B, H_kv, Lk, D / Dv]; score_mod(score, b, h, q_idx, kv_idx) and
    mask_mod(b, h, q_idx, kv_idx) are translated to a Kiln variant
    (kiln.mods; the translation is reused while the mods and what they read
    stay the same), the tensors they index becoming its captures. Returns out [B, H, Lq, Dv] (and the natural-log LSE
    [B, H, Lq] with return_lse)."""
    b, h, lq, d = query.shape
    h_kv = key.shape[1]
    if h_kv != h and not enable_gqa:
        raise KilnError(f"query has {h} heads and key {h_kv}: pass enable_gqa=True for grouped-query attention")
    if h % h_kv:
        raise KilnError(f"query heads ({h}) must be a multiple of key/value heads ({h_kv})")
    variant, captures = _flex_variant_any(score_mod, mask_mod, d, value.shape[-1], query.dtype, scale,
                                            h // h_kv)
    out, lse = attention_with_lse(query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2), variant,
                                  captures)
    out = out.transpose(1, 2)
    return (out, lse) if return_lse else out
