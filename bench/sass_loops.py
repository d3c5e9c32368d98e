#!/usr/bin/env python3
"""Register spills of generated kernels, per loop of their SASS, without a
GPU: the spill sweeps of docs/performance.md ("Keys per dK/dV CTA at
D = 128", "A mod's dS factor multiplied into P before dP's wait").

    python3 bench/sass_loops.py [--kiln build/bin/kiln] [--kernels REGEX] \\
        -- examples/softcap.mlir --head-dim 128 --backward [kiln run flags]
    python3 bench/sass_loops.py --spec X.cubin.json   # a spec's source instead

Emits the CUDA of `kiln run ARGS --backend cuda -emit=cuda`, compiles each
kernel whose name matches --kernels on its own (nvcc -cubin -arch=sm_90a
-Xptxas -v: the NVVM and ptxas NVRTC uses), and prints per kernel ptxas's
spill bytes and, per innermost loop of the SASS (a backward branch's range,
at least --min-loop instructions), its instructions, local loads and stores
(LDL / STL) and HGMMAs. Needs nvcc (CUDA 13 at /usr/local/cuda) and
cuobjdump with nvdisasm (`pip install nvidia-cuda-cuobjdump
nvidia-cuda-nvdisasm` where the CUDA install lacks them: --cuobjdump-dir).
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile


def kernels_of(source):
    """(name, unit) per kernel: the shared head plus the kernel's part."""
    parts = re.split(r"(?m)^// kiln-kernel: ", source)
    head = parts[0]
    for part in parts[1:]:
        name = part.split("\n", 1)[0].strip()
        yield name, head + "// kiln-kernel: " + part


def sass_instructions(cubin, env):
    out = subprocess.run(["cuobjdump", "-sass", cubin], capture_output=True, text=True, check=True,
                         env=env).stdout
    ins = []
    for line in out.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2)))
    return ins


def innermost_loops(ins):
    """Address ranges of backward branches containing no other one."""
    loops = set()
    for addr, text in ins:
        m = re.search(r"\bBRA\b[^;]*?0x([0-9a-f]+)", text)
        if m and int(m.group(1), 16) < addr:
            loops.add((int(m.group(1), 16), addr))
    return sorted(l for l in loops
                  if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in loops))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln", default="build/bin/kiln")
    p.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    p.add_argument("--cuobjdump-dir", default="",
                   help="folders holding cuobjdump and nvdisasm, joined as in PATH (searched before "
                        "/usr/local/cuda/bin and PATH)")
    p.add_argument("--kernels", default="", help="regex of the kernel names to compile (default: all)")
    p.add_argument("--min-loop", type=int, default=100, help="smallest loop reported, in instructions")
    p.add_argument("--opcodes", type=int, default=0,
                   help="also each loop's N most frequent opcodes (modifiers dropped)")
    p.add_argument("--include", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    p.add_argument("--spec", default="", help="a spec (.cubin.json) whose source to compile instead of "
                   "kiln run's (e.g. a prototype's rewritten spec)")
    p.add_argument("run", nargs=argparse.REMAINDER, help="-- then kiln run's arguments")
    args = p.parse_args()
    run = [a for a in args.run if a != "--"]
    if not run and not args.spec:
        p.error("give kiln run's arguments after --, or --spec")
    env = dict(os.environ)
    dirs = [d for d in (args.cuobjdump_dir, "/usr/local/cuda/bin") if d]
    env["PATH"] = os.pathsep.join(dirs + [env.get("PATH", "")])
    if args.spec:
        source = json.load(open(args.spec))["source"]
    else:
        source = subprocess.run([args.kiln, "run", *run, "--backend", "cuda", "-emit=cuda"],
                                capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        for name, unit in kernels_of(source):
            if args.kernels and not re.search(args.kernels, name):
                continue
            cu, cubin = os.path.join(tmp, name + ".cu"), os.path.join(tmp, name + ".cubin")
            open(cu, "w").write(unit)
            ptxas = subprocess.run([args.nvcc, "-cubin", "-arch=sm_90a", "-std=c++17", "--expt-relaxed-constexpr", "-I", args.include,
                                    "-Xptxas", "-v", cu, "-o", cubin], capture_output=True, text=True, env=env)
            if ptxas.returncode != 0:
                print(f"{name}: nvcc failed\n{ptxas.stderr[-2000:]}", file=sys.stderr)
                return 1
            stores = re.findall(r"(\d+) bytes spill stores", ptxas.stderr)
            loads = re.findall(r"(\d+) bytes spill loads", ptxas.stderr)
            ins = sass_instructions(cubin, env)
            print(f"{name}: {len(ins)} instructions, spill stores {max(map(int, stores), default=0)} B, "
                  f"spill loads {max(map(int, loads), default=0)} B")
            for start, end in innermost_loops(ins):
                body = [t for a, t in ins if start <= a <= end]
                if len(body) < args.min_loop:
                    continue
                count = lambda op: sum(1 for t in body if re.search(rf"\b{op}\b", t))
                print(f"  loop {start:#x}-{end:#x}: {len(body)} instructions, LDL {count('LDL')}, "
                      f"STL {count('STL')}, HGMMA {sum('HGMMA' in t for t in body)}")
                if args.opcodes:
                    ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", t).split()[0].split(".")[0]
                                              for t in body)
                    print("    " + " ".join(f"{op} {n}" for op, n in ops.most_common(args.opcodes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
