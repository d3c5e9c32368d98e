"""What every benchmark here measures with: one timer for Kiln and the peers,
and one error metric."""
import statistics

import triton


def bench(fn):
    """Median ms of `fn` by Triton's do_bench (25 ms warm-up, 100 ms of repeats),
    as ../shared/bench/peers.py times the peers."""
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def relerr(got, ref):
    """Relative L2 error ||got - ref|| / ||ref||, in f32."""
    return ((got.float() - ref.float()).norm() / ref.float().norm()).item()


def bench_rounds(timed, rounds):
    """Times every (name, fn) of `timed` `rounds` times, starting each round one
    implementation later (clocks drift during a run), and returns
    {name: (median ms, spread)}, spread being max/min - 1 over the rounds."""
    if not timed:
        return {}
    times = {name: [] for name, _ in timed}
    for r in range(max(1, rounds)):
        for name, fn in timed[r % len(timed):] + timed[:r % len(timed)]:
            times[name].append(bench(fn))
    return {name: (statistics.median(ms), max(ms) / min(ms) - 1) for name, ms in times.items()}
