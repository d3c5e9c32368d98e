"""Dropout's cost: Kiln's forward and forward + backward with dropout_p next
to the same variant without it, and SDPA's FlashAttention-2 with and without
the same p, in one process on one GPU (same do_bench for all).

  python3 bench/bench_dropout.py --lib build/lib/libkiln_runtime.so --specs DIR

DIR holds, for variant in {plain, causal} and each head dim D,
<variant>_hd<D>.cubin.json and <variant>_hd<D>_bwd.cubin.json (`kiln
compile [--backward]`) and the same compiled with `--dropout P` as
<variant>_hd<D>_drop.cubin.json and <variant>_hd<D>_drop_bwd.cubin.json; the
ablations, when present: `_drop_m192` (the forward at 192-row tiles, `--block-m
192`: what the tiles were before dropout counted in attn-choose-tiles) and
`_drop_qk_bwd` (the dK/dV kernel on S = Q Kᵀ, `--no-keys-by-queries`: 8
uniforms per Philox call there instead of 4), `_drop_noov` and
`_drop_noov_bwd` (`--no-overlap-products`: the bits drawn after S's product
completed instead of under it), `_drop_pingpong` (`--ping-pong`: the consumer
warpgroups take turns issuing their products, so one draws its bits and
exponentials under the other's) and `_drop_pp` (`--pipeline-products`: each
step's softmax and bits under the previous step's P·V), `_drop_m192n64` and
`_drop_n64` (`--block-m 192 --block-n 64`, `--block-m 128 --block-n 64`: half
the uniforms' registers per step), forward only; `_drop_pb` and `_drop_pb_bwd`
(`--producer-bits`: the producer warpgroup draws the keep bits into shared
memory instead of each consumer thread drawing its own), `_drop_ps3` and
`_drop_ps4` (`--producer-bits-share 3` / `4`: the producer draws 3 or 4
eighths of them, the consumers the rest), forward only; `_drop_nolp_bwd`
(`--no-philox-lane-pairs`: the dK/dV kernel's bits at one Philox call per 4
elements in each lane rather than one per 8 shared by lane pairs), timed
after the default forward; `_drop8` and `_drop8_bwd` (`--dropout-bits 8`:
8-bit uniforms, one Philox call per 16 elements, p rounded to 1/256; their
bits checked against the 8-bit reference), `_drop8_m192` and
`_drop8_m192n128` (8-bit with `--block-m 192`, and `--block-n 128` too:
three consumer warpgroups), forward only. `any!=` is the
worst bit count over every dropout schedule present.
Shapes follow ../shared/bench/peers.py (16384 tokens per batch, hidden 2048).
Checked in the same run: with V = 1 every output element is sum_kv P Z, whose
mean over the tensor is 1 when the scaled mask Z is unbiased (`mean|V=1`);
through a one-hot V over the first D keys the output reads P Z of those keys
back, zero exactly where dropped: the drop rate (`dropped`) and the number of
elements of 256 rows whose kept/dropped bit differs from python/kiln/dropout.py
(`bits!=`, must be 0: the same bits as the CPU backend and the reference).
"""
import argparse, importlib.util, json, os, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime
from measure import bench

# The bits' definition, loaded alone (the kiln package would load libkiln.so).
_spec = importlib.util.spec_from_file_location(
    "kiln_dropout", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "kiln", "dropout.py"))
_dropout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_dropout)
threshold, uniforms = _dropout.threshold, _dropout.uniforms

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
p.add_argument("--hdims", default="64,128")
p.add_argument("--seqlens", default="4096,16384")
p.add_argument("--p", type=float, default=0.1, help="the p the _drop specs were compiled with")
args = p.parse_args()

dev, dt = "cuda", torch.bfloat16
# Kiln's columns: (column, forward spec suffix, backward spec suffix or None);
# every column but "kiln" passes the dropout's tensor. Then the peers'.
SCHEDULES = (("kiln", "", "_bwd"), ("kiln_drop", "_drop", "_drop_bwd"), ("kiln_drop_m192", "_drop_m192", None),
             ("kiln_drop_qk", "_drop", "_drop_qk_bwd"), ("kiln_drop_noov", "_drop_noov", "_drop_noov_bwd"),
             ("kiln_drop_pingpong", "_drop_pingpong", None), ("kiln_drop_pp", "_drop_pp", None),
             ("kiln_drop_m192n64", "_drop_m192n64", None), ("kiln_drop_n64", "_drop_n64", None),
             ("kiln_drop_pb", "_drop_pb", "_drop_pb_bwd"), ("kiln_drop_ps3", "_drop_ps3", None),
             ("kiln_drop_ps4", "_drop_ps4", None), ("kiln_drop_nolp", "_drop", "_drop_nolp_bwd"),
             ("kiln_drop8", "_drop8", "_drop8_bwd"), ("kiln_drop8_m192", "_drop8_m192", None),
             ("kiln_drop8_m192n128", "_drop8_m192n128", None))
COLUMNS = [tag for tag, _, _ in SCHEDULES] + ["flash", "flash_drop"]
runtime = Runtime(args.lib)


def spec(name):
    path = os.path.join(args.specs, name + ".cubin.json")
    return runtime.load(path) if os.path.exists(path) else None


rows = []
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__} p={args.p}", flush=True)
for hd in [int(x) for x in args.hdims.split(",")]:
    for N in [int(x) for x in args.seqlens.split(",")]:
        B, H = max(1, 16384 // N), 2048 // hd
        q = torch.randn(B, N, H, hd, device=dev, dtype=dt)
        k, v, do = torch.randn_like(q), torch.randn_like(q), torch.randn_like(q)
        o, dq, dk, dv = (torch.empty_like(q) for _ in range(4))
        lse = torch.empty(B, H, N, device=dev, dtype=torch.float32)
        seed, offset = 0x0123456789ABCDEF, (5 << 32) + 9  # the offset's high word in the key too
        rng = torch.tensor([seed, offset], device=dev, dtype=torch.int64)
        for causal in (False, True):
            variant = "causal" if causal else "plain"
            fwd_flops = 4 * B * H * N * N * hd / (2 if causal else 1)
            row = dict(hdim=hd, N=N, causal=causal)
            drop = {"dropout_rng": rng}
            kilns = [(tag, f, b, drop if tag != "kiln" else {}) for tag, f, b in SCHEDULES]
            want = {}  # the reference's bits by uniform width, drawn once per row
            for tag, fwd_suffix, bwd_suffix, extra in kilns:
                fwd = spec(f"{variant}_hd{hd}{fwd_suffix}")
                bwd = spec(f"{variant}_hd{hd}{bwd_suffix}") if bwd_suffix else None
                if fwd is None or (bwd_suffix and bwd is None):
                    continue
                run_fwd = lambda: fwd(q=q, k=k, v=v, out=o, lse=lse, **extra)
                row[f"{tag}_fwd_ms"] = bench(run_fwd)
                if bwd is not None:
                    def fb():
                        run_fwd()
                        bwd(q=q, k=k, v=v, out=o, dout=do, lse=lse, dq=dq, dk=dk, dv=dv, **extra)
                    row[f"{tag}_fb_ms"] = bench(fb)
                if tag.startswith("kiln_drop"):
                    # Unbiased: with V = 1 the outputs average 1.
                    ones = torch.ones_like(v)
                    fwd(q=q, k=k, v=ones, out=o, lse=lse, **extra)
                    mean_v1 = o.float().mean().item()
                    # Dropped fraction: V one-hot over the first 64 keys reads
                    # P Z of (q, kv < 64) back (zero exactly when dropped).
                    onehot = torch.zeros_like(v)
                    onehot[:, :hd, :, :].copy_(torch.eye(hd, device=dev, dtype=dt)[None, :, None, :])
                    fwd(q=q, k=k, v=onehot, out=o, lse=lse, **extra)
                    seen = o[:, hd:, :, :].float()  # rows that see all D keys when causal too
                    dropped = (seen == 0).float().mean().item()
                    rows_q = torch.arange(hd, hd + 256)
                    got = (o[:, hd:hd + 256, :, :] == 0).cpu()  # [B, 256, H, D keys]
                    bits = 8 if tag.startswith("kiln_drop8") else 16
                    if bits not in want:
                        bb, qq, hh, kk = torch.meshgrid(torch.arange(B), rows_q, torch.arange(H), torch.arange(hd),
                                                        indexing="ij")
                        want[bits] = uniforms(seed, offset, bb, hh, qq, kk, bits=bits) >= threshold(args.p, bits=bits)
                    differ = int((got != want[bits]).sum())
                    if tag == "kiln_drop":
                        row.update(mean_v1=mean_v1, dropped=dropped, bits_differ=differ)
                    # every schedule's bits: the worst count over them
                    row["bits_differ_any"] = max(row.get("bits_differ_any", 0), differ)
            qt, kt, vt = (t.transpose(1, 2).contiguous().requires_grad_() for t in (q, k, v))
            dot = do.transpose(1, 2).contiguous()
            for tag, pdrop in (("flash", 0.0), ("flash_drop", args.p)):
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    run = lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, dropout_p=pdrop)
                    with torch.no_grad():
                        row[f"{tag}_fwd_ms"] = bench(run)
                    def fb():
                        out = run()
                        torch.autograd.grad(out, (qt, kt, vt), dot)
                    row[f"{tag}_fb_ms"] = bench(fb)
            for name in COLUMNS:
                for what, mult in (("fwd", 1.0), ("fb", 3.5)):
                    if f"{name}_{what}_ms" in row:
                        row[f"{name}_{what}_tflops"] = mult * fwd_flops / row[f"{name}_{what}_ms"] / 1e9
            rows.append(row)
            print(json.dumps(row), flush=True)
            del qt, kt, vt, dot
        del q, k, v, do, o, dq, dk, dv, lse
        torch.cuda.empty_cache()

out = os.environ.get("OUT", "/tmp")
json.dump(dict(device=torch.cuda.get_device_name(), p=args.p, rows=rows),
          open(os.path.join(out, "bench_dropout.json"), "w"), indent=1)

# TFLOP/s forward (forward + backward); ratios of dropout to no dropout.
names = [n for n in COLUMNS if any(n + "_fwd_tflops" in r for r in rows)]
print(f"{'hdim':>4} {'N':>6} {'causal':>6} " + " ".join(f"{n:>15}" for n in names) +
      f" {'kd/k fwd':>8} {'kd/k f+b':>8} {'kd8/k fwd':>9} {'kd8/k f+b':>9} {'kd/fd f+b':>9} {'mean|V=1':>8} {'dropped':>7} {'bits!=':>6} {'any!=':>6}")
for r in rows:
    f = lambda n: (f"{r[n + '_fwd_tflops']:6.1f} ({r.get(n + '_fb_tflops', float('nan')):6.1f})"
                   if n + "_fwd_tflops" in r else f"{'n/a':>15}")
    ratio = lambda a, b, what: (f"{r[f'{a}_{what}_tflops'] / r[f'{b}_{what}_tflops']:.2f}"
                                if f"{a}_{what}_tflops" in r and f"{b}_{what}_tflops" in r else "n/a")
    print(f"{r['hdim']:4d} {r['N']:6d} {str(r['causal']):>6} " + " ".join(f(n) for n in names) +
          f" {ratio('kiln_drop', 'kiln', 'fwd'):>8} {ratio('kiln_drop', 'kiln', 'fb'):>8}"
          f" {ratio('kiln_drop8', 'kiln', 'fwd'):>9} {ratio('kiln_drop8', 'kiln', 'fb'):>9}"
          f" {ratio('kiln_drop', 'flash_drop', 'fb'):>9} {r.get('mean_v1', float('nan')):8.4f}"
          f" {r.get('dropped', float('nan')):7.4f} {r.get('bits_differ', -1):6d} {r.get('bits_differ_any', -1):6d}")
