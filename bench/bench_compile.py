"""Compile time of Kiln's kernels: cold (NVRTC, no GPU needed) and warm (the
cubin cache in a fresh process, on a GPU).

    python3 bench/bench_compile.py --kiln build/bin/kiln [--head-dim 128]
    python3 bench/bench_compile.py --kiln build/bin/kiln --warm build/lib/libkiln_runtime.so

Cold: `kiln compile --nonce N` with a fresh N every time, so the source is new
to every cache below Kiln; the runtime's path (one NVRTC compile per kernel,
the kernels concurrently; runtime/include/kiln/CompileUnits.h). Per example,
forward and backward: the program's wall time with the default threads and
with KILN_NVRTC_THREADS=1 (one kernel after another, the ablation), and the
slowest and the summed kernel times of the threaded runs. Medians of
--repeats runs.

Warm lookup (--lib build/lib/libkiln.so, no GPU): kiln_program_precompile of
the spec in a fresh process whose cache already holds every kernel (key,
lookup and read; NVRTC is loaded only on a miss), median of 3 processes.

Warm (--warm LIB, a GPU host): the spec of each program is loaded once to fill
the cache (KILN_CACHE_DIR, a fresh folder), then in 3 fresh processes: the
median time of kiln_program_load_file (cache lookup, module load, function
setup) after the CUDA context exists. The MLIR lowering that writes a spec
(kiln_compile_spec: 4-11 ms per program on the build machine) is not part of
either number.
"""
import argparse, os, re, statistics, subprocess, sys, tempfile, uuid

EXAMPLES = ["plain", "causal", "softcap", "alibi", "document_mask", "gqa_causal"]

PROGRAM = re.compile(r"kiln compile: (\S+) for \S+, (\d+) bytes of cubin in ([0-9.]+) ms \(NVRTC\)")
UNIT = re.compile(r"kiln compile:\s+(\S+): (\d+) bytes in ([0-9.]+) ms")


def compile_once(kiln, example, backward, args, out, threads):
    env = dict(os.environ)
    if threads:
        env["KILN_NVRTC_THREADS"] = str(threads)
    cmd = [kiln, "compile", example, "--head-dim", str(args.head_dim), "--arch", args.arch,
           "--nonce", uuid.uuid4().hex, "-o", out] + (["--backward"] if backward else [])
    run = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{run.stderr}")
    program = PROGRAM.search(run.stdout)
    units = {m.group(1): float(m.group(3)) for m in UNIT.finditer(run.stdout)}
    return float(program.group(3)), units


def fresh_process_ms(code, cache, what, runs):
    """Runs `code` (which prints its ms first) in `runs` fresh processes on
    the cache folder `cache`; the first fills it. The median of the rest."""
    env = dict(os.environ, KILN_CACHE_DIR=cache)
    times = []
    for attempt in range(runs):
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        if run.returncode:
            sys.exit(f"{what} failed:\n{run.stderr}")
        times.append(float(run.stdout.split()[0]))
    return statistics.median(times[1:])


def warm_load_ms(lib, spec, cache):
    """kiln_program_load_file's time in a fresh process with a filled cache,
    after the CUDA context exists."""
    code = f"""
import ctypes, time
import torch
torch.cuda.init(); torch.zeros(1, device="cuda")
lib = ctypes.CDLL({lib!r})
h, err = ctypes.c_void_p(), ctypes.create_string_buffer(4096)
lib.kiln_program_load_file.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_int]
t = time.perf_counter()
rc = lib.kiln_program_load_file({spec!r}.encode(), 0, ctypes.byref(h), err, len(err))
ms = (time.perf_counter() - t) * 1e3
assert rc == 0, err.value.decode()
print(ms)
"""
    return fresh_process_ms(code, cache, f"loading {spec}", 4)


def warm_lookup_ms(lib, spec, cache):
    """kiln_program_precompile in fresh processes with a filled cache."""
    code = f"""
import ctypes, time
lib = ctypes.CDLL({lib!r})
lib.kiln_program_precompile.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_int]
spec = open({spec!r}).read().encode()
cached, err = ctypes.c_int(), ctypes.create_string_buffer(4096)
t = time.perf_counter()
rc = lib.kiln_program_precompile(spec, ctypes.byref(cached), err, len(err))
ms = (time.perf_counter() - t) * 1e3
assert rc == 0, err.value.decode()
print(ms, cached.value)
"""
    return fresh_process_ms(code, cache, f"precompiling {spec}", 4)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln", required=True, help="the kiln driver (build/bin/kiln)")
    p.add_argument("--examples", nargs="*", default=EXAMPLES)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--arch", default="sm_90a")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--lib", metavar="LIB", help="libkiln.so: also measure warm cache lookups (no GPU)")
    p.add_argument("--warm", metavar="LIB", help="libkiln_runtime.so: also measure warm loads (GPU)")
    args = p.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    print(f"cold compile, head dim {args.head_dim}, {args.arch}, {os.cpu_count()} hardware threads, "
          f"median of {args.repeats}; ms")
    print(f"{'program':28} {'kernels':>7} {'wall':>8} {'1 thread':>9} {'slowest':>8} {'sum':>8}"
          + (f" {'lookup':>7}" if args.lib else "") + (f" {'warm':>7}" if args.warm else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.examples:
            example = os.path.join(root, "examples", name + ".mlir")
            for backward in (False, True):
                out = os.path.join(tmp, f"{name}{'_bwd' if backward else ''}.cubin")
                wall, serial, slowest, total = [], [], [], []
                for _ in range(args.repeats):
                    ms, units = compile_once(args.kiln, example, backward, args, out, 0)
                    wall.append(ms)
                    slowest.append(max(units.values()))
                    total.append(sum(units.values()))
                    serial.append(compile_once(args.kiln, example, backward, args, out, 1)[0])
                med = statistics.median
                row = (f"{name + ('_backward' if backward else '_forward'):28} {len(units):7d} "
                       f"{med(wall):8.0f} {med(serial):9.0f} {med(slowest):8.0f} {med(total):8.0f}")
                if args.lib:
                    row += f" {warm_lookup_ms(args.lib, out + '.json', os.path.join(tmp, 'lookup-' + os.path.basename(out))):7.1f}"
                if args.warm:
                    warm = warm_load_ms(args.warm, out + ".json", os.path.join(tmp, "load-" + os.path.basename(out)))
                    row += f" {warm:7.1f}"
                print(row, flush=True)


if __name__ == "__main__":
    main()
