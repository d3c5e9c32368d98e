"""Prototype (2026-11-28, measured, then built as convert-attn-to-tile
branch-masked-steps): rewrites a forward spec so that the named kernels' full
and trailing-partial KV loops are one loop with the mask in a branch.
  python3 bench/prototype_merged_loop.py SPEC.cubin.json OUT.cubin.json KERNEL[,KERNEL]
Used by bench/device-run-merged-prototype.sh's `merged` specs."""
import re, sys

HDR = re.compile(r"^    for \(int (v\d+) = (v\d+); \1 < (v\d+); \1 \+= (v\d+)\) \{\n", re.M)

def loop_end(s, start):
    return s.index("\n    }\n", start) + len("\n    }\n")

def merge(s):
    hdrs = list(HDR.finditer(s))
    full = next(h for h in hdrs if "kiln::wgmma<true, true>(" in s[h.end():loop_end(s, h.end())])
    part = next(h for h in hdrs if h.start() > full.start())
    full_end, part_end = loop_end(s, full.end()), loop_end(s, part.end())
    vA, vB, vS2, vE2 = full.group(1), part.group(1), part.group(2), part.group(3)
    between = s[full_end:part.start()]
    copies = re.findall(r"^    kiln::[^=\n]*> (v\d+) = (v\d+);\n", between, re.M)
    defs = re.sub(r"^    kiln::[^=\n]*> (v\d+) = (v\d+);\n", "", between, flags=re.M)
    body = s[part.end():part_end]
    m = re.search(r"kiln::wgmma_async<true, true>\((v\d+), [^\n]*\n(.*?)      kiln::pin_tile\((v\d+)\);\n", body, re.S)
    mask_lines, vM = m.group(2), m.group(3)
    sel = re.search(r"for \(int e = 0; e < (kiln::Frag<float[^>]*>)::kSize; \+\+e\) (v\d+)\.x\[e\] = \(" + vM + r"\.x\[e\] \? (v\d+)\.x\[e\] : (v\d+)\.x\[e\]\);", body)
    frag, vNI = sel.group(1), sel.group(4)
    mask_lines = re.sub(r"\b%s\b" % vB, vA, mask_lines)
    fbody = s[full.end():full_end]
    w = re.search(r"kiln::wgmma<true, true>\((v\d+), [^\n]*\n", fbody)
    vS = w.group(1)
    arr = fbody.index("kiln::mbarrier_arrive(", w.end())
    arr_end = fbody.index("\n", arr) + 1
    branch = ("      if (%s >= %s) {\n" % (vA, vS2) + mask_lines +
              "      #pragma unroll\n      for (int e = 0; e < %s::kSize; ++e) %s.x[e] = %s.x[e] ? %s.x[e] : %s.x[e];\n      }\n"
              % (frag, vS, vM, vS, vNI))
    fbody = fbody[:arr_end] + branch + fbody[arr_end:]
    header = full.group(0).replace("< %s;" % full.group(3), "< %s;" % vE2)
    rest = s[part_end:]
    for new, old in copies:
        rest = re.sub(r"\b%s\b" % new, old, rest)
    return s[:full.start()] + defs + header + fbody + rest

if __name__ == "__main__":
    import json
    spec = json.load(open(sys.argv[1]))
    names = sys.argv[3].split(",")
    kernels = re.split(r"(?=^// kiln-kernel: )", spec["source"], flags=re.M)
    spec["source"] = "".join(
        merge(k) if k.startswith("// kiln-kernel:") and k.split("\n", 1)[0].split()[-1] in names else k
        for k in kernels)
    json.dump(spec, open(sys.argv[2], "w"))
