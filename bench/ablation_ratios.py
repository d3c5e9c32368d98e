#!/usr/bin/env python3
"""Per row of a bench_attention.py JSON, each ablation's time over the
default's: forward, forward + backward and the backward alone where timed
(a backward-only ablation shares the default's forward). Above 1: the
default is faster (the decision the ablation switches off pays); for an
opt-in spec (named as an ablation) below 1 means the opt-in pays.

    python3 bench/ablation_ratios.py RESULT.json [NAME,NAME...]
"""
import json
import sys


def main():
    rows = json.load(open(sys.argv[1]))["rows"]
    names = [n for n in (sys.argv[2] if len(sys.argv) > 2 else "").split(",") if n]
    if not names:
        names = sorted({k[len("kiln_"):-len("_fwd_ms")] for r in rows for k in r
                        if k.startswith("kiln_") and k.endswith("_fwd_ms")} |
                       {k[len("kiln_"):-len("_fb_ms")] for r in rows for k in r
                        if k.startswith("kiln_") and k.endswith("_fb_ms")} - {"", "dense"})
    print("ablation / default time: forward, forward + backward, backward alone")
    for r in rows:
        cells = []
        for n in names:
            fwd, fb = r.get(f"kiln_{n}_fwd_ms"), r.get(f"kiln_{n}_fb_ms")
            if fwd is None and fb is None:
                continue
            parts = [f"{fwd / r['kiln_fwd_ms']:5.3f}" if fwd else "    -"]
            if fb and r.get("kiln_fb_ms"):
                own = fwd if fwd else r["kiln_fwd_ms"]
                parts.append(f"{fb / r['kiln_fb_ms']:5.3f}")
                parts.append(f"{(fb - own) / (r['kiln_fb_ms'] - r['kiln_fwd_ms']):5.3f}")
            cells.append(f"{n} " + " ".join(parts))
        if cells:
            print(f"{r['variant']:>15} hd{r['hdim']:<3} N{r['N']:<6} " + "   ".join(cells))


if __name__ == "__main__":
    main()
