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
// below: one per 8 again). With 8-bit uniforms (BITS = 8) one call covers
// 4 x 4 elements, half in each of two lanes, which always share it: one
// call per 16 elements in either orientation.
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

/// The call that covers element (q, kv) with BITS-bit uniforms.
template <int BITS = 16>
__device__ __forceinline__ Philox4 dropout_philox(unsigned long long seed,
                                                  unsigned long long offset,
                                                  unsigned stream, unsigned q,
                                                  unsigned kv) {
  static_assert(BITS == 16 || BITS == 8, "16- or 8-bit uniforms");
  return philox4x32_10(
      (kv >> 4) << 2 | ((kv >> 1) & 3u),
      BITS == 16 ? (q >> 4) << 3 | (q & 7u) : (q >> 4) << 2 | ((q >> 1) & 3u),
      stream, static_cast<unsigned>(offset), static_cast<unsigned>(seed),
      static_cast<unsigned>(seed >> 32) ^ static_cast<unsigned>(offset >> 32));
}

/// Element (q, kv)'s uniform of the call that covers it.
template <int BITS = 16>
__device__ __forceinline__ int dropout_uniform_of(const Philox4 &r, unsigned q,
                                                  unsigned kv) {
  unsigned word = r.w[((q >> 3) & 1u) * 2 + ((kv >> 3) & 1u)];
  if (BITS == 8)
    return static_cast<int>((word >> (8 * ((q & 1u) * 2 + (kv & 1u)))) & 0xFFu);
  return static_cast<int>((word >> (16 * (kv & 1u))) & 0xFFFFu);
}

/// 8-bit uniforms of patches e0 and e0 + 8 of thread (warp, lane) (aligned
/// tiles; the whole warp calls it together). The lanes of rows r and r ^ 1
/// (lanes l and l ^ 4) hold the two halves of each 4 x 4 call: each runs
/// the call of one patch (the even row's lane e0's, the odd row's e0 + 8's),
/// keeps the bytes of its row's parity and sends the other lane the rest,
/// two words through a shuffle. Within a call, byte (q & 1) * 2 + (kv & 1)
/// of word ((q >> 3) & 1) * 2 + ((kv >> 3) & 1): a row's parity is q & 1
/// when rows are queries (the two low bytes of each word, or the two high)
/// and kv & 1 when they are keys (bytes 0 and 2, or 1 and 3).
template <bool KEYS_BY_QUERIES, typename F, typename Fn>
__device__ __forceinline__ void
dropout_bytes_of_patch_pair(int e0, int warp, int lane, unsigned long long seed,
                            unsigned long long offset, unsigned stream,
                            int rowStart, int colStart, Fn &&fn) {
  const unsigned odd = (rowStart + F::row_of(e0, warp, lane)) & 1u;
  const int mine = e0 + 8 * static_cast<int>(odd);
  const unsigned r = rowStart + F::row_of(mine, warp, lane),
                 c = colStart + F::col_of(mine, warp, lane);
  const Philox4 x = dropout_philox<8>(
      seed, offset, stream, KEYS_BY_QUERIES ? c : r, KEYS_BY_QUERIES ? r : c);
  // Each register packs, for one query-bit-3 value (words 0, 1 or 2, 3),
  // a row parity's two bytes of both words.
  constexpr unsigned kEven = KEYS_BY_QUERIES ? 0x6420u : 0x5410u,
                     kOdd = KEYS_BY_QUERIES ? 0x7531u : 0x7632u;
  const unsigned even0 = __byte_perm(x.w[0], x.w[1], kEven),
                 even1 = __byte_perm(x.w[2], x.w[3], kEven),
                 odd0 = __byte_perm(x.w[0], x.w[1], kOdd),
                 odd1 = __byte_perm(x.w[2], x.w[3], kOdd);
  const unsigned got0 = __shfl_xor_sync(0xffffffffu, odd ? even0 : odd0, 4);
  const unsigned got1 = __shfl_xor_sync(0xffffffffu, odd ? even1 : odd1, 4);
  // Patch e0's registers, then patch e0 + 8's.
  const unsigned packed[2][2] = {{odd ? got0 : even0, odd ? got1 : even1},
                                 {odd ? odd0 : got0, odd ? odd1 : got1}};
#pragma unroll
  for (int p = 0; p < 2; ++p)
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      // Element i: column bit 0 (i & 1), row + 8 (bit 1), the second n8
      // fragment (bit 2). Rows queries: register q bit 3, byte kv bit 3 *
      // 2 + kv & 1; rows keys: register q bit 3 (the fragment), byte kv
      // bit 3 * 2 + q & 1.
      const int reg = KEYS_BY_QUERIES ? i >> 2 : (i >> 1) & 1;
      const int byte = KEYS_BY_QUERIES ? ((i >> 1) & 1) * 2 + (i & 1)
                                       : (i >> 2) * 2 + (i & 1);
      fn(e0 + 8 * p + i,
         static_cast<int>((packed[p][reg] >> (8 * byte)) & 0xFFu));
    }
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
///
/// BITS = 8 (every lane of the warp calls it together): 8-bit uniforms, each
/// call shared by the lanes of rows r and r ^ 1 in either orientation
/// (dropout_bytes_of_patch_pair); LANE_PAIRS is then moot.
template <bool KEYS_BY_QUERIES, typename F, int E0 = 0, int E1 = F::kSize,
          bool LANE_PAIRS = false, int BITS = 16, typename Fn>
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
    if constexpr (BITS == 8) {
      // Patches in pairs, the calls shared by lane pairs; an odd last patch
      // by each lane's own call.
      constexpr int kPairs = (E1 - E0) / 16;
#pragma unroll
      for (int k = 0; k < kPairs; ++k)
        dropout_bytes_of_patch_pair<KEYS_BY_QUERIES, F>(
            E0 + 16 * k, warp, lane, s, o, stream, rowStart, colStart, fn);
      if constexpr ((E1 - E0) % 16 != 0) {
        const int e0 = E1 - 8;
        const unsigned r = rowStart + F::row_of(e0, warp, lane),
                       c = colStart + F::col_of(e0, warp, lane);
        const unsigned q = KEYS_BY_QUERIES ? c : r,
                       kv = KEYS_BY_QUERIES ? r : c;
        const Philox4 x = dropout_philox<8>(s, o, stream, q, kv);
#pragma unroll
        for (int e = e0; e < E1; ++e) {
          const unsigned row = rowStart + F::row_of(e, warp, lane),
                         col = colStart + F::col_of(e, warp, lane);
          fn(e, dropout_uniform_of<8>(x, KEYS_BY_QUERIES ? col : row,
                                      KEYS_BY_QUERIES ? row : col));
        }
      }
      return;
    }
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
    fn(e, dropout_uniform_of<BITS>(dropout_philox<BITS>(s, o, stream, q, kv), q,
                                   kv));
  }
}

/// The dropout's uniforms of this thread's elements of a tile (tile.philox),
/// BITS wide. LANE_PAIRS, and BITS = 8 always: the whole warp calls it (see
/// for_each_dropout_uniform).
template <bool KEYS_BY_QUERIES, bool LANE_PAIRS = false, int BITS = 16, int M,
          int N, int W>
__device__ __forceinline__ void
dropout_uniforms(Frag<int, M, N, W> &out, long long seed, long long offset,
                 int batch, int head, int q0, int kv0) {
  for_each_dropout_uniform<KEYS_BY_QUERIES, Frag<int, M, N, W>, 0,
                           Frag<int, M, N, W>::kSize, LANE_PAIRS, BITS>(
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
