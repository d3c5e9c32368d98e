"""What every benchmark here measures with: one timer for Kiln and the peers,
and one error metric."""
import statistics
import time

import torch
import triton


def bench(fn):
    """Median ms of `fn` by Triton's do_bench (25 ms warm-up, 100 ms of repeats),
    as ../shared/bench/peers.py times the peers."""
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


_flush = None
_clean = None


def bench_gpu(fn, n=100, warmup=10, flush="dirty"):
    """Median ms of `fn`'s GPU time alone: like do_bench, each call after an L2
    flush, but with the GPU kept busy (torch.cuda._sleep, ~0.5 ms) until the
    call is queued, so that the host's time per call (~40 µs for SDPA, ~90 µs
    for Kiln's ctypes path) does not show through as idle GPU time in the
    timed span of a short kernel (bench/probe_decode_host.py).

    flush="dirty" (do_bench's flush, the default): the L2 is left full of the
    flush's written lines, which the timed call's reads then write back to
    memory (~50 MB on an H200: ~10 µs of a decode step's bandwidth).
    flush="clean": the same flush, then a read of another 256 MB, so the
    timed call starts with an L2 of clean lines that are not its data."""
    global _flush, _clean
    if _flush is None:
        _flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    if flush == "clean" and _clean is None:
        _clean = torch.ones(64 << 20, dtype=torch.int32, device="cuda")
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(n)]
    for start, end in events:
        _flush.zero_()
        if flush == "clean":
            _clean.max()
        torch.cuda._sleep(1_000_000)
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def host_us(fn, calls=2000, warmup=200):
    """Host µs per call of `fn`, called back to back with no synchronization
    (the GPU never holds the host back while its queue has room)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    us = (time.perf_counter() - start) / calls * 1e6
    torch.cuda.synchronize()
    return us


def kernel_means(fn, steps=20, warmup=3):
    """Mean GPU µs per call of each kernel `fn` launches, by name
    (torch.profiler over `steps` calls after `warmup` untimed ones)."""
    from collections import defaultdict
    from torch.profiler import profile, ProfilerActivity
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            fn()
        torch.cuda.synchronize()
    total = defaultdict(float)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            total[e.name] += e.device_time_total
    return {name: us / steps for name, us in total.items()}


def relerr(got, ref):
    """Relative L2 error ||got - ref|| / ||ref||, in f32."""
    return ((got.float() - ref.float()).norm() / ref.float().norm()).item()


def bench_rounds(timed, rounds, timer=bench):
    """Times every (name, fn) of `timed` `rounds` times, starting each round one
    implementation later (clocks drift during a run), and returns
    {name: (median ms, spread)}, spread being max/min - 1 over the rounds."""
    if not timed:
        return {}
    times = {name: [] for name, _ in timed}
    for r in range(max(1, rounds)):
        for name, fn in timed[r % len(timed):] + timed[:r % len(timed)]:
            times[name].append(timer(fn))
    return {name: (statistics.median(ms), max(ms) / min(ms) - 1) for name, ms in times.items()}
