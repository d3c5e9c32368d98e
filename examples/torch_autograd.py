"""Kiln's forward and backward kernels as a PyTorch autograd function.

  python3 examples/torch_autograd.py --lib build/lib/libkiln_runtime.so \
      --forward SPEC.json --backward SPEC_bwd.json

The specs come from `kiln compile <variant> -o X.cubin` and
`kiln compile <variant> --backward -o X_bwd.cubin` (the .json next to each
cubin); the runtime compiles them with NVRTC on first use and caches them.
This is a sketch of the custom op on the roadmap (docs/README.md), over the C
API: tensors are [B, N, H, D] bf16/fp16 on the current device; captured
tensors (ALiBi's slopes, document ids) are passed as captures. The script
checks one training step of the examples plain, causal, alibi and
document_mask against SDPA with the same bias / mask: O and dQ, dK, dV
within 1e-2 relative L2 error.
"""
import argparse, os, sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from kiln_ctypes import Runtime


class KilnAttention(torch.autograd.Function):
    """out = attention(q, k, v) with the variant's mods; saves the natural-log
    LSE for the backward, as FlashAttention does."""

    @staticmethod
    def forward(ctx, q, k, v, kernels, captures):
        runtime, fwd, bwd = kernels
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        out = torch.empty_like(q)
        lse = torch.empty(q.shape[0], q.shape[2], q.shape[1], device=q.device, dtype=torch.float32)
        runtime.forward(fwd, q, k, v, out, lse, captures)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.kernels, ctx.captures = kernels, captures
        return out

    @staticmethod
    def backward(ctx, dout):
        runtime, _, bwd = ctx.kernels
        q, k, v, out, lse = ctx.saved_tensors
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        runtime.backward(bwd, q, k, v, out, dout.contiguous(), lse, dq, dk, dv, ctx.captures)
        return dq, dk, dv, None, None


def reference_bias(variant, N, H, captures):
    """SDPA's additive mask [H, N, N] for the example variants (None: plain)."""
    qi = torch.arange(N, device="cuda")[:, None]
    ki = torch.arange(N, device="cuda")[None, :]
    causal = torch.where(ki <= qi, 0.0, float("-inf"))
    if variant == "plain":
        return None
    if variant == "causal":
        return causal.expand(H, N, N)
    if variant == "alibi":
        (slopes,) = captures
        return causal + slopes[:, None, None] * (ki - qi).float()
    if variant == "document_mask":
        doc_q, doc_kv = captures
        same = doc_q[:, None] == doc_kv[None, :]
        return torch.where(same, causal, float("-inf")).expand(H, N, N)
    sys.exit(f"no SDPA reference for variant '{variant}' in this example")


def make_captures(spec, N, H):
    """Random values for the example variants' captures, by name."""
    out = []
    for c in spec["captures"]:
        if c["name"] == "slopes":
            out.append(torch.tensor([2.0 ** (-8.0 * (i + 1) / H) for i in range(H)], device="cuda"))
        elif c["name"] in ("doc_q", "doc_kv"):
            # Three documents; the same ids for queries and keys (self-attention).
            out.append((torch.arange(N, device="cuda", dtype=torch.int32) * 3) // N)
        else:
            sys.exit(f"no values for capture '{c['name']}' in this example")
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", required=True)
    p.add_argument("--forward", required=True)
    p.add_argument("--backward", required=True)
    p.add_argument("--seqlen", type=int, default=1000)
    args = p.parse_args()

    runtime = Runtime(args.lib)
    kernels = (runtime, runtime.load(args.forward), runtime.load(args.backward))
    spec = kernels[1].spec
    hd = spec["head_dim_qk"]
    torch.manual_seed(0)
    B, N, H = 2, args.seqlen, 4
    captures = make_captures(spec, N, H)
    q, k, v = (torch.randn(B, N, H, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    dout = torch.randn(B, N, H, hd, device="cuda", dtype=torch.bfloat16)

    out = KilnAttention.apply(q, k, v, kernels, captures)
    out.backward(dout)
    got = [out.detach(), q.grad, k.grad, v.grad]

    # The reference in f32 from the same bf16 inputs: an ALiBi bias of
    # slope * distance would lose its low bits in bf16. Lq = Lk here, so both
    # causal alignments agree.
    t = lambda x: x.transpose(1, 2)
    q32, k32, v32 = (x.detach().float().requires_grad_() for x in (q, k, v))
    bias = reference_bias(spec["variant"], N, H, captures)
    ref_out = t(F.scaled_dot_product_attention(t(q32), t(k32), t(v32), attn_mask=bias))
    ref_out.backward(dout.float())
    ref = [ref_out.detach(), q32.grad, k32.grad, v32.grad]

    ok = True
    for name, a, b in zip(("out", "dq", "dk", "dv"), got, ref):
        err = ((a.float() - b.float()).norm() / b.float().norm()).item()
        ok = ok and err < 1e-2 and bool(torch.isfinite(a).all())
        print(f"{name}: rel L2 err vs SDPA (f32) {err:.2e}")
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
