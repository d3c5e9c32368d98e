"""Probe (2026-11-29): is a short decode row's time Kiln's GPU time, or the
host's time per call showing through? Triton's do_bench records its start
event right after an L2 flush, so a call whose host work (here the ctypes
path, ~100+ µs per call) outlasts the flush leaves the GPU idle inside the
timed span. Times each implementation by do_bench and by the same loop with
the GPU kept busy (torch.cuda._sleep) until the call is queued, and the
host's µs per call; with kv_splits set per handle (the runtime's choice and
others) for the rows of bench_decode.py shorter than ~150 µs.

    python3 bench/probe_decode_host.py --lib LIB --specs DIR
"""
import argparse, os, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime
from measure import bench, bench_gpu as padded, host_us, relerr

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
p.add_argument("--splits", default="8,16,32,64")
p.add_argument("--rows", default="1,32,8,32768,gqa4_decode_hd128;1,64,8,131072,gqa8_decode_hd128;"
                                 "1,32,32,32768,plain_hd128;16,32,8,8192,gqa4_decode_hd128",
               help="B,Hq,Hkv,L,spec rows separated by ';'")
args = p.parse_args()
dev, dt, D = "cuda", torch.bfloat16, 128
rt = Runtime(args.lib)

print(f"device={torch.cuda.get_device_name()}")
print(f"{'shape':>22} {'impl':>12} {'do_bench us':>11} {'padded us':>9} {'host us':>7} {'GB/s (padded)':>13} {'relerr':>8}")
rows = [r.split(",") for r in args.rows.split(";") if r]
for B, Hq, Hkv, L, spec in [(int(b), int(hq), int(hkv), int(l), sp) for b, hq, hkv, l, sp in rows]:
    G = Hq // Hkv
    q = torch.randn(B, Hq, 1, D, device=dev, dtype=dt)
    k = torch.randn(B, Hkv, L, D, device=dev, dtype=dt)
    v = torch.randn_like(k)
    o = torch.empty_like(q)
    lse = torch.empty(B, Hq, 1, device=dev, dtype=torch.float32)
    with sdpa_kernel([SDPBackend.MATH]):
        ref = F.scaled_dot_product_attention(q.float(), k.float().repeat_interleave(G, dim=1),
                                             v.float().repeat_interleave(G, dim=1))
    qk, kk, vk, ok = (t.transpose(1, 2) for t in (q, k, v, o))
    impls = []
    path = os.path.join(args.specs, spec + ".cubin.json")
    impls.append(("kiln", rt.load(path)))
    for s in (int(x) for x in args.splits.split(",") if x):
        h = rt.load(path)
        h.set_symbol("kv_splits", s)
        impls.append((f"kiln_s{s}", h))
    gb = 2 * B * Hkv * L * D * 2 / 1e9
    shape = f"B{B} H{Hq}/{Hkv} L{L}"
    for name, prog in impls:
        fn = lambda prog=prog: prog(q=qk, k=kk, v=vk, out=ok, lse=lse)
        o.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        err = relerr(o, ref)
        a, b_, h = bench(fn) * 1e3, padded(fn) * 1e3, host_us(fn, calls=300, warmup=1)
        print(f"{shape:>22} {name:>12} {a:11.1f} {b_:9.1f} {h:7.1f} {gb / b_ * 1e6:13.0f} {err:8.1e}", flush=True)

    def cudnn():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=G > 1)
    err = relerr(cudnn(), ref)
    a, b_, h = bench(cudnn) * 1e3, padded(cudnn) * 1e3, host_us(cudnn, calls=300, warmup=1)
    print(f"{shape:>22} {'cudnn':>12} {a:11.1f} {b_:9.1f} {h:7.1f} {gb / b_ * 1e6:13.0f} {err:8.1e}", flush=True)
