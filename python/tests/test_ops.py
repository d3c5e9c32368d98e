"""The kiln package on CPU tensors (no GPU needed): forward and gradients
against a float64 reference, captures, GQA, torch.library.opcheck,
torch.compile(fullgraph=True), and the errors for bad input.

    pip install ./python && python3 -m unittest discover -s python/tests -v
    PYTHONPATH=python python3 -m unittest discover -s python/tests   # the source tree
"""
import itertools
import math
import os
import subprocess
import sys
import tempfile
import unittest

import torch

import kiln

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def example(name):
    return kiln.Variant.from_file(os.path.join(EXAMPLES, name + ".mlir"))


def reference(q, k, v, causal=None, bias=None, allowed=None):
    """float64 attention with a [H, Lq, Lk] bias and mask, GQA by repeating
    K and V; causal is "top_left" or "bottom_right"."""
    q, k, v = (t.double().transpose(1, 2) for t in (q, k, v))  # [B, H, L, D]
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    lq, lk = s.shape[-2:]
    qi = torch.arange(lq)[:, None]
    ki = torch.arange(lk)[None, :]
    if bias is not None:
        s = s + bias
    mask = torch.ones(lq, lk, dtype=torch.bool)
    if causal == "top_left":
        mask &= ki <= qi
    elif causal == "bottom_right":
        mask &= ki <= qi + lk - lq
    if allowed is not None:
        mask = mask & allowed
    s = s.masked_fill(~mask, float("-inf"))
    return (torch.softmax(s, -1) @ v).transpose(1, 2)


def dropout_scale(rng, b, h, lq, lk, p, bits=16):
    """Dropout's scaled mask Z [B, H, Lq, Lk] (float64) for the state in
    `rng` (int64 [2]), as python/kiln/dropout.py (reference/Philox.h) draws it
    (with uniforms of `bits` bits: the variant's dropout_bits)."""
    from kiln.dropout import threshold, uniforms
    seed, offset = (int(x) % 2**64 for x in rng.cpu())
    bb, hh, qq, kk = torch.meshgrid(torch.arange(b), torch.arange(h), torch.arange(lq), torch.arange(lk),
                                    indexing="ij")
    t = threshold(p, bits=bits)
    return (uniforms(seed, offset, bb, hh, qq, kk, bits=bits) < t).double() * (float(1 << bits) / t)


def dropped_keys(q, k, rng, p, variant, bits=16):
    """(got, want): which weights of the first D keys the op dropped, read
    back through a one-hot V (P Z is zero exactly there), and which the
    definition drops: [B, Lq, H, D] booleans."""
    b, lq, h, d = q.shape
    v = torch.zeros(b, k.shape[1], k.shape[2], d, dtype=q.dtype, device=q.device)
    v[:, :d] = torch.eye(d, dtype=q.dtype, device=q.device)[None, :, None, :]
    out = kiln.attention(q, k, v, variant, dropout_p=p, dropout_rng=rng)
    want = dropout_scale(rng, b, h, lq, d, p, bits).permute(0, 2, 1, 3) == 0
    return (out == 0).cpu(), want


def rel(got, ref):
    return ((got.double() - ref).norm() / ref.norm()).item()


def dropout_errors(q, k, v, p, rng, variant, bits=16):
    """Relative errors of out, dQ, dK, dV of a top-left causal variant with
    dropout against float64 with the same scaled mask (q, k, v on any
    device; rng on theirs)."""
    q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
    out = kiln.attention(q, k, v, variant, dropout_p=p, dropout_rng=rng)
    dout = torch.randn(out.shape, generator=torch.Generator().manual_seed(3)).to(out.dtype)
    out.backward(dout.to(out.device))
    (b, lq, h, d), lk = q.shape, k.shape[1]
    z = dropout_scale(rng, b, h, lq, lk, p, bits)
    qd, kd, vd = (x.detach().cpu().double().requires_grad_() for x in (q, k, v))
    g = h // k.shape[2]
    s = qd.transpose(1, 2) @ kd.transpose(1, 2).repeat_interleave(g, 1).transpose(-1, -2) / math.sqrt(d)
    s = s.masked_fill(torch.arange(lk)[None, :] > torch.arange(lq)[:, None], float("-inf"))
    expect = ((torch.softmax(s, -1) * z) @ vd.transpose(1, 2).repeat_interleave(g, 1)).transpose(1, 2)
    expect.backward(dout.double())
    return [rel(out.detach().cpu(), expect.detach())] + [
        rel(got.cpu(), want) for got, want in ((q.grad, qd.grad), (k.grad, kd.grad), (v.grad, vd.grad))]


def inputs(b, lq, lk, h, hk, d, seed=0, dtype=torch.bfloat16):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(b, lq, h, d, generator=gen).to(dtype)
    k = torch.randn(b, lk, hk, d, generator=gen).to(dtype)
    v = torch.randn(b, lk, hk, d, generator=gen).to(dtype)
    return q, k, v


def paged_cache(k, v, lens, page_size, seed):
    """k and v [B, L, Hk, D] as pools of pages in a shuffled order (and a
    NaN spare page), the block table (-1 past each sequence's pages)."""
    b, lk = k.shape[:2]
    per = -(-lk // page_size)
    gen = torch.Generator().manual_seed(seed)
    order = torch.randperm(b * per + 1, generator=gen)
    pools = []
    for t in (k, v):
        pool = torch.full((b * per + 1, page_size) + t.shape[2:], float("nan"), dtype=t.dtype)
        for s in range(b):
            for j in range(-(-int(lens[s]) // page_size)):
                rows = t[s, j * page_size:min(int(lens[s]), (j + 1) * page_size)]
                pool[order[s * per + j], :rows.shape[0]] = rows
        pools.append(pool)
    table = torch.full((b, per), -1, dtype=torch.int32)
    for s in range(b):
        used = -(-int(lens[s]) // page_size)
        table[s, :used] = order[s * per:s * per + used].to(torch.int32)
    return pools[0], pools[1], table


class Ops(unittest.TestCase):
    def check_forward_and_grads(self, variant, q, k, v, captures=(), **ref):
        q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
        out = kiln.attention(q, k, v, variant, captures)
        gen = torch.Generator().manual_seed(1)
        dout = torch.randn(out.shape, generator=gen).to(out.dtype)
        out.backward(dout)
        qd, kd, vd = (t.detach().double().requires_grad_() for t in (q, k, v))
        expect = reference(qd, kd, vd, **ref)
        expect.backward(dout.double())
        self.assertLess(rel(out.detach(), expect.detach()), 1e-2)
        for got, want in ((q.grad, qd.grad), (k.grad, kd.grad), (v.grad, vd.grad)):
            self.assertLess(rel(got, want), 1e-2)

    def test_plain(self):
        self.check_forward_and_grads(example("plain"), *inputs(2, 33, 47, 2, 2, 64))

    def test_causal_bottom_right_fp16(self):
        q, k, v = inputs(1, 40, 70, 3, 3, 32, seed=2, dtype=torch.float16)
        self.check_forward_and_grads(example("causal"), q, k, v, causal="bottom_right")

    def test_gqa(self):
        q, k, v = inputs(1, 50, 50, 8, 2, 64, seed=3)
        self.check_forward_and_grads(example("gqa_causal"), q, k, v, causal="top_left")

    def test_alibi_capture(self):
        h, n = 4, 37
        q, k, v = inputs(1, n, n, h, h, 64, seed=4)
        slopes = torch.tensor([2.0 ** -(i + 1) for i in range(h)])
        dist = (torch.arange(n)[None, :] - torch.arange(n)[:, None]).double()
        self.check_forward_and_grads(example("alibi"), q, k, v, [slopes], causal="top_left",
                                     bias=slopes.double()[:, None, None] * dist)

    def test_document_mask_captures(self):
        n = 45
        q, k, v = inputs(2, n, n, 2, 2, 64, seed=5)
        docs = torch.tensor([0] * 20 + [1] * 15 + [2] * 10, dtype=torch.int32)
        self.check_forward_and_grads(example("document_mask"), q, k, v, [docs, docs], causal="top_left",
                                     allowed=docs[:, None] == docs[None, :])

    def test_tree_verify_captures(self):
        # Speculative decoding's verify step: a random tree of 40 drafts per
        # sequence after ragged caches (260 and 135 committed entries; the
        # second sequence's keys past its drafts are padding), as an ancestor
        # bitmask. The committed keys' blocks run unmasked (VisibleBelow).
        b, lq, lk = 2, 40, 300
        q, k, v = inputs(b, lq, lk, 8, 2, 128, seed=7)
        gen = torch.Generator().manual_seed(8)
        cache_len = torch.tensor([260, 135], dtype=torch.int32)
        ancestors = torch.zeros(b, lq, 2, dtype=torch.int64)
        allowed = torch.zeros(b, 1, lq, lk, dtype=torch.bool)
        for s in range(b):
            parent = [int(torch.randint(-1, i, (1,), generator=gen)) for i in range(lq)]
            for i in range(lq):
                allowed[s, 0, i, :cache_len[s]] = True
                j = i
                while j >= 0:  # i and its ancestors
                    ancestors[s, i, j // 32] |= 1 << (j % 32)
                    allowed[s, 0, i, cache_len[s] + j] = True
                    j = parent[j]
        words = torch.where(ancestors >= 2**31, ancestors - 2**32, ancestors).to(torch.int32)
        self.check_forward_and_grads(example("tree_verify"), q, k, v, [words, cache_len], allowed=allowed)

    def test_paged_decode(self):
        # A verify step of 3 tokens over ragged paged caches (GQA 4:1, pages
        # of 16): each sequence against the float64 reference of its own keys,
        # bottom-right causal aligned with its own length.
        b, lq, lk, page = 3, 3, 300, 16
        q, k, v = inputs(b, lq, lk, 8, 2, 128, seed=9)
        lens = torch.tensor([300, 171, 40], dtype=torch.int32)
        kp, vp, table = paged_cache(k, v, lens, page, seed=10)
        variant = kiln.Variant.from_file(os.path.join(EXAMPLES, "gqa_decode.mlir"), "gqa4_decode")
        out, lse = kiln.paged_attention_with_lse(q, kp, vp, table, lens, variant)
        for s in range(b):
            n = int(lens[s])
            want = reference(q[s:s + 1].double(), k[s:s + 1, :n].double(), v[s:s + 1, :n].double(),
                             causal="bottom_right")
            self.assertLess(rel(out[s:s + 1], want), 1e-2)
        self.assertFalse(torch.isnan(lse).any())
        torch.library.opcheck(torch.ops.kiln.paged_attention.default,
                              (q, kp, vp, table, lens, [], variant.text, variant.name, []))
        # The direct path (kiln._C, what kiln.paged_attention takes on plain
        # tensors) is the op through the dispatcher.
        direct = kiln._C.paged_attention(q, kp, vp, table, lens, [], variant.text, variant.name, [])
        generic = torch.ops.kiln.paged_attention(q, kp, vp, table, lens, [], variant.text, variant.name, [])
        self.assertTrue(torch.equal(direct[0], generic[0]) and torch.equal(direct[1], generic[1]))
        self.assertTrue(torch.equal(direct[0], out))
        # Chunked prefill: each sequence's new tokens packed ([T, H, D] and
        # cu_seqlens_q: 3, 0 and 7 of them), against the same cache.
        lq_each = [3, 0, 7]
        qp = torch.randn(sum(lq_each), 8, 128, generator=torch.Generator().manual_seed(13)).to(torch.bfloat16)
        cu_q = torch.tensor([0, 3, 3, 10], dtype=torch.int32)
        outp, lsep = kiln.paged_attention_with_lse(qp, kp, vp, table, lens, variant, cu_seqlens_q=cu_q)
        self.assertEqual(outp.shape, (10, 8, 128))
        self.assertEqual(lsep.shape, (8, 10))
        for s in (0, 2):
            n, rows = int(lens[s]), slice(int(cu_q[s]), int(cu_q[s + 1]))
            want = reference(qp[None, rows].double(), k[s:s + 1, :n].double(), v[s:s + 1, :n].double(),
                             causal="bottom_right")
            self.assertLess(rel(outp[None, rows], want), 1e-2)
        torch.library.opcheck(torch.ops.kiln.paged_attention.default,
                              (qp, kp, vp, table, lens, [], variant.text, variant.name, [cu_q]))
        # The runtime checks the table against the pool (CPU tensors).
        bad = table.clone()
        bad[1, 0] = kp.shape[0]
        with self.assertRaisesRegex(kiln.KilnError,
                                    rf"block_table\[1, 0\] = {kp.shape[0]} names no page of the pool"):
            kiln.paged_attention(q, kp, vp, bad, lens, variant)
        with self.assertRaisesRegex(kiln.KilnError, r"kv_lens\[0\] = 400 is outside"):
            kiln.paged_attention(q, kp, vp, table, torch.tensor([400, 171, 40], dtype=torch.int32), variant)

    def test_lse(self):
        q, k, v = inputs(1, 20, 30, 2, 2, 64, seed=6)
        out, lse = kiln.attention_with_lse(q, k, v, example("plain"))
        s = q.double().transpose(1, 2) @ k.double().transpose(1, 2).transpose(-1, -2) / 8.0
        self.assertLess(rel(lse, torch.logsumexp(s, -1)), 1e-5)

    def test_opcheck(self):
        q, k, v = (t.requires_grad_() for t in inputs(1, 17, 24, 2, 2, 64, seed=7))
        variant = example("causal")
        torch.library.opcheck(torch.ops.kiln.attention.default, (q, k, v, [], variant.text, "", 0.0, [], []))
        # Non-contiguous inputs (FlexAttention's layout transposed), for both
        # ops: the fake implementations' strides must match the real ones.
        qt, kt, vt = (t.detach().transpose(1, 2).contiguous().transpose(1, 2).requires_grad_() for t in (q, k, v))
        self.assertFalse(qt.is_contiguous())
        torch.library.opcheck(torch.ops.kiln.attention.default, (qt, kt, vt, [], variant.text, "", 0.0, [], []))
        out, lse = torch.ops.kiln.attention(qt, kt, vt, [], variant.text, "", 0.0, [], [])
        dout = torch.randn_like(out)
        torch.library.opcheck(torch.ops.kiln.attention_backward.default,
                              (dout, qt.detach(), kt.detach(), vt.detach(), out.detach(), lse, [], variant.text, "", 0.0,
                               [], []))

    def test_direct_call(self):
        # kiln._C.attention, the eager path of kiln.attention, is the op
        # through the dispatcher: the same results, errors and autograd as
        # torch.ops.kiln.attention.
        q, k, v = inputs(1, 17, 24, 2, 2, 64, seed=8)
        text = example("causal").text
        direct = kiln._C.attention(q, k, v, [], text, "", 0.0, [], [])
        generic = torch.ops.kiln.attention(q, k, v, [], text, "", 0.0, [], [])
        for a, b in zip(direct, generic):
            self.assertTrue(torch.equal(a, b))
        with self.assertRaisesRegex(RuntimeError, "^kiln: dropout_p > 0 needs dropout_rng"):
            kiln._C.attention(q, k, v, [], text, "", 0.1, [], [])
        with self.assertRaises(TypeError):
            kiln._C.attention(q, k, v, [1], text, "", 0.0, [], [])
        qg = q.clone().requires_grad_()
        out, _ = kiln._C.attention(qg, k, v, [], text, "", 0.0, [], [])
        out.float().sum().backward()
        qr = q.clone().requires_grad_()
        torch.ops.kiln.attention(qr, k, v, [], text, "", 0.0, [], [])[0].float().sum().backward()
        self.assertTrue(torch.equal(qg.grad, qr.grad))
        # A tensor subclass with its own __torch_function__ takes the generic
        # binding, which honours it; nn.Parameter (which disables it) and
        # plain tensors the direct path; the results are the same.
        class Logged(torch.Tensor):
            calls = []

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                cls.calls.append(str(func))
                return super().__torch_function__(func, types, args, kwargs or {})

        slopes = torch.rand(2, generator=torch.Generator().manual_seed(3))
        alibi = example("alibi")
        plain = kiln.attention(q, k, v, alibi, [slopes])
        param = kiln.attention(q, k, v, alibi, [torch.nn.Parameter(slopes)])
        self.assertTrue(torch.equal(plain, param))
        logged = kiln.attention(q, k, v, alibi, [slopes.as_subclass(Logged)])
        self.assertTrue(any("kiln.attention" in c for c in Logged.calls))
        self.assertTrue(torch.equal(plain, logged.as_subclass(torch.Tensor)))
        # Not differentiable: gradients through the paged op or through the
        # backward op raise rather than go missing.
        qg = q.clone().requires_grad_()
        out, lse = kiln.attention_with_lse(q, k, v, example("causal"))
        dq = torch.ops.kiln.attention_backward(torch.ones_like(out), qg, k, v, out, lse, [], text, "", 0.0, [],
                                               [])[0]
        with self.assertRaisesRegex(RuntimeError, "derivative for kiln::attention_backward is not implemented"):
            dq.float().sum().backward()

    def test_dropout_bits(self):
        # The CPU backend drops exactly the weights python/kiln/dropout.py
        # (reference/Philox.h) drops.
        p, (q, k, _) = 0.3, inputs(2, 40, 70, 3, 3, 32, seed=11)
        seed, offset = 0x0123456789ABCDEF, (5 << 32) + 9  # the offset's high word too
        rng = torch.tensor([seed, offset], dtype=torch.int64)
        got, want = dropped_keys(q, k, rng, p, example("plain"))
        self.assertTrue(torch.equal(got, want))
        self.assertAlmostEqual(want.float().mean().item(), p, delta=0.05)
        # Another offset, other bits; the same state, the same bits.
        other, _ = dropped_keys(q, k, torch.tensor([seed, offset + 1]), p, example("plain"))
        self.assertFalse(torch.equal(other, want))
        again, _ = dropped_keys(q, k, rng, p, example("plain"))
        self.assertTrue(torch.equal(again, got))

    def test_dropout_bytes(self):
        # A variant with dropout_bits = 8 (8-bit uniforms, p rounded to
        # 1/256): the CPU backend drops python/kiln/dropout.py's bits=8
        # weights, not the 16-bit ones, and its gradients match float64.
        p, (q, k, _) = 0.3, inputs(2, 40, 70, 3, 3, 32, seed=11)
        rng = torch.tensor([0x0123456789ABCDEF, (5 << 32) + 9], dtype=torch.int64)
        # Halves round away from zero, as the compiler's std::round.
        from kiln.dropout import threshold
        self.assertEqual(threshold(3 / 512, bits=8), 255)
        self.assertEqual(threshold(1 - 2**-9, bits=8), 1)
        bytes_plain = example("plain").text.replace("element_type = bf16", "element_type = bf16, dropout_bits = 8", 1)
        self.assertIn("dropout_bits = 8", bytes_plain)
        got, want = dropped_keys(q, k, rng, p, bytes_plain, bits=8)
        self.assertTrue(torch.equal(got, want))
        self.assertFalse(torch.equal(got, dropped_keys(q, k, rng, p, example("plain"))[1]))
        q, k, v = inputs(2, 30, 45, 8, 2, 64, seed=12)
        bytes_gqa = example("gqa_causal").text.replace("element_type = bf16", "element_type = bf16, dropout_bits = 8", 1)
        self.assertIn("dropout_bits = 8", bytes_gqa)
        for err in dropout_errors(q, k, v, 0.2, kiln.make_dropout_rng(), bytes_gqa, bits=8):
            self.assertLess(err, 1e-2)

    def test_dropout_forward_and_grads(self):
        # Forward and dQ, dK, dV with dropout against float64 with the same
        # scaled mask (top-left causal, GQA 4:1).
        q, k, v = inputs(2, 30, 45, 8, 2, 64, seed=12)
        for err in dropout_errors(q, k, v, 0.2, kiln.make_dropout_rng(), example("gqa_causal")):
            self.assertLess(err, 1e-2)

    def test_dropout_opcheck_and_errors(self):
        q, k, v = (t.requires_grad_() for t in inputs(1, 17, 24, 2, 2, 64, seed=13))
        text, rng = example("causal").text, torch.tensor([7, 0])
        torch.library.opcheck(torch.ops.kiln.attention.default, (q, k, v, [], text, "", 0.1, [rng], []))
        # The C++ op's errors are RuntimeErrors ("kiln: ..."); kiln.attention
        # raises them as KilnError.
        with self.assertRaisesRegex(RuntimeError, "^kiln: dropout_p > 0 needs dropout_rng"):
            torch.ops.kiln.attention(q, k, v, [], text, "", 0.1, [], [])
        with self.assertRaisesRegex(kiln.KilnError, "dropout_rng must be an int64 tensor"):
            kiln.attention(q, k, v, example("causal"), dropout_p=0.1, dropout_rng=torch.tensor([1, 2, 3]))
        with self.assertRaisesRegex(kiln.KilnError, "dropout_p must be in"):
            kiln.attention(q, k, v, example("causal"), dropout_p=1.0)
        # A variant whose text has dropout_p needs the generator's state.
        with self.assertRaisesRegex(kiln.KilnError, "dropout_rng"):
            kiln.attention(q, k, v, text.replace("bf16,", "bf16, dropout_p = 0.1,", 1))

    def test_capture_gradients(self):
        # Learnable ALiBi slopes and a relative-position bias table with a
        # temperature: the gradients of the float captures the score_mod
        # reads, against float64 autograd.
        alibi = example("alibi")
        q, k, v = (t.requires_grad_() for t in inputs(2, 40, 40, 2, 2, 64, seed=14))
        slopes = torch.rand(2, generator=torch.Generator().manual_seed(2)).requires_grad_()
        out = kiln.attention(q, k, v, alibi, captures=[slopes])
        dout = torch.randn(out.shape, generator=torch.Generator().manual_seed(4)).to(out.dtype)
        out.backward(dout)
        sd = slopes.detach().double().requires_grad_()
        dist = (torch.arange(40)[None, :] - torch.arange(40)[:, None]).double()
        expect = reference(*(t.detach().double() for t in (q, k, v)), causal="top_left",
                           bias=sd[:, None, None] * dist)
        expect.backward(dout.double())
        self.assertLess(rel(slopes.grad, sd.grad), 1e-2)
        lse = kiln.attention_with_lse(q.detach(), k.detach(), v.detach(), alibi, [slopes.detach()])[1]
        torch.library.opcheck(torch.ops.kiln.attention_backward_captures.default,
                              (dout, q.detach(), k.detach(), v.detach(), out.detach(), lse, [slopes.detach()],
                               alibi.text, "", 0.0, [], []))
        # Under torch.use_deterministic_algorithms the gradients come from
        # the fixed-point program: within rounding of the atomic one's, and
        # the same against float64.
        atomic_grad = slopes.grad.clone()
        torch.use_deterministic_algorithms(True)
        try:
            slopes.grad = None
            kiln.attention(q, k, v, alibi, captures=[slopes]).backward(dout)
        finally:
            torch.use_deterministic_algorithms(False)
        self.assertLess(rel(slopes.grad, sd.grad), 1e-2)
        self.assertLess(rel(slopes.grad, atomic_grad), 1e-5)
        torch.library.opcheck(torch.ops.kiln.attention_backward_captures.default,
                              (dout, q.detach(), k.detach(), v.detach(), out.detach(), lse, [slopes.detach()],
                               alibi.text, "", 0.0, [], [], True))
        # A capture that does not require grad gets none (and the plain
        # backward runs).
        slopes2 = slopes.detach()
        q2 = q.detach().requires_grad_()
        kiln.attention(q2, k.detach(), v.detach(), alibi, captures=[slopes2]).float().sum().backward()
        self.assertIsNone(slopes2.grad)

    def test_varlen(self):
        # A packed batch of 4 sequences (one empty, one of a single query),
        # keys != queries, GQA, bottom-right causal per sequence: out and the
        # gradients against float64 attention on each sequence alone; LSE
        # [H, T_q]; opcheck of the forward and the backward.
        lens_q, lens_k, h, hk, d = [30, 0, 1, 45], [40, 3, 9, 20], 8, 2, 64
        gen = torch.Generator().manual_seed(12)
        q, k, v = (torch.randn(sum(lens), heads, d, generator=gen).to(torch.bfloat16)
                   for lens, heads in ((lens_q, h), (lens_k, hk), (lens_k, hk)))
        cu = [torch.tensor([0] + list(itertools.accumulate(lens)), dtype=torch.int32) for lens in (lens_q, lens_k)]
        variant = example("gqa_causal")
        q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
        out, lse = kiln.varlen_attention_with_lse(q, k, v, *cu, variant)
        self.assertEqual(out.shape, (sum(lens_q), h, d))
        self.assertEqual(lse.shape, (h, sum(lens_q)))
        dout = torch.randn(out.shape, generator=gen).to(out.dtype)
        out.backward(dout)
        qd, kd, vd = (t.detach().double().requires_grad_() for t in (q, k, v))
        pieces = []
        for b in range(len(lens_q)):
            rows = slice(cu[0][b], cu[0][b + 1])
            keys = slice(cu[1][b], cu[1][b + 1])
            if lens_q[b] == 0:
                continue
            # The variant is top-left causal.
            pieces.append((rows, reference(qd[None, rows], kd[None, keys], vd[None, keys], causal="top_left")[0]))
        expect = torch.zeros(out.shape, dtype=torch.float64)
        for rows, piece in pieces:
            expect[rows] = piece
        expect.backward(dout.double())
        self.assertLess(rel(out.detach(), expect.detach()), 1e-2)
        for got, want in ((q.grad, qd.grad), (k.grad, kd.grad), (v.grad, vd.grad)):
            self.assertLess(rel(got, want), 1e-2)
        qs, ks, vs = (t.detach() for t in (q, k, v))
        torch.library.opcheck(torch.ops.kiln.attention.default, (qs, ks, vs, [], variant.text, "", 0.0, [], cu))
        torch.library.opcheck(torch.ops.kiln.attention_backward.default,
                              (dout, qs, ks, vs, out.detach(), lse, [], variant.text, "", 0.0, [], cu))
        # Bad offsets: named, before any run.
        with self.assertRaisesRegex(kiln.KilnError, "cu_seqlens_q must be an int32 tensor"):
            kiln.varlen_attention(qs, ks, vs, cu[0].long(), cu[1], variant)
        bad = cu[0].clone()
        bad[2] = 100
        with self.assertRaisesRegex(kiln.KilnError, r"cu_seqlens_q\[2\] = 100 is outside \[30, total_q = 76\]"):
            kiln.varlen_attention(qs, ks, vs, bad, cu[1], variant)
        with self.assertRaisesRegex(kiln.KilnError, r"a varlen q is \[T, H, D\]"):
            kiln.varlen_attention(qs[None], ks, vs, *cu, variant)

    def test_block_sparse(self):
        # Random lists (per batch and head, shuffled, partial and full) on a
        # causal variant: partial blocks causal (bottom-right), full blocks every key below
        # Lk, unlisted blocks nothing, against float64 with that mask;
        # Lq != Lk with partial last blocks, mask blocks larger than the
        # CPU's 64-row tiles.
        b, lq, lk, h, d, bq, bk = 2, 150, 200, 2, 64, 128, 32
        q, k, v = inputs(b, lq, lk, h, h, d, seed=21)
        rows, cols = -(-lq // bq), -(-lk // bk)
        gen = torch.Generator().manual_seed(4)
        kind = torch.randint(0, 3, (b, h, rows, cols), generator=gen)  # 0 none, 1 partial, 2 full
        lists = []
        for which in (1, 2):
            num = (kind == which).sum(-1).to(torch.int32)
            idx = torch.full((b, h, rows, cols), -1, dtype=torch.int32)
            for bb, hh, r in itertools.product(range(b), range(h), range(rows)):
                chosen = (kind[bb, hh, r] == which).nonzero().flatten()
                chosen = chosen[torch.randperm(len(chosen), generator=gen)]
                idx[bb, hh, r, :len(chosen)] = chosen.to(torch.int32)
            lists += [num, idx]
        q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
        out, lse = kiln.block_sparse_attention_with_lse(q, k, v, (*lists, (bq, bk)), example("causal"))
        kinds = kind.repeat_interleave(bq, 2).repeat_interleave(bk, 3)[:, :, :lq, :lk]
        causal = torch.arange(lk)[None, :] <= torch.arange(lq)[:, None] + lk - lq
        allowed = (kinds == 2) | ((kinds == 1) & causal)
        qd, kd, vd = (t.detach().double().requires_grad_() for t in (q, k, v))
        expect = torch.cat([reference(qd[i:i + 1], kd[i:i + 1], vd[i:i + 1], allowed=allowed[i]) for i in range(b)])
        seen = allowed.any(-1).transpose(1, 2)[..., None]  # rows with no key: O = 0
        expect = torch.where(seen, expect, torch.zeros_like(expect))
        self.assertLess(rel(out.detach(), expect.detach()), 1e-2)
        # The backward through the transposed lists (computed from these).
        dout = torch.randn(out.shape, generator=torch.Generator().manual_seed(5)).to(out.dtype)
        out.backward(dout)
        expect.backward(dout.double())
        for got, want in ((q.grad, qd.grad), (k.grad, kd.grad), (v.grad, vd.grad)):
            self.assertLess(rel(got, want), 1e-2)
        q, k, v = (t.detach() for t in (q, k, v))
        all_lists, _ = kiln._block_lists((*lists, (bq, bk)), lk)
        torch.library.opcheck(torch.ops.kiln.block_sparse_attention.default,
                              (q, k, v, all_lists, [], example("causal").text, "", bq, bk, 0.0, []))
        torch.library.opcheck(torch.ops.kiln.block_sparse_attention_backward.default,
                              (dout, q, k, v, out.detach(), lse, all_lists, [], example("causal").text, "", bq, bk,
                               0.0, []))
        # Bad lists are named: on CPU tensors the runtime reads them (a number
        # out of range, a block on both lists), before any kernel runs.
        bad = [t.clone() for t in lists]
        bad[1][0, 1, 1, 0] = 7
        with self.assertRaisesRegex(kiln.KilnError, r"kv_indices\[0, 1, 1, 0\] = 7 names no block \(there are 7\)"):
            kiln.block_sparse_attention(q, k, v, (*bad, (bq, bk)), example("causal"))
        bad = [t.clone() for t in lists]
        row = (bad[0][1, 0, 0].item(), bad[2][1, 0, 0].item())
        bad[2][1, 0, 0] = row[1] + 1
        bad[3][1, 0, 0, row[1]] = bad[1][1, 0, 0, 0] if row[0] else bad[3][1, 0, 0, 0]
        with self.assertRaisesRegex(kiln.KilnError, r"is listed twice for kv_num_blocks\[1, 0, 0\]"):
            kiln.block_sparse_attention(q, k, v, (*bad, (bq, bk)), example("causal"))
        # FlexAttention's BlockMask from its own mask_mod (documents, causal;
        # lists [1, 1, ...] broadcast): the dense document-mask variant's result.
        from torch.nn.attention.flex_attention import create_block_mask
        doc = (torch.arange(lq) * 3 // lq).to(torch.int32)

        def same_doc(bb, hh, qi, ki):
            return (doc[qi] == doc[ki]) & (qi >= ki)

        block_mask = create_block_mask(same_doc, None, None, lq, lq, device="cpu", BLOCK_SIZE=64)
        q, k, v = inputs(b, lq, lq, h, h, d, seed=22)
        variant = example("document_mask")
        got = kiln.block_sparse_attention(q, k, v, block_mask, variant, [doc, doc])
        self.assertTrue(torch.equal(got, kiln.attention(q, k, v, variant, [doc, doc])))
        # Gradients of captures (ALiBi's slopes) through the lists (Flex's
        # causal BlockMask, the mask's own): against float64 autograd and
        # the dense kernel's (the blocks in another order: not bit-equal).
        slopes = torch.rand(h, generator=torch.Generator().manual_seed(8)).requires_grad_()
        causal_mask = create_block_mask(lambda bb, hh, qi, ki: ki <= qi, None, None, lq, lq, device="cpu",
                                        BLOCK_SIZE=64)
        dout = torch.randn(q.shape, generator=torch.Generator().manual_seed(1))
        kiln.block_sparse_attention(q, k, v, causal_mask, example("alibi"), [slopes]).float().mul(dout).sum().backward()
        sparse_grad = slopes.grad.clone()
        slopes.grad = None
        kiln.attention(q, k, v, example("alibi"), [slopes]).float().mul(dout).sum().backward()
        sd = slopes.detach().double().requires_grad_()
        dist = (torch.arange(lq)[None, :] - torch.arange(lq)[:, None]).double()
        reference(*(t.double() for t in (q, k, v)), causal="top_left",
                  bias=sd[:, None, None] * dist).mul(dout.double()).sum().backward()
        self.assertLess(rel(sparse_grad, sd.grad), 1e-2)
        self.assertLess(rel(sparse_grad, slopes.grad.double()), 5e-3)
        torch.library.opcheck(torch.ops.kiln.block_sparse_attention_backward_captures.default,
                              (dout.to(q.dtype), q, k, v, *kiln.attention_with_lse(q, k, v, example("alibi"),
                                                                                     [slopes.detach()]),
                               kiln._block_lists(causal_mask, lq)[0], [slopes.detach()], example("alibi").text, "",
                               64, 64, 0.0, []))
        # Bad lists are named.
        with self.assertRaisesRegex(kiln.KilnError, r"kv_indices must be int32 \[B or 1, H or 1, 2, 5\]"):
            kiln.block_sparse_attention(q, k, v, (lists[0], lists[1].long(), *lists[2:4], (bq, bk)),
                                        example("causal"))
        # Flex's own transposed lists in the backward: the dense gradients.
        qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
        kiln.block_sparse_attention(qg, kg, vg, block_mask, variant, [doc, doc]).float().sum().backward()
        qa, ka, va = (t.clone().requires_grad_() for t in (q, k, v))
        kiln.attention(qa, ka, va, variant, [doc, doc]).float().sum().backward()
        for got, want in ((qg.grad, qa.grad), (kg.grad, ka.grad), (vg.grad, va.grad)):
            self.assertTrue(torch.equal(got, want))

    def test_create_block_mask(self):
        # The generated builder's lists of the document mask (captured ids,
        # causal): the same blocks as FlexAttention's create_block_mask of
        # the same mask, per batch and head, both orientations; attention
        # through them equals attention through Flex's, and the dense
        # variant's up to rounding (other tiles, another block order).
        from torch.nn.attention.flex_attention import create_block_mask
        b, lq, h, d = 2, 300, 2, 64
        doc = (torch.arange(lq) * 4 // lq).to(torch.int32)
        q, k, v = inputs(b, lq, lq, h, h, d, seed=23)
        variant = example("document_mask")
        built = kiln.create_block_mask(q, k, variant, [doc, doc], block_size=(64, 32))
        flex = create_block_mask(lambda bb, hh, qi, ki: (doc[qi] == doc[ki]) & (ki <= qi), None, None, lq, lq,
                                 device="cpu", BLOCK_SIZE=(64, 32))
        names = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks",
                 "q_indices", "full_q_num_blocks", "full_q_indices"]
        # (The mask does not read the head: lists of one head, broadcast.)
        self.assertEqual(built[0].shape, (b, 1, -(-lq // 64)))
        for i in range(0, 8, 2):
            num, idx = built[i].expand(b, h, -1), built[i + 1].expand(b, h, -1, -1)
            want_num, want_idx = (getattr(flex, names[i]).expand(b, h, *getattr(flex, names[i]).shape[2:]),
                                  getattr(flex, names[i + 1]).expand(b, h, *getattr(flex, names[i + 1]).shape[2:]))
            self.assertTrue(torch.equal(num, want_num), names[i])
            for bb, hh, r in itertools.product(range(b), range(h), range(num.shape[2])):
                n = int(num[bb, hh, r])
                self.assertEqual(sorted(idx[bb, hh, r, :n].tolist()), sorted(want_idx[bb, hh, r, :n].tolist()),
                                 f"{names[i + 1]}[{bb}, {hh}, {r}]")
        got = kiln.block_sparse_attention(q, k, v, built, variant, [doc, doc])
        self.assertTrue(torch.equal(got, kiln.block_sparse_attention(q, k, v, flex, variant, [doc, doc])))
        self.assertLess(rel(got, kiln.attention(q, k, v, variant, [doc, doc]).double()), 1e-2)

    def test_torch_compile_fullgraph(self):
        variant = example("causal")
        proj = torch.nn.Linear(64, 64, dtype=torch.bfloat16)

        def block(x):
            q = proj(x)
            return kiln.attention(q, x, x, variant).float().sum()

        x = inputs(1, 24, 24, 2, 2, 64, seed=8)[0]
        compiled = torch.compile(block, fullgraph=True, backend="aot_eager")
        self.assertEqual(compiled(x).item(), block(x).item())

    def test_torch_compile_inductor_fullgraph_with_backward(self):
        variant = example("causal")
        proj = torch.nn.Linear(64, 64, dtype=torch.bfloat16)

        def block(x):
            return kiln.attention(proj(x), x, x, variant).float().sum()

        # x transposed in memory: non-contiguous q, k, v through the compiled backward.
        x = inputs(1, 24, 24, 2, 2, 64, seed=9)[0].transpose(1, 2).contiguous().transpose(1, 2).requires_grad_()
        got = torch.compile(block, fullgraph=True)(x)
        got.backward()
        grad, x.grad = x.grad, None
        want = block(x)
        want.backward()
        # Inductor may fuse the projection differently (bf16 rounding).
        self.assertLess(abs(got.item() - want.item()), 1e-3 * abs(want.item()))
        self.assertLess(rel(grad, x.grad.double()), 1e-2)

    def test_spec_cache(self):
        # kiln_compile_spec keeps each spec in the cache folder (SpecCache.h):
        # a fresh process reads it instead of lowering the variant again; other
        # options are another entry; a damaged file is compiled again and
        # replaced. Each step in its own process (the folder is read once).
        from kiln import _capi
        code = (
            "import importlib.util, sys\n"
            "spec = importlib.util.spec_from_file_location('capi', sys.argv[1])\n"
            "capi = importlib.util.module_from_spec(spec); spec.loader.exec_module(capi)\n"
            "o = capi.variant_options(open(sys.argv[2]).read(), None, int(sys.argv[3]), int(sys.argv[3]), 'bf16')\n"
            "sys.stdout.write(capi.compile_spec(o, 'forward', 'sm_90a'))\n")
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, KILN_CACHE_DIR=cache, KILN_LIBRARY=_capi._library_path())

            def spec(head_dim=64):
                run = subprocess.run([sys.executable, "-c", code, _capi.__file__,
                                      os.path.join(EXAMPLES, "causal.mlir"), str(head_dim)],
                                     env=env, capture_output=True, text=True, check=True)
                return run.stdout

            def files():
                return sorted(f for f in os.listdir(cache) if f.endswith(".spec.json"))

            first = spec()
            self.assertEqual(len(files()), 1)
            self.assertEqual(spec(), first)
            with open(os.path.join(cache, files()[0]), "w") as f:
                f.write('{"format": "kiln-program", "damaged')
            self.assertEqual(spec(), first)
            with open(os.path.join(cache, files()[0])) as f:
                self.assertEqual(f.read(), first)
            self.assertNotEqual(spec(128), first)
            self.assertEqual(len(files()), 2)

    def test_library(self):
        from kiln import _capi
        path = os.path.realpath(_capi._library_path())
        self.assertTrue(os.path.exists(path))
        if os.environ.get("KILN_TEST_INSTALLED"):  # make check: pip install ./python
            package = os.path.realpath(os.path.dirname(kiln.__file__))
            self.assertEqual(os.path.dirname(path), package)
        # The C++ ops (kiln._C) use the library _capi loaded: one copy in the
        # process.
        self.assertEqual(os.path.dirname(os.path.realpath(kiln._C.__file__)),
                         os.path.realpath(os.path.dirname(kiln.__file__)))
        with open("/proc/self/maps") as maps:
            loaded = {line.split()[-1] for line in maps if line.rstrip().endswith("libkiln.so")}
        self.assertEqual(loaded, {path})
        self.assertEqual(str(torch.ops.kiln.attention.default._schema).split("(")[0], "kiln::attention")

    def test_errors(self):
        q, k, v = inputs(1, 8, 8, 1, 1, 64)
        with self.assertRaisesRegex(kiln.KilnError, "bf16 or fp16 q, k, v; got torch.float32"):
            kiln.attention(q.float(), k.float(), v.float(), example("plain"))
        with self.assertRaisesRegex(kiln.KilnError, "k has shape"):
            kiln.attention(q, k[:, :, :, :32].contiguous(), v, example("plain"))
        with self.assertRaisesRegex(kiln.KilnError, "does not parse"):
            kiln.attention(q, k, v, "attn.attention @x {")
        with self.assertRaisesRegex(kiln.KilnError, "capture"):
            kiln.attention(q, k, v, example("alibi"))
        with self.assertRaisesRegex(TypeError, "kiln.Variant or MLIR text"):
            kiln.attention(q, k, v, 3)
        # A meta tensor among real ones sends the call to the fake kernel,
        # which must refuse it rather than return uninitialised memory.
        with self.assertRaisesRegex(kiln.KilnError, r"one device, got \['cpu', 'meta'\]"):
            kiln.attention(q, k, v.to("meta"), example("plain"))
        with self.assertRaisesRegex(kiln.KilnError, r"one device, got \['cpu', 'meta'\]"):
            kiln.attention(q, k, v, example("alibi"), [torch.rand(1, device="meta")])
        meta = q.to("meta")
        self.assertEqual(kiln.attention(meta, meta, meta, example("plain")).device.type, "meta")


if __name__ == "__main__":
    unittest.main()
