"""Prototype (2026-11-29): the backward's small kernels (preprocess, dQ
conversion) in forms beside the compiled one, which moves 16-bit tiles by
16-byte chunks (kiln/chunks.cuh) where they fit:
  python3 bench/prototype_small_kernels.py SPEC_bwd.cubin.json FORM OUT.cubin.json
FORM is one of
  pairs   the form before: O, dO and dQ by 4-byte pairs (kiln::load_pairs,
          kiln::store_pairs)
  fast    chunks with no fallback where they do not fit (a trap instead):
          what the fallback paths' registers cost the chunks
  fill    the compiled form with the dQ accumulator's zeros written by a
          fill defined here (16-byte chunks of whole rows, consecutive threads
          consecutive chunks) instead of through a tile of zeros
Used for probe_backward_kernels.py's suffixes and bench_attention.py's
ablations (bench/device-run-small-kernels.sh)."""
import json, re, sys

FAST = r"""
// Prototype: 16-bit tiles by chunks only (a trap where they do not fit).
template <typename F, typename T, int G>
__device__ __forceinline__ void proto_load_fast(F &f, const kiln::Desc<T, G> &d, int row0, int col0, float fill) {
  if (!kiln::chunks_fit<F>(d, col0))
    __trap();
  kiln::load_chunks(f, d, row0, col0, kiln::from_float<T>(fill));
}
template <typename F, typename T, int G>
__device__ __forceinline__ void proto_store_fast(const kiln::Desc<T, G> &d, int row0, int col0, const F &f) {
  if (!kiln::chunks_fit<F>(d, col0))
    __trap();
  kiln::store_chunks(d, row0, col0, f);
}
"""

FILL = r"""
// Prototype: an F tile of one value written as 16-byte chunks of whole rows
// (consecutive threads consecutive chunks) where the rows allow.
template <typename F, typename T, int G>
__device__ __forceinline__ void proto_fill(const kiln::Desc<T, G> &d, int row0, int col0, T value) {
  constexpr int kPerChunk = 16 / sizeof(T), kRowChunks = F::kCols / kPerChunk;
  constexpr int kThreads = 32 * F::kWarps;
  if (F::kCols % kPerChunk == 0 && G == 1 && d.col_stride == 1 && col0 >= 0 && col0 + F::kCols <= d.cols &&
      (d.row_stride * sizeof(T)) % 16 == 0 && reinterpret_cast<unsigned long long>(d.ptr + col0) % 16 == 0) {
    union { T e[kPerChunk]; uint4 v; } chunk;
#pragma unroll
    for (int i = 0; i < kPerChunk; ++i)
      chunk.e[i] = value;
    const int t = kiln::warp_id() * 32 + kiln::lane_id();
#pragma unroll
    for (int i = 0; i < (F::kRows * kRowChunks + kThreads - 1) / kThreads; ++i) {
      int k = i * kThreads + t, r = row0 + k / kRowChunks;
      if (k < F::kRows * kRowChunks && r >= 0 && r < d.rows)
        *reinterpret_cast<uint4 *>(d.ptr + d.row_offset(r) + col0 + (k % kRowChunks) * kPerChunk) = chunk.v;
    }
    return;
  }
  F f;
#pragma unroll
  for (int e = 0; e < F::kSize; ++e)
    f.x[e] = value;
  kiln::store(d, row0, col0, f);
}
"""


def with_header(src, text):
    return src.replace('#include "kiln/kiln.cuh"\n', '#include "kiln/kiln.cuh"\n' + text, 1)


def sixteen_bit_calls(src, load_fn, store_fn):
    """kiln::load / kiln::store of 16-bit Frags renamed."""
    frags = set(re.findall(r"kiln::Frag<kiln::(?:bf16|f16), [^>]*> (v\d+);", src))
    n = 0

    def load(m):
        nonlocal n
        if m.group(1) not in frags:
            return m.group(0)
        n += 1
        return load_fn + "(" + m.group(1) + ","

    def store(m):
        nonlocal n
        if m.group(2) not in frags:
            return m.group(0)
        n += 1
        return store_fn + "(" + m.group(1) + m.group(2) + ");"
    src = re.sub(r"kiln::load\((v\d+),", load, src)
    src = re.sub(r"kiln::store\(((?:v\d+, )+)(v\d+)\);", store, src)
    assert n > 0, "no 16-bit tile load or store"
    return src


def rewrite(src, form):
    if form == "pairs":
        return sixteen_bit_calls(src, "kiln::load_pairs", "kiln::store_pairs")
    if form == "fast":
        return with_header(sixteen_bit_calls(src, "proto_load_fast", "proto_store_fast"), FAST)
    if form == "fill":
        # The splat tile's declaration and loop, then its store.
        src, n = re.subn(
            r"(kiln::Frag<float, \d+, \d+, \d+>) (v\d+);\n(\s*#pragma unroll\n\s*for \([^\n]*\) \2\.x\[e\] = (v\d+);\n"
            r"(?:\s*//[^\n]*\n)*)(\s*)kiln::store\(((?:v\d+, )+)\2\);",
            r"\1 \2;\n\3\5proto_fill<\1>(\6\4);", src)
        assert n == 1, "one store of a tile of zeros"
        return with_header(src, FILL)
    raise SystemExit("unknown form " + form)


if __name__ == "__main__":
    spec = json.load(open(sys.argv[1]))
    spec["source"] = rewrite(spec["source"], sys.argv[2])
    json.dump(spec, open(sys.argv[3], "w"))
    print("%s: %s" % (sys.argv[3], sys.argv[2]))
