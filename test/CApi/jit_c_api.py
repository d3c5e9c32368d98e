"""libkiln.so's compiler C API (kiln/kiln_jit_c.h) from Python ctypes, with
the standard library only: a variant lowered to a GPU spec, and a variant
JIT-compiled for the host and run on host memory (forward and backward)
against a float64 reference computed here; bad input gets messages.

    python3 jit_c_api.py LIBDIR EXAMPLES_DIR
"""
import ctypes, json, math, os, random, struct, sys

lib = ctypes.CDLL(os.path.join(sys.argv[1], "libkiln.so"))
examples = sys.argv[2]
LL = ctypes.POINTER(ctypes.c_longlong)


class Options(ctypes.Structure):
    _fields_ = [("mlir", ctypes.c_char_p), ("name", ctypes.c_char_p), ("head_dim", ctypes.c_longlong),
                ("head_dim_v", ctypes.c_longlong), ("dtype", ctypes.c_char_p), ("page_size", ctypes.c_longlong),
                ("dropout_p", ctypes.c_double), ("capture_gradients", ctypes.c_int),
                ("varlen", ctypes.c_int), ("block_sparse", ctypes.c_longlong * 2),
                ("build_block_mask", ctypes.c_int)]


class Tensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_void_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int), ("sizes", LL), ("strides", LL)]


lib.kiln_compile_spec.argtypes = [ctypes.POINTER(Options), ctypes.c_char_p, ctypes.c_char_p,
                                  ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_int]
lib.kiln_string_free.argtypes = [ctypes.c_void_p]
lib.kiln_host_program_compile.argtypes = [ctypes.POINTER(Options), ctypes.POINTER(ctypes.c_void_p),
                                          ctypes.c_char_p, ctypes.c_int]
lib.kiln_host_program_plan.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.kiln_host_program_plan.restype = ctypes.c_char_p
lib.kiln_host_program_run.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(Tensor), ctypes.c_int,
                                      ctypes.POINTER(Tensor), ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
lib.kiln_host_program_free.argtypes = [ctypes.c_void_p]

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def options(example, **kw):
    with open(os.path.join(examples, example + ".mlir")) as f:
        text = f.read()
    return Options(kw.get("mlir", text).encode(), None, kw.get("head_dim", 0), 0,
                   kw["dtype"].encode() if "dtype" in kw else None, 0, kw.get("dropout_p", 0.0))


def compile_spec(opts, program, arch):
    out, err = ctypes.c_void_p(), ctypes.create_string_buffer(4096)
    rc = lib.kiln_compile_spec(ctypes.byref(opts), program.encode(), arch.encode(), ctypes.byref(out), err, 4096)
    if rc:
        return None, err.value.decode()
    text = ctypes.string_at(out).decode()
    lib.kiln_string_free(out)
    return json.loads(text), ""


# --- GPU specs, no GPU needed -------------------------------------------------
spec, err = compile_spec(options("causal", head_dim=128), "forward", "sm_90a")
check(spec is not None and spec["kind"] == "forward" and spec["head_dim_qk"] == 128
      and [k["name"] for k in spec["kernels"]] == ["causal_fwd", "causal_fwd_short", "causal_fwd_decode",
                                                   "causal_fwd_combine", "causal_fwd_combine_rows"]
      and "// kiln-kernel: causal_fwd\n" in spec["source"], f"forward spec for sm_90a {err}")
spec, err = compile_spec(options("plain"), "backward-atomic", "sm_80")
check(spec is not None and spec["schedule"] == "atomic", f"atomic backward spec for sm_80 {err}")
_, err = compile_spec(options("plain"), "forward", "sm_75")
check("arch must be sm_80 or sm_90a, got 'sm_75'" in err, "bad arch: " + err)
_, err = compile_spec(options("plain"), "sideways", "sm_80")
check("program must be forward, backward, backward-two-kernel, backward-atomic or backward-deterministic" in err,
      "bad program: " + err)
# "backward": the faster schedule for the head dims on the arch (atomic at
# D = 64 and 128 on sm_90a, GQA too at D = 64 since its key blocks go out
# longest first in wave chunks; two kernels at D = 96);
# "backward-two-kernel": the same bits in every run. "backward-deterministic": the
# same bits in every run, by ordered dQ adds where they measured no slower
# than two kernels (D = 128 on sm_90a), two kernels elsewhere (D = 64, GQA,
# windows, sm_80).
for hd, arch, program, want, example in [(128, "sm_90a", "backward", "atomic", "plain"),
                                         (64, "sm_90a", "backward", "atomic", "plain"),
                                         (96, "sm_90a", "backward", "two-kernel", "plain"),
                                         (128, "sm_90a", "backward", "atomic", "gqa_causal"),
                                         (64, "sm_90a", "backward", "atomic", "gqa_causal"),
                                         (128, "sm_80", "backward", "two-kernel", "plain"),
                                         (128, "sm_90a", "backward-two-kernel", "two-kernel", "plain"),
                                         (128, "sm_90a", "backward-deterministic", "atomic-ordered", "causal"),
                                         (128, "sm_90a", "backward-deterministic", "atomic-ordered", "alibi"),
                                         (128, "sm_90a", "backward-deterministic", "atomic-ordered", "plain"),
                                         (64, "sm_90a", "backward-deterministic", "two-kernel", "causal"),
                                         (128, "sm_90a", "backward-deterministic", "two-kernel", "gqa_causal"),
                                         (128, "sm_90a", "backward-deterministic", "two-kernel", "sliding_window"),
                                         (128, "sm_80", "backward-deterministic", "two-kernel", "causal")]:
    spec, err = compile_spec(options(example, head_dim=hd), program, arch)
    check(spec is not None and spec["schedule"] == want, f"{example} {program} at D = {hd} for {arch}: {want} {err}")
_, err = compile_spec(options("plain", mlir="attn.attention @x {"), "forward", "sm_80")
check("does not parse" in err and '"variant":1:18' in err, "bad text, with a location: " + " ".join(err.splitlines()))
_, err = compile_spec(options("plain", dtype="fp32"), "forward", "sm_80")
check("dtype must be bf16 or fp16, got 'fp32'" in err, "bad dtype: " + err)
_, err = compile_spec(options("plain", dropout_p=1.0), "forward", "sm_80")
check("dropout_p must be in [0, 1)" in err, "bad dropout_p: " + err)
spec, err = compile_spec(options("plain", dropout_p=0.1), "backward", "sm_90a")
check(spec is not None and {"name": "dropout_rng", "dtype": "i64", "shape": [2]}
      in [{n: t[n] for n in ("name", "dtype", "shape")} for t in spec["tensors"]],
      f"dropout's backward takes dropout_rng {err}")


# --- host programs ------------------------------------------------------------
def bf16_bits(x):
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


class Array:
    """A row-major host array of bf16 or f32 with its kiln_tensor."""

    def __init__(self, shape, dtype, values=None):
        self.shape, self.dtype, n = shape, dtype, math.prod(shape)
        self.buf = (ctypes.c_uint16 * n)() if dtype == "bf16" else (ctypes.c_float * n)()
        if values is not None:
            for i, v in enumerate(values):
                self.buf[i] = bf16_bits(v) if dtype == "bf16" else v
        strides, s = [], 1
        for d in reversed(shape):
            strides.insert(0, s)
            s *= d
        self.sizes = (ctypes.c_longlong * len(shape))(*shape)
        self.strides = (ctypes.c_longlong * len(shape))(*strides)

    def values(self):
        return [bf16_value(b) if self.dtype == "bf16" else b for b in self.buf]

    def c(self, name):
        return Tensor(name.encode() if name else None, ctypes.cast(self.buf, ctypes.c_void_p),
                      0 if self.dtype == "bf16" else 2, len(self.shape), ctypes.cast(self.sizes, LL),
                      ctypes.cast(self.strides, LL))


def host_compile(opts):
    prog, err = ctypes.c_void_p(), ctypes.create_string_buffer(4096)
    if lib.kiln_host_program_compile(ctypes.byref(opts), ctypes.byref(prog), err, 4096):
        return None, err.value.decode()
    return prog, ""


def host_run(prog, which, tensors, captures=()):
    err = ctypes.create_string_buffer(4096)
    ts = (Tensor * len(tensors))(*(a.c(n) for n, a in tensors.items()))
    cs = (Tensor * len(captures))(*(a.c(None) for a in captures))
    rc = lib.kiln_host_program_run(prog, which.encode() if which else None, ts, len(tensors), cs, len(captures),
                                   err, 4096)
    return err.value.decode() if rc else ""


def reference(q, k, v, do, B, Lq, Lk, H, D, causal):
    """float64 attention (bottom-right causal when asked), LSE and gradients."""
    scale = 1 / math.sqrt(D)
    at = lambda t, b, i, h, L: t[((b * L + i) * H + h) * D:((b * L + i) * H + h + 1) * D]
    out, lse = [0.0] * (B * Lq * H * D), [0.0] * (B * H * Lq)
    dq, dk, dv = [0.0] * (B * Lq * H * D), [0.0] * (B * Lk * H * D), [0.0] * (B * Lk * H * D)
    for b in range(B):
        for h in range(H):
            for i in range(Lq):
                qi = at(q, b, i, h, Lq)
                keys = [j for j in range(Lk) if not causal or j <= i + Lk - Lq]
                s = {j: scale * sum(x * y for x, y in zip(qi, at(k, b, j, h, Lk))) for j in keys}
                m = max(s.values())
                z = sum(math.exp(x - m) for x in s.values())
                p = {j: math.exp(s[j] - m) / z for j in keys}
                o = [sum(p[j] * at(v, b, j, h, Lk)[d] for j in keys) for d in range(D)]
                base = ((b * Lq + i) * H + h) * D
                out[base:base + D] = o
                lse[(b * H + h) * Lq + i] = m + math.log(z)
                doi = at(do, b, i, h, Lq)
                delta = sum(x * y for x, y in zip(doi, o))
                for j in keys:
                    dp = sum(x * y for x, y in zip(doi, at(v, b, j, h, Lk)))
                    ds = p[j] * (dp - delta) * scale
                    kb = ((b * Lk + j) * H + h) * D
                    for d in range(D):
                        dv[kb + d] += p[j] * doi[d]
                        dk[kb + d] += ds * qi[d]
                        dq[base + d] += ds * k[kb + d]
    return out, lse, dq, dk, dv


def rel_err(got, ref):
    num = math.sqrt(sum((g - r) ** 2 for g, r in zip(got, ref)))
    return num / max(math.sqrt(sum(r * r for r in ref)), 1e-30)


B, Lq, Lk, H, D = 2, 33, 47, 2, 16
for example in ("plain", "causal"):
    prog, err = host_compile(options(example, head_dim=D))
    check(prog is not None, f"{example}: host program compiled {err}")
    plan = json.loads(lib.kiln_host_program_plan(prog, b"forward"))
    check([t["name"] for t in plan["tensors"]] == ["q", "k", "v", "out", "lse"], f"{example}: forward plan's tensors")
    check(lib.kiln_host_program_plan(prog, b"sideways") is None, f"{example}: unknown plan is null")
    rng = random.Random(1)
    rnd = lambda n: [bf16_value(bf16_bits(rng.gauss(0, 1))) for _ in range(n)]
    q, k, v, do = rnd(B * Lq * H * D), rnd(B * Lk * H * D), rnd(B * Lk * H * D), rnd(B * Lq * H * D)
    t = {"q": Array([B, Lq, H, D], "bf16", q), "k": Array([B, Lk, H, D], "bf16", k),
         "v": Array([B, Lk, H, D], "bf16", v), "out": Array([B, Lq, H, D], "bf16"),
         "lse": Array([B, H, Lq], "f32")}
    err = host_run(prog, "forward", t)
    check(err == "", f"{example}: forward ran {err}")
    ro, rl, rdq, rdk, rdv = reference(q, k, v, do, B, Lq, Lk, H, D, example == "causal")
    eo, el = rel_err(t["out"].values(), ro), rel_err(t["lse"].values(), rl)
    check(eo < 1e-2 and el < 1e-4, f"{example}: forward vs float64: out {eo:.1e}, lse {el:.1e}")
    t.update({"dout": Array([B, Lq, H, D], "bf16", do), "dq": Array([B, Lq, H, D], "bf16"),
              "dk": Array([B, Lk, H, D], "bf16"), "dv": Array([B, Lk, H, D], "bf16")})
    err = host_run(prog, "backward", t)
    check(err == "", f"{example}: backward ran {err}")
    errs = [rel_err(t[n].values(), r) for n, r in (("dq", rdq), ("dk", rdk), ("dv", rdv))]
    check(max(errs) < 1e-2, f"{example}: backward vs float64: dq {errs[0]:.1e}, dk {errs[1]:.1e}, dv {errs[2]:.1e}")

    # Refused before any kernel runs, with the tensor named.
    bad = dict(t, q=Array([B, Lq, H, D], "f32"))
    err = host_run(prog, "forward", {n: bad[n] for n in ("q", "k", "v", "out", "lse")})
    check("q must be bf16, got f32" in err, f"{example}: wrong dtype: {err}")
    err = host_run(prog, "forward", {n: t[n] for n in ("q", "k", "v", "out")})
    check("lse" in err, f"{example}: missing tensor: {err}")
    err = host_run(prog, "forward", dict((n, t[n]) for n in ("q", "k", "v", "out", "lse")) | {"k": t["q"]})
    # k bound seq_kv to Lq, so v disagrees.
    check("v has shape [2, 47, 2, 16], expected [2, 33, 2, 16]" in err, f"{example}: mismatched shapes: {err}")
    err = host_run(prog, "upward", {})
    check("which must be forward or backward, got 'upward'" in err, f"{example}: bad program name: {err}")
    lib.kiln_host_program_free(prog)

_, err = host_compile(options("plain", mlir="not mlir"))
check("does not parse" in err, "host program of bad text: " + err.splitlines()[0])

# --- bad input found by fuzzing: errors, never a crash or a wrong answer ------
# The GPU backend names its kernels after the variant: a symbol that is no C
# identifier would reach NVRTC as broken (or foreign) source.
_, err = compile_spec(options("plain", mlir='attn.attention @"x(){}; int y" {qk_head_dim = 64, v_head_dim = 64, '
                              'element_type = bf16}'), "forward", "sm_80")
check("'x(){}; int y' must be a C identifier" in err, "variant name that is no C identifier: " + err)
# A message cut to the caller's buffer stays valid UTF-8 (no torn character).
buf = ctypes.create_string_buffer(64)
opts = options("plain")
opts.name = "no_\u00e9\u00e9".encode()
rc = lib.kiln_compile_spec(ctypes.byref(opts), b"forward", b"sm_80", ctypes.byref(ctypes.c_void_p()), buf, 30)
check(rc == 1 and buf.value == "no attn.attention named 'no_".encode(),
      f"error cut before a UTF-8 character the buffer cannot hold: {buf.value}")
rc = lib.kiln_compile_spec(ctypes.byref(opts), b"forward", b"sm_80", ctypes.byref(ctypes.c_void_p()), buf, 1)
check(rc == 1 and buf.value == b"", "error buffer of one byte: an empty message")


def tensor(name, dtype, sizes, strides, data):
    return Tensor(name.encode() if name else None, ctypes.cast(data, ctypes.c_void_p), dtype, len(sizes),
                  (ctypes.c_longlong * len(sizes))(*sizes), (ctypes.c_longlong * len(sizes))(*strides))


prog, err = host_compile(options("alibi", head_dim=D))
check(prog is not None, f"alibi: host program compiled {err}")
t = {"q": Array([1, 8, 2, D], "bf16", [0.5] * 16 * D), "k": Array([1, 8, 2, D], "bf16", [0.5] * 16 * D),
     "v": Array([1, 8, 2, D], "bf16", [0.5] * 16 * D), "out": Array([1, 8, 2, D], "bf16"),
     "lse": Array([1, 2, 8], "f32")}
ts = lambda: [a.c(n) for n, a in t.items()]
# A capture one byte off its f32 alignment: a fault on the GPU.
slopes = (ctypes.c_float * 3)()
err = ctypes.create_string_buffer(4096)
caps = (Tensor * 1)(tensor(None, 2, [2], [1], ctypes.addressof(slopes) + 1))
rc = lib.kiln_host_program_run(prog, b"forward", (Tensor * 5)(*ts()), 5, caps, 1, err, 4096)
check(rc == 1 and b"capture 'slopes' must be 4-byte aligned" in err.value, f"misaligned capture: {err.value}")
# lse's head stride 2^62 wraps its second head onto the first (f32: 2^64
# bytes): refused, not written over.
caps = (Tensor * 1)(tensor(None, 2, [2], [1], slopes))
lse = (ctypes.c_float * 16)()
wrapped = ts()[:4] + [tensor("lse", 2, [1, 2, 8], [16, 1 << 62, 1], lse)]
rc = lib.kiln_host_program_run(prog, b"forward", (Tensor * 5)(*wrapped), 5, caps, 1, err, 4096)
check(rc == 1 and b"lse with sizes [1, 2, 8] and strides [16, 4611686018427387904, 1] spans more than 2^63 bytes"
      in err.value, f"strides past 2^63 bytes: {err.value}")
lib.kiln_host_program_free(prog)

# Broadcast (zero-stride) inputs can declare a problem whose host workspaces
# no machine holds: an error, not an abort (std::bad_alloc) in the caller.
prog, _ = host_compile(options("plain", head_dim=D))
row = (ctypes.c_uint16 * D)()
lse_row = (ctypes.c_float * (1 << 20))()
for batch, heads, want in [(1 << 20, 1, b"needs a grid of"), (1 << 15, 1 << 15, b"bytes of host workspace")]:
    big = [tensor(n, 0, [batch, 1 << 20, heads, D], [0, 0, 0, 1], row)
           for n in ("q", "k", "v", "out", "dout", "dq", "dk", "dv")]
    big.append(tensor("lse", 2, [batch, heads, 1 << 20], [0, 0, 1], lse_row))
    rc = lib.kiln_host_program_run(prog, b"backward", (Tensor * 9)(*big), 9, None, 0, err, 4096)
    check(rc == 1 and want in err.value, f"backward of {batch} x {heads} heads x 2^20 keys: {err.value}")
lib.kiln_host_program_free(prog)

print("PASS" if not failures else f"FAIL: {len(failures)} checks")
sys.exit(1 if failures else 0)
