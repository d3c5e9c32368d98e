"""How evenly a forward's query-block tiles spread over the CTAs, by schedule.

A model, not a measurement: a tile costs its KV steps plus one (prologue and
epilogue); the slowest CTA's total over the mean is the time the schedule
loses to imbalance. Schedules: `mirrored` (tgpu-warp-specialize
persistent=true: one tile per CTA per round, every other round mirrored),
`strided` (tile c + i * CTAs for CTA c), and `greedy` (each tile, in the
grid's order, to the CTA that frees first: what the hardware's block
scheduler does for a one-tile-per-CTA grid, and what a persistent kernel
with an atomic tile counter does). Orders: `grid` (query block fastest),
`head-reversed` (each head's query blocks from the last: the first form of
tgpu-longest-first) and `whole-grid` (the block slowest, the longest
first over every head: tgpu-longest-first now, which the GPU pipeline
applies to GQA's query heads only, docs/performance.md).

    python3 bench/model_persistent_schedule.py [--ctas 132] [--block-m 192]
"""
import argparse, heapq, math

p = argparse.ArgumentParser()
p.add_argument("--ctas", type=int, default=132, help="CTAs at once (H100: 132 SMs x 1)")
p.add_argument("--block-m", type=int, default=192)
p.add_argument("--block-n", type=int, default=128)
p.add_argument("--heads", type=int, default=16)
p.add_argument("--tokens", type=int, default=16384)
args = p.parse_args()


def tiles(n, causal, order):
    blocks = math.ceil(n / args.block_m)
    heads = (args.tokens // n) * args.heads
    cost = lambda q: math.ceil((min(n, (q + 1) * args.block_m) if causal else n) / args.block_n) + 1
    if order == "whole-grid":
        return [cost(blocks - 1 - p) for p in range(blocks) for _ in range(heads)]
    return [cost(blocks - 1 - p if order == "head-reversed" else p)
            for _ in range(heads) for p in range(blocks)]


def imbalance(costs):
    w, mean = args.ctas, sum(costs) / args.ctas
    mirrored = [0] * w
    for r, start in enumerate(range(0, len(costs), w)):
        for c in range(w):
            t = start + (w - 1 - c if r % 2 else c)
            if t < len(costs):
                mirrored[c] += costs[t]
    strided = [0] * w
    for t, cost in enumerate(costs):
        strided[t % w] += cost
    free = [(0, c) for c in range(w)]
    for cost in costs:
        load, c = heapq.heappop(free)
        heapq.heappush(free, (load + cost, c))
    greedy = max(load for load, _ in free)
    return max(mirrored) / mean, max(strided) / mean, greedy / mean


print(f"{'N':>6} {'mask':>6} {'order':>13} {'mirrored':>9} {'strided':>8} {'greedy':>7}")
for n in (1024, 4096, 16384):
    for causal in (False, True):
        for order in ("grid", "head-reversed", "whole-grid") if causal else ("grid",):
            m, s, g = imbalance(tiles(n, causal, order))
            print(f"{n:>6} {'causal' if causal else 'none':>6} {order:>13} "
                  f"{m:>9.3f} {s:>8.3f} {g:>7.3f}")
