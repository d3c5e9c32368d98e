"""Prototype (2026-11-28): a share of the softmax's exponentials on the FMA
pipe instead of the SFU. Rewrites a forward spec so that, in every per-element
exp2 of a score tile (a kiln::Frag loop), the elements e with e % 8 < K compute
2^x by a degree-3 polynomial (Cody-Waite: 2^round(x) by integer add into the
exponent, 2^f on [-0.5, 0.5], max relative error 1.0e-4) and the rest keep
ex2.approx. Row factors (RowFrag loops) are left alone.
  python3 bench/prototype_exp2_emulation.py SPEC.cubin.json OUT.cubin.json K
Used by bench/device-run-exp2-emulation.sh's `emuK` specs."""
import json, re, sys

POLY = r"""
// Prototype: 2^x on the FMA pipe. x >= -127 after the clamp, so -inf (masked)
// gives exactly 0 (p(0) = 1, and 1.0f's bits minus 127 << 23 are 0).
__device__ __forceinline__ float kiln_exp2_poly(float x) {
  x = fmaxf(x, -127.f);
  const float t = __fadd_rn(x, 12582912.f); // 1.5 * 2^23: t's low bits hold round(x)
  const float f = __fsub_rn(x, __fsub_rn(t, 12582912.f));
  const float p = fmaf(f, fmaf(f, fmaf(f, 0x1.c2a196p-5f, 0x1.f00c2p-3f), 0x1.62f5fap-1f), 1.f);
  return __int_as_float(__float_as_int(p) + (__float_as_int(t) << 23));
}
"""

LOOP = re.compile(r"(for \(int e = 0; e < kiln::Frag<float[^>]*>::kSize; \+\+e\) (v\d+)\.x\[e\] = )"
                  r"kiln::exp2_fast\((v\d+)\.x\[e\]\);")


def rewrite(src, k):
    src, n = LOOP.subn(lambda m: "%s(e %% 8 < %d) ? kiln_exp2_poly(%s.x[e]) : kiln::exp2_fast(%s.x[e]);"
                       % (m.group(1), k, m.group(3), m.group(3)), src)
    assert n > 0, "no score-tile exp2 loop found"
    return src.replace('#include "kiln/kiln.cuh"\n', '#include "kiln/kiln.cuh"\n' + POLY, 1), n


if __name__ == "__main__":
    spec = json.load(open(sys.argv[1]))
    spec["source"], n = rewrite(spec["source"], int(sys.argv[3]))
    json.dump(spec, open(sys.argv[2], "w"))
    print("%s: %d exp2 loops rewritten" % (sys.argv[2], n))
