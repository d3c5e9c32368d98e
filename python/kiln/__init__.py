"""Kiln from PyTorch: attention variants written in Kiln's `attn` dialect,
run as a torch custom op on CPU (the CPU backend) and CUDA tensors.

    import kiln
    causal = kiln.Variant.from_file("examples/causal.mlir")
    out = kiln.attention(q, k, v, causal)            # q [B, Lq, H, D], bf16/fp16
    out.float().sum().backward()                     # dQ, dK, dV by Kiln's backward

The op is `torch.ops.kiln.attention` (and `kiln.attention_backward`): it
traces under torch.compile(fullgraph=True) and passes torch.library.opcheck.
"""
from dataclasses import dataclass
from typing import Optional, Sequence

import torch

from ._capi import KilnError
from . import ops

__all__ = ["Variant", "attention", "attention_with_lse", "KilnError"]


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
    if isinstance(variant, Variant):
        return variant
    if isinstance(variant, str):
        return Variant(variant)
    raise TypeError(f"variant must be a kiln.Variant or MLIR text, got {type(variant).__name__}")


def attention_with_lse(q, k, v, variant, captures: Sequence[torch.Tensor] = ()):
    """(out, lse): attention of the variant, and the natural-log
    log-sum-exp of each query row's scores [B, H, Lq] (not differentiated)."""
    v_ = _variant(variant)
    return torch.ops.kiln.attention(q, k, v, list(captures), v_.text, v_.name or "")


def attention(q, k, v, variant, captures: Sequence[torch.Tensor] = ()):
    """out [B, Lq, H, Dv] = softmax(score_mod(scale * Q Kᵀ) masked by
    mask_mod) V, as the variant defines it. `captures` are the tensors its
    mods read, in its order."""
    return attention_with_lse(q, k, v, variant, captures)[0]
