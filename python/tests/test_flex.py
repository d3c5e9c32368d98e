"""kiln.flex_attention: FlexAttention-style Python mods translated to Kiln
variants, on CPU tensors against float64 (forward and gradients), with
captured tensors, GQA, torch.compile, and the errors for what Kiln cannot
translate.
"""
import math
import unittest

import torch

import kiln

N = 40


def reference(q, k, v, score_mod=None, mask_mod=None):
    """float64 FlexAttention semantics on [B, H, L, D], mods evaluated
    elementwise in float64."""
    q, k, v = q.double(), k.double(), v.double()
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    b, h, lq, lk = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    bi = torch.arange(b)[:, None, None, None]
    hi = torch.arange(h)[None, :, None, None]
    qi = torch.arange(lq)[None, None, :, None]
    ki = torch.arange(lk)[None, None, None, :]
    if score_mod is not None:
        s = score_mod(s, bi, hi, qi, ki)
    if mask_mod is not None:
        s = s.masked_fill(~mask_mod(bi, hi, qi, ki).expand(s.shape), float("-inf"))
    return torch.softmax(s, -1) @ v


SLOPES = torch.tensor([2.0 ** -(i + 1) for i in range(4)])


def rel(got, ref):
    return ((got.double() - ref).norm() / ref.norm()).item()


def qkv(h=4, h_kv=4, d=64, seed=0):
    gen = torch.Generator().manual_seed(seed)
    make = lambda heads: torch.randn(2, heads, N, d, generator=gen).bfloat16()
    return make(h), make(h_kv), make(h_kv)


class Flex(unittest.TestCase):
    def check(self, q, k, v, score_mod=None, mask_mod=None, grads=False, **kw):
        q, k, v = (t.clone().requires_grad_(grads) for t in (q, k, v))
        out = kiln.flex_attention(q, k, v, score_mod, mask_mod=mask_mod, **kw)
        qd, kd, vd = (t.detach().double().requires_grad_(grads) for t in (q, k, v))
        ref = reference(qd, kd, vd, score_mod, mask_mod)
        self.assertEqual(out.shape, ref.shape)
        self.assertLess(rel(out.detach(), ref.detach()), 1e-2)
        if grads:
            dout = torch.randn(out.shape, generator=torch.Generator().manual_seed(5)).bfloat16()
            out.backward(dout)
            ref.backward(dout.double())
            for got, want in ((q.grad, qd.grad), (k.grad, kd.grad), (v.grad, vd.grad)):
                self.assertLess(rel(got, want), 1e-2)

    def test_softcap_and_causal_with_grads(self):
        def softcap(score, b, h, q_idx, kv_idx):
            return torch.tanh(score / 20.0) * 20.0

        def causal(b, h, q_idx, kv_idx):
            return q_idx >= kv_idx

        self.check(*qkv(), softcap, causal, grads=True)

    def test_alibi_and_document_mask_capture_tensors(self):
        slopes = torch.tensor([2.0 ** -(i + 1) for i in range(4)])
        docs = torch.tensor([0] * 15 + [1] * 20 + [2] * 5, dtype=torch.int32)

        def alibi(score, b, h, q_idx, kv_idx):
            return score + slopes[h] * (kv_idx - q_idx)

        def same_document(b, h, q_idx, kv_idx):
            return (docs[q_idx] == docs[kv_idx]) & (kv_idx <= q_idx)

        self.check(*qkv(seed=1), alibi, same_document, grads=True)

    def test_relative_bias_table_2d_and_modulo(self):
        table = torch.randn(4, 8)

        def bucketed(score, b, h, q_idx, kv_idx):
            return score + table[h, (kv_idx - q_idx) % 8]

        self.check(*qkv(seed=2), bucketed)

    def test_sliding_window_with_where_and_gqa(self):
        def window(b, h, q_idx, kv_idx):
            return (q_idx - kv_idx >= 0) & (q_idx - kv_idx < 8)

        def damp(score, b, h, q_idx, kv_idx):
            return torch.where(kv_idx % 2 == 0, score, score * 0.5)

        self.check(*qkv(h=8, h_kv=2, seed=3), damp, window, enable_gqa=True)

    def test_scale_and_lse(self):
        q, k, v = qkv(seed=4)
        out, lse = kiln.flex_attention(q, k, v, scale=0.05, return_lse=True)
        s = q.double() @ k.double().transpose(-1, -2) * 0.05
        self.assertLess(rel(lse, torch.logsumexp(s, -1)), 1e-5)
        self.assertLess(rel(out, torch.softmax(s, -1) @ v.double()), 1e-2)

    def test_flex_attention_under_torch_compile(self):
        """kiln.flex_attention inside torch.compile(fullgraph=True): the mods
        are translated while Dynamo traces (a constant of the graph), and
        the tensors they read are the op's captures. A module whose mods
        close over an nn.Parameter, a float attribute and a tensor argument,
        and a mod reading a global tensor; outputs and gradients equal the
        eager calls', bit for bit. (Before torch 2.14, whose Dynamo cannot read a
        closure, the same calls with the translation's one graph break.)"""
        full = kiln._DYNAMO_READS_CLOSURES

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.cap = 20.0
                self.bias = torch.nn.Parameter(torch.linspace(-0.5, 0.5, 4))

            def forward(self, q, k, v, docs):
                cap, bias = self.cap, self.bias

                def softcap_bias(score, b, h, q_idx, kv_idx):
                    return cap * torch.tanh(score / cap) + bias[h]

                def same_document(b, h, q_idx, kv_idx):
                    return (docs[q_idx] == docs[kv_idx]) & (kv_idx <= q_idx)

                return kiln.flex_attention(q, k, v, softcap_bias, mask_mod=same_document)

        block = Block()
        q, k, v = qkv(seed=6)
        docs = torch.tensor([0] * 15 + [1] * 20 + [2] * 5, dtype=torch.int32)

        def run(fn, q, k, v, docs):
            block.zero_grad()
            q = q.clone().requires_grad_()
            out = fn(q, k, v, docs)
            out.float().square().sum().backward()
            return out, q.grad, block.bias.grad.clone()

        eager = run(block, q, k, v, docs)
        qd, kd, vd = (t.double() for t in (q, k, v))
        ref = reference(qd, kd, vd, lambda s, b, h, qi, ki: 20.0 * torch.tanh(s / 20.0) + block.bias.detach().double()[h],
                        lambda b, h, qi, ki: (docs[qi] == docs[ki]) & (ki <= qi))
        self.assertLess(rel(eager[0].detach(), ref), 1e-2)
        for backend in ("aot_eager", "inductor"):
            compiled = torch.compile(block, fullgraph=full, backend=backend)
            for got, want in zip(run(compiled, q, k, v, docs), eager):
                self.assertTrue(torch.equal(got, want), backend)
        # A capture of a new shape is a new variant: recompiled, not reused.
        short = [t[:, :, :24] for t in (q, k, v)]
        self.assertTrue(torch.equal(run(compiled, *short, docs[:24])[0], run(block, *short, docs[:24])[0]))

        # A global tensor, and a float argument that changes between calls
        # (Dynamo makes it symbolic after the first change).
        def alibi_capped(q, k, v, cap):
            def mod(score, b, h, q_idx, kv_idx):
                return cap * torch.tanh(score / cap) + SLOPES[h] * (kv_idx - q_idx)
            return kiln.flex_attention(q, k, v, mod)

        compiled = torch.compile(alibi_capped, fullgraph=full, backend="aot_eager")
        for cap in (20.0, 30.0, 40.0, 20.0):
            self.assertTrue(torch.equal(compiled(q, k, v, cap), alibi_capped(q, k, v, cap)))

        # What Kiln cannot translate is reported with Kiln's message.
        def sigmoid(score, b, h, q_idx, kv_idx):
            return torch.sigmoid(score)

        with self.assertRaisesRegex(Exception, "score_mod uses torch.sigmoid, which Kiln cannot translate"):
            torch.compile(lambda q, k, v: kiln.flex_attention(q, k, v, sigmoid), fullgraph=full,
                          backend="aot_eager")(q, k, v)

        # Mods that reach tensors through an object (self), a dict or a
        # function of the user's are translated eagerly on every call (a
        # graph break: no fullgraph), so an update in place is seen, as in
        # eager mode.
        class ThroughSelf(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bias = torch.nn.Parameter(torch.zeros(4))

            def forward(self, q, k, v):
                def mod(score, b, h, q_idx, kv_idx):
                    return score + self.bias[h]
                return kiln.flex_attention(q, k, v, mod)

        through_self = ThroughSelf()
        compiled = torch.compile(through_self, backend="aot_eager")
        state = {"bias": torch.zeros(4)}

        def through_dict(q, k, v):
            def mod(score, b, h, q_idx, kv_idx):
                return score + state["bias"][h]
            return kiln.flex_attention(q, k, v, mod)

        compiled_dict = torch.compile(through_dict, backend="aot_eager")
        for step in range(2):
            with torch.no_grad():
                through_self.bias.add_(0.25)
            state["bias"].add_(0.25)
            self.assertTrue(torch.equal(compiled(q, k, v), through_self(q, k, v)))
            self.assertTrue(torch.equal(compiled_dict(q, k, v), through_dict(q, k, v)))

        # A module used as a mod (eager), its own parameter read by fx.
        class ModuleMod(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.slopes = torch.nn.Parameter(SLOPES.clone())

            def forward(self, score, b, h, q_idx, kv_idx):
                return score + self.slopes[h] * (kv_idx - q_idx)

        module_mod = ModuleMod()
        names = [n for n, _ in module_mod.named_parameters()]
        self.assertLess(rel(kiln.flex_attention(q, k, v, module_mod).detach(),
                            reference(q.double(), k.double(), v.double(),
                                      lambda s, b, h, qi, ki: s + SLOPES.double()[h] * (ki - qi))), 1e-2)
        self.assertEqual([n for n, _ in module_mod.named_parameters()], names)

    def test_flex_variant_outside_torch_compile(self):
        def causal(b, h, q_idx, kv_idx):
            return q_idx >= kv_idx

        q, k, v = qkv(seed=6)
        eager = kiln.flex_attention(q, k, v, mask_mod=causal)
        variant, captures = kiln.flex_variant(mask_mod=causal, head_dim=64)
        full = torch.compile(lambda q, k, v: kiln.attention(q, k, v, variant, captures), fullgraph=True,
                             backend="aot_eager")
        got = full(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)
        self.assertTrue(torch.equal(got, eager))

    def test_translation_reused_only_while_what_the_mods_read_is_unchanged(self):
        from kiln import mods
        q, k, v = qkv(seed=7)
        state = {"bias": torch.zeros(4)}
        scale_by = 2.0

        def biased(score, b, h, q_idx, kv_idx):
            return score * scale_by + bias[h]

        bias = torch.zeros(4)
        first = mods.cached_variant_text(biased, None, 64, 64, torch.bfloat16)
        again = mods.cached_variant_text(biased, None, 64, 64, torch.bfloat16)
        self.assertIs(first, again)
        bias = torch.ones(4)  # a new tensor: its capture is the new one
        rebound = mods.cached_variant_text(biased, None, 64, 64, torch.bfloat16)
        self.assertIs(rebound[1][0], bias)
        scale_by = 3.0  # a new constant: translated again
        self.assertIn("3.0", mods.cached_variant_text(biased, None, 64, 64, torch.bfloat16)[0])
        out = kiln.flex_attention(q, k, v, biased)
        ref = reference(q, k, v, lambda s, b, h, qi, ki: s * 3.0 + 1.0)
        self.assertLess(rel(out, ref), 1e-2)
        # Tensors reached through the user's own functions: never reused.
        self.assertIsNone(mods._referenced(lambda s, b, h, qi, ki: s + state["bias"][h]))

    def test_negative_indices_constants_and_literals(self):
        table = torch.randn(4, 2 * N)
        half = torch.tensor(0.5)

        def relative(score, b, h, q_idx, kv_idx):
            # kv_idx - q_idx is negative below the diagonal: counts from the end.
            return score * half + table[h, kv_idx - q_idx] * 1e-1 + 1e-5 + table[-1, 0]

        def where_constants(b, h, q_idx, kv_idx):
            return torch.where(kv_idx <= q_idx, 1.0, 0.0) > 0.5

        q, k, v = qkv(seed=8)
        ref_table = torch.cat([table[:, : N], table[:, N:]], 1)

        def ref_mod(s, b, h, qi, ki):
            idx = (ki - qi) % (2 * N)
            return s * 0.5 + ref_table.double()[h, idx] * 1e-1 + 1e-5 + table[-1, 0].double()

        out = kiln.flex_attention(q, k, v, relative, mask_mod=where_constants, scale=1e-1)
        qd, kd, vd = (t.double() for t in (q, k, v))
        s = qd @ kd.transpose(-1, -2) * 1e-1
        bi = torch.arange(2)[:, None, None, None]
        hi = torch.arange(4)[None, :, None, None]
        qi = torch.arange(N)[None, None, :, None]
        ki = torch.arange(N)[None, None, None, :]
        s = ref_mod(s, bi, hi, qi, ki).masked_fill(ki > qi, float("-inf"))
        self.assertLess(rel(out, torch.softmax(s, -1) @ vd), 1e-2)

    def test_forward_of_a_mod_without_derivative(self):
        q, k, v = qkv(seed=9)
        out = kiln.flex_attention(q, k, v, lambda s, b, h, qi, ki: torch.erf(s) * 4.0)
        s = q.double() @ k.double().transpose(-1, -2) / 8.0
        self.assertLess(rel(out, torch.softmax(torch.erf(s) * 4.0, -1) @ v.double()), 1e-2)
        q.requires_grad_()
        out = kiln.flex_attention(q, k, v, lambda s, b, h, qi, ki: torch.erf(s) * 4.0)
        # Raised in the C++ autograd: a RuntimeError with Kiln's message.
        with self.assertRaisesRegex(RuntimeError, "(?s)^kiln: .*no backward: .*cannot differentiate 'math.erf'"):
            out.float().sum().backward()

    def test_errors_name_what_cannot_be_translated(self):
        q, k, v = qkv()
        with self.assertRaisesRegex(kiln.KilnError, "score_mod uses torch.sigmoid, which Kiln cannot translate"):
            kiln.flex_attention(q, k, v, lambda s, b, h, qi, ki: torch.sigmoid(s))
        with self.assertRaisesRegex(kiln.KilnError, "mask_mod must return a boolean"):
            kiln.flex_attention(q, k, v, mask_mod=lambda b, h, qi, ki: qi - ki)
        with self.assertRaisesRegex(kiln.KilnError, "score_mod must take 5 arguments"):
            kiln.flex_attention(q, k, v, lambda s, b: s)
        with self.assertRaisesRegex(kiln.KilnError, "indexes a torch.bool tensor"):
            keep = torch.ones(N, dtype=torch.bool)
            kiln.flex_attention(q, k, v, mask_mod=lambda b, h, qi, ki: keep[qi])
        with self.assertRaisesRegex(kiln.KilnError, "uses a 1-d tensor as a value"):
            vec = torch.ones(N)
            kiln.flex_attention(q, k, v, lambda s, b, h, qi, ki: s + vec.sum() * 0 + vec)
        with self.assertRaisesRegex(kiln.KilnError, "enable_gqa=True"):
            kiln.flex_attention(q, k[:, :2], v[:, :2])


if __name__ == "__main__":
    unittest.main()
