"""Where a GQA tree-verify step's time goes, per kernel and per split count.

  python3 bench/probe_verify_splits.py --lib LIB --specs DIR [--programs ,_d128,_n64]

For the tree rows of bench_decode.py (B 8, 32 query heads over 8 KV heads,
L 8192, 8 / 32 / 64 drafts as an ancestor bitmask), each program
tree_verify_hd128<suffix>.cubin.json in DIR is run with the runtime's own
split count and with kv_splits forced to 1, 2, 3 and 4: GPU time of the
step (measure.bench_gpu, median of 50) and, from torch.profiler, each
kernel's mean time per step (the split kernel and the combine). Every
configuration's output is checked against SDPA's math backend in f32 first.
A probe for choosing a decode schedule, not a benchmark table.
"""
import argparse, os, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime
from measure import bench_gpu, kernel_means, relerr
from verify_trees import random_tree

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
p.add_argument("--programs", default=",_d128,_n64",
               help="suffixes of tree_verify_hd128<suffix>.cubin.json to probe")
p.add_argument("--drafts", default="8,32,64")
p.add_argument("--splits", default="0,1,2,3,4", help="0: the runtime's choice")
args = p.parse_args()

dev, dt, D = "cuda", torch.bfloat16, 128
B, Hq, Hkv, L = 8, 32, 8, 8192
G = Hq // Hkv
runtime = Runtime(args.lib)
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__}", flush=True)


def tree_problem(Lq):
    """bench_decode.py's tree (verify_trees.random_tree) and Q / K / V."""
    words, cache_len, allowed = random_tree(B, Lq, L, dev)
    q = torch.randn(B, Hq, Lq, D, device=dev, dtype=dt)
    k = torch.randn(B, Hkv, L, D, device=dev, dtype=dt)
    return words, cache_len, allowed, q, k, torch.randn_like(k)


gb = 2 * B * Hkv * L * D * 2 / 1e9
print(f"{'drafts':>6} {'program':>8} {'splits':>6} {'µs':>8} {'GB/s':>6} {'% 4.8T':>6}  kernels (µs per step)")
for Lq in (int(x) for x in args.drafts.split(",")):
    words, cache_len, allowed, q_peer, k_peer, v_peer = tree_problem(Lq)
    q, k, v = (t.transpose(1, 2) for t in (q_peer, k_peer, v_peer))
    o_peer = torch.empty_like(q_peer)
    o = o_peer.transpose(1, 2)
    lse = torch.empty(B, Hq, Lq, device=dev, dtype=torch.float32)
    with sdpa_kernel([SDPBackend.MATH]):
        ref = F.scaled_dot_product_attention(q_peer.float(), k_peer.float().repeat_interleave(G, dim=1),
                                             v_peer.float().repeat_interleave(G, dim=1), attn_mask=allowed)
    for sfx in args.programs.split(","):
        path = os.path.join(args.specs, f"tree_verify_hd128{sfx}.cubin.json")
        if not os.path.exists(path):
            print(f"{Lq:>6} {sfx or 'default':>8}  (no spec)")
            continue
        for splits in (int(x) for x in args.splits.split(",")):
            prog = runtime.load(path)
            if splits:
                prog.set_symbol("kv_splits", splits)
            run = lambda: prog(q=q, k=k, v=v, out=o, lse=lse, captures=[words, cache_len])
            o.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            err = relerr(o_peer, ref)
            ms = bench_gpu(run, n=50)
            kern = kernel_means(run)
            names = ", ".join(f"{n.split('(')[0][-28:]} {us:.1f}" for n, us in
                              sorted(kern.items(), key=lambda kv: -kv[1]))
            verdict = "" if err < 1e-2 else f" FAIL relerr {err:.2e}"
            print(f"{Lq:>6} {sfx or 'default':>8} {splits or 'auto':>6} {ms * 1e3:>8.1f} "
                  f"{gb / ms * 1e3:>6.0f} {gb / ms * 1e3 / 4800 * 100:>6.1f}  {names}{verdict}", flush=True)
    del q_peer, k_peer, v_peer, ref, allowed
    torch.cuda.empty_cache()
