"""Prototype (2026-11-29): the dropout with 8-bit uniforms (FlashAttention-2's
width) before the compiler has the option. lib/kiln/random.cuh's
dropout_uniforms<..., 8> draws one Philox4x32-10 call per 16 elements, each
call shared by the lanes of rows r and r ^ 1, in the forward's tiles as in the
dK/dV kernel's (16-bit uniforms: one call per 8 elements). This rewrites a
spec compiled with --dropout P so that every draw is the 8-bit one and the
threshold and scale are the 8-bit ones (reference/Philox.h):
  python3 bench/prototype_dropout_bytes.py SPEC.cubin.json OUT.cubin.json P
Used by bench/device-run-dropout-bytes.sh's `_drop8` specs: their bits are
checked against python/kiln/dropout.py's uniforms(bits=8) there."""
import json, re, struct, sys


def f32(x):
    """x as the emitter prints a float: rounded to f32, 10 digits."""
    return "%.9ef" % struct.unpack("f", struct.pack("f", x))[0]


def rewrite(src, p):
    t16, t8 = int(round((1 - p) * 65536)), int(round((1 - p) * 256))
    s16, s8 = f32(65536.0 / t16), f32(256.0 / t8)
    src, n = re.subn(r"kiln::dropout_uniforms<(true|false)(, (true|false))?>\(",
                     lambda m: "kiln::dropout_uniforms<%s, false, 8>(" % m.group(1), src)
    assert n > 0, "no dropout_uniforms call"
    src, nt = re.subn(r"(const int v\d+ = )%d;" % t16, r"\g<1>%d;" % t8, src)
    src, ns = re.subn(r"(const float v\d+ = )%s;" % re.escape(s16), r"\g<1>%s;" % s8, src)
    assert nt > 0 and ns > 0, "threshold %d or scale %s not found" % (t16, s16)
    return src, n, nt, ns


if __name__ == "__main__":
    spec = json.load(open(sys.argv[1]))
    spec["source"], n, nt, ns = rewrite(spec["source"], float(sys.argv[3]))
    json.dump(spec, open(sys.argv[2], "w"))
    print("%s: %d draws, %d thresholds, %d scales rewritten" % (sys.argv[2], n, nt, ns))
