"""The cubin cache shared by many processes at once (kiln_program_precompile
through libkiln.so; NVRTC, no GPU): every racing process succeeds, the
folder ends with one complete cubin per kernel and no temporary files, a
later process finds them all, and an emptied file counts as a miss.

    python3 cache_processes.py LIBDIR EXAMPLES_DIR
"""
import ctypes, os, subprocess, sys, tempfile, time

libdir, examples = sys.argv[1], sys.argv[2]
PROCESSES = 6

if len(sys.argv) > 3:  # a racing child: precompile the spec in argv[3]
    lib = ctypes.CDLL(os.path.join(libdir, "libkiln.so"))
    lib.kiln_program_precompile.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p,
                                            ctypes.c_int]
    with open(sys.argv[3]) as f:
        spec = f.read()
    cached, err = ctypes.c_int(-1), ctypes.create_string_buffer(4096)
    start = time.perf_counter()
    rc = lib.kiln_program_precompile(spec.encode(), ctypes.byref(cached), err, len(err))
    ms = (time.perf_counter() - start) * 1e3
    print(f"rc={rc} cached={cached.value} ms={ms:.1f} {err.value.decode()}")
    sys.exit(rc)

lib = ctypes.CDLL(os.path.join(libdir, "libkiln.so"))


class Options(ctypes.Structure):
    _fields_ = [("mlir", ctypes.c_char_p), ("name", ctypes.c_char_p), ("head_dim", ctypes.c_longlong),
                ("head_dim_v", ctypes.c_longlong), ("dtype", ctypes.c_char_p), ("page_size", ctypes.c_longlong),
                ("dropout_p", ctypes.c_double), ("capture_gradients", ctypes.c_int),
                ("varlen", ctypes.c_int), ("block_sparse", ctypes.c_longlong * 2),
                ("build_block_mask", ctypes.c_int)]


lib.kiln_compile_spec.argtypes = [ctypes.POINTER(Options), ctypes.c_char_p, ctypes.c_char_p,
                                  ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_int]
with open(os.path.join(examples, "softcap.mlir")) as f:
    options = Options(f.read().encode(), None, 64, 0, None)
out, err = ctypes.c_void_p(), ctypes.create_string_buffer(4096)
assert lib.kiln_compile_spec(ctypes.byref(options), b"forward", b"sm_80", ctypes.byref(out), err, 4096) == 0, err.value
spec = ctypes.string_at(out).decode()
kernels = spec.count('"threads":')

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


with tempfile.TemporaryDirectory() as tmp:
    spec_path = os.path.join(tmp, "spec.json")
    with open(spec_path, "w") as f:
        f.write(spec)
    cache = os.path.join(tmp, "cache")
    env = dict(os.environ, KILN_CACHE_DIR=cache)

    def race(n, environment=None):
        children = [subprocess.Popen([sys.executable, __file__, libdir, examples, spec_path], env=environment or env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(n)]
        return [(c.wait(), c.stdout.read().strip()) for c in children]

    results = race(PROCESSES)
    check(all(rc == 0 for rc, _ in results), f"{PROCESSES} processes compiling {kernels} kernels into one cache at "
                                             f"once all succeed: {[line for _, line in results]}")
    files = sorted(os.listdir(cache))
    cubins = [f for f in files if f.endswith(".cubin")]
    check(len(cubins) == kernels and len(files) == kernels,
          f"the folder holds one cubin per kernel and nothing else: {len(cubins)} cubins, {len(files)} files")

    def elf(name):
        with open(os.path.join(cache, name), "rb") as f:
            return f.read(4) == b"\x7fELF"

    # Complete: byte for byte what one process alone writes into a fresh cache.
    alone = os.path.join(tmp, "alone")
    (rc, _), = race(1, dict(env, KILN_CACHE_DIR=alone))

    def read(folder, name):
        with open(os.path.join(folder, name), "rb") as f:
            return f.read()

    check(rc == 0 and all(elf(c) and read(cache, c) == read(alone, c) for c in cubins),
          "every cubin is complete: an ELF file, identical to one process's alone")
    (rc, line), = race(1)
    check(rc == 0 and f"cached={kernels}" in line, f"a later process finds every kernel cached: {line}")
    with open(os.path.join(cache, cubins[0]), "wb"):
        pass  # emptied: a miss, compiled again
    (rc, line), = race(1)
    check(rc == 0 and f"cached={kernels - 1}" in line and elf(cubins[0]),
          f"an empty cubin counts as a miss and is rewritten: {line}")

print("PASS" if not failures else f"FAIL: {len(failures)} checks")
sys.exit(1 if failures else 0)
