"""Host time per call of kiln.attention on a tiny CUDA problem (no
synchronization between calls, so the GPU never holds the host back), split
into the layers a call goes through (the op in C++, python/csrc/), next to a
Python custom op that does nothing and to SDPA; then a cProfile of the Python side. Issue 13's target is
under 15 µs per call.

    pip install --no-build-isolation ./python && python3 bench/bench_host_overhead.py
"""
import cProfile
import io
import os
import pstats
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
import kiln  # noqa: E402
from test_ops import EXAMPLES, example, inputs, paged_cache  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import host_us  # noqa: E402


@torch.library.custom_op("kiln_bench::noop", mutates_args=())
def noop(q: torch.Tensor) -> torch.Tensor:
    return q.new_empty(q.shape)


causal = example("causal")
q, k, v = (t.cuda() for t in inputs(1, 16, 16, 1, 1, 64, seed=6))
sq, sk, sv = (t.transpose(1, 2) for t in (q, k, v))
print(f"device={torch.cuda.get_device_name()} torch={torch.__version__}")
qg = q.detach().requires_grad_()


def under_inference_mode(fn):
    def run():
        with torch.inference_mode():
            fn()
    return run


# A decode step: one token over a paged cache (GQA 4:1, 16-key pages).
gqa = kiln.Variant.from_file(os.path.join(EXAMPLES, "gqa_decode.mlir"), "gqa4_decode")
dq, dk, dv = inputs(2, 1, 64, 8, 2, 128, seed=7)
lens = torch.tensor([64, 40], dtype=torch.int32)
kp, vp, table = (t.cuda() for t in paged_cache(dk, dv, lens, 16, seed=8))
dq, lens = dq.cuda(), lens.cuda()

op = torch.ops.kiln.attention
rows = [("kiln.attention", lambda: kiln.attention(q, k, v, causal)),
        ("kiln._C.attention (direct)", lambda: kiln._C.attention(q, k, v, [], causal.text, "", 0.0, [], [])),
        ("torch.ops.kiln.attention", lambda: op(q, k, v, [], causal.text, "", 0.0, [], [])),
        ("  in inference_mode", under_inference_mode(lambda: op(q, k, v, [], causal.text, "", 0.0, [], []))),
        ("  q requiring grad", lambda: op(qg, k, v, [], causal.text, "", 0.0, [], [])),
        ("kiln.paged_attention (decode step)", lambda: kiln.paged_attention(dq, kp, vp, table, lens, gqa)),
        ("a Python custom op doing nothing", lambda: torch.ops.kiln_bench.noop(q)),
        ("SDPA", lambda: F.scaled_dot_product_attention(sq, sk, sv, is_causal=True)),
        ("  in inference_mode", under_inference_mode(lambda: F.scaled_dot_product_attention(sq, sk, sv,
                                                                                           is_causal=True)))]
for _ in range(2):  # the second round is the steady one
    measured = [(label, host_us(fn)) for label, fn in rows]
for label, us in measured:
    print(f"  {label:34} {us:7.1f} µs")
profile = cProfile.Profile()
profile.enable()
for _ in range(2000):
    kiln.attention(q, k, v, causal)
profile.disable()
text = io.StringIO()
pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(12)
print(text.getvalue())
