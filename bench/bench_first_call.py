"""The first call of kiln.attention in a fresh process, from PyTorch: cold (an
empty cache folder: the MLIR lowering and NVRTC) and warm (the specs and cubins
that an earlier process left in KILN_CACHE_DIR), per example, forward and
forward + backward (examples without captures). Issue 13's compile-time
targets, measured where a user meets them. torch's import, its CUDA context
and its own first kernels are done before the clock starts.

    pip install --no-build-isolation ./python && python3 bench/bench_first_call.py [--repeats 3]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")
CHILD = r"""
import sys, time, torch, kiln
# torch's own first uses (its reduction and cast kernels, the autograd
# engine's threads) before the clock, so that only Kiln's first call is timed.
x = torch.randn(1, 256, 4, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
x.float().sum().backward(); torch.cuda.synchronize()
variant = kiln.Variant.from_file(sys.argv[1])
q, k, v = (torch.randn(1, 256, 4, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
start = time.perf_counter()
out = kiln.attention(q, k, v, variant)
torch.cuda.synchronize()
forward = time.perf_counter() - start
out.float().sum().backward()
torch.cuda.synchronize()
print(f"{forward * 1e3:.1f} {(time.perf_counter() - start) * 1e3:.1f}")
"""


def first_call_ms(example, cache):
    env = dict(os.environ, KILN_CACHE_DIR=cache)
    run = subprocess.run([sys.executable, "-c", CHILD, os.path.join(EXAMPLES, example + ".mlir")], env=env,
                         capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"{example} failed:\n{run.stderr[-2000:]}")
    forward, both = map(float, run.stdout.split()[-2:])
    return forward, both


p = argparse.ArgumentParser()
p.add_argument("--examples", default="causal,softcap,sliding_window")
p.add_argument("--repeats", type=int, default=3, help="warm processes per example (median)")
args = p.parse_args()
print(f"{'example':>10} {'cold fwd':>9} {'cold f+b':>9} {'warm fwd':>9} {'warm f+b':>9}   (ms, first call in a fresh process)")
for example in args.examples.split(","):
    with tempfile.TemporaryDirectory() as cache:
        cold = first_call_ms(example, cache)
        warm = [first_call_ms(example, cache) for _ in range(args.repeats)]
    print(f"{example:>10} {cold[0]:9.1f} {cold[1]:9.1f} {statistics.median(w[0] for w in warm):9.1f} "
          f"{statistics.median(w[1] for w in warm):9.1f}")
