"""Runs one forward spec a few times (for Nsight Compute to profile one
launch): python3 bench/ncu_spec.py LIB SPEC.cubin.json B N H D [repeats].
Random bf16 inputs, no captures; the output is not checked (the benchmark
checks the same specs)."""
import os, sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime

lib, spec = sys.argv[1:3]
B, N, H, D = (int(x) for x in sys.argv[3:7])
repeats = int(sys.argv[7]) if len(sys.argv) > 7 else 3
program = Runtime(lib).load(spec)
q, k, v = (torch.randn(B, N, H, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
o, lse = torch.empty_like(q), torch.empty(B, H, N, device="cuda", dtype=torch.float32)
for _ in range(repeats):
    program(q=q, k=k, v=v, out=o, lse=lse, captures=[])
torch.cuda.synchronize()
