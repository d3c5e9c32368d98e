"""One backward of each named spec, for Nsight Compute to profile its small
kernels (bench/device-run-small-kernels.sh ncu):
  python3 bench/probe_small_kernels_ncu.py --lib LIB --specs DIR NAME...
Each NAME is a backward spec (NAME.cubin.json, e.g. plain_hd128_bwd) run on
bench_attention.py's N = 2048 shape at its head dim (B 8, hidden 2048)."""
import argparse, json, os, sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_ctypes import Runtime

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True)
p.add_argument("--specs", required=True)
p.add_argument("names", nargs="+")
args = p.parse_args()
runtime = Runtime(args.lib)
for name in args.names:
    path = os.path.join(args.specs, name + ".cubin.json")
    hd = json.load(open(path))["head_dim_qk"]
    B, N, H = 8, 2048, 2048 // hd
    q = torch.randn(B, N, H, hd, device="cuda", dtype=torch.bfloat16)
    k, v, o, do = (torch.randn_like(q) for _ in range(4))
    dq, dk, dv = (torch.empty_like(q) for _ in range(3))
    lse = torch.randn(B, H, N, device="cuda", dtype=torch.float32).abs() + 8
    runtime.load(path)(q=q, k=k, v=v, out=o, dout=do, lse=lse, dq=dq, dk=dk, dv=dv)
    torch.cuda.synchronize()
    print(name, "ran", flush=True)
