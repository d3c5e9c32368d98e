"""Block-sparse attention (issue 12, the seeds' Algorithm 5): Kiln's
block-sparse forward against Kiln's dense forward of the same variant (the
work should scale with the listed blocks) and against FlexAttention with the
same BlockMask, in one process on one GPU (same do_bench for all).

  python3 bench/bench_block_sparse.py --lib build/lib/libkiln_runtime.so --specs DIR

DIR holds `kiln compile --head-dim 128 [--block-sparse 128] [--backward]`
specs named <variant>_hd128[_bs128][_bwd].cubin.json for plain, causal and
document_mask, and causal_hd128_varlen.cubin.json (`--varlen`). Forward,
and forward + backward (the backward through the BlockMask's transposed
lists) where the backward specs are there. Rows:
  - random: per (head, block of 128 queries) a random fraction of the key
    blocks listed as full (density 5% ... 100%), plain attention;
  - causal: Flex's create_block_mask of q >= kv;
  - documents: 8 documents of uneven lengths packed in 16k tokens, causal
    within each (the document_mask example): Flex's compiled
    create_block_mask timed apart and together with each kernel, and Kiln's
    varlen forward on the same documents (no mask to build).
Checked in the same run: Kiln's output (and gradients) against Flex's with
the same mask, and the dense Kiln kernel's where the mask is the variant's
own.
"""
import argparse, json, os, sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime
from measure import bench, relerr

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
p.add_argument("--seqlen", type=int, default=16384)
p.add_argument("--heads", type=int, default=16)
p.add_argument("--densities", default="0.05,0.1,0.25,0.5,1.0")
p.add_argument("--docs", default="3000,1100,2900,1500,2200,1600,2584,1500")
args = p.parse_args()

dev, dt, hd, H, N, BS = "cuda", torch.bfloat16, 128, args.heads, args.seqlen, 128
runtime = Runtime(args.lib)


def spec(name):
    path = os.path.join(args.specs, name + ".cubin.json")
    return runtime.load(path) if os.path.exists(path) else None


from torch.nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention
flex = torch.compile(flex_attention)
gen = torch.Generator(device=dev).manual_seed(0)
q, k, v = (torch.randn(1, N, H, hd, device=dev, dtype=dt, generator=gen) for _ in range(3))
qf, kf, vf = (t.transpose(1, 2) for t in (q, k, v))  # Flex's [B, H, L, D] views
o = torch.empty_like(q)
lse = torch.empty(1, H, N, device=dev, dtype=torch.float32)
do = torch.randn(1, N, H, hd, device=dev, dtype=dt, generator=gen)
dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
qg, kg, vg = (t.detach().clone().requires_grad_() for t in (qf, kf, vf))  # Flex's leaves
dof = do.transpose(1, 2)
nb = N // BS
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__} B=1 N={N} H={H} D={hd} blocks={BS}",
      flush=True)
rows = []


def lists_of(bm, backward=False):
    """Kiln's lists from a BlockMask (empty full lists where it has none);
    the backward's transposed ones too."""
    names = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices"]
    if backward:
        names += ["q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices"]
    out = {}
    for name in names:
        t = getattr(bm, name)
        if t is None:
            t = torch.zeros_like(getattr(bm, name.replace("full_", "")))
        out[name] = t.expand(1, H, *t.shape[2:])
    return out


def kiln_sparse(program, bm, captures=()):
    lists = lists_of(bm)
    return lambda: program(q=q, k=k, v=v, out=o, lse=lse, captures=captures, **lists)


def kiln_fb(fwd, bwd, bm=None, captures=()):
    """Forward + backward of Kiln (block-sparse with `bm`, else dense)."""
    fl, bl = (lists_of(bm), lists_of(bm, True)) if bm is not None else ({}, {})

    def run():
        fwd(q=q, k=k, v=v, out=o, lse=lse, captures=captures, **fl)
        bwd(q=q, k=k, v=v, out=o, dout=do, lse=lse, dq=dq, dk=dk, dv=dv, captures=captures, **bl)
    return run


def flex_fb(bm):
    return lambda: torch.autograd.grad(flex(qg, kg, vg, block_mask=bm), (qg, kg, vg), dof)


def add_fb(row, name, bm, captures=()):
    """Forward + backward columns of a row, where the backward specs exist."""
    fwd, bwd = spec(f"{name}_hd128_bs128"), spec(f"{name}_hd128_bs128_bwd")
    dfwd, dbwd = spec(f"{name}_hd128"), spec(f"{name}_hd128_bwd")
    if bwd is None or dbwd is None:
        return
    run = kiln_fb(fwd, bwd, bm, captures)
    row["kiln_fb_ms"] = bench(run)
    row["kiln_dense_fb_ms"] = bench(kiln_fb(dfwd, dbwd, None, captures))
    row["flex_fb_ms"] = bench(flex_fb(bm))
    run()
    grads = flex_fb(bm)()
    row["grad_err_vs_flex"] = max(relerr(a, b_.transpose(1, 2)) for a, b_ in zip((dq, dk, dv), grads))


def flops(pairs):
    return 4 * H * pairs * hd


# Random block masks: per (head, query block), `density` of the key blocks,
# all full (plain attention in them).
sparse, dense = spec("plain_hd128_bs128"), spec("plain_hd128")
run_dense = lambda: dense(q=q, k=k, v=v, out=o, lse=lse)
dense_ms = bench(run_dense)
for density in [float(x) for x in args.densities.split(",")]:
    count = max(1, round(density * nb))
    scores = torch.rand(1, H, nb, nb, device=dev, generator=gen)
    chosen = scores.topk(count, dim=-1).indices.sort(-1).values.to(torch.int32)
    idx = torch.zeros(1, H, nb, nb, device=dev, dtype=torch.int32)
    idx[..., :count] = chosen
    num = torch.full((1, H, nb), count, device=dev, dtype=torch.int32)
    empty_num, empty_idx = torch.zeros_like(num), torch.zeros_like(idx)
    bm = BlockMask.from_kv_blocks(empty_num, empty_idx, num, idx, BLOCK_SIZE=BS)
    run = kiln_sparse(sparse, bm)
    row = dict(mask=f"random {density:.0%}", blocks=count, kiln_ms=bench(run), kiln_dense_ms=dense_ms)
    run()
    kiln_out = o.clone()
    row["flex_ms"] = bench(lambda: flex(qf, kf, vf, block_mask=bm))
    row["err_vs_flex"] = relerr(kiln_out, flex(qf, kf, vf, block_mask=bm).transpose(1, 2))
    row["speedup_vs_dense"] = dense_ms / row["kiln_ms"]
    row["kiln_tflops"] = flops(N * count * BS) / row["kiln_ms"] / 1e9
    if density in (0.1, 0.5):
        add_fb(row, "plain", bm)
    rows.append(row)
    print(json.dumps(row), flush=True)

# Causal through a block mask against Kiln's causal kernel.
sparse, dense = spec("causal_hd128_bs128"), spec("causal_hd128")
causal_mask = lambda b, h, qi, ki: qi >= ki
# Flex's fastest build: create_block_mask compiled (_compile=True).
build = lambda: create_block_mask(causal_mask, None, None, N, N, device=dev, BLOCK_SIZE=BS, _compile=True)
bm = build()
run = kiln_sparse(sparse, bm)
row = dict(mask="causal", kiln_ms=bench(run), kiln_dense_ms=bench(lambda: dense(q=q, k=k, v=v, out=o, lse=lse)))
run()
kiln_out = o.clone()
dense(q=q, k=k, v=v, out=o, lse=lse)
row["err_vs_kiln_dense"] = relerr(kiln_out, o)
row["mask_build_ms"] = bench(build)
row["flex_ms"] = bench(lambda: flex(qf, kf, vf, block_mask=bm))
row["err_vs_flex"] = relerr(kiln_out, flex(qf, kf, vf, block_mask=bm).transpose(1, 2))
row["kiln_tflops"] = flops(N * N / 2) / row["kiln_ms"] / 1e9
add_fb(row, "causal", bm)
rows.append(row)
print(json.dumps(row), flush=True)

# Documents: the document_mask example (same document, causal) on 8
# documents packed in N tokens.
lens = [int(x) for x in args.docs.split(",")]
assert sum(lens) == N, f"--docs must sum to --seqlen ({sum(lens)} != {N})"
doc = torch.repeat_interleave(torch.arange(len(lens), device=dev, dtype=torch.int32),
                              torch.tensor(lens, device=dev))
doc_mask = lambda b, h, qi, ki: (doc[qi] == doc[ki]) & (qi >= ki)
build = lambda: create_block_mask(doc_mask, None, None, N, N, device=dev, BLOCK_SIZE=BS, _compile=True)
bm = build()
sparse, dense, varlen = spec("document_mask_hd128_bs128"), spec("document_mask_hd128"), spec("causal_hd128_varlen")
run = kiln_sparse(sparse, bm, captures=[doc, doc])
row = dict(mask=f"{len(lens)} documents, causal", mask_build_ms=bench(build), kiln_ms=bench(run))
run()
kiln_out = o.clone()
row["kiln_dense_ms"] = bench(lambda: dense(q=q, k=k, v=v, out=o, lse=lse, captures=[doc, doc]))
row["err_vs_kiln_dense"] = relerr(kiln_out, o)
cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), device=dev, dtype=torch.int32)
ov, lv = torch.empty(N, H, hd, device=dev, dtype=dt), torch.empty(H, N, device=dev, dtype=torch.float32)
run_varlen = lambda: varlen(q=q[0], k=k[0], v=v[0], out=ov, lse=lv, cu_seqlens_q=cu, cu_seqlens_kv=cu)
row["kiln_varlen_ms"] = bench(run_varlen)
run_varlen()
row["err_varlen_vs_sparse"] = relerr(ov, kiln_out[0])
row["flex_ms"] = bench(lambda: flex(qf, kf, vf, block_mask=bm))
row["err_vs_flex"] = relerr(kiln_out, flex(qf, kf, vf, block_mask=bm).transpose(1, 2))
row["flex_with_build_ms"] = bench(lambda: flex(qf, kf, vf, block_mask=build()))
row["kiln_with_build_ms"] = bench(lambda: kiln_sparse(sparse, build(), captures=[doc, doc])())
pairs = sum(n * (n + 1) / 2 for n in lens)
row["kiln_tflops"] = flops(pairs) / row["kiln_ms"] / 1e9
add_fb(row, "document_mask", bm, captures=[doc, doc])
# Kiln's own lists: the program generated from the variant's mask
# (`kiln compile --build-block-mask`), one head's lists (the mask does not
# read the head), checked against Flex's.
builder = spec("document_mask_hd128_bs128_build")
if builder is not None:
    nb = N // BS
    shapes = [(nb,), (nb, nb)] * 4
    built = [torch.empty(1, 1, *s, device=dev, dtype=torch.int32) for s in shapes]
    names = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks", "q_indices",
             "full_q_num_blocks", "full_q_indices"]
    run_build = lambda: builder(q=q, k=k, captures=[doc, doc], **dict(zip(names, built)))
    row["kiln_build_ms"] = bench(run_build)
    run_build()
    same = True
    for i in range(0, 8, 2):
        want_num, want_idx = getattr(bm, names[i]), getattr(bm, names[i + 1])
        same &= torch.equal(built[i], want_num)
        for r in range(nb):
            n = int(want_num[0, 0, r])
            same &= sorted(built[i + 1][0, 0, r, :n].tolist()) == sorted(want_idx[0, 0, r, :n].tolist())
    row["kiln_lists_equal_flex"] = bool(same)
    fwd = spec("document_mask_hd128_bs128")
    own = {n: t.expand(1, H, *t.shape[2:]) for n, t in zip(names, built)}
    run_own = lambda: (run_build(), fwd(q=q, k=k, v=v, out=o, lse=lse, captures=[doc, doc],
                                        **{n: own[n] for n in names[:4]}))
    row["kiln_with_own_build_ms"] = bench(run_own)
rows.append(row)
print(json.dumps(row), flush=True)

print("\n| mask | Kiln sparse ms | Kiln dense ms | sparse / dense speed-up | Flex ms | Kiln / Flex | err vs Flex |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['mask']} | {r['kiln_ms']:.3f} | {r['kiln_dense_ms']:.3f} | {r['kiln_dense_ms'] / r['kiln_ms']:.2f}x | "
          f"{r['flex_ms']:.3f} | {r['flex_ms'] / r['kiln_ms']:.2f}x | {r['err_vs_flex']:.1e} |")
print("\n| mask | Kiln sparse fwd+bwd ms | Kiln dense fwd+bwd ms | speed-up | Flex fwd+bwd ms | Kiln / Flex | "
      "grad err vs Flex |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    if "kiln_fb_ms" in r:
        print(f"| {r['mask']} | {r['kiln_fb_ms']:.3f} | {r['kiln_dense_fb_ms']:.3f} | "
              f"{r['kiln_dense_fb_ms'] / r['kiln_fb_ms']:.2f}x | {r['flex_fb_ms']:.3f} | "
              f"{r['flex_fb_ms'] / r['kiln_fb_ms']:.2f}x | {r['grad_err_vs_flex']:.1e} |")
r = rows[-1]
print(f"documents with the mask built: Kiln {r['kiln_with_build_ms']:.3f} ms, Flex {r['flex_with_build_ms']:.3f} ms "
      f"({r['flex_with_build_ms'] / r['kiln_with_build_ms']:.2f}x); build alone {r['mask_build_ms']:.3f} ms; "
      f"Kiln varlen {r['kiln_varlen_ms']:.3f} ms ({r['flex_with_build_ms'] / r['kiln_varlen_ms']:.2f}x Flex with "
      f"build, {r['flex_ms'] / r['kiln_varlen_ms']:.2f}x Flex's kernel)")
if "kiln_build_ms" in r:
    print(f"documents with Kiln's own generated build: build {r['kiln_build_ms']:.3f} ms (Flex's "
          f"{r['mask_build_ms']:.3f}), lists equal Flex's: {r['kiln_lists_equal_flex']}; build + forward "
          f"{r['kiln_with_own_build_ms']:.3f} ms = {r['flex_with_build_ms'] / r['kiln_with_own_build_ms']:.2f}x Flex with "
          f"its build")
out = os.environ.get("OUT", "/tmp")
json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(os.path.join(out, "bench_block_sparse.json"), "w"),
          indent=1)
