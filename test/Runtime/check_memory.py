"""No N x N buffer: device memory of a Kiln forward grows linearly in N.

  python3 test/Runtime/check_memory.py <libkiln_runtime.so> <plain.cubin.json>

The spec comes from `kiln compile` (any head dim); the program runs through
the runtime's C API on torch tensors for N = 2048 ... 16384. The peak of
torch's allocator (the tensors) must be proportional to N; the only device
memory the runtime takes is its workspace (split-KV's partial results, when
the run splits, and a persistent kernel's 4-byte tile counter), which must
not grow faster than N (beyond 4 KiB), and the driver's free
memory may fall by no more than that workspace (allocated in 2 MiB units).
Exits 1 otherwise.
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
    workspace = program.workspace_bytes()
    # Nothing outside torch's allocator but the workspace (the driver's free
    # memory).
    unit = 2 << 20
    if free_before - free_after > -(-workspace // unit) * unit:
        sys.exit(f"N={N}: device free memory fell by {free_before - free_after} bytes during the run, "
                 f"more than the {workspace}-byte workspace")
    peaks.append((N, torch.cuda.max_memory_allocated() - base, workspace))
    del q, k, v, o, lse
per_token = [p / n for n, p, _ in peaks]
ok = max(per_token) / min(per_token) < 1.01
# The workspace per token may shrink with N (fewer splits), never grow;
# a few bytes that do not grow with N (a persistent kernel's tile counter,
# present once the tiles outnumber the CTAs) do not count.
constant = 4096
ws_per_token = [max(w - constant, 0) / n for n, _, w in peaks]
ok = ok and all(b <= a * 1.01 for a, b in zip(ws_per_token, ws_per_token[1:]))
print("memory:", ", ".join(f"N={n}: {p / 2**20:.1f} MiB + workspace {w / 2**20:.1f} MiB" for n, p, w in peaks),
      "linear" if ok else "NOT LINEAR")
sys.exit(0 if ok else 1)
