"""Prototype (2026-11-29): the decode programs' K and V loads with an L2
evict-first cache policy. Issue 11's dense decode rows sit at the DRAM bound
with Kiln's split kernel 0.5-1.3% under cuDNN's DRAM throughput (Nsight
Compute); each K and V byte is read exactly once, so keeping it out of L2's
normal replacement might leave more of L2 to the lines still in flight. This
rewrites every kiln::tma_load_tile( call of a spec's source (4-D maps: Q, K,
V) to a version defined at its top that issues the same boxes with
`.L2::cache_hint` and a `createpolicy.fractional.L2::evict_first` policy:
  python3 bench/prototype_decode_evict_first.py SPEC.cubin.json OUT.cubin.json
Used for bench_decode.py's `_ef` specs (bench/device-run-decode-evict-first.sh)."""
import json, re, sys

HINTED = r"""
// Prototype: tma_load_tile's boxes with an L2 evict-first policy.
template <typename T, int ROWS, int COLS, int SWIZZLE>
__device__ __forceinline__ void
kiln_tma_load_tile_ef(const kiln::SwizzledTile<T, ROWS, COLS, SWIZZLE> &dst,
                      const kiln::TensorMap &map, unsigned long long *bar,
                      int c0, int c1, int c2, int c3) {
  constexpr int kBlockCols = SWIZZLE / static_cast<int>(sizeof(T));
  kiln::mbarrier_arrive_expect_tx(bar, ROWS * COLS * sizeof(T));
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#pragma unroll
  for (int b = 0; b < COLS / kBlockCols; ++b)
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::"
                 "complete_tx::bytes.L2::cache_hint [%0], [%1, {%3, %4, %5, %6}], [%2], %7;\n" ::"r"(
                     kiln::smem_addr(reinterpret_cast<char *>(dst.ptr) + b * ROWS * SWIZZLE)),
                 "l"(reinterpret_cast<unsigned long long>(&map)), "r"(kiln::smem_addr(bar)),
                 "r"(c0 + b * kBlockCols), "r"(c1), "r"(c2), "r"(c3), "l"(policy)
                 : "memory");
}
"""


def rewrite(src):
    # Only the 4-D form (seven arguments).
    src, n = re.subn(r"kiln::tma_load_tile\(((?:[^,()]+,){6}[^,()]+)\)", r"kiln_tma_load_tile_ef(\1)", src)
    assert n > 0, "no 4-D tma_load_tile call"
    return src.replace('#include "kiln/kiln.cuh"\n', '#include "kiln/kiln.cuh"\n' + HINTED, 1), n


if __name__ == "__main__":
    spec = json.load(open(sys.argv[1]))
    spec["source"], n = rewrite(spec["source"])
    json.dump(spec, open(sys.argv[2], "w"))
    print("%s: %d tma_load_tile calls rewritten" % (sys.argv[2], n))
