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
// when they are keys.
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

/// The dropout's uniforms of a tile whose element (row, col) is query
/// q0 + row and key kv0 + col, or (KEYS_BY_QUERIES) key kv0 + row and
/// query q0 + col.
template <bool KEYS_BY_QUERIES, int M, int N, int W>
__device__ __forceinline__ void
dropout_uniforms(Frag<int, M, N, W> &out, long long seed, long long offset,
                 int batch, int head, int q0, int kv0) {
  using F = Frag<int, M, N, W>;
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
    for (int e0 = 0; e0 < F::kSize; e0 += 8) {
      const unsigned r = rowStart + F::row(e0), c = colStart + F::col(e0);
      if (!KEYS_BY_QUERIES) {
        // Elements e0 + 0..7: (r, c), (r, c+1), (r+8, c), (r+8, c+1), then
        // the same 8 columns on: one call, word qi * 2 + kj, half c & 1.
        const Philox4 x = dropout_philox(s, o, stream, r, c);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const unsigned word = x.w[((i >> 1) & 1) * 2 + (i >> 2)];
          out.x[e0 + i] = static_cast<int>((word >> (16 * (i & 1))) & 0xFFFFu);
        }
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
            out.x[e0 + i] =
                static_cast<int>((word >> (16 * (r & 1u))) & 0xFFFFu);
          }
        }
      }
    }
    return;
  }
  // Anywhere else: one call per element.
#pragma unroll
  for (int e = 0; e < F::kSize; ++e) {
    const unsigned r = rowStart + F::row(e), c = colStart + F::col(e);
    const unsigned q = KEYS_BY_QUERIES ? c : r, kv = KEYS_BY_QUERIES ? r : c;
    out.x[e] = dropout_half(dropout_philox(s, o, stream, q, kv), q, kv);
  }
}

} // namespace kiln
