"""Decoding: one query token (or a few) per sequence against a long KV cache.
Kiln next to PyTorch SDPA (flash = FlashAttention-2, cuDNN) in one process on
one GPU, as ../shared/bench/decode_peers.py measures the peers.

  python3 bench/bench_decode.py --lib build/lib/libkiln_runtime.so --specs DIR

DIR holds plain_hd128.cubin.json (MHA), gqa4_decode_hd128.cubin.json and
gqa8_decode_hd128.cubin.json (examples/gqa_decode.mlir). K and V are
allocated [B, H_kv, L, D] (the peers' contiguous layout); Kiln reads the same
memory as its [B, L, H_kv, D] view. Bandwidth counts K and V read once:
2 * B * H_kv * L * D * 2 bytes. `kiln_nosplit` is the same program run with
kv_splits = 1 (tile-split-kv's ablation, no recompile); `kiln_byrows` the
specs compiled with --combine-by-rows (the combine kernel over 64-row blocks),
`kiln_nopack` the GQA specs compiled with --no-gqa-pack (one decode program
per query head, each reading its group's K and V again); `--variants
_nodecode` adds the specs compiled with --decode-rows 0 (no decode program).
Each row's output is checked against SDPA's math backend in f32 in the same
run. With tree_verify_hd128.cubin.json in DIR (examples/tree_verify.mlir; and
tree_verify_hd128<suffix>.cubin.json for --variants), rows
of a speculative verify step with a random tree of 8, 32 and 64 drafts as an
ancestor bitmask, next to cuDNN with the same boolean mask. With
<spec>_p<S>.cubin.json in DIR (--page-size S), `kiln_p<S>` times the same row
with K and V in a paged KV cache: pools [pages, S, H_kv, D] holding the same
keys in a shuffled page order, a block table and every sequence at length L
(so the bandwidth is comparable with the dense row's). `read` is the
measured read bandwidth the issue's 85% target refers to: torch's f32 sums of
K and of V (two reductions reading every byte once), timed like the others.
"""
import argparse, json, os, re, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime
from measure import bench, bench_gpu, bench_rounds, relerr
from verify_trees import random_tree

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
p.add_argument("--variants", default="_byrows,_nopack",
               help="spec suffixes timed next to the default programs (ablations), when present")
p.add_argument("--only", default="",
               help="a regular expression: run only the rows whose label (as the table prints it, "
                    "e.g. 'B8 H32/8 L8192 Lq64 tree') it matches, e.g. to profile one row")
p.add_argument("--timer", choices=["gpu", "do_bench"], default="gpu",
               help="gpu (default): GPU time with the host's time per call hidden "
                    "(measure.bench_gpu; a decode step is short, and serving runs it in CUDA "
                    "graphs); do_bench: Triton's timer, which shows the host time of calls "
                    "longer than its L2 flush")
p.add_argument("--flush", choices=["dirty", "clean"], default="dirty",
               help="with --timer gpu: the L2 flush before each timed call leaves dirty lines "
                    "(dirty, do_bench's; the call's reads write them back) or clean ones (clean: "
                    "the flush, then a read of another 256 MB)")
p.add_argument("--rounds", type=int, default=3,
               help="time every implementation of a row this many times in a rotated order, "
                    "report the median")
args = p.parse_args()
timer = (lambda fn: bench_gpu(fn, flush=args.flush)) if args.timer == "gpu" else bench

dev, dt, D = "cuda", torch.bfloat16, 128
runtime = Runtime(args.lib)
specs = {1: "plain_hd128", 4: "gqa4_decode_hd128", 8: "gqa8_decode_hd128"}
programs = {g: runtime.load(os.path.join(args.specs, f"{name}.cubin.json")) for g, name in specs.items()}
# The ablation runs a second handle of the same program with kv_splits set
# once, so that no timed call pays for setting it.
unsplit = {g: runtime.load(os.path.join(args.specs, f"{name}.cubin.json")) for g, name in specs.items()}
for p_ in unsplit.values():
    p_.set_symbol("kv_splits", 1)
suffixes = [x for x in args.variants.split(",") if x]
page_sizes = [16, 64, 256]
paged = {(g, ps): runtime.load(path) for g, name in specs.items() for ps in page_sizes
         if os.path.exists(path := os.path.join(args.specs, f"{name}_p{ps}.cubin.json"))}
ablated = {(g, sfx): runtime.load(path) for g, name in specs.items() for sfx in suffixes
           if os.path.exists(path := os.path.join(args.specs, f"{name}{sfx}.cubin.json"))}
# (B, Hq, Hkv, L, Lq): the rows; Lq > 1 is a verify step (causal
# among the new tokens, bottom-right aligned; for MHA the plain variant).
shapes = [(1, 32, 32, 32768, 1), (1, 32, 8, 32768, 1), (16, 32, 8, 8192, 1), (64, 32, 8, 8192, 1),
          (8, 32, 32, 16384, 1), (1, 64, 8, 131072, 1), (8, 32, 8, 8192, 8)]



def paged_cache(k_peer, v_peer, ps, seed):
    """K and V of [B, H_kv, L, D] as pools [pages, ps, H_kv, D] in a shuffled
    page order, the block table [B, L / ps] and the lengths [B]."""
    B, Hkv, L, D_ = k_peer.shape
    n = L // ps
    order = torch.randperm(B * n, generator=torch.Generator().manual_seed(seed)).to(dev)
    pools = []
    for t in (k_peer, v_peer):
        pages = t.transpose(1, 2).reshape(B * n, ps, Hkv, D_)
        pool = torch.empty_like(pages)
        pool[order] = pages
        pools.append(pool)
    table = order.view(B, n).to(torch.int32)
    lens = torch.full((B,), L, dtype=torch.int32, device=dev)
    return pools[0], pools[1], table, lens


def problem(B, Hq, Hkv, L, Lq):
    """Q, K, V and O in the peers' [B, H, L, D] layout, and the LSE."""
    q = torch.randn(B, Hq, Lq, D, device=dev, dtype=dt)
    k = torch.randn(B, Hkv, L, D, device=dev, dtype=dt)
    return q, k, torch.randn_like(k), torch.empty_like(q), torch.empty(B, Hq, Lq, device=dev,
                                                                      dtype=torch.float32)


def label(B, Hq, Hkv, L, Lq, tree=False):
    return f"B{B} H{Hq}/{Hkv} L{L} Lq{Lq}" + (" tree" if tree else "")


def wanted(*shape, tree=False):
    return re.search(args.only, label(*shape, tree=tree)) is not None


rows = []
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__}", flush=True)
for B, Hq, Hkv, L, Lq in (s for s in shapes if wanted(*s)):
    G = Hq // Hkv
    prog = programs[G]
    q_peer, k_peer, v_peer, o_peer, lse = problem(B, Hq, Hkv, L, Lq)
    q, k, v, o = (t.transpose(1, 2) for t in (q_peer, k_peer, v_peer, o_peer))
    causal = G > 1 and Lq > 1  # the GQA variants are bottom-right causal
    gb = 2 * B * Hkv * L * D * 2 / 1e9
    row = dict(B=B, Hq=Hq, Hkv=Hkv, L=L, Lq=Lq, D=D)

    def ref_mask():
        if not causal:
            return None
        qi = torch.arange(Lq, device=dev)[:, None] + (L - Lq)
        return torch.arange(L, device=dev)[None, :] <= qi

    with sdpa_kernel([SDPBackend.MATH]):
        kr = k_peer.float().repeat_interleave(G, dim=1)
        vr = v_peer.float().repeat_interleave(G, dim=1)
        ref = F.scaled_dot_product_attention(q_peer.float(), kr, vr, attn_mask=ref_mask())
        del kr, vr
    o.fill_(float("nan"))
    prog(q=q, k=k, v=v, out=o, lse=lse)
    torch.cuda.synchronize()
    row["kiln_relerr"] = relerr(o_peer, ref)
    o.fill_(float("nan"))
    unsplit[G](q=q, k=k, v=v, out=o, lse=lse)
    torch.cuda.synchronize()
    row["kiln_nosplit_relerr"] = relerr(o_peer, ref)

    def kiln_fn(program):
        return lambda: program(q=q, k=k, v=v, out=o, lse=lse)

    timed = [("kiln", kiln_fn(prog)), ("kiln_nosplit", kiln_fn(unsplit[G]))]
    for ps in page_sizes:
        if (G, ps) not in paged:
            continue
        kp, vp, table, lens = paged_cache(k_peer, v_peer, ps, seed=ps)
        run = lambda p=paged[(G, ps)], kp=kp, vp=vp, table=table, lens=lens: p(
            q=q, k=kp, v=vp, out=o, lse=lse, block_table=table, kv_lens=lens)
        o.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        row[f"kiln_p{ps}_relerr"] = relerr(o_peer, ref)
        timed.append((f"kiln_p{ps}", run))
    for sfx in suffixes:
        if (G, sfx) in ablated:
            timed.append((f"kiln{sfx}", lambda p=ablated[(G, sfx)]: p(q=q, k=k, v=v, out=o, lse=lse)))
    timed.append(("read", lambda: (k_peer.sum(dtype=torch.float32), v_peer.sum(dtype=torch.float32))))
    for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        def peer(be=be):
            with sdpa_kernel([be]):
                return F.scaled_dot_product_attention(q_peer, k_peer, v_peer, attn_mask=None,
                                                      is_causal=False, enable_gqa=G > 1)
        if causal:  # verify: bottom-right causal among the Lq new tokens
            def peer(be=be):
                with sdpa_kernel([be]):
                    return F.scaled_dot_product_attention(q_peer, k_peer, v_peer, attn_mask=ref_mask(),
                                                          enable_gqa=G > 1)
        try:
            row[f"{name}_relerr"] = relerr(peer(), ref)
            timed.append((name, peer))
        except Exception as e:  # a peer that does not run the shape
            row[f"{name}_error"] = str(e)[:80]
    measured = bench_rounds(timed, args.rounds, timer)
    for name, (ms, spread) in measured.items():
        row[f"{name}_ms"], row[f"{name}_spread"] = ms, spread
        row[f"{name}_gbps"] = gb / ms * 1e3
    rows.append(row)
    print(json.dumps(row), flush=True)
    del q_peer, k_peer, v_peer, o_peer, lse, ref
    torch.cuda.empty_cache()

# Speculative verify with a tree mask (examples/tree_verify.mlir, GQA 4:1):
# Lq drafts per sequence, a random tree over them (each draft's parent an
# earlier draft or the cache) as an ancestor bitmask, appended after the cache's
# L - Lq committed entries. cuDNN runs the same boolean mask.
# With tree_verify_mha_hd128.cubin.json (the same example with gqa_group = 1),
# the same steps for 32 heads of their own K and V: 64 FLOP per byte of K and V
# at 64 drafts where GQA 4:1 does 256, above an H200's ridge (~206).
def tree_programs(name):
    path = os.path.join(args.specs, f"{name}.cubin.json")
    if not os.path.exists(path):
        return None, {}
    return runtime.load(path), {sfx: runtime.load(p_) for sfx in suffixes
                                if os.path.exists(p_ := os.path.join(args.specs, f"{name}{sfx}.cubin.json"))}


tree_rows = [(name, (8, 32, hkv, 8192, lq)) for name, hkv in (("tree_verify_hd128", 8), ("tree_verify_mha_hd128", 32))
             for lq in (8, 32, 64)]
loaded = {name: tree_programs(name) for name in {n for n, _ in tree_rows}}
for name, (B, Hq, Hkv, L, Lq) in tree_rows:
    tree, tree_ablated = loaded[name]
    if tree is None or not wanted(B, Hq, Hkv, L, Lq, tree=True):
        continue
    G = Hq // Hkv
    words, cache_len, allowed = random_tree(B, Lq, L, dev)
    q_peer, k_peer, v_peer, o_peer, lse = problem(B, Hq, Hkv, L, Lq)
    q, k, v, o = (t.transpose(1, 2) for t in (q_peer, k_peer, v_peer, o_peer))
    gb = 2 * B * Hkv * L * D * 2 / 1e9
    row = dict(B=B, Hq=Hq, Hkv=Hkv, L=L, Lq=Lq, D=D, tree=True)
    with sdpa_kernel([SDPBackend.MATH]):
        ref = F.scaled_dot_product_attention(q_peer.float(), k_peer.float().repeat_interleave(G, dim=1),
                                             v_peer.float().repeat_interleave(G, dim=1), attn_mask=allowed)
    o.fill_(float("nan"))
    tree(q=q, k=k, v=v, out=o, lse=lse, captures=[words, cache_len])
    torch.cuda.synchronize()
    row["kiln_relerr"] = row["kiln_nosplit_relerr"] = relerr(o_peer, ref)
    timed = [("kiln", lambda: tree(q=q, k=k, v=v, out=o, lse=lse, captures=[words, cache_len]))]
    for sfx, program in tree_ablated.items():
        o.fill_(float("nan"))
        program(q=q, k=k, v=v, out=o, lse=lse, captures=[words, cache_len])
        torch.cuda.synchronize()
        row[f"kiln{sfx}_relerr"] = relerr(o_peer, ref)
        timed.append((f"kiln{sfx}", lambda p=program: p(q=q, k=k, v=v, out=o, lse=lse,
                                                        captures=[words, cache_len])))

    def cudnn():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(q_peer, k_peer, v_peer, attn_mask=allowed, enable_gqa=True)
    try:
        row["cudnn_relerr"] = relerr(cudnn(), ref)
        timed.append(("cudnn", cudnn))
    except Exception as e:
        row["cudnn_error"] = str(e)[:80]
    for name, (ms, spread) in bench_rounds(timed, args.rounds, timer).items():
        row[f"{name}_ms"], row[f"{name}_spread"] = ms, spread
        row[f"{name}_gbps"] = gb / ms * 1e3
    rows.append(row)
    print(json.dumps(row), flush=True)
    del q_peer, k_peer, v_peer, o_peer, lse, ref, allowed
    torch.cuda.empty_cache()

out = os.environ.get("OUT", "/tmp")
json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(os.path.join(out, "decode.json"), "w"),
          indent=1)
extra = [f"kiln{sfx}" for sfx in suffixes] + [f"kiln_p{ps}" for ps in page_sizes]
print(f"\n{'shape':>26} {'kiln':>6} {'nosplit':>7} " + " ".join(f"{e[4:][:8]:>8}" for e in extra) + f" {'flash':>6} {'cudnn':>6} {'read':>6} {'k/cudnn':>7} {'k/flash':>7} {'k/read':>6} "
      f"{'relerr':>8} {'spread':>6}   (GB/s of K and V)")
for r in rows:
    g = lambda key: f"{r[key]:6.0f}" if key in r else "   n/a"
    ratio = lambda peer: f"{r['kiln_gbps'] / r[peer + '_gbps']:7.2f}" if peer + "_gbps" in r else "    n/a"
    shape = label(r['B'], r['Hq'], r['Hkv'], r['L'], r['Lq'], tree=r.get("tree", False))
    print(f"{shape:>26} {g('kiln_gbps')} {g('kiln_nosplit_gbps'):>7} " +
          " ".join(f"{g(e + '_gbps'):>8}" for e in extra) + f" {g('flash_gbps')} {g('cudnn_gbps')} {g('read_gbps')} "
          f"{ratio('cudnn')} {ratio('flash')} {ratio('read')[1:]} {max(v for key, v in r.items() if key.startswith('kiln') and key.endswith('_relerr')):8.1e} "
          f"{100 * max(v for key, v in r.items() if key.endswith('_spread')):5.1f}%")
