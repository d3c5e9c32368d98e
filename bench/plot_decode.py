"""Bar chart of bench/bench_decode.py's results: GB/s of K and V per shape, a
bar per implementation (Kiln, its ablations, paged, SDPA flash, cuDNN), with the
HBM3 rating as a line.

  python3 bench/plot_decode.py decode.json docs/performance/decode-h100.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RATED_GBPS = {"H100": 3350, "H200": 4800}

source, target = sys.argv[1], sys.argv[2]
data = json.load(open(source))
rows = data["rows"]
names = ["kiln", "kiln_nosplit", "kiln_byrows", "kiln_bysplits", "kiln_nowide", "kiln_nopack", "kiln_p16", "kiln_p64", "kiln_p256", "flash", "cudnn"]
names = [n for n in names if any(f"{n}_gbps" in r for r in rows)]
labels = [f"B{r['B']} {r['Hq']}/{r['Hkv']}\nL{r['L'] // 1024}k Lq{r['Lq']}" + (" tree" if r.get("tree") else "")
          for r in rows]
width = 0.8 / len(names)
fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(rows)), 4.5))
for i, name in enumerate(names):
    xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(rows))]
    ax.bar(xs, [r.get(f"{name}_gbps", 0) for r in rows], width, label=name)
for key, rated in RATED_GBPS.items():
    if key in data["device"]:
        ax.axhline(rated, color="gray", linestyle="--", linewidth=1)
        ax.text(len(rows) - 0.5, rated, f"{key} rated {rated} GB/s", ha="right", va="bottom", fontsize=8)
ax.set_xticks(range(len(rows)))
ax.set_xticklabels(labels, fontsize=7)
ax.set_ylabel("GB/s of K and V read once")
ax.set_title(f"Decoding, bf16, D = 128 ({data['device']})")
ax.legend(fontsize=7, ncol=3)
fig.tight_layout()
fig.savefig(target, dpi=120)
print(target)
