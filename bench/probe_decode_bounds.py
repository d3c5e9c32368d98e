"""Probe (2026-11-29): what bounds a dense decode step, Kiln's and cuDNN's.
Issue 11 asks >= 1.0x cuDNN on its dense decode rows, which stand at
0.99-1.00x with Kiln reading K and V faster than torch's own sum over them
(1.06-1.12x). Under Nsight Compute (`ncu --profile-from-start off`) this runs,
per row, Kiln's program (split and combine kernels) and SDPA's cuDNN backend
once each inside cudaProfilerStart/Stop, after warm-up calls outside it, so
that each profiled kernel's duration, DRAM throughput and bytes read sit
side by side:

    ncu --profile-from-start off --section SpeedOfLight ... \
        python3 bench/probe_decode_bounds.py --lib LIB --specs DIR
"""
import argparse, os, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
args = p.parse_args()
dev, dt, D = "cuda", torch.bfloat16, 128
rt = Runtime(args.lib)
programs = {1: rt.load(os.path.join(args.specs, "plain_hd128.cubin.json")),
            4: rt.load(os.path.join(args.specs, "gqa4_decode_hd128.cubin.json"))}
for B, Hq, Hkv, L in [(1, 32, 32, 32768), (1, 32, 8, 32768), (8, 32, 32, 16384), (64, 32, 8, 8192)]:
    G = Hq // Hkv
    q = torch.randn(B, Hq, 1, D, device=dev, dtype=dt)
    k = torch.randn(B, Hkv, L, D, device=dev, dtype=dt)
    v = torch.randn_like(k)
    o = torch.empty_like(q)
    lse = torch.empty(B, Hq, 1, device=dev, dtype=torch.float32)
    qk, kk, vk, ok = (t.transpose(1, 2) for t in (q, k, v, o))
    kiln = lambda: programs[G](q=qk, k=kk, v=vk, out=ok, lse=lse)

    def cudnn():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=G > 1)

    for _ in range(3):
        kiln()
        ref = cudnn()
    torch.cuda.synchronize()
    err = ((o.float() - ref.float()).norm() / ref.float().norm()).item()
    print(f"row B{B} H{Hq}/{Hkv} L{L}: {2 * B * Hkv * L * D * 2 / 1e6:.0f} MB of K and V, "
          f"Kiln vs cuDNN rel L2 {err:.1e}", flush=True)
    torch.cuda.profiler.start()
    torch.cuda.nvtx.range_push(f"kiln B{B} H{Hq}/{Hkv} L{L}")
    kiln()
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push(f"cudnn B{B} H{Hq}/{Hkv} L{L}")
    cudnn()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
