"""Forward attention: Kiln next to PyTorch SDPA (flash = FlashAttention-2, cuDNN)
in one process on one GPU.

Kiln kernels come as specs written by `kiln compile` (no MLIR needed here) and
run through the runtime's C API (libkiln_runtime.so) on torch tensors, on
torch's current stream, timed with the same do_bench as the peers.

  python3 bench/bench_forward.py --lib build/lib/libkiln_runtime.so --specs DIR

DIR holds <variant>_hd<D>.cubin.json for variant in {plain, causal}. Shapes
follow ../shared/bench/peers.py: 16384 tokens per batch, hidden 2048.
FLOPs: 4*B*H*N*N*D, halved for causal. Each row's implementations are timed
--rounds times in a rotated order and the median reported; "spread" is the
largest (max/min - 1) of any one implementation over the rounds.
"""
import argparse, json, os, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime
from measure import bench_rounds, relerr

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
p.add_argument("--hdims", default="64,128,256")
p.add_argument("--seqlens", default="1024,4096,16384")
p.add_argument("--variants", default="_nooverlap",
               help="spec suffixes timed next to the default kernels (ablations), when present")
p.add_argument("--rounds", type=int, default=3,
               help="time every implementation of a row this many times, in a rotated order each "
                    "round, and report the median (columns of one round differ by up to ~5%% with "
                    "identical kernels: clocks move during a run)")
args = p.parse_args()

dev, dt = "cuda", torch.bfloat16
runtime = Runtime(args.lib)


def load(variant, hd, suffix=""):
    path = os.path.join(args.specs, f"{variant}_hd{hd}{suffix}.cubin.json")
    if suffix and not os.path.exists(path):
        return None
    return runtime.load(path)


def kiln_call(handle, q, k, v, o, lse):
    runtime.forward(handle, q, k, v, o, lse)


rows = []
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__}", flush=True)
for hd in [int(x) for x in args.hdims.split(",")]:
    handles = {c: load("causal" if c else "plain", hd) for c in (False, True)}
    # Ablations: the same variants compiled with other schedule choices.
    suffixes = [x for x in args.variants.split(",") if x]
    ablated = {(c, sfx): load("causal" if c else "plain", hd, sfx) for c in (False, True) for sfx in suffixes}
    for N in [int(x) for x in args.seqlens.split(",")]:
        B, H = max(1, 16384 // N), 2048 // hd
        # Kiln's layout [B, N, H, D]; SDPA gets the [B, H, N, D] view of it.
        q = torch.randn(B, N, H, hd, device=dev, dtype=dt)
        k, v = torch.randn_like(q), torch.randn_like(q)
        o = torch.empty_like(q)
        lse = torch.empty(B, H, N, device=dev, dtype=torch.float32)
        for causal in (False, True):
            flops = 4 * B * H * N * N * hd / (2 if causal else 1)
            row = dict(hdim=hd, N=N, B=B, H=H, causal=causal)
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                ref = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                     is_causal=causal).transpose(1, 2).float()
            o.fill_(float("nan"))
            kiln_call(handles[causal], q, k, v, o, lse)
            torch.cuda.synchronize()
            row["kiln_vs_flash_relerr"] = relerr(o, ref)
            # Every implementation of the row, timed in rounds (see --rounds).
            timed = [("kiln", lambda h=handles[causal]: kiln_call(h, q, k, v, o, lse))]
            for sfx in suffixes:
                if ablated[(causal, sfx)] is not None:
                    # Each ablation's output is checked too, not only timed.
                    o.fill_(float("nan"))
                    kiln_call(ablated[(causal, sfx)], q, k, v, o, lse)
                    torch.cuda.synchronize()
                    row[f"kiln{sfx}_vs_flash_relerr"] = relerr(o, ref)
                    timed.append((f"kiln{sfx}", lambda h=ablated[(causal, sfx)]: kiln_call(h, q, k, v, o, lse)))
            for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                def peer(be=be):
                    with sdpa_kernel([be]):
                        F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                                       v.transpose(1, 2), is_causal=causal)
                try:
                    peer()
                    timed.append((name, peer))
                except Exception as e:  # a peer that does not support the shape
                    row[f"{name}_error"] = str(e)[:80]
            measured = bench_rounds(timed, args.rounds)
            for name, (ms, spread) in measured.items():
                row[f"{name}_ms"], row[f"{name}_spread"] = ms, spread
            for name in ["kiln", "flash", "cudnn"] + [f"kiln{sfx}" for sfx in suffixes]:
                if f"{name}_ms" in row:
                    row[f"{name}_tflops"] = flops / row[f"{name}_ms"] / 1e9
            rows.append(row)
            print(json.dumps(row), flush=True)
        del q, k, v, o, lse
        torch.cuda.empty_cache()

# Memory: torch's peak holds q, k, v, o and lse, so it grows linearly in N (no
# N x N buffer anywhere). The runtime's own workspace (split-KV's partial
# results, when a run splits) is outside torch's allocator:
# test/Runtime/check_memory.py checks it.
mem = []
handle = load("plain", 64)
for N in (2048, 4096, 8192, 16384):
    torch.cuda.synchronize(); torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    q = torch.randn(1, N, 8, 64, device=dev, dtype=dt); k, v = torch.randn_like(q), torch.randn_like(q)
    o = torch.empty_like(q); lse = torch.empty(1, 8, N, device=dev, dtype=torch.float32)
    kiln_call(handle, q, k, v, o, lse); torch.cuda.synchronize()
    mem.append((N, torch.cuda.max_memory_allocated() - base))
    del q, k, v, o, lse
per_token = [m / n for n, m in mem]
linear = max(per_token) / min(per_token) < 1.01
print(json.dumps(dict(memory=[dict(N=n, peak_bytes=m) for n, m in mem], linear_in_N=linear)), flush=True)

out = os.environ.get("OUT", "/tmp")
json.dump(dict(device=torch.cuda.get_device_name(), rows=rows, memory=mem), open(os.path.join(out, "bench.json"), "w"), indent=1)
extra = [f"kiln{sfx}" for sfx in [x for x in args.variants.split(",") if x]]
print(f"\n{'hdim':>4} {'N':>6} {'causal':>6} {'kiln':>7} " + " ".join(f"{e[4:][:7]:>7}" for e in extra) +
      f" {'flash':>7} {'cudnn':>7} {'k/flash':>8} {'k/cudnn':>8} {'relerr':>8} {'spread':>7}")
for r in rows:
    f = lambda key: f"{r[key]:7.1f}" if key in r else "    n/a"
    ratio = lambda peer: f"{r['kiln_tflops'] / r[peer + '_tflops']:8.2f}" if peer + "_tflops" in r else "     n/a"
    print(f"{r['hdim']:4d} {r['N']:6d} {str(r['causal']):>6} {f('kiln_tflops')} " + " ".join(f(e + "_tflops") for e in extra) +
          f" {f('flash_tflops')} {f('cudnn_tflops')} "
          f"{ratio('flash')} {ratio('cudnn')} "
          # The worst error of the row's Kiln kernels (a NaN first).
          f"{max((v for key, v in r.items() if key.endswith('vs_flash_relerr')), key=lambda x: (x != x, x)):8.1e} "
          f"{100 * max(v for key, v in r.items() if key.endswith('_spread')):6.1f}%")
print(f"memory linear in N: {linear}")
