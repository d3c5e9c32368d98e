"""Varlen packed batches: Kiln's one launch over 16 sequences of mixed
lengths against the sum of Kiln's launches on each sequence alone (the
padding-free ideal the issue sets), against Kiln on the batch padded to the
longest sequence, and against the peers on the same packed batch:
FlashAttention-2's varlen entry point (aten._flash_attention_forward /
_backward with cu_seqlens, as SDPA calls it) and FlexAttention over the
packed rows with a document mask (create_block_mask, compiled, timed apart), forward
and forward + backward, in one process on one GPU (same do_bench for all).

  python3 bench/bench_varlen.py --lib build/lib/libkiln_runtime.so --specs DIR

DIR holds, for variant in {plain, causal}: <variant>_hd128.cubin.json and
<variant>_hd128_bwd.cubin.json (`kiln compile [--backward]`), and the same
with `--varlen` as <variant>_hd128_varlen[_bwd].cubin.json. Checked in the
same run: Kiln's packed output and gradients against FlashAttention-2's
(relative L2), and against Kiln's per-sequence outputs.
"""
import argparse, json, os, sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime
from measure import bench, relerr

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
p.add_argument("--lens", default="3000,257,1024,64,2048,511,1500,900,4096,128,700,33,1200,1207,96,1500")
p.add_argument("--heads", type=int, default=16)
args = p.parse_args()

dev, dt, hd, H = "cuda", torch.bfloat16, 128, args.heads
runtime = Runtime(args.lib)
lens = [int(x) for x in args.lens.split(",")]
B, T, longest = len(lens), sum(lens), max(lens)
cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), device=dev, dtype=torch.int32)
starts = cu.tolist()


def spec(name):
    path = os.path.join(args.specs, name + ".cubin.json")
    return runtime.load(path) if os.path.exists(path) else None


gen = torch.Generator(device=dev).manual_seed(0)
q, k, v, do = (torch.randn(T, H, hd, device=dev, dtype=dt, generator=gen) for _ in range(4))
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__} B={B} T={T} H={H} D={hd} "
      f"lengths={lens}", flush=True)
rows = []
for causal in (False, True):
    variant = "causal" if causal else "plain"
    row = dict(variant=variant)
    pairs = sum(n * n for n in lens) / (2 if causal else 1)
    fwd_flops = 4 * H * pairs * hd
    fwd, bwd = spec(f"{variant}_hd128_varlen"), spec(f"{variant}_hd128_varlen_bwd")
    dense_fwd, dense_bwd = spec(f"{variant}_hd128"), spec(f"{variant}_hd128_bwd")
    o, dq, dk, dv = (torch.empty_like(t) for t in (q, q, k, v))
    lse = torch.empty(H, T, device=dev, dtype=torch.float32)
    offsets = dict(cu_seqlens_q=cu, cu_seqlens_kv=cu)
    run = lambda: fwd(q=q, k=k, v=v, out=o, lse=lse, **offsets)
    runb = lambda: bwd(q=q, k=k, v=v, out=o, dout=do, lse=lse, dq=dq, dk=dk, dv=dv, **offsets)
    row["kiln_fwd_ms"] = bench(run)
    row["kiln_fb_ms"] = bench(lambda: (run(), runb()))
    run(), runb()
    kiln_out, kiln_grads = o.clone(), [t.clone() for t in (dq, dk, dv)]

    # Each sequence alone: [1, L, H, D] views of the packed rows.
    pieces = []
    for b, n in enumerate(lens):
        sl = slice(starts[b], starts[b + 1])
        qs, ks, vs, dos = (t[sl].unsqueeze(0) for t in (q, k, v, do))
        os_, dqs, dks, dvs = (torch.empty_like(t) for t in (qs, qs, ks, vs))
        ls = torch.empty(1, H, n, device=dev, dtype=torch.float32)
        pieces.append((qs, ks, vs, dos, os_, dqs, dks, dvs, ls))
    each_fwd = [lambda p=p: dense_fwd(q=p[0], k=p[1], v=p[2], out=p[4], lse=p[8]) for p in pieces]
    each_bwd = [lambda p=p: dense_bwd(q=p[0], k=p[1], v=p[2], out=p[4], dout=p[3], lse=p[8], dq=p[5], dk=p[6],
                                      dv=p[7]) for p in pieces]
    row["each_fwd_ms"] = sum(bench(f) for f in each_fwd)
    row["each_fb_ms"] = sum(bench(lambda f=f, g=g: (f(), g())) for f, g in zip(each_fwd, each_bwd))
    for f in each_fwd:
        f()
    row["err_vs_each"] = relerr(kiln_out, torch.cat([p[4][0] for p in pieces]))

    # Padded to the longest: a dense [B, longest, H, D] batch (padding keys
    # would need a mask; timed only, the work a padded launch does).
    qp = torch.randn(B, longest, H, hd, device=dev, dtype=dt, generator=gen)
    op, lp = torch.empty_like(qp), torch.empty(B, H, longest, device=dev, dtype=torch.float32)
    row["padded_fwd_ms"] = bench(lambda: dense_fwd(q=qp, k=qp, v=qp, out=op, lse=lp))
    del qp, op, lp

    # FlashAttention-2's varlen forward and backward (SDPA's flash kernels).
    try:
        def fa_fwd():
            return torch.ops.aten._flash_attention_forward(q, k, v, cu, cu, longest, longest, 0.0, causal, False)
        out_fa, lse_fa, seed_fa, off_fa, _ = fa_fwd()

        def fa_bwd():
            return torch.ops.aten._flash_attention_backward(do, q, k, v, out_fa, lse_fa, cu, cu, longest, longest,
                                                             0.0, causal, seed_fa, off_fa)
        row["fa2_fwd_ms"] = bench(fa_fwd)
        row["fa2_fb_ms"] = bench(lambda: (fa_fwd(), fa_bwd()))
        grads_fa = fa_bwd()
        row["err_vs_fa2"] = relerr(kiln_out, out_fa)
        row["grad_err_vs_fa2"] = max(relerr(a, b) for a, b in zip(kiln_grads, grads_fa))
    except Exception as e:  # noqa: BLE001 - a peer that does not run is reported, not fatal
        row["fa2_error"] = f"{type(e).__name__}: {e}"[:200]

    # FlexAttention: the packed rows as one sequence with a document mask.
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        doc = torch.repeat_interleave(torch.arange(B, device=dev), torch.tensor(lens, device=dev))

        def mask(b, h, qi, ki):
            same = doc[qi] == doc[ki]
            return same & (ki <= qi) if causal else same
        # Flex's fastest mask build: create_block_mask compiled (_compile=True).
        build = lambda: create_block_mask(mask, None, None, T, T, device=dev, _compile=True)
        row["flex_mask_ms"] = bench(build)
        bm = build()
        flex = torch.compile(flex_attention)
        qf, kf, vf = (t.transpose(0, 1).unsqueeze(0).detach().requires_grad_() for t in (q, k, v))
        dof = do.transpose(0, 1).unsqueeze(0)
        row["flex_fwd_ms"] = bench(lambda: flex(qf, kf, vf, block_mask=bm))
        row["flex_fb_ms"] = bench(lambda: torch.autograd.grad(flex(qf, kf, vf, block_mask=bm), (qf, kf, vf), dof))
        row["err_vs_flex"] = relerr(kiln_out, flex(qf, kf, vf, block_mask=bm)[0].transpose(0, 1))
    except Exception as e:  # noqa: BLE001
        row["flex_error"] = f"{type(e).__name__}: {e}"[:200]

    for name in ("kiln", "each", "padded", "fa2", "flex"):
        for what, mult in (("fwd", 1.0), ("fb", 3.5)):
            if f"{name}_{what}_ms" in row and name != "padded":
                row[f"{name}_{what}_tflops"] = mult * fwd_flops / row[f"{name}_{what}_ms"] / 1e9
    rows.append(row)
    print(json.dumps(row), flush=True)

out = os.environ.get("OUT", "/tmp")
json.dump(dict(device=torch.cuda.get_device_name(), lens=lens, heads=H, rows=rows),
          open(os.path.join(out, "bench_varlen.json"), "w"), indent=1)

print(f"{'variant':>7} {'kiln ms':>8} {'each ms':>8} {'each/kiln':>9} {'padded ms':>9} {'fa2 ms':>7} {'kiln/fa2':>8} "
      f"{'flex ms':>8} {'+mask':>6} {'kiln/flex':>9} | f+b: {'kiln':>6} {'each':>6} {'each/kiln':>9} "
      f"{'fa2':>6} {'kiln/fa2':>8} {'flex':>6} | err fa2 / each")
for r in rows:
    g = lambda key: r.get(key, float("nan"))
    print(f"{r['variant']:>7} {g('kiln_fwd_ms'):8.3f} {g('each_fwd_ms'):8.3f} {g('each_fwd_ms') / g('kiln_fwd_ms'):9.2f} "
          f"{g('padded_fwd_ms'):9.3f} {g('fa2_fwd_ms'):7.3f} {g('fa2_fwd_ms') / g('kiln_fwd_ms'):8.2f} "
          f"{g('flex_fwd_ms'):8.3f} {g('flex_mask_ms'):6.3f} "
          f"{(g('flex_fwd_ms') + g('flex_mask_ms')) / g('kiln_fwd_ms'):9.2f} | "
          f"{g('kiln_fb_ms'):6.3f} {g('each_fb_ms'):6.3f} {g('each_fb_ms') / g('kiln_fb_ms'):9.2f} "
          f"{g('fa2_fb_ms'):6.3f} {g('fa2_fb_ms') / g('kiln_fb_ms'):8.2f} {g('flex_fb_ms'):6.3f} | "
          f"{g('err_vs_fa2'):.1e} / {g('err_vs_each'):.1e} (grads {g('grad_err_vs_fa2'):.1e})")
    for key in ("fa2_error", "flex_error"):
        if key in r:
            print(f"  {key}: {r[key]}")
