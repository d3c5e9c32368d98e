"""Kiln's forward and backward kernels as a PyTorch autograd function.

  python3 examples/torch_autograd.py --lib build/lib/libkiln_runtime.so \
      --forward SPEC.json --backward SPEC_bwd.json [--causal]

The specs come from `kiln compile <variant> -o X.cubin` and
`kiln compile <variant> --backward -o X_bwd.cubin` (the .json next to each
cubin); the runtime compiles them with NVRTC on first use and caches them.
This is a sketch of the custom op on the roadmap (docs/README.md), over the C
API: tensors are [B, N, H, D] bf16/fp16 on the current device, captures are
not passed. The script checks one training step against SDPA's
FlashAttention-2: O and dQ, dK, dV within 1e-2 relative L2 error.
"""
import argparse, json, os, sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from kiln_ctypes import Runtime


class KilnAttention(torch.autograd.Function):
    """out = attention(q, k, v) with the variant's mods; saves the natural-log
    LSE for the backward, as FlashAttention does."""

    @staticmethod
    def forward(ctx, q, k, v, kernels):
        runtime, fwd, bwd = kernels
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        out = torch.empty_like(q)
        lse = torch.empty(q.shape[0], q.shape[2], q.shape[1], device=q.device, dtype=torch.float32)
        runtime.forward(fwd, q, k, v, out, lse)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.kernels = kernels
        return out

    @staticmethod
    def backward(ctx, dout):
        runtime, _, bwd = ctx.kernels
        q, k, v, out, lse = ctx.saved_tensors
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        runtime.backward(bwd, q, k, v, out, dout.contiguous(), lse, dq, dk, dv)
        return dq, dk, dv, None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", required=True)
    p.add_argument("--forward", required=True)
    p.add_argument("--backward", required=True)
    p.add_argument("--causal", action="store_true", help="the variant is causal (Lq = Lk here, so both alignments agree)")
    p.add_argument("--seqlen", type=int, default=1000)
    args = p.parse_args()

    runtime = Runtime(args.lib)
    kernels = (runtime, runtime.load_forward(args.forward), runtime.load_backward(args.backward))
    hd = json.load(open(args.forward))["head_dim_qk"]
    torch.manual_seed(0)
    B, N, H = 2, args.seqlen, 4
    q, k, v = (torch.randn(B, N, H, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    dout = torch.randn(B, N, H, hd, device="cuda", dtype=torch.bfloat16)

    out = KilnAttention.apply(q, k, v, kernels)
    out.backward(dout)
    got = [out.detach(), q.grad, k.grad, v.grad]

    q.grad = k.grad = v.grad = None
    t = lambda x: x.transpose(1, 2)
    ref_out = t(F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=args.causal))
    ref_out.backward(dout)
    ref = [ref_out.detach(), q.grad, k.grad, v.grad]

    ok = True
    for name, a, b in zip(("out", "dq", "dk", "dv"), got, ref):
        err = ((a.float() - b.float()).norm() / b.float().norm()).item()
        ok = ok and err < 1e-2 and bool(torch.isfinite(a).all())
        print(f"{name}: rel L2 err vs SDPA flash {err:.2e}")
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
