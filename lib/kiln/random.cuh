// kiln/random.cuh - Philox4x32-10 and the dropout's uniforms of a register
// tile.
//
// The function is reference/Philox.h's: element (q, kv) of (batch, head)
// gets a 16-bit half of one word of Philox4x32-10 with
//   counter (c0, c1, c2, c3) = ((kv >> 4) << 2 | (kv >> 1) & 3,
//                               (q >> 4) << 3 | q & 7, batch << 16 | head,
//                               offset mod 2^32),
//   key = (seed mod 2^32, (seed >> 32) ^ (offset >> 32)),
//   word ((q >> 3) & 1) * 2 + ((kv >> 3) & 1), half kv & 1.
// One call covers queries {q0, q0 + 8} x keys {k0, k0 + 1, k0 + 8, k0 + 9}:
// the 8 elements a thread holds of two adjacent n8 fragments of an m16
// tile (rows r, r + 8; columns 2t, 2t + 1 and 8 more), so a thread pays
// one call per 8 elements when the tile's rows are queries, and one per 4
// when they are keys, unless two lanes share their calls (LANE_PAIRS,
// below: one per 8 again).
#pragma once
#include "kiln/layout.cuh"

namespace kiln {

struct Philox4 {
  unsigned w[4];
};

__device__ __forceinline__ Philox4 philox4x32_10(unsigned c0, unsigned c1,
                                                 unsigned c2, unsigned c3,
                                                 unsigned k0, unsigned k1) {
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    unsigned hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    unsigned hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

/// The call that covers element (q, kv).
__device__ __forceinline__ Philox4 dropout_philox(unsigned long long seed,
                                                  unsigned long long offset,
                                                  unsigned stream, unsigned q,
                                                  unsigned kv) {
  return philox4x32_10(
      (kv >> 4) << 2 | ((kv >> 1) & 3u), (q >> 4) << 3 | (q & 7u), stream,
      static_cast<unsigned>(offset), static_cast<unsigned>(seed),
      static_cast<unsigned>(seed >> 32) ^ static_cast<unsigned>(offset >> 32));
}

__device__ __forceinline__ int dropout_half(const Philox4 &r, unsigned q,
                                            unsigned kv) {
  unsigned word = r.w[((q >> 3) & 1u) * 2 + ((kv >> 3) & 1u)];
  return static_cast<int>((word >> (16 * (kv & 1u))) & 0xFFFFu);
}

/// Each dropout uniform of the elements thread (warp, lane) holds of a tile
/// in F's layout (a Frag) whose element (row, col) is query q0 + row and
/// key kv0 + col, or (KEYS_BY_QUERIES) key kv0 + row and query q0 + col:
/// fn(e, uniform) for element e, in calls that each cover a patch.
///
/// With LANE_PAIRS (keys by queries only; every lane of the warp calls it
/// together, each for its own tile thread), the lanes holding keys r and
/// r ^ 1 (tile threads t and t ^ 4, lanes l and l ^ 4) share a patch's two
/// calls: each runs the call of one query column and hands the other lane
/// the halves of its key, two words through a shuffle. One call per 8
/// elements instead of per 4, as when the rows are queries.
template <bool KEYS_BY_QUERIES, typename F, int E0 = 0, int E1 = F::kSize,
          bool LANE_PAIRS = false, typename Fn>
__device__ __forceinline__ void
for_each_dropout_uniform(int warp, int lane, long long seed, long long offset,
                         int batch, int head, int q0, int kv0, Fn &&fn) {
  static_assert(E0 % 8 == 0 && E0 <= E1 && E1 <= F::kSize,
                "a range of whole 8-element patches");
  const unsigned long long s = static_cast<unsigned long long>(seed);
  const unsigned long long o = static_cast<unsigned long long>(offset);
  const unsigned stream =
      static_cast<unsigned>(batch) << 16 | static_cast<unsigned>(head);
  const int rowStart = KEYS_BY_QUERIES ? kv0 : q0;
  const int colStart = KEYS_BY_QUERIES ? q0 : kv0;
  // Tiles at multiples of 16 (every schedule's): the thread's elements come
  // in patches that share calls.
  if (((q0 | kv0) & 15) == 0 && F::kNT % 2 == 0) {
#pragma unroll
    for (int e0 = E0; e0 < E1; e0 += 8) {
      const unsigned r = rowStart + F::row_of(e0, warp, lane),
                     c = colStart + F::col_of(e0, warp, lane);
      if (!KEYS_BY_QUERIES) {
        // Elements e0 + 0..7: (r, c), (r, c+1), (r+8, c), (r+8, c+1), then
        // the same 8 columns on: one call, word qi * 2 + kj, half c & 1.
        const Philox4 x = dropout_philox(s, o, stream, r, c);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const unsigned word = x.w[((i >> 1) & 1) * 2 + (i >> 2)];
          fn(e0 + i, static_cast<int>((word >> (16 * (i & 1))) & 0xFFFFu));
        }
      } else if (LANE_PAIRS) {
        // Rows are keys r, r + 8; columns queries c, c + 1 (and 8 more).
        // This lane runs the call of query c + (r & 1); the lane of key
        // r ^ 1 runs the other, and each keeps half r & 1 of its words and
        // sends the other half. Packed two words to a register: word w of
        // a call in half w & 1 of register w >> 1 (query bit 3, then key
        // bit 3: element i's register i >> 2, half (i >> 1) & 1).
        const unsigned odd = r & 1u;
        const Philox4 x = dropout_philox(s, o, stream, c + odd, r);
        const unsigned lows0 = __byte_perm(x.w[0], x.w[1], 0x5410),
                       lows1 = __byte_perm(x.w[2], x.w[3], 0x5410),
                       highs0 = __byte_perm(x.w[0], x.w[1], 0x7632),
                       highs1 = __byte_perm(x.w[2], x.w[3], 0x7632);
        const unsigned got0 =
            __shfl_xor_sync(0xffffffffu, odd ? lows0 : highs0, 4);
        const unsigned got1 =
            __shfl_xor_sync(0xffffffffu, odd ? lows1 : highs1, 4);
        // Query c's registers, then query c + 1's.
        const unsigned packed[2][2] = {
            {odd ? got0 : lows0, odd ? got1 : lows1},
            {odd ? highs0 : got0, odd ? highs1 : got1}};
#pragma unroll
        for (int i = 0; i < 8; ++i)
          fn(e0 + i,
             static_cast<int>((packed[i & 1][i >> 2] >> (16 * ((i >> 1) & 1))) &
                              0xFFFFu));
      } else {
        // Rows are keys r, r + 8; columns queries c, c + 1 (and 8 more):
        // two calls, one per query column, each giving the four (q, q + 8) x
        // (kv, kv + 8) of its column.
#pragma unroll
        for (int p = 0; p < 2; ++p) {
          const Philox4 x = dropout_philox(s, o, stream, c + p, r);
#pragma unroll
          for (int i = p; i < 8; i += 2) {
            const unsigned word = x.w[(i >> 2) * 2 + ((i >> 1) & 1)];
            fn(e0 + i, static_cast<int>((word >> (16 * (r & 1u))) & 0xFFFFu));
          }
        }
      }
    }
    return;
  }
  // Anywhere else: one call per element.
#pragma unroll
  for (int e = E0; e < E1; ++e) {
    const unsigned r = rowStart + F::row_of(e, warp, lane),
                   c = colStart + F::col_of(e, warp, lane);
    const unsigned q = KEYS_BY_QUERIES ? c : r, kv = KEYS_BY_QUERIES ? r : c;
    fn(e, dropout_half(dropout_philox(s, o, stream, q, kv), q, kv));
  }
}

/// The dropout's uniforms of this thread's elements of a tile (tile.philox).
/// LANE_PAIRS: see for_each_dropout_uniform (the whole warp calls it).
template <bool KEYS_BY_QUERIES, bool LANE_PAIRS = false, int M, int N, int W>
__device__ __forceinline__ void
dropout_uniforms(Frag<int, M, N, W> &out, long long seed, long long offset,
                 int batch, int head, int q0, int kv0) {
  for_each_dropout_uniform<KEYS_BY_QUERIES, Frag<int, M, N, W>, 0,
                           Frag<int, M, N, W>::kSize, LANE_PAIRS>(
      warp_id(), lane_id(), seed, offset, batch, head, q0, kv0,
      [&](int e, int u) { out.x[e] = u; });
}

/// The 32-bit words of one tile thread's keep bits of its first kPatches
/// 8-element patches (bit e % 32 of word e / 32: element e kept) in a slot
/// of tgpu.draw_keep_bits.
template <int kPatches> __host__ __device__ constexpr int keep_words() {
  return (8 * kPatches + 31) / 32;
}

/// tgpu.draw_keep_bits: producer thread `thread` of kThreads draws, for
/// every tile thread t = thread, thread + kThreads, ..., the keep bits
/// (uniform < threshold) of t's first kPatches patches of 8 elements of the
/// tile (F's layout, the tile's threads the kernel's first 32 * W), and
/// writes them as t's keep_words words at dst.ptr[t * words]: consecutive
/// threads, consecutive words, so the writes and the tile threads' reads
/// (load_keep_bits) are free of bank conflicts. LANE_PAIRS as in
/// for_each_dropout_uniform: the lanes of a producer warp draw for tile
/// threads t and t ^ 4 together, so lane pairs share calls here too.
template <bool KEYS_BY_QUERIES, int kThreads, typename F, int kPatches,
          bool LANE_PAIRS = false, typename Slot>
__device__ __forceinline__ void
draw_keep_bits(const Slot &dst, long long seed, long long offset, int batch,
               int head, int q0, int kv0, unsigned threshold, int thread) {
  constexpr int kWords = keep_words<kPatches>();
  constexpr int kTileThreads = 32 * F::kWarps;
#pragma unroll
  for (int t = thread; t < kTileThreads; t += kThreads) {
    unsigned words[kWords];
#pragma unroll
    for (int i = 0; i < kWords; ++i)
      words[i] = 0;
    for_each_dropout_uniform<KEYS_BY_QUERIES, F, 0, 8 * kPatches, LANE_PAIRS>(
        t >> 5, t & 31, seed, offset, batch, head, q0, kv0, [&](int e, int u) {
          words[e / 32] |=
              static_cast<unsigned>(static_cast<unsigned>(u) < threshold)
              << (e % 32);
        });
    unsigned *out = reinterpret_cast<unsigned *>(dst.ptr) + t * kWords;
    if constexpr (kWords == 2) {
      *reinterpret_cast<uint2 *>(out) = make_uint2(words[0], words[1]);
    } else {
#pragma unroll
      for (int i = 0; i < kWords; ++i)
        out[i] = words[i];
    }
  }
}

/// tgpu.load_keep_bits: this thread's keep bits, those of its first
/// kPatches patches from a slot that draw_keep_bits filled, the rest drawn
/// here (the producer's share and the consumers' split the Philox calls;
/// LANE_PAIRS as in for_each_dropout_uniform).
template <bool KEYS_BY_QUERIES, int kPatches, bool LANE_PAIRS = false, int M,
          int N, int W, typename Slot>
__device__ __forceinline__ void
load_keep_bits(Frag<bool, M, N, W> &out, const Slot &src, long long seed,
               long long offset, int batch, int head, int q0, int kv0,
               unsigned threshold) {
  using F = Frag<bool, M, N, W>;
  constexpr int kWords = keep_words<kPatches>();
  const unsigned *in =
      reinterpret_cast<const unsigned *>(src.ptr) + threadIdx.x * kWords;
  unsigned words[kWords];
  if constexpr (kWords == 2) {
    const uint2 pair = *reinterpret_cast<const uint2 *>(in);
    words[0] = pair.x;
    words[1] = pair.y;
  } else {
#pragma unroll
    for (int i = 0; i < kWords; ++i)
      words[i] = in[i];
  }
#pragma unroll
  for (int e = 0; e < 8 * kPatches; ++e)
    out.x[e] = (words[e / 32] >> (e % 32)) & 1u;
  for_each_dropout_uniform<KEYS_BY_QUERIES, F, 8 * kPatches, F::kSize,
                           LANE_PAIRS>(
      warp_id(), lane_id(), seed, offset, batch, head, q0, kv0,
      [&](int e, int u) { out.x[e] = static_cast<unsigned>(u) < threshold; });
}

} // namespace kiln
