"""What dropout costs the peers: SDPA's cuDNN and FlashAttention-2 backends
with dropout_p = P against p = 0, forward and forward + backward, in one
process on one GPU (issue 12's target asks Kiln for >= 0.9x the variant
without dropout; bench/bench_dropout.py times Kiln's own ratio).

    python3 bench/bench_peer_dropout.py [--p 0.1] [--hdims 64,128] [--seqlens 4096,16384]

Shapes follow ../shared/bench/peers.py (16384 tokens per batch, hidden 2048,
bf16). Prints TFLOP/s (dense count, halved for causal) and the ratio with /
without dropout per backend; a backend that refuses a shape prints its error.
"""
import argparse

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

p = argparse.ArgumentParser()
p.add_argument("--p", type=float, default=0.1)
p.add_argument("--hdims", default="64,128")
p.add_argument("--seqlens", default="4096,16384")
args = p.parse_args()
dev, dt = "cuda", torch.bfloat16
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__} p={args.p}")
print(f"{'backend':>7} {'hd':>3} {'N':>6} {'causal':>6} {'fwd p=0':>8} {'fwd p':>8} {'ratio':>6} "
      f"{'f+b p=0':>8} {'f+b p':>8} {'ratio':>6}")
for hd in (int(x) for x in args.hdims.split(",")):
    for N in (int(x) for x in args.seqlens.split(",")):
        B, H = max(1, 16384 // N), 2048 // hd
        q, k, v, do = (torch.randn(B, H, N, hd, device=dev, dtype=dt) for _ in range(4))
        q.requires_grad_(); k.requires_grad_(); v.requires_grad_()
        for causal in (False, True):
            flops = 4 * B * H * N * N * hd / (2 if causal else 1)
            for name, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
                res = {}
                try:
                    for drop in (0.0, args.p):
                        def fwd():
                            with sdpa_kernel([be]):
                                F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=causal)

                        def fb():
                            with sdpa_kernel([be]):
                                out = F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=causal)
                                torch.autograd.grad(out, (q, k, v), do)
                        res[drop] = (flops / do_bench(fwd, warmup=25, rep=100) / 1e9,
                                     3.5 * flops / do_bench(fb, warmup=25, rep=100) / 1e9)
                except Exception as e:
                    print(f"{name:>7} {hd:3d} {N:6d} {causal!s:>6} error: {str(e).splitlines()[0][:100]}")
                    continue
                f0, b0 = res[0.0]
                f1, b1 = res[args.p]
                print(f"{name:>7} {hd:3d} {N:6d} {causal!s:>6} {f0:8.0f} {f1:8.0f} {f1 / f0:6.2f} "
                      f"{b0:8.0f} {b1:8.0f} {b1 / b0:6.2f}", flush=True)
