"""The kiln package on a CUDA GPU (bench/device-run-plans.sh python): the
CPU tests' checks on CUDA tensors, one training step of a small transformer
block with Kiln attention against the same block with SDPA, torch.compile
(fullgraph, Inductor), kiln.flex_attention, kiln.paged_attention, kiln.varlen_attention, CUDA graph capture of
the C++ ops (forward, backward, a split-KV paged decode step), and the per-call host overhead
of the op next to SDPA's. Prints one line per check and a table; exits 1 on
any failure. Not a unittest module on purpose: `make check` has no GPU.

    pip install --no-build-isolation ./python && python3 python/tests/gpu_check.py
"""
import os
import sys
import time

import torch
import torch.nn.functional as F

import kiln

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_ops import dropout_errors, dropped_keys, example, inputs, paged_cache, reference, rel  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def grads_match(variant, q, k, v, captures=(), tol=1e-2, **ref):
    q, k, v = (t.cuda().requires_grad_() for t in (q, k, v))
    out = kiln.attention(q, k, v, variant, [c.cuda() for c in captures])
    dout = torch.randn_like(out)
    out.backward(dout)
    qd, kd, vd = (t.detach().cpu().double().requires_grad_() for t in (q, k, v))
    expect = reference(qd, kd, vd, **ref)
    expect.backward(dout.cpu().double())
    errs = [rel(out.detach().cpu(), expect.detach())] + [rel(g.cpu(), w) for g, w in
                                                         ((q.grad, qd.grad), (k.grad, kd.grad), (v.grad, vd.grad))]
    return max(errs) < tol, errs


def main():
    name = torch.cuda.get_device_name()
    print(f"device: {name}, torch {torch.__version__}")
    ok, errs = grads_match(example("plain"), *inputs(2, 300, 257, 4, 4, 128))
    check(ok, f"plain D=128 forward and gradients vs float64: {' '.join(f'{e:.1e}' for e in errs)}")
    # The default backward at D = 128 on sm_90a adds dQ by f32 reductions (order not fixed); under
    # torch.use_deterministic_algorithms(True) the deterministic schedule (at D = 128 dQ's adds in
    # a fixed order): the same bits in every run, within rounding of the default's.
    for variant in ("plain", "causal"):
        q, k, v = (t.cuda().requires_grad_() for t in inputs(2, 300, 257, 4, 4, 128, seed=20))
        dout = torch.randn(2, 300, 4, 128, generator=torch.Generator().manual_seed(21)).to(q.dtype).cuda()

        def gradients():
            q.grad = k.grad = v.grad = None
            kiln.attention(q, k, v, example(variant)).backward(dout)
            return [t.grad.clone() for t in (q, k, v)]
        default = gradients()
        torch.use_deterministic_algorithms(True)
        try:
            runs = [gradients() for _ in range(3)]
        finally:
            torch.use_deterministic_algorithms(False)
        same = all(torch.equal(a, b) for r in runs[1:] for a, b in zip(r, runs[0]))
        err = max(rel(a.float(), b.float()) for a, b in zip(runs[0], default))
        check(same and err < 1e-2, f"{variant} D=128 under deterministic algorithms: 3 runs bit-equal {same}, "
              f"vs the default schedule {err:.1e}")
    ok, errs = grads_match(example("causal"), *inputs(1, 100, 333, 2, 2, 64, seed=1), causal="bottom_right")
    check(ok, f"causal bottom-right: {' '.join(f'{e:.1e}' for e in errs)}")
    ok, errs = grads_match(example("gqa_causal"), *inputs(1, 200, 200, 8, 2, 128, seed=2), causal="top_left")
    check(ok, f"GQA 4:1: {' '.join(f'{e:.1e}' for e in errs)}")
    h, n = 4, 190
    slopes = torch.tensor([2.0 ** -(i + 1) for i in range(h)])
    dist = (torch.arange(n)[None, :] - torch.arange(n)[:, None]).double()
    ok, errs = grads_match(example("alibi"), *inputs(1, n, n, h, h, 64, seed=3), [slopes], causal="top_left",
                           bias=slopes.double()[:, None, None] * dist)
    check(ok, f"ALiBi (a capture): {' '.join(f'{e:.1e}' for e in errs)}")

    # Dropout on CUDA tensors: the GPU drops exactly the weights the
    # definition (and the CPU backend) drops, and the gradients match float64
    # with the same mask.
    q, k, _ = (t.cuda() for t in inputs(2, 300, 200, 4, 4, 64, seed=4))
    rng = torch.tensor([0x0123456789ABCDEF, (5 << 32) + 9], dtype=torch.int64, device="cuda")
    got, want = dropped_keys(q, k, rng, 0.3, example("plain"))
    check(torch.equal(got, want), f"dropout's bits on the GPU = kiln.dropout's: {int((got != want).sum())} differ")
    errs = dropout_errors(*(t.cuda() for t in inputs(2, 200, 257, 8, 2, 128, seed=5)), 0.2,
                          kiln.make_dropout_rng("cuda"), example("gqa_causal"))
    check(max(errs) < 1e-2, f"dropout (GQA 4:1, causal) vs float64: {' '.join(f'{e:.1e}' for e in errs)}")

    # Learnable ALiBi slopes: their gradient (f32 reductions on the GPU)
    # against float64 autograd. The gradient is a sum that cancels (each
    # row's dS sums to 0) of dS = P (dP - D) with D = rowsum(dO * O) from
    # the bf16-rounded O, as every FlashAttention-style backward has it: on
    # the CPU backend 7e-4 to 7e-3 over slopes' seeds, 1.3e-2 once on the
    # H100 (unseeded); fp16 is ~8x tighter. Hence 2e-2, seeded.
    n = 300
    q, k, v = (t.cuda().requires_grad_() for t in inputs(2, n, n, 4, 4, 64, seed=6))
    slopes = torch.rand(4, generator=torch.Generator().manual_seed(6)).cuda().requires_grad_()
    out = kiln.attention(q, k, v, example("alibi"), captures=[slopes])
    dout = torch.randn(out.shape, generator=torch.Generator().manual_seed(7)).to(out.dtype).cuda()
    out.backward(dout)
    sd = slopes.detach().cpu().double().requires_grad_()
    dist = (torch.arange(n)[None, :] - torch.arange(n)[:, None]).double()
    expect = reference(*(t.detach().cpu().double() for t in (q, k, v)), causal="top_left",
                       bias=sd[:, None, None] * dist)
    expect.backward(dout.cpu().double())
    err = rel(slopes.grad.cpu(), sd.grad)
    check(err < 2e-2, f"ALiBi slopes' gradient on the GPU vs float64: {err:.1e}")
    # Under torch.use_deterministic_algorithms(True): fixed-point sums, the
    # same bits in three runs, within rounding of the f32 atomics' result.
    atomic_grad = slopes.grad.clone()
    torch.use_deterministic_algorithms(True)
    runs = []
    try:
        for _ in range(3):
            slopes.grad = None
            kiln.attention(q, k, v, example("alibi"), captures=[slopes]).backward(dout)
            runs.append(slopes.grad.clone())
    finally:
        torch.use_deterministic_algorithms(False)
    same = all(torch.equal(r, runs[0]) for r in runs)
    check(same and rel(runs[0].cpu(), sd.grad) < 2e-2 and rel(runs[0], atomic_grad) < 1e-5,
          f"deterministic ALiBi slopes' gradient: 3 runs bit-equal {same}, vs float64 "
          f"{rel(runs[0].cpu(), sd.grad):.1e}, vs f32 atomics {rel(runs[0], atomic_grad):.1e}")

    # A varlen batch on CUDA tensors: out and gradients against the same
    # packed batch on the CPU backend (itself checked against float64 in
    # test_ops.test_varlen), 8 sequences of mixed lengths, D = 128, GQA 4:1.
    lens = [300, 1, 0, 129, 64, 257, 7, 500]
    gen = torch.Generator().manual_seed(11)
    q, k, v = (torch.randn(sum(lens), heads, 128, generator=gen).to(torch.bfloat16) for heads in (8, 2, 2))
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32)
    dout = torch.randn(sum(lens), 8, 128, generator=gen).to(torch.bfloat16)
    results = []
    for device in ("cpu", "cuda"):
        qd, kd, vd = (t.detach().to(device).requires_grad_() for t in (q, k, v))
        out = kiln.varlen_attention(qd, kd, vd, cu.to(device), cu.to(device), example("gqa_causal"))
        out.backward(dout.to(device))
        results.append([t.detach().cpu() for t in (out, qd.grad, kd.grad, vd.grad)])
    errs = [rel(g, w.double()) for g, w in zip(results[1], results[0])]
    check(max(errs) < 1e-2, f"varlen_attention on the GPU vs the CPU backend: {' '.join(f'{e:.1e}' for e in errs)}")

    # Block-sparse on CUDA tensors with FlexAttention's BlockMask built on
    # the GPU (documents, causal; lists [1, 1, ...] broadcast, transposed
    # ones for the backward): out and gradients against the CPU backend with
    # the same lists, and against the dense document-mask variant.
    from torch.nn.attention.flex_attention import create_block_mask
    n = 1000
    doc = (torch.arange(n) * 5 // n).to(torch.int32)
    q, k, v = inputs(2, n, n, 4, 4, 128, seed=15)
    dout = torch.randn(q.shape, generator=torch.Generator().manual_seed(16)).to(torch.bfloat16)
    variant = example("block_sparse_document")
    results = []
    for device in ("cpu", "cuda"):
        d = doc.to(device)
        mask = create_block_mask(lambda b, h, qi, ki: (d[qi] == d[ki]) & (ki <= qi), None, None, n, n,
                                 device=device, BLOCK_SIZE=128)
        qd, kd, vd = (t.detach().to(device).requires_grad_() for t in (q, k, v))
        out = kiln.block_sparse_attention(qd, kd, vd, mask, variant, [d, d])
        out.backward(dout.to(device))
        results.append([t.detach().cpu() for t in (out, qd.grad, kd.grad, vd.grad)])
    errs = [rel(g, w.double()) for g, w in zip(results[1], results[0])]
    check(max(errs) < 1e-2, f"block_sparse_attention on the GPU vs the CPU backend: {' '.join(f'{e:.1e}' for e in errs)}")
    dense = kiln.attention(q.cuda(), k.cuda(), v.cuda(), example("document_mask"), [doc.cuda(), doc.cuda()]).cpu()
    err = rel(results[1][0], dense.double())
    check(err < 1e-2, f"block_sparse_attention vs the dense document mask on the GPU: {err:.1e}")

    # A verify step over ragged paged caches (16-key pages, GQA 4:1), as the
    # CPU test, and the same with 64-key pages.
    q, k, v = inputs(3, 3, 700, 8, 2, 128, seed=9)
    lens = torch.tensor([700, 333, 65], dtype=torch.int32)
    variant = kiln.Variant.from_file(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                  "examples", "gqa_decode.mlir"), "gqa4_decode")
    for page in (16, 64):
        kp, vp, table = paged_cache(k, v, lens, page, seed=10)
        out = kiln.paged_attention(q.cuda(), kp.cuda(), vp.cuda(), table.cuda(), lens.cuda(), variant).cpu()
        errs = [rel(out[s:s + 1], reference(q[s:s + 1].double(), k[s:s + 1, :int(lens[s])].double(),
                                            v[s:s + 1, :int(lens[s])].double(), causal="bottom_right"))
                for s in range(3)]
        check(max(errs) < 1e-2, f"paged_attention, {page}-key pages: {' '.join(f'{e:.1e}' for e in errs)}")
    # Chunked prefill: packed new tokens (40, 1 and 0 of them) over the same
    # 64-key-page caches, the GPU against the CPU backend.
    cu_q = torch.tensor([0, 40, 41, 41], dtype=torch.int32)
    qp = torch.randn(41, 8, 128, generator=torch.Generator().manual_seed(14)).to(torch.bfloat16)
    got = kiln.paged_attention(qp.cuda(), kp.cuda(), vp.cuda(), table.cuda(), lens.cuda(), variant,
                               cu_seqlens_q=cu_q.cuda()).cpu()
    want = kiln.paged_attention(qp, kp, vp, table, lens, variant, cu_seqlens_q=cu_q)
    err = rel(got, want.double())
    check(err < 1e-2, f"paged_attention with packed queries (chunked prefill) vs the CPU backend: {err:.1e}")

    def softcap(score, b, h, q_idx, kv_idx):
        return torch.tanh(score / 20.0) * 20.0

    q, k, v = (t.cuda().transpose(1, 2) for t in inputs(2, 256, 256, 4, 4, 64, seed=4))
    out = kiln.flex_attention(q, k, v, softcap, mask_mod=lambda b, h, qi, ki: qi >= ki)
    s = q.double() @ k.double().transpose(-1, -2) / 8.0
    s = (torch.tanh(s / 20) * 20).masked_fill(torch.ones(256, 256, dtype=torch.bool, device="cuda").triu(1),
                                              float("-inf"))
    err = rel(out, torch.softmax(s, -1) @ v.double())
    check(err < 1e-2, f"kiln.flex_attention softcap + causal: {err:.1e}")

    # One training step of a transformer block, Kiln attention vs SDPA.
    torch.manual_seed(0)
    dim, heads, length = 512, 8, 1024
    block = torch.nn.ModuleDict({"qkv": torch.nn.Linear(dim, 3 * dim), "out": torch.nn.Linear(dim, dim)}).cuda()
    block = block.to(torch.bfloat16)
    x = torch.randn(4, length, dim, device="cuda", dtype=torch.bfloat16)
    target = torch.randn_like(x)
    causal = example("causal")

    def step(attend):
        block.zero_grad()
        q, k, v = block["qkv"](x).view(4, length, 3, heads, dim // heads).unbind(2)
        y = block["out"](attend(q, k, v).reshape(4, length, dim))
        loss = F.mse_loss(y.float(), target.float())
        loss.backward()
        return loss.item(), [p.grad.clone() for p in block.parameters()]

    kiln_loss, kiln_grads = step(lambda q, k, v: kiln.attention(q, k, v, causal))
    sdpa_loss, sdpa_grads = step(lambda q, k, v: F.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True).transpose(1, 2))
    gerr = max(rel(a, b.double()) for a, b in zip(kiln_grads, sdpa_grads))
    check(abs(kiln_loss - sdpa_loss) < 1e-3 * abs(sdpa_loss) and gerr < 2e-2,
          f"training step vs SDPA: loss {kiln_loss:.6f} / {sdpa_loss:.6f}, parameter grads {gerr:.1e}")

    compiled = torch.compile(lambda q, k, v: kiln.attention(q, k, v, causal), fullgraph=True)
    q, k, v = (t.cuda() for t in inputs(1, 512, 512, 4, 4, 64, seed=5))
    check(torch.equal(compiled(q, k, v), kiln.attention(q, k, v, causal)), "torch.compile(fullgraph=True), Inductor")

    # CUDA graphs: the C++ ops take their workspaces from torch's caching
    # allocator, so torch.cuda.graph can capture them on its own stream. A
    # forward, the backward op (its workspaces), and a split-KV paged decode
    # step (partial results in a workspace) are captured after one eager call
    # each, replayed on new inputs, and compared with eager calls.
    def graphed(fn, *inputs_):
        static = [t.clone() for t in inputs_]
        fn(*static)  # compiled and loaded outside the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = fn(*static)
        fresh = [torch.randn_like(t) if t.is_floating_point() else t for t in inputs_]
        for s_, f_ in zip(static, fresh):
            s_.copy_(f_)
        graph.replay()
        torch.cuda.synchronize()
        want = fn(*fresh)
        return all(torch.equal(a, b) for a, b in zip(outs if isinstance(outs, tuple) else (outs,),
                                                     want if isinstance(want, tuple) else (want,)))

    q, k, v = (t.cuda() for t in inputs(2, 300, 300, 4, 4, 64, seed=15))
    check(graphed(lambda q_, k_, v_: kiln.attention(q_, k_, v_, causal), q, k, v),
          "CUDA graph of kiln.attention: replay on new inputs = eager")
    out, lse = kiln.attention_with_lse(q, k, v, causal)
    dout = torch.randn_like(out)
    check(graphed(lambda d_, q_, k_, v_, o_, l_: torch.ops.kiln.attention_backward(
        d_, q_, k_, v_, o_, l_, [], causal.text, "", 0.0, [], []), dout, q, k, v, out, lse),
        "CUDA graph of the backward: replay on new inputs = eager")
    q1, k1, v1 = inputs(1, 1, 8192, 8, 2, 128, seed=16)
    lens1 = torch.tensor([8192], dtype=torch.int32)
    kp1, vp1, table1 = (t.cuda() for t in paged_cache(k1, v1, lens1, 64, seed=17))
    lens1 = lens1.cuda()
    check(graphed(lambda q_, kp_, vp_: kiln.paged_attention(q_, kp_, vp_, table1, lens1, variant),
                  q1.cuda(), kp1, vp1),
          "CUDA graph of a split-KV paged decode step: replay on new inputs = eager")

    # Host overhead per call: many calls of a tiny problem, no sync between.
    q, k, v = (t.cuda() for t in inputs(1, 16, 16, 1, 1, 64, seed=6))
    sq, sk, sv = (t.transpose(1, 2) for t in (q, k, v))
    rows = []
    for label, fn in (("kiln.attention", lambda: kiln.attention(q, k, v, causal)),
                      ("SDPA", lambda: F.scaled_dot_product_attention(sq, sk, sv, is_causal=True))):
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        calls = 2000
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        host = (time.perf_counter() - start) / calls * 1e6
        torch.cuda.synchronize()
        rows.append((label, host))
    print("\nhost time per call (µs; tiny problem, no synchronization between calls)")
    for label, us in rows:
        print(f"  {label:16} {us:7.1f}")
    print("PASS" if not failures else f"FAIL: {len(failures)} checks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
