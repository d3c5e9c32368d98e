"""What every benchmark here measures with: one timer for Kiln and the peers,
and one error metric."""
import triton


def bench(fn):
    """Median ms of `fn` by Triton's do_bench (25 ms warm-up, 100 ms of repeats),
    as ../shared/bench/peers.py times the peers."""
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def relerr(got, ref):
    """Relative L2 error ||got - ref|| / ||ref||, in f32."""
    return ((got.float() - ref.float()).norm() / ref.float().norm()).item()
