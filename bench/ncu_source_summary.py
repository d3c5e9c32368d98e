"""Summarises Nsight Compute's per-instruction source page (CSV, SASS):
stall samples by opcode and by reason, and the instructions with the most.

  python3 bench/ncu_source_summary.py FILE.csv [--top N]
"""
import argparse, collections, csv, re

p = argparse.ArgumentParser()
p.add_argument("csv")
p.add_argument("--top", type=int, default=8)
p.add_argument("--by-count", type=int, default=0, metavar="N",
               help="also the N execution counts with the most samples: instructions that run "
                    "equally often are one part of the kernel (a loop body, per-tile code)")
args = p.parse_args()

with open(args.csv, newline="") as f:
    lines = f.read().splitlines()
# ncu prints its own lines before the table: start at the header.
start = next(i for i, l in enumerate(lines) if l.startswith('"Address"') or l.startswith('"#"'))
rows = list(csv.DictReader(lines[start:]))
sample_key = next(k for k in rows[0] if k.startswith("Warp Stall Sampling (All"))
reasons = [k for k in rows[0] if k.startswith("stall_")]
num = lambda s: float(s.replace(",", "") or 0)
total = sum(num(r[sample_key]) for r in rows)
by_op, by_reason = collections.Counter(), collections.Counter()
for r in rows:
    # The opcode without its predicate (@P0, @!UPT) and modifiers.
    src = re.sub(r"^@!?U?P[T0-9]\s+", "", r["Source"].strip())
    by_op[src.split()[0].split(".")[0] if src else "?"] += num(r[sample_key])
    for k in reasons:
        by_reason[k] += num(r[k])
pct = lambda c: [(k, round(100 * v / total, 1)) for k, v in c.most_common(8)]
print(f"total samples {total:.0f}, {len(rows)} instructions")
print("  by opcode:", pct(by_op))
print("  by reason:", pct(by_reason))
for r in sorted(rows, key=lambda r: -num(r[sample_key]))[:args.top]:
    top = max(reasons, key=lambda k: num(r[k]))
    print(f"  {r['Address']:>8} {num(r[sample_key]):7.0f} {top:18} {r['Source'].strip()[:70]}")
if args.by_count:
    groups = collections.defaultdict(lambda: [0.0, 0])
    for r in rows:
        g = groups[num(r["Instructions Executed"])]
        g[0] += num(r[sample_key])
        g[1] += 1
    print("  by execution count (count: instructions, share of samples):")
    for count, (s, n) in sorted(groups.items(), key=lambda kv: -kv[1][0])[:args.by_count]:
        print(f"    {count:10.0f}: {n:5d} instructions, {100 * s / total:5.1f}%")
