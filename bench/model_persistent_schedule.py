"""How evenly a grid's blocks spread over the CTAs, by schedule and order.

A model, not a measurement: a forward's query-block tile costs its KV steps
plus one (prologue and epilogue), a dK/dV kernel's key block (`--kernel
dkdv`) its Q steps over the group's query heads plus 0.3 per head; the
slowest CTA's total over the mean is the time the schedule loses to
imbalance. Schedules: `mirrored` (tgpu-warp-specialize persistent=true: one
tile per CTA per round, every other round mirrored), `strided` (tile c + i *
CTAs for CTA c), and `greedy` (each tile, in the order, to the CTA that
frees first: what the hardware's block scheduler does for a one-tile-per-CTA
grid, and what a persistent kernel with an atomic tile counter does).
Orders: `grid` (block fastest), `head-reversed` (each head's blocks from the
last: the first form of tgpu-longest-first), `whole-grid` (the block
slowest, the longest first over every head: tgpu-longest-first, which the
forward applies to GQA's query heads only) and `wave-chunks` (the same
within chunks of floor(CTAs / blocks) heads, the chunks in grid order:
tgpu-longest-first wave-chunks, the backward's dK/dV kernels;
docs/performance.md).

    python3 bench/model_persistent_schedule.py [--ctas 132] [--block-m 192]
    python3 bench/model_persistent_schedule.py --kernel dkdv --block-n 128 [--group 4]
"""
import argparse, heapq, math

p = argparse.ArgumentParser()
p.add_argument("--ctas", type=int, default=132, help="CTAs at once (H100: 132 SMs x 1)")
p.add_argument("--kernel", choices=("forward", "dkdv"), default="forward")
p.add_argument("--block-m", type=int, default=192, help="query rows per block (dkdv: per Q step)")
p.add_argument("--block-n", type=int, default=128, help="keys per block (forward: per KV step)")
p.add_argument("--heads", type=int, default=16, help="query heads")
p.add_argument("--group", type=int, default=1, help="dkdv: query heads per KV head (GQA)")
p.add_argument("--tokens", type=int, default=16384)
args = p.parse_args()


def tiles(n, causal, order):
    """The blocks' costs in launch order."""
    if args.kernel == "forward":
        blocks = math.ceil(n / args.block_m)
        heads = (args.tokens // n) * args.heads
        cost = lambda b: math.ceil((min(n, (b + 1) * args.block_m) if causal else n) / args.block_n) + 1
        longest = lambda r: blocks - 1 - r  # work grows along the blocks
    else:
        blocks = math.ceil(n / args.block_n)
        heads = (args.tokens // n) * (args.heads // args.group)
        g = args.group
        cost = lambda b: g * (math.ceil((n - b * args.block_n if causal else n) / args.block_m) + 0.3)
        longest = lambda r: r  # work shrinks along the key blocks
    if order == "grid":
        return [cost(b) for _ in range(heads) for b in range(blocks)]
    if order == "head-reversed":
        return [cost(longest(r)) for _ in range(heads) for r in range(blocks)]
    chunk = heads if order == "whole-grid" else max(1, args.ctas // blocks)
    out = []
    for first in range(0, heads, chunk):
        pairs = min(chunk, heads - first)
        out += [cost(longest(r)) for r in range(blocks) for _ in range(pairs)]
    return out


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


orders = ("grid", "head-reversed", "whole-grid", "wave-chunks")
print(f"{'N':>6} {'mask':>6} {'order':>13} {'mirrored':>9} {'strided':>8} {'greedy':>7}")
for n in (1024, 2048, 4096, 8192, 16384):
    for causal in (False, True):
        for order in orders if causal else ("grid",):
            m, s, g = imbalance(tiles(n, causal, order))
            print(f"{n:>6} {'causal' if causal else 'none':>6} {order:>13} "
                  f"{m:>9.3f} {s:>8.3f} {g:>7.3f}")
