"""Attention across variants, head dims and sequence lengths: Kiln next to
SDPA's FlashAttention-2 and cuDNN and FlexAttention (torch.compile), forward
and, with --backward, forward + backward, in one process on one GPU: the
benchmark of issues 9 and 10.

  python3 bench/bench_attention.py --lib build/lib/libkiln_runtime.so --specs DIR \
      [--hdims 64,128,256] [--seqlens 1024,2048,4096,8192,16384] [--variants plain,causal,...] \
      [--backward] [--ablations nows,nopersist,...] [--json OUT.json]

DIR holds the specs `bench/prepare-attention.sh` compiles (no MLIR needed
here): <spec>_hd<D>.cubin.json per variant (the forward), <spec>_hd<D>_bwd
(the backward), and <spec>_hd<D>_<ablation>[_bwd] for each --ablations name
present (<spec>_hd<D>_bs128_<ablation>[_bwd] for the block-sparse document
mask; the same variant compiled with one schedule decision switched off;
a missing forward ablation times the default forward with the ablated
backward). Rows without a default spec are left out.

Shapes follow ../shared/bench/peers.py: 16384 tokens per batch (B = 16384 / N),
hidden 2048 (H = 2048 / D query heads; GQA 4:1 has H / 4 KV heads), bf16,
Kiln's layout [B, N, H, D] and the peers' [B, H, N, D] views of the same
memory. FLOPs count the visible (query, key) pairs: 4 * B * H * pairs * D
forward, 3.5x that forward + backward. SDPA runs the variants it can express
(plain, causal, GQA causal); FlexAttention runs every variant with the same
score_mod / mask_mod and a block mask from create_block_mask, whose time is
reported on its own (`flex_build`). The document mask runs Kiln's
block-sparse program on lists built by Kiln's generated builder (its time on
its own, `kiln_build`), next to the dense document-mask kernel
(`kiln_dense`).

Correctness in the same run: Kiln's output (and gradients) against
FlexAttention's with the same mods, or SDPA's FlashAttention-2 where Flex
cannot run the shape; a row fails above --tolerance relative L2. Every
implementation of a row is timed --rounds times in a rotated order (clocks
drift within a row) and the median reported with the row's largest spread.
"""
import argparse, json, os, sys, time

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime
from measure import bench_rounds, relerr

ALL_VARIANTS = "plain,causal,softcap,causal_softcap,sliding_window,alibi,document_mask,gqa_causal"

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
p.add_argument("--hdims", default="64,128,256")
p.add_argument("--seqlens", default="1024,2048,4096,8192,16384")
p.add_argument("--variants", default=ALL_VARIANTS)
p.add_argument("--backward", action="store_true", help="also forward + backward")
p.add_argument("--ablations", default="",
               help="comma-separated spec suffixes (without the underscore) timed next to the default")
p.add_argument("--docs", type=int, default=8, help="documents per sequence in the document-mask rows")
p.add_argument("--doc-blocks", default="",
               help="comma-separated QBxKB: the document mask also on block lists of QB queries x KB keys "
                    "(rows document_mask_QBxKB; specs <spec>_hd<D>_bsQBxKB[_bwd|_build])")
p.add_argument("--window", type=int, default=128, help="examples/sliding_window.mlir's window")
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--tolerance", type=float, default=1e-2)
p.add_argument("--budget", type=float, default=0,
               help="seconds: start no new row after this long (0: no limit), so that a time-limited call "
                    "still prints its table")
p.add_argument("--json", default=os.path.join(os.environ.get("OUT", "/tmp"), "bench_attention.json"))
args = p.parse_args()

dev, dt = "cuda", torch.bfloat16
runtime = Runtime(args.lib)
flex = torch.compile(flex_attention, dynamic=False)
torch._dynamo.config.cache_size_limit = 256
ablations = [a for a in args.ablations.split(",") if a]
LISTS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
         "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices"]


loaded = {}


def load(name):
    """The program of a spec (loaded once), None where it was not compiled."""
    if name not in loaded:
        path = os.path.join(args.specs, name + ".cubin.json")
        loaded[name] = runtime.load(path) if os.path.exists(path) else None
    return loaded[name]


def save():
    json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__, backward=args.backward,
                   ablations=ablations, rows=rows), open(args.json, "w"), indent=1)


def causal(b, h, qi, ki):
    return qi >= ki


def softcap(score, b, h, qi, ki):
    return 20.0 * torch.tanh(score / 20.0)


def variant_table(N, H, gen):
    """name -> (spec, query heads per KV head, SDPA's is_causal or None
    where SDPA cannot express it, Flex's score_mod, Flex's mask_mod, Kiln's
    captures, visible pairs per (batch, head), and for a block-sparse
    program on lists from Kiln's builder its blocks (QB, KB), else False)."""
    slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / H) for i in range(H)], device=dev, dtype=torch.float32)
    cuts = torch.randperm(N - 1, generator=gen)[: args.docs - 1].sort().values + 1
    lengths = torch.diff(torch.cat([torch.tensor([0]), cuts, torch.tensor([N])]))
    docs = torch.repeat_interleave(torch.arange(args.docs, dtype=torch.int32), lengths).to(dev)
    w = args.window

    def alibi(score, b, h, qi, ki):
        return score + slopes[h] * (ki - qi).to(torch.float32)

    def window(b, h, qi, ki):
        return (qi >= ki) & (qi - ki <= w)

    def document(b, h, qi, ki):
        return (qi >= ki) & (docs[qi] == docs[ki])

    tri = N * (N + 1) // 2
    table = {
        "plain": ("plain", 1, False, None, None, [], N * N, False),
        "causal": ("causal", 1, True, None, causal, [], tri, False),
        "softcap": ("softcap", 1, None, softcap, None, [], N * N, False),
        "causal_softcap": ("causal_softcap", 1, None, softcap, causal, [], tri, False),
        "sliding_window": ("sliding_window", 1, None, None, window, [],
                           sum(min(i, w) + 1 for i in range(N)), False),
        "alibi": ("alibi", 1, None, alibi, causal, [slopes], tri, False),
        "document_mask": ("document_mask", 1, None, None, document, [docs, docs],
                          int(sum(n * (n + 1) // 2 for n in lengths.tolist())), (128, 128)),
        "gqa_causal": ("gqa_causal", 4, True, None, causal, [], tri, False),
    }
    # The document mask on lists of other blocks (QB queries x KB keys):
    # document_mask_<QB>x<KB>, the specs <spec>_hd<D>_bs<QB>x<KB>.
    for blocks in args.doc_blocks.split(","):
        if blocks:
            qb, kb = (int(x) for x in blocks.split("x"))
            table[f"document_mask_{qb}x{kb}"] = table["document_mask"][:7] + ((qb, kb),)
    return table


def named(program, tensors):
    """The tensors a program names (a block-sparse backward reads only some lists)."""
    return {n: t for n, t in tensors.items() if n in program.tensor_names}


rows, failures = [], []
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__}", flush=True)
gen = torch.Generator().manual_seed(0)
start = time.monotonic()
for hd in [int(x) for x in args.hdims.split(",")]:
    for N in [int(x) for x in args.seqlens.split(",")]:
        B, H = max(1, 16384 // N), 2048 // hd
        table = variant_table(N, H, gen)
        for name in args.variants.split(","):
            if args.budget and time.monotonic() - start > args.budget:
                print(f"budget spent: {name} hd{hd} N{N} and later rows left out", flush=True)
                break
            spec, group, sdpa_causal, score_mod, mask_mod, captures, pairs, sparse = table[name]
            base = f"{spec}_hd{hd}"
            # (The block-sparse specs: _bs128 for 128 x 128 blocks, else
            # _bs<QB>x<KB>.)
            bs = ("" if not sparse else f"_bs{sparse[0]}" if sparse[0] == sparse[1]
                  else f"_bs{sparse[0]}x{sparse[1]}")
            fwd = load(base + bs)
            if fwd is None:
                print(f"no spec {base}: {name} hd{hd} left out", flush=True)
                continue
            bwd = load(base + bs + "_bwd") if args.backward else None
            Hkv = H // group
            q = torch.randn(B, N, H, hd, device=dev, dtype=dt)
            k = torch.randn(B, N, Hkv, hd, device=dev, dtype=dt)
            v, do = torch.randn_like(k), torch.randn_like(q)
            o, dq, dk, dv = torch.empty_like(q), torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
            lse = torch.empty(B, H, N, device=dev, dtype=torch.float32)
            qt, kt, vt = (x.transpose(1, 2).detach().requires_grad_() for x in (q, k, v))
            dot = do.transpose(1, 2)
            flops = 4 * B * H * pairs * hd
            row = dict(variant=name, hdim=hd, N=N, B=B, H=H, Hkv=Hkv)
            timed = []

            # Kiln's lists for the block-sparse program: the generated builder.
            lists = {}
            if sparse:
                builder = load(base + bs + "_build")
                nq, nk = (N + sparse[0] - 1) // sparse[0], (N + sparse[1] - 1) // sparse[1]
                # One head's lists per sequence (the mask does not read the
                # head): per query block its key blocks, per key block (the
                # q_ lists) its query blocks.
                built = {n: torch.empty(B, 1, *((nk, nq) if n.startswith(("q_", "full_q_")) else (nq, nk))
                                        [:2 if "indices" in n else 1], device=dev, dtype=torch.int32)
                         for n in LISTS}
                build = lambda builder=builder, built=built: builder(q=q, k=k, captures=captures,
                                                                     **named(builder, built))
                build()
                lists = {n: t.expand(B, H, *t.shape[2:]) for n, t in built.items()}
                timed.append(("kiln_build_ms", build))
                dense = load(base)
                if dense is not None:
                    timed.append(("kiln_dense_fwd_ms",
                                  lambda dense=dense: dense(q=q, k=k, v=v, out=o, lse=lse, captures=captures)))

            def kiln_fwd(program=fwd):
                program(q=q, k=k, v=v, out=o, lse=lse, captures=captures, **named(program, lists))

            def kiln_fb(f=fwd, b=bwd):
                f(q=q, k=k, v=v, out=o, lse=lse, captures=captures, **named(f, lists))
                b(q=q, k=k, v=v, out=o, dout=do, lse=lse, dq=dq, dk=dk, dv=dv, captures=captures,
                  **named(b, lists))

            # The reference: FlexAttention with the same mods, else SDPA flash.
            torch._dynamo.reset()
            bm = None
            ref = ref_grads = None
            try:
                if mask_mod is not None:
                    # Flex's fastest build (compiled), as bench_block_sparse.py times it.
                    make_mask = lambda: create_block_mask(mask_mod, None, None, N, N, device=dev, _compile=True)
                    bm = make_mask()
                    timed.append(("flex_build_ms", make_mask))
                flex_kw = dict(score_mod=score_mod, block_mask=bm, enable_gqa=group > 1)
                out = flex(qt, kt, vt, **flex_kw)
                ref, ref_name = out.detach(), "flex"
                if args.backward:
                    ref_grads = torch.autograd.grad(out, (qt, kt, vt), dot)

                def flex_fwd():
                    with torch.no_grad():
                        flex(qt, kt, vt, **flex_kw)

                def flex_fb():
                    torch.autograd.grad(flex(qt, kt, vt, **flex_kw), (qt, kt, vt), dot)
                timed.append(("flex_fwd_ms", flex_fwd))
                if args.backward:
                    timed.append(("flex_fb_ms", flex_fb))
            except Exception as e:  # a shape Flex does not take (e.g. its shared memory at D = 256)
                row["flex_error"] = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
            if sdpa_causal is not None:
                sdpa_kw = dict(is_causal=sdpa_causal, enable_gqa=group > 1)
                for peer, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                    try:
                        with sdpa_kernel([be]):
                            out = F.scaled_dot_product_attention(qt, kt, vt, **sdpa_kw)
                            grads = torch.autograd.grad(out, (qt, kt, vt), dot) if args.backward else None
                        if ref is None and peer == "flash":
                            ref, ref_grads, ref_name = out.detach(), grads, "flash"

                        def peer_fwd(be=be):
                            with sdpa_kernel([be]), torch.no_grad():
                                F.scaled_dot_product_attention(qt, kt, vt, **sdpa_kw)

                        def peer_fb(be=be):
                            with sdpa_kernel([be]):
                                torch.autograd.grad(F.scaled_dot_product_attention(qt, kt, vt, **sdpa_kw),
                                                    (qt, kt, vt), dot)
                        timed.append((f"{peer}_fwd_ms", peer_fwd))
                        if args.backward:
                            timed.append((f"{peer}_fb_ms", peer_fb))
                    except Exception as e:
                        row[f"{peer}_error"] = str(e).splitlines()[0][:120] if str(e) else type(e).__name__

            # Kiln, checked against the reference before it is timed.
            o.fill_(float("nan"))
            kiln_fwd()
            torch.cuda.synchronize()
            if ref is not None:
                row["ref"] = ref_name
                row["kiln_relerr"] = relerr(o.transpose(1, 2), ref)
            timed.append(("kiln_fwd_ms", kiln_fwd))
            if bwd is not None:
                for g in (dq, dk, dv):
                    g.fill_(float("nan"))
                kiln_fb()
                torch.cuda.synchronize()
                if ref_grads is not None:
                    row["kiln_grad_relerr"] = max(relerr(g.transpose(1, 2), r)
                                                  for g, r in zip((dq, dk, dv), ref_grads))
                timed.append(("kiln_fb_ms", kiln_fb))
            # An ablation compares like with like: a block-sparse row's
            # ablation is a block-sparse spec too (<spec>_hd<D>_bs128_<name>),
            # not the dense one its name would otherwise find.
            abase = base + bs
            for abl in ablations:
                afwd = load(f"{abase}_{abl}")
                abwd = load(f"{abase}_{abl}_bwd") if bwd is not None else None
                if afwd is not None:
                    timed.append((f"kiln_{abl}_fwd_ms", lambda f=afwd: kiln_fwd(f)))
                if afwd is not None and bwd is not None or abwd is not None:
                    timed.append((f"kiln_{abl}_fb_ms", lambda f=afwd or fwd, b=abwd or bwd: kiln_fb(f, b)))
            # Ablations are checked too, the output and (forward + backward)
            # the gradients: a faster wrong kernel is no datum.
            for key, fn in timed:
                if key.startswith("kiln_") and key not in ("kiln_fwd_ms", "kiln_fb_ms", "kiln_build_ms") \
                        and ref is not None:
                    o.fill_(float("nan"))
                    for g in (dq, dk, dv):
                        g.fill_(float("nan"))
                    fn()
                    torch.cuda.synchronize()
                    row[key.replace("_ms", "_relerr")] = relerr(o.transpose(1, 2), ref)
                    if key.endswith("_fb_ms") and ref_grads is not None:
                        row[key.replace("_ms", "_grad_relerr")] = max(
                            relerr(g.transpose(1, 2), r) for g, r in zip((dq, dk, dv), ref_grads))

            # The row's spread is over the attention calls; the list builds
            # (create_block_mask is host-bound) keep theirs apart.
            row["spread"] = row["build_spread"] = 0.0
            for key, (ms, spread) in bench_rounds(timed, args.rounds).items():
                row[key] = ms
                which = "build_spread" if key.endswith("_build_ms") else "spread"
                row[which] = max(row[which], spread)
            for key in list(row):
                if key.endswith("_fwd_ms"):
                    row[key.replace("_ms", "_tflops")] = flops / row[key] / 1e9
                elif key.endswith("_fb_ms"):
                    row[key.replace("_ms", "_tflops")] = 3.5 * flops / row[key] / 1e9
            errs = [v for key, v in row.items() if key.endswith("_relerr")]
            row["pass"] = bool(errs) and all(e <= args.tolerance for e in errs)
            if not row["pass"]:
                failures.append(f"{name} hd{hd} N{N}")
            rows.append(row)
            save()  # after every row: a call cut short keeps what it measured
            print(json.dumps(row), flush=True)
            del q, k, v, do, o, dq, dk, dv, lse, qt, kt, vt, ref, ref_grads, timed
            torch.cuda.empty_cache()

save()
mode = "forward (forward + backward)" if args.backward else "forward"
print(f"\nTFLOP/s of visible pairs, {mode}, {torch.cuda.get_device_name()}; ratios are Kiln's")
print(f"{'variant':>15} {'hd':>3} {'N':>6} {'kiln':>13} {'flash':>13} {'cudnn':>13} {'flex':>13} "
      f"{'/cudnn':>11} {'/flex':>11} {'err':>7} {'spread':>6}")
for r in rows:
    def col(n):
        f, b = r.get(f"{n}_fwd_tflops"), r.get(f"{n}_fb_tflops")
        return (f"{f:5.0f}" if f else "  n/a") + (f" ({b:5.0f})" if b else " " * 8)

    def ratio(n):
        f = r["kiln_fwd_tflops"] / r[f"{n}_fwd_tflops"] if f"{n}_fwd_tflops" in r else None
        b = (r["kiln_fb_tflops"] / r[f"{n}_fb_tflops"]) if f"{n}_fb_tflops" in r and "kiln_fb_tflops" in r else None
        return (f"{f:4.2f}" if f else " n/a") + (f" ({b:4.2f})" if b else " " * 7)
    err = max([v for key, v in r.items() if key.endswith("_relerr")] or [float("nan")])
    print(f"{r['variant']:>15} {r['hdim']:3d} {r['N']:6d} {col('kiln')} {col('flash')} {col('cudnn')} {col('flex')} "
          f"{ratio('cudnn')} {ratio('flex')} {err:7.1e} {r['spread']:6.1%}")
print(f"{len(rows) - len(failures)}/{len(rows)} rows PASS against the reference (tolerance {args.tolerance})"
      + (": FAIL " + ", ".join(failures) if failures else ""))
sys.exit(1 if failures else 0)
