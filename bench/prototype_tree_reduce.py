"""Prototype (2026-11-28, not yet measured on a GPU): the per-thread part of
kiln::reduce_rows as a pairwise tree instead of one chain. A thread of a
128-column tile reduces 32 values per row slot; lib/kiln/reduce.cuh folds them
in order, so the row max is 31 dependent FMNMX and the row sum 31 dependent
FADD per slot (the SASS of plain's D = 128 prefill kernel has them as one
chain per row, row 0's before row 1's). The tree does the same number of
operations in depth 5. Sums change order (a tree's rounding, not worse);
maxima do not change.
  python3 bench/prototype_tree_reduce.py SPEC.cubin.json OUT.cubin.json C
Rewrites every kiln::reduce_rows<...>( call of the spec's source to the
version defined at its top: the values folded into C chains (a power of
two; C >= the values per row is the whole tree), the chains as a tree. Used
by bench/device-run-tree-reduce.sh's `treeC` specs."""
import json, re, sys

TREE = r"""
// Prototype: reduce_rows with the thread's values of a row folded into C
// independent chains, then the chains as a tree (C = 1 is reduce_rows').
constexpr int kiln_log2(int n) { return n > 1 ? 1 + kiln_log2(n / 2) : 0; }
template <bool MAX, int M, int N, int W>
__device__ __forceinline__ kiln::RowFrag<float, M, W>
kiln_reduce_rows_tree(const kiln::Frag<float, M, N, W> &f) {
  using F = kiln::Frag<float, M, N, W>;
  constexpr int S = kiln::RowFrag<float, M, W>::kSize;
  constexpr int P = F::kSize / S;
  constexpr int C = KILN_REDUCE_CHAINS < P ? KILN_REDUCE_CHAINS : P;
  static_assert(P == 2 * F::kNT, "a row slot's values: two per n8 fragment");
  static_assert((C & (C - 1)) == 0, "the prototype folds powers of two");
  float v[S][C];
#pragma unroll
  for (int e = 0; e < F::kSize; ++e) {
    const int s = F::row_slot(e), i = (e % (F::kNT * 4)) / 4 * 2 + (e & 1);
    v[s][i % C] = i < C ? f.x[e] : MAX ? fmaxf(v[s][i % C], f.x[e]) : v[s][i % C] + f.x[e];
  }
  kiln::RowFrag<float, M, W> r;
#pragma unroll
  for (int s = 0; s < S; ++s) {
    // Level l folds the upper half of the first C >> l values. Both loops
    // have constant trip counts (the inner one's guard folds once they are
    // unrolled): a count that depends on l left a loop over local memory.
#pragma unroll
    for (int l = 0; l < kiln_log2(C); ++l) {
#pragma unroll
      for (int i = 0; i < C / 2; ++i)
        if (i < (C >> (l + 1)))
          v[s][i] = MAX ? fmaxf(v[s][i], v[s][i + (C >> (l + 1))])
                        : v[s][i] + v[s][i + (C >> (l + 1))];
    }
    r.x[s] = v[s][0];
#pragma unroll
    for (int offset = 1; offset < 4; offset <<= 1) {
      const float other = __shfl_xor_sync(0xffffffffu, r.x[s], offset);
      r.x[s] = MAX ? fmaxf(r.x[s], other) : r.x[s] + other;
    }
  }
  return r;
}
"""


def rewrite(src, chains):
    src, n = re.subn(r"kiln::reduce_rows<", "kiln_reduce_rows_tree<", src)
    assert n > 0, "no reduce_rows call"
    return src.replace('#include "kiln/kiln.cuh"\n', '#include "kiln/kiln.cuh"\n#define KILN_REDUCE_CHAINS %d\n' % chains
                       + TREE, 1), n


if __name__ == "__main__":
    spec = json.load(open(sys.argv[1]))
    spec["source"], n = rewrite(spec["source"], int(sys.argv[3]))
    json.dump(spec, open(sys.argv[2], "w"))
    print("%s: %d reduce_rows calls rewritten" % (sys.argv[2], n))
