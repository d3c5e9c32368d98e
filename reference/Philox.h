//===- Philox.h - the dropout's random bits, on the host --------*- C++ -*-===//
//
// Dropout keeps or drops each P[q, kv] by a 16-bit uniform that is a pure
// function of (seed, offset, batch, head, q, kv): Philox4x32-10 (Salmon et
// al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) is counter
// based, so the forward never stores a mask and the backward regenerates
// the same one. This header is the definition the float64 reference and the
// tests use; the CPU backend (convert-tile-to-cpu) and the device library
// (lib/kiln/random.cuh) compute the same function and are tested against it
// bit for bit.
//
// One Philox call yields 4 x 32 bits = 8 uniforms of 16 bits, spent on a
// 2 x 4 patch of (q, kv): queries {q0, q0 + 8} and keys {k0, k0 + 1,
// k0 + 8, k0 + 9}, q0 and k0 multiples of 16 plus an offset below 8 (k0
// even). That is the patch one GPU thread holds of an m16n8 or wgmma
// accumulator tile (rows r, r + 8; column pairs 2t, 2t + 1 of two adjacent
// n8 fragments), so a thread computes one call per 8 of its elements.
//
//   counter = (c0, c1, c2, c3) with
//     c0 = (kv >> 4) << 2 | (kv >> 1) & 3      which pair of keys
//     c1 = (q >> 4) << 3 | q & 7               which pair of queries
//     c2 = batch << 16 | head                  (each below 2^16)
//     c3 = offset mod 2^32
//   key = (seed mod 2^32, (seed >> 32) ^ (offset >> 32))
//   uniform = 16-bit half (kv & 1) of word ((q >> 3) & 1) * 2 + ((kv >> 3) & 1)
//
// An element is kept when uniform < threshold, threshold = round((1 - p) *
// 2^16) (attn.attention's dropout_p), and a kept P is scaled by 2^16 /
// threshold, so that the scaled mask has mean exactly 1.
//
// With 8-bit uniforms (attn.attention's dropout_bits = 8, as FlashAttention-2
// draws them) one call yields 16 uniforms, spent on a 4 x 4 patch: queries
// {q0, q0 + 1, q0 + 8, q0 + 9} and keys {k0, k0 + 1, k0 + 8, k0 + 9}, q0 and
// k0 even. A GPU thread holds half of it (rows r, r + 8 of an m16 tile: its
// lane and the lane of row r ^ 1 hold the rest), so two lanes share their
// calls through a shuffle and each pays one call per 16 of its elements, in
// either orientation of the tile. p is then rounded to a multiple of 2^-8:
//
//   c1 = (q >> 4) << 2 | (q >> 1) & 3         which pair of queries
//   uniform = byte (q & 1) * 2 + (kv & 1) of the same word
//   threshold = round((1 - p) * 2^8), scale 2^8 / threshold
//
//===----------------------------------------------------------------------===//

#ifndef KILN_REFERENCE_PHILOX_H
#define KILN_REFERENCE_PHILOX_H

#include <array>
#include <cmath>
#include <cstdint>

namespace kiln::ref {

/// Philox4x32 with 10 rounds, as Random123 defines it.
inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> ctr,
                                             std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(kM0) * ctr[0], p1 = uint64_t(kM1) * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1),
           uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], uint32_t(p0)};
    key[0] += kW0;
    key[1] += kW1;
  }
  return ctr;
}

/// The dropout's uniform of P[q, kv] of (batch, head), 16 or 8 bits wide;
/// see above.
inline uint32_t dropoutUniform(uint64_t seed, uint64_t offset, uint64_t batch,
                               uint64_t head, uint64_t q, uint64_t kv,
                               unsigned bits = 16) {
  uint32_t queries = bits == 8 ? uint32_t((q >> 4) << 2 | ((q >> 1) & 3))
                               : uint32_t((q >> 4) << 3 | (q & 7));
  std::array<uint32_t, 4> ctr = {uint32_t((kv >> 4) << 2 | ((kv >> 1) & 3)),
                                 queries, uint32_t(batch << 16 | head),
                                 uint32_t(offset)};
  std::array<uint32_t, 2> key = {uint32_t(seed),
                                 uint32_t(seed >> 32) ^ uint32_t(offset >> 32)};
  std::array<uint32_t, 4> r = philox4x32_10(ctr, key);
  uint32_t word = r[((q >> 3) & 1) * 2 + ((kv >> 3) & 1)];
  if (bits == 8)
    return (word >> (8 * ((q & 1) * 2 + (kv & 1)))) & 0xFFu;
  return (word >> (16 * (kv & 1))) & 0xFFFFu;
}

/// The keep threshold and the kept weights' scale of dropout probability p
/// with uniforms of `bits` bits: kept when uniform < threshold.
inline uint32_t dropoutThreshold(double p, unsigned bits = 16) {
  return static_cast<uint32_t>(
      std::round((1.0 - p) * static_cast<double>(1u << bits)));
}
inline double dropoutScale(double p, unsigned bits = 16) {
  return static_cast<double>(1u << bits) / dropoutThreshold(p, bits);
}

} // namespace kiln::ref

#endif // KILN_REFERENCE_PHILOX_H
