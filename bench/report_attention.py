"""Tables and plots of bench/bench_attention.py's results: a markdown file with,
per head dim, TFLOP/s of every variant and sequence length for Kiln and each
peer with Kiln's ratios to them, the ablation table (each switched-off schedule
decision's time against the default's, same run), and PNG plots of TFLOP/s
against N, a line per implementation, a panel per variant.

  python3 bench/report_attention.py RESULT.json [MORE.json ...] --out docs/performance --tag h100

Several result files (e.g. one device call per head dim) merge into one report;
a row measured twice keeps the later file's. Writes <out>/attention-<tag>.md,
<out>/forward-<tag>-hd<D>.png and, where forward + backward was measured,
<out>/forward-backward-<tag>-hd<D>.png.
"""
import argparse, json, os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("results", nargs="+")
p.add_argument("--out", required=True)
p.add_argument("--tag", required=True)
args = p.parse_args()

ORDER = ["plain", "causal", "softcap", "causal_softcap", "sliding_window", "alibi", "document_mask", "gqa_causal"]
PEERS = [("kiln", "Kiln"), ("cudnn", "cuDNN (SDPA)"), ("flash", "FlashAttention-2 (SDPA)"), ("flex", "FlexAttention")]

rows, devices, sources, ablations = {}, set(), [], []
for path in args.results:
    data = json.load(open(path))
    devices.add(data["device"])
    sources.append(os.path.basename(path))
    ablations += [a for a in data.get("ablations", []) if a not in ablations]
    for r in data["rows"]:
        rows[(r["variant"], r["hdim"], r["N"])] = r
device = " / ".join(sorted(devices))
hdims = sorted({h for _, h, _ in rows})
variants = [v for v in ORDER if any(k[0] == v for k in rows)] + sorted({k[0] for k in rows} - set(ORDER))
os.makedirs(args.out, exist_ok=True)


def fmt(x, spec="5.0f"):
    return format(x, spec) if x is not None else "–"


def ratio(r, peer, kind):
    a, b = r.get(f"kiln_{kind}_tflops"), r.get(f"{peer}_{kind}_tflops")
    return a / b if a and b else None


lines = [f"# Attention benchmark ({device})", "",
         f"Written by `bench/report_attention.py` from {', '.join(sources)} (`bench/bench_attention.py`: one process "
         "per file, every implementation of a row timed in rotated rounds, the median; bf16, 16k tokens per batch, "
         "hidden 2048; TFLOP/s of visible pairs, forward + backward counted as 3.5× the forward). Ratios are "
         "Kiln's TFLOP/s over the peer's in the same row (above 1: Kiln is faster); `err` is the largest relative L2 of Kiln's output (and "
         "gradients, and every ablation's output) against the row's reference (FlexAttention with the same mods, "
         "else SDPA's FlashAttention-2); `–` where a peer does not run the variant or the shape.", ""]
for kind, title in (("fwd", "Forward"), ("fb", "Forward + backward")):
    if not any(f"kiln_{kind}_tflops" in r for r in rows.values()):
        continue
    for hd in hdims:
        lines += [f"## {title}, D = {hd}", "",
                  "| variant | N | Kiln | cuDNN | FA2 | Flex | / cuDNN | / FA2 | / Flex | err | spread |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for v in variants:
            for (vv, h, N), r in sorted(rows.items(), key=lambda kv: kv[0][2]):
                if vv != v or h != hd or f"kiln_{kind}_tflops" not in r:
                    continue
                err = max([x for key, x in r.items() if key.endswith("_relerr")] or [float("nan")])
                lines.append(
                    f"| {v} | {N} | " + " | ".join(fmt(r.get(f"{n}_{kind}_tflops")) for n, _ in PEERS) + " | " +
                    " | ".join(fmt(ratio(r, n, kind), "4.2f") for n in ("cudnn", "flash", "flex")) +
                    f" | {err:.1e}{'' if r.get('pass', True) else ' FAIL'} | {r['spread']:.0%} |")
        lines.append("")

# The ablation table: each schedule decision switched off, against the default in the same row.
abl_rows = [(k, r) for k, r in sorted(rows.items(), key=lambda kv: (ORDER.index(kv[0][0]) if kv[0][0] in ORDER
                                                                   else 99, kv[0][1], kv[0][2]))
            if any(f"kiln_{a}_{kind}_ms" in r for a in ablations for kind in ("fwd", "fb"))]
if abl_rows:
    lines += ["## Ablations", "",
              "Kiln's time with one schedule decision switched off (the spec compiled with that flag, "
              "`bench/prepare-attention.sh`) divided by its time with the default, same row: above 1 the decision "
              "pays. Forward, "
              "and forward + backward in brackets.", "",
              "| variant | D | N | " + " | ".join(ablations) + " |",
              "|---|---:|---:|" + "---:|" * len(ablations)]
    for (v, hd, N), r in abl_rows:
        cells = []
        for a in ablations:
            f = r[f"kiln_{a}_fwd_ms"] / r["kiln_fwd_ms"] if f"kiln_{a}_fwd_ms" in r else None
            b = r[f"kiln_{a}_fb_ms"] / r["kiln_fb_ms"] if f"kiln_{a}_fb_ms" in r and "kiln_fb_ms" in r else None
            cells.append((fmt(f, "4.2f") if f else "") + (f" ({b:4.2f})" if b else ""))
        lines.append(f"| {v} | {hd} | {N} | " + " | ".join(c or "–" for c in cells) + " |")
    lines += ["", "Flags: " + ", ".join(f"`{a}`" for a in ablations) + " as `bench/prepare-attention.sh` names them.",
              ""]
target = os.path.join(args.out, f"attention-{args.tag}.md")
open(target, "w").write("\n".join(lines))
print(target)

for kind, stem, label in (("fwd", "forward", "forward"), ("fb", "forward-backward", "forward + backward")):
    for hd in hdims:
        present = [v for v in variants if any(k[0] == v and k[1] == hd and f"kiln_{kind}_tflops" in r
                                              for k, r in rows.items())]
        if not present:
            continue
        cols = 4
        nrows = (len(present) + cols - 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3.2 * nrows), squeeze=False)
        for ax, v in zip(axes.flat, present):
            series = sorted((N, r) for (vv, h, N), r in rows.items() if vv == v and h == hd)
            # A fixed colour per implementation across panels; the document
            # mask's dense Kiln kernel dashed beside its block-sparse one.
            for color, (n, name) in enumerate(PEERS + [("kiln_dense", "Kiln, dense kernel")]):
                pts = [(N, r[f"{n}_{kind}_tflops"]) for N, r in series if f"{n}_{kind}_tflops" in r]
                if pts:
                    ax.plot(*zip(*pts), marker="o", markersize=3, label=name, color=f"C{color % 4}",
                            linestyle="--" if n == "kiln_dense" else "-",
                            linewidth=2.2 if n.startswith("kiln") else 1.2)
            ax.set_xscale("log", base=2)
            ax.set_xticks([N for N, _ in series])
            ax.set_xticklabels([f"{N // 1024}k" for N, _ in series], fontsize=7)
            ax.set_title(v, fontsize=9)
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
        for ax in list(axes.flat)[len(present):]:
            ax.axis("off")
        axes.flat[0].set_ylabel("TFLOP/s (visible pairs)", fontsize=8)
        handles = {}
        for ax in axes.flat:
            for h, lbl in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lbl, h)
        axes.flat[0].legend(handles.values(), handles.keys(), fontsize=7)
        fig.suptitle(f"Attention {label}, bf16, D = {hd}, 16k tokens per batch ({device})", fontsize=10)
        fig.tight_layout()
        target = os.path.join(args.out, f"{stem}-{args.tag}-hd{hd}.png")
        fig.savefig(target, dpi=110)
        plt.close(fig)
        print(target)
