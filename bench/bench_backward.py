"""Forward + backward attention: Kiln next to PyTorch SDPA (flash =
FlashAttention-2, cuDNN) in one process on one GPU.

Kiln runs its forward kernel, then its backward kernels (both schedules when
their specs are present), through the runtime's C API on torch tensors; the
peers run SDPA's forward and autograd backward. All timed with the same
do_bench, every implementation of a row --rounds times in a rotated order
(the median reported, and the row's largest spread over the rounds): in one
fixed order the later implementations of a row measured up to 24% slower on
the H100 than the same kernel run first.

  python3 bench/bench_backward.py --lib build/lib/libkiln_runtime.so --specs DIR

DIR holds <variant>_hd<D>.cubin.json (`kiln compile`) and
<variant>_hd<D>_bwd.cubin.json / <variant>_hd<D>_bwd_atomic.cubin.json
(`kiln compile --backward [--bwd-schedule atomic]`) for variant in {plain,
causal}. Shapes follow ../shared/bench/peers.py: 16384 tokens per batch,
hidden 2048. FLOPs as peers.py: forward 4*B*H*N*N*D (halved for causal),
backward 2.5x that, forward+backward 3.5x.
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
p.add_argument("--hdims", default="64,128")
p.add_argument("--seqlens", default="4096,16384")
p.add_argument("--gqa", type=int, default=1,
               help="query heads per KV head: specs gqa_<variant>_hd<D>*, peers with enable_gqa (rows whose "
                    "forward spec is missing are left out)")
p.add_argument("--rounds", type=int, default=3,
               help="time every implementation this many times in a rotated order, report the median")
args = p.parse_args()

dev, dt = "cuda", torch.bfloat16
runtime = Runtime(args.lib)
# Spec suffix -> name: the default two-kernel schedule and the atomic-dQ one,
# each when its spec is present (add ablations here).
# Ablations: mma.sync instead of wgmma on sm_90a (`_mma`), cp.async instead
# of a TMA producer (`_nows`), the dK/dV kernel on S = Q K^T (`_qk`),
# 128-row query blocks (`_m128`), each product waited for in turn (`_noov`),
# dK and dV in one kernel (`_nosplit`) or in two (`_split`), 64 keys per
# dK/dV CTA (`_kb64`, --key-block 0); persistent dQ and dK/dV kernels
# (`_persist`, --persistent-backward), also with 128 keys per dK/dV CTA
# (`_kb128p`, --key-block 128); the atomic schedule's dQ adds by red.global
# from registers instead of bulk reductions (`_atomicred`,
# --no-bulk-reductions); 128 keys per dK/dV CTA (`_kb128`, --key-block 128),
# also in the atomic schedule (`_atomic128`: dQ split by columns between the
# two consumer warpgroups); dV and dK waited for where they are issued
# (`_syncacc`, `_atomic128sync`: --no-async-accumulate); the 128-key atomic
# schedule's dQ by red.global from registers (`_atomic128red`); the
# two-kernel schedule where the default (auto) is the atomic one
# (`_twokernel`, --bwd-schedule two-kernel); GQA's dK/dV kernel looping over
# the group's heads around its Q blocks' loops, without a producer
# (`_nogroup`, --no-group-steps).
SCHEDULES = {"": "kiln", "_atomic": "kiln_atomic", "_mma": "kiln_mma", "_nows": "kiln_nows",
             "_qk": "kiln_qk", "_m128": "kiln_m128", "_noov": "kiln_noov",
             "_nosplit": "kiln_nosplit", "_split": "kiln_split", "_kb64": "kiln_kb64",
             "_persist": "kiln_persist", "_kb128p": "kiln_kb128p",
             "_latepack": "kiln_latepack",
             "_unordered": "kiln_unordered",
             "_masked": "kiln_masked",
             "_atomicred": "kiln_atomic_red", "_kb128": "kiln_kb128",
             "_atomic128": "kiln_atomic128", "_twokernel": "kiln_two_kernel", "_nogroup": "kiln_nogroup", "_syncacc": "kiln_syncacc",
             "_atomic128sync": "kiln_atomic128_sync", "_atomic128red": "kiln_atomic128_red"}


def spec(variant, hd, suffix):
    path = os.path.join(args.specs, f"{variant}_hd{hd}{suffix}.cubin.json")
    return path if os.path.exists(path) else None


rows = []
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__}", flush=True)
for hd in [int(x) for x in args.hdims.split(",")]:
    for N in [int(x) for x in args.seqlens.split(",")]:
        B, H = max(1, 16384 // N), 2048 // hd
        q = torch.randn(B, N, H, hd, device=dev, dtype=dt)
        k = torch.randn(B, N, H // args.gqa, hd, device=dev, dtype=dt)
        v, do = torch.randn_like(k), torch.randn_like(q)
        o, dq = torch.empty_like(q), torch.empty_like(q)
        dk, dv = torch.empty_like(k), torch.empty_like(v)
        gqa = dict(enable_gqa=True) if args.gqa > 1 else {}
        lse = torch.empty(B, H, N, device=dev, dtype=torch.float32)
        for causal in (False, True):
            variant = ("gqa_" if args.gqa > 1 else "") + ("causal" if causal else "plain")
            if spec(variant, hd, "") is None:
                continue
            fwd_flops = 4 * B * H * N * N * hd / (2 if causal else 1)
            row = dict(hdim=hd, N=N, B=B, H=H, gqa=args.gqa, causal=causal)
            # Flash's gradients are the yardstick for Kiln's (same bf16 inputs).
            qt, kt, vt = (t.transpose(1, 2).detach().requires_grad_() for t in (q, k, v))
            # (Any SDPA backend that takes the shape: GQA may not reach flash.)
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION,
                              SDPBackend.EFFICIENT_ATTENTION]):
                F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, **gqa).backward(do.transpose(1, 2))
            ref = [t.grad.transpose(1, 2) for t in (qt, kt, vt)]
            fwd = runtime.load(spec(variant, hd, ""))
            # Every implementation's backward and forward + backward, timed in
            # rounds (--rounds): clocks drift within a row, so an order fixed
            # across rounds would favour whichever runs first.
            timed = []
            for suffix, name in SCHEDULES.items():
                path = spec(variant, hd, "_bwd" + suffix)
                if path is None:
                    continue
                bwd = runtime.load(path)
                for t in (dq, dk, dv):
                    t.fill_(float("nan"))
                runtime.forward(fwd, q, k, v, o, lse)
                runtime.backward(bwd, q, k, v, o, do, lse, dq, dk, dv)
                torch.cuda.synchronize()
                row[f"{name}_relerr"] = max(relerr(g, r) for g, r in zip((dq, dk, dv), ref))

                def kiln_bwd(bwd=bwd):
                    runtime.backward(bwd, q, k, v, o, do, lse, dq, dk, dv)

                def kiln_fb(bwd=bwd):
                    runtime.forward(fwd, q, k, v, o, lse)
                    runtime.backward(bwd, q, k, v, o, do, lse, dq, dk, dv)
                timed += [(f"{name}_bwd_ms", kiln_bwd), (f"{name}_fb_ms", kiln_fb)]
            for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                try:
                    with sdpa_kernel([be]):
                        out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, **gqa)

                    def peer_bwd(be=be, out=out):
                        with sdpa_kernel([be]):
                            torch.autograd.grad(out, (qt, kt, vt), do.transpose(1, 2), retain_graph=True)

                    def peer_fb(be=be):
                        with sdpa_kernel([be]):
                            qt.grad = kt.grad = vt.grad = None
                            F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, **gqa).backward(do.transpose(1, 2))
                    peer_bwd()
                    peer_fb()
                    timed += [(f"{name}_bwd_ms", peer_bwd), (f"{name}_fb_ms", peer_fb)]
                except Exception as e:  # a peer that does not support the shape
                    row[f"{name}_error"] = str(e)[:80]
            spread = 0.0
            for key, (ms, sp) in bench_rounds(timed, args.rounds).items():
                row[key] = ms
                spread = max(spread, sp)
            row["spread"] = spread
            for name in list(SCHEDULES.values()) + ["flash", "cudnn"]:
                if f"{name}_fb_ms" in row:
                    row[f"{name}_bwd_tflops"] = 2.5 * fwd_flops / row[f"{name}_bwd_ms"] / 1e9
                    row[f"{name}_fb_tflops"] = 3.5 * fwd_flops / row[f"{name}_fb_ms"] / 1e9
            rows.append(row)
            print(json.dumps(row), flush=True)
            del qt, kt, vt, ref
        del q, k, v, do, o, dq, dk, dv, lse
        torch.cuda.empty_cache()

out = os.environ.get("OUT", "/tmp")
json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(os.path.join(out, "bench_backward.json"), "w"),
          indent=1)
print(f"\nfwd+bwd TFLOP/s (bwd-only in brackets), {torch.cuda.get_device_name()}")
names = [n for n in SCHEDULES.values() if any(n + "_fb_tflops" in r for r in rows)]
print(f"{'hdim':>4} {'N':>6} {'causal':>6} " + " ".join(f"{n:>13}" for n in names + ["flash", "cudnn"]) +
      f" {'k/flash':>7} {'k/cudnn':>7} {'spread':>6} {'relerr':>8}")
for r in rows:
    f = lambda n: f"{r[n + '_fb_tflops']:5.1f} ({r[n + '_bwd_tflops']:5.1f})" if n + "_fb_tflops" in r else f"{'n/a':>13}"
    # Ratios of the default schedule (what a user gets) to the peers.
    ratio = lambda peer, k="kiln": (f"{r[k + '_fb_tflops'] / r[peer + '_fb_tflops']:7.2f}"
                                    if peer + "_fb_tflops" in r and k + "_fb_tflops" in r else "    n/a")
    err = max(r.get(n + "_relerr", 0) for n in names)
    print(f"{r['hdim']:4d} {r['N']:6d} {str(r['causal']):>6} " + " ".join(f(n) for n in names + ["flash", "cudnn"]) +
          f" {ratio('flash')} {ratio('cudnn')} {r['spread']:6.1%} {err:8.1e}")
