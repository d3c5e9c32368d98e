"""Variants with mods: Kiln's softcap, ALiBi and document-mask attention next
to FlexAttention with the same score_mod / mask_mod, in one process on one GPU.

Kiln runs the specs of `kiln compile examples/alibi.mlir` and
`examples/document_mask.mlir` (forward, and the backward with `--backward`)
through the runtime's C API, the captured tensors (ALiBi's per-head slopes,
the per-token document ids) passed as captures. FlexAttention runs under
torch.compile with the same mods; its block mask is built by
create_block_mask, timed on its own and together with the attention (a new
document layout needs a new block mask). Both are checked against each other
in the same run; every implementation of a row is timed --rounds times in a
rotated order (the median reported, and the row's largest spread), as clocks
drift within a row.

  python3 bench/bench_mods.py --lib build/lib/libkiln_runtime.so --specs DIR

DIR holds <variant>_hd<D>.cubin.json and <variant>_hd<D>_bwd.cubin.json for
variant in {softcap, causal, alibi, document_mask} (causal: the mod-free
reference the others are held to); <variant>_hd<D><ablation>[_bwd] is timed
next to them where present (`--ablation`, default `_precise`: compiled with
--no-fast-math, the fast-math ablation; `_nosplit`: --no-split-position-differences). Shapes: 16384 tokens per batch, hidden
2048, 8 documents of random lengths per sequence. FLOPs count the visible
(query, key) pairs: 4 * B * H * pairs * D forward, 3.5x that forward+backward.
"""
import argparse, json, os, sys

import torch
from torch.nn.attention.flex_attention import flex_attention, create_block_mask

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime
from measure import bench_rounds, relerr

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
p.add_argument("--hdims", default="128")
p.add_argument("--seqlens", default="4096,16384")
p.add_argument("--docs", type=int, default=8)
p.add_argument("--rounds", type=int, default=3,
               help="time every implementation this many times in a rotated order, report the median")
p.add_argument("--ablation", default="_precise",
               help="the specs' suffix timed in the second column (default _precise: --no-fast-math)")
args = p.parse_args()

dev, dt = "cuda", torch.bfloat16
runtime = Runtime(args.lib)
flex = torch.compile(flex_attention, dynamic=False)
torch._dynamo.config.cache_size_limit = 256


def load(variant, hd, suffix):
    path = os.path.join(args.specs, f"{variant}_hd{hd}{suffix}.cubin.json")
    return runtime.load(path) if os.path.exists(path) else None


def doc_ids(N, docs, gen):
    """Per-token document ids: `docs` documents with random boundaries."""
    cuts = torch.randperm(N - 1, generator=gen)[: docs - 1].sort().values + 1
    lengths = torch.diff(torch.cat([torch.tensor([0]), cuts, torch.tensor([N])]))
    return torch.repeat_interleave(torch.arange(docs, dtype=torch.int32), lengths).to(dev), lengths


rows = []
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__}", flush=True)
gen = torch.Generator().manual_seed(0)
for hd in [int(x) for x in args.hdims.split(",")]:
    for N in [int(x) for x in args.seqlens.split(",")]:
        B, H = max(1, 16384 // N), 2048 // hd
        q = torch.randn(B, N, H, hd, device=dev, dtype=dt)
        k, v, do = torch.randn_like(q), torch.randn_like(q), torch.randn_like(q)
        o, dq, dk, dv = (torch.empty_like(q) for _ in range(4))
        lse = torch.empty(B, H, N, device=dev, dtype=torch.float32)
        t = lambda x: x.transpose(1, 2)  # Kiln's [B, N, H, D] as Flex's [B, H, N, D]
        slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / H) for i in range(H)], device=dev, dtype=torch.float32)
        docs, lengths = doc_ids(N, args.docs, gen)

        def softcap_mod(score, b, h, qi, ki):
            return 20.0 * torch.tanh(score / 20.0)

        def causal(b, h, qi, ki):
            return qi >= ki

        def alibi_mod(score, b, h, qi, ki):
            return score + slopes[h] * (ki - qi).to(torch.float32)

        def doc_mask(b, h, qi, ki):
            return (qi >= ki) & (docs[qi] == docs[ki])

        cases = {
            # name: (captures, Flex kwargs builder, mask_mod for the block mask, visible pairs)
            "softcap": ([], lambda bm: dict(score_mod=softcap_mod), None, N * N),
            # No mod: the reference the others are held to (>= 0.9x of it).
            "causal": ([], lambda bm: dict(block_mask=bm), causal, N * (N + 1) // 2),
            "alibi": ([slopes], lambda bm: dict(score_mod=alibi_mod, block_mask=bm), causal, N * (N + 1) // 2),
            "document_mask": ([docs, docs], lambda bm: dict(block_mask=bm), doc_mask,
                              int(sum(n * (n + 1) // 2 for n in lengths.tolist()))),
        }
        for variant, (captures, flex_kwargs, mask_mod, pairs) in cases.items():
            fwd, bwd = load(variant, hd, ""), load(variant, hd, "_bwd")
            if fwd is None:
                print(f"no spec for {variant} hd{hd}", flush=True)
                continue
            flops = 4 * B * H * pairs * hd
            row = dict(variant=variant, hdim=hd, N=N, B=B, H=H, docs=args.docs if variant == "document_mask" else 0)
            torch._dynamo.reset()
            make_mask = (lambda: create_block_mask(mask_mod, None, None, N, N, device=dev)) if mask_mod else (
                lambda: None)
            bm = make_mask()
            timed = []
            if mask_mod:
                timed.append(("flex_block_mask_ms", make_mask))
            qt, kt, vt = (t(x).detach().requires_grad_() for x in (q, k, v))
            flex_fwd = lambda: flex(qt, kt, vt, **flex_kwargs(bm))
            ref = flex_fwd()
            ref.backward(t(do))
            ref_grads = [x.grad for x in (qt, kt, vt)]

            o.fill_(float("nan"))
            runtime.forward(fwd, q, k, v, o, lse, captures)
            torch.cuda.synchronize()
            row["kiln_vs_flex_relerr"] = relerr(t(o), ref)
            timed.append(("kiln_fwd_ms", lambda: runtime.forward(fwd, q, k, v, o, lse, captures)))
            precise, precise_bwd = load(variant, hd, args.ablation), load(variant, hd, args.ablation + "_bwd")
            if precise is not None:
                timed.append(("kiln_precise_fwd_ms", lambda: runtime.forward(precise, q, k, v, o, lse, captures)))

            def flex_fwd_only():
                with torch.no_grad():
                    flex_fwd()

            def flex_fwd_with_mask():
                with torch.no_grad():
                    flex(qt, kt, vt, **flex_kwargs(make_mask()))

            def flex_fb():
                qt.grad = kt.grad = vt.grad = None
                flex_fwd().backward(t(do))
            timed += [("flex_fwd_ms", flex_fwd_only), ("flex_fwd_with_mask_ms", flex_fwd_with_mask),
                      ("flex_fb_ms", flex_fb)]
            if bwd is not None:
                for g in (dq, dk, dv):
                    g.fill_(float("nan"))
                runtime.backward(bwd, q, k, v, o, do, lse, dq, dk, dv, captures)
                torch.cuda.synchronize()
                row["kiln_grad_vs_flex_relerr"] = max(relerr(t(g), r) for g, r in zip((dq, dk, dv), ref_grads))

                def kiln_fb():
                    runtime.forward(fwd, q, k, v, o, lse, captures)
                    runtime.backward(bwd, q, k, v, o, do, lse, dq, dk, dv, captures)
                timed.append(("kiln_fb_ms", kiln_fb))
                if precise is not None and precise_bwd is not None:
                    def kiln_precise_fb():
                        runtime.forward(precise, q, k, v, o, lse, captures)
                        runtime.backward(precise_bwd, q, k, v, o, do, lse, dq, dk, dv, captures)
                    timed.append(("kiln_precise_fb_ms", kiln_precise_fb))
            row["spread"] = 0.0
            for key, (ms, spread) in bench_rounds(timed, args.rounds).items():
                row[key] = ms
                row["spread"] = max(row["spread"], spread)
            for key in ("kiln_fwd", "kiln_precise_fwd", "flex_fwd", "flex_fwd_with_mask"):
                if key + "_ms" in row:
                    row[key + "_tflops"] = flops / row[key + "_ms"] / 1e9
            for key in ("kiln_fb", "kiln_precise_fb", "flex_fb"):
                if key + "_ms" in row:
                    row[key + "_tflops"] = 3.5 * flops / row[key + "_ms"] / 1e9
            rows.append(row)
            print(json.dumps(row), flush=True)
            del qt, kt, vt, ref, ref_grads
        del q, k, v, do, o, dq, dk, dv, lse
        torch.cuda.empty_cache()

out = os.environ.get("OUT", "/tmp")
json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(os.path.join(out, "bench_mods.json"), "w"),
          indent=1)
print(f"\nTFLOP/s of visible pairs, {torch.cuda.get_device_name()}; Flex fwd with mask = create_block_mask + attention")
abl = args.ablation.lstrip("_")[:7]
cols = [("kiln", "kiln_fwd_tflops"), (abl, "kiln_precise_fwd_tflops"), ("flex", "flex_fwd_tflops"),
        ("flex+bm", "flex_fwd_with_mask_tflops"), ("kiln fb", "kiln_fb_tflops"),
        (abl[:4] + " fb", "kiln_precise_fb_tflops"), ("flex fb", "flex_fb_tflops")]
print(f"{'variant':>13} {'hd':>3} {'N':>6} " + " ".join(f"{c:>7}" for c, _ in cols) +
      f" {'k/flex':>6} {'k/f+bm':>6} {'fb k/f':>6} {'err':>7} {'grad err':>8} {'spread':>6}")
for r in rows:
    val = lambda key: f"{r[key]:7.1f}" if key in r else f"{'n/a':>7}"
    ratio = lambda a, b: f"{r[a] / r[b]:6.2f}" if a in r and b in r else f"{'n/a':>6}"
    print(f"{r['variant']:>13} {r['hdim']:3d} {r['N']:6d} " + " ".join(val(k) for _, k in cols) +
          f" {ratio('kiln_fwd_tflops', 'flex_fwd_tflops')} {ratio('kiln_fwd_tflops', 'flex_fwd_with_mask_tflops')}"
          f" {ratio('kiln_fb_tflops', 'flex_fb_tflops')} {r['kiln_vs_flex_relerr']:7.1e}"
          f" {r.get('kiln_grad_vs_flex_relerr', float('nan')):8.1e} {r['spread']:6.1%}")
