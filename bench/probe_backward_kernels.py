"""Where a backward's time goes, per kernel, Kiln's and cuDNN's.

  python3 bench/probe_backward_kernels.py --lib LIB --specs DIR [--hdims 128] [--seqlens 2048]
      [--variants plain,causal] [--suffixes ""]

For bench_attention.py's shapes (16384 tokens per batch, hidden 2048, bf16),
each variant's forward + backward by Kiln (<variant>_hd<D><suffix> and its
_bwd spec in DIR) and by SDPA's cuDNN backend runs under torch.profiler; the
table gives each kernel's mean GPU µs per step, the sum of the kernels and
the small kernels' share (everything but the largest kernel of each side's
backward). Kiln's gradients are checked against cuDNN's first. A probe for
deciding where the backward's remaining time is, not a benchmark table.
"""
import argparse, os, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime
from measure import kernel_means, relerr

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
p.add_argument("--hdims", default="128")
p.add_argument("--seqlens", default="2048,16384")
p.add_argument("--variants", default="plain,causal")
p.add_argument("--suffixes", default="", help="comma-separated spec suffixes (ablations) beside the default")
p.add_argument("--steps", type=int, default=20)
args = p.parse_args()

dev, dt = "cuda", torch.bfloat16
runtime = Runtime(args.lib)
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__}", flush=True)


def show(label, means):
    top = max(means.values())
    rest = sum(means.values()) - top
    print(f"  {label}: sum {sum(means.values()):8.1f} µs, all but the largest {rest:7.1f} µs "
          f"({100 * rest / sum(means.values()):.1f}%)")
    for name, us in sorted(means.items(), key=lambda kv: -kv[1]):
        print(f"    {us:8.1f}  {name[:110]}")


for hd in (int(x) for x in args.hdims.split(",")):
    for N in (int(x) for x in args.seqlens.split(",")):
        B, H = max(1, 16384 // N), 2048 // hd
        for variant in args.variants.split(","):
            is_causal = variant == "causal"
            q = torch.randn(B, N, H, hd, device=dev, dtype=dt)
            k, v, do = torch.randn_like(q), torch.randn_like(q), torch.randn_like(q)
            o, dq, dk, dv = (torch.empty_like(q) for _ in range(4))
            lse = torch.empty(B, H, N, device=dev, dtype=torch.float32)
            qt, kt, vt = (x.transpose(1, 2).detach().requires_grad_() for x in (q, k, v))
            dot = do.transpose(1, 2)
            print(f"== {variant} D={hd} N={N} B={B} H={H}", flush=True)
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=is_causal)
                ref = torch.autograd.grad(out, (qt, kt, vt), dot, retain_graph=True)

                def cudnn_bwd(out=out):
                    torch.autograd.grad(out, (qt, kt, vt), dot, retain_graph=True)
                means = kernel_means(cudnn_bwd, args.steps)
            show("cuDNN backward", means)
            for suffix in [""] + [s for s in args.suffixes.split(",") if s]:
                spec = os.path.join(args.specs, f"{variant}_hd{hd}{suffix}")
                if not os.path.exists(spec + "_bwd.cubin.json"):
                    print(f"  no spec {spec}_bwd", flush=True)
                    continue
                fwd, bwd = runtime.load(spec + ".cubin.json"), runtime.load(spec + "_bwd.cubin.json")
                fwd(q=q, k=k, v=v, out=o, lse=lse)

                def kiln_bwd(bwd=bwd):
                    bwd(q=q, k=k, v=v, out=o, dout=do, lse=lse, dq=dq, dk=dk, dv=dv)
                kiln_bwd()
                torch.cuda.synchronize()
                errs = [relerr(g.transpose(1, 2), r) for g, r in zip((dq, dk, dv), ref)]
                print(f"  Kiln{suffix} gradients vs cuDNN's: " + " ".join(f"{e:.1e}" for e in errs))
                show(f"Kiln{suffix} backward", kernel_means(kiln_bwd, args.steps))
