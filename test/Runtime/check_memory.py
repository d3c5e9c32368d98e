"""No N x N buffer: peak device memory of a Kiln forward grows linearly in N.

  python3 test/Runtime/check_memory.py <libkiln_runtime.so> <plain.cubin.json>

The spec comes from `kiln compile` (any head dim); the kernel runs through the
runtime's C API on torch tensors for N = 2048 ... 16384 and the peak of
torch's allocator (which holds every device byte the run uses: the runtime
allocates nothing) must be proportional to N. Exits 1 otherwise.
"""
import os, sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from kiln_ctypes import Runtime

program = Runtime(sys.argv[1]).load(sys.argv[2])
spec = program.spec
D, H = spec["head_dim_qk"], 8
dt = torch.bfloat16 if spec["dtype"] == "bf16" else torch.float16
peaks = []
for N in (2048, 4096, 8192, 16384):
    torch.cuda.synchronize(); torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    q = torch.randn(1, N, H, D, device="cuda", dtype=dt); k, v = torch.randn_like(q), torch.randn_like(q)
    o = torch.empty_like(q); lse = torch.empty(1, H, N, device="cuda", dtype=torch.float32)
    free_before, _ = torch.cuda.mem_get_info()
    program(q=q, k=k, v=v, out=o, lse=lse)
    torch.cuda.synchronize()
    free_after, _ = torch.cuda.mem_get_info()
    # Nothing outside torch's allocator either (the driver's free memory).
    if free_after < free_before:
        sys.exit(f"N={N}: device free memory fell by {free_before - free_after} bytes during the run")
    peaks.append((N, torch.cuda.max_memory_allocated() - base))
    del q, k, v, o, lse
per_token = [p / n for n, p in peaks]
ok = max(per_token) / min(per_token) < 1.01
print("memory:", ", ".join(f"N={n}: {p / 2**20:.1f} MiB" for n, p in peaks), "linear" if ok else "NOT LINEAR")
sys.exit(0 if ok else 1)
