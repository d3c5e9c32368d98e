"""Dropout's random bits in PyTorch: the function reference/Philox.h defines
(Philox4x32-10 keyed by the (seed, offset) of a `dropout_rng` tensor and by
(batch, head, q, kv)), for tests that check Kiln's kernels bit for bit.

    u = uniforms(seed, offset, b, h, q, kv)   # broadcasting int64 tensors
    kept = u < threshold(p)
    u8 = uniforms(seed, offset, b, h, q, kv, bits=8)   # dropout_bits = 8
    kept8 = u8 < threshold(p, bits=8)

Words are 32-bit values in int64 tensors; products of two words are formed
from 16-bit halves so that nothing exceeds 2^63.
"""
import math

import torch

_LOW = 0xFFFFFFFF


def _mulhilo(a, b):
    """(a * b) >> 32 and (a * b) mod 2^32 for 32-bit a (an int) and b."""
    b_hi, b_lo = b >> 16, b & 0xFFFF
    x, y = a * b_hi, a * b_lo  # each below 2^48
    return (x + (y >> 16)) >> 16, (((x & 0xFFFF) << 16) + y) & _LOW


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Random123's Philox4x32-10 on int64 tensors holding 32-bit words."""
    c0, c1, c2, c3, k0, k1 = torch.broadcast_tensors(*(torch.as_tensor(x, dtype=torch.int64) & _LOW
                                                        for x in (c0, c1, c2, c3, k0, k1)))
    for _ in range(10):
        hi0, lo0 = _mulhilo(0xD2511F53, c0)
        hi1, lo1 = _mulhilo(0xCD9E8D57, c2)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        k0, k1 = (k0 + 0x9E3779B9) & _LOW, (k1 + 0xBB67AE85) & _LOW
    return c0, c1, c2, c3


def uniforms(seed, offset, b, h, q, kv, bits=16):
    """The 16-bit (or 8-bit) uniform of attention weight (q, kv) of (batch b,
    head h) for a dropout_rng of (seed, offset) (Python ints, taken mod
    2^64)."""
    if bits not in (16, 8):
        raise ValueError(f"dropout uniforms are 16 or 8 bits wide, not {bits}")
    seed, offset = seed % 2**64, offset % 2**64
    b, h, q, kv = (torch.as_tensor(x, dtype=torch.int64) for x in (b, h, q, kv))
    queries = (q >> 4) << 3 | q & 7 if bits == 16 else (q >> 4) << 2 | (q >> 1) & 3
    words = philox4x32_10((kv >> 4) << 2 | (kv >> 1) & 3, queries, b << 16 | h, offset & _LOW,
                          seed & _LOW, (seed >> 32) ^ (offset >> 32))
    index = ((q >> 3) & 1) * 2 + ((kv >> 3) & 1)
    word = torch.stack(words).gather(0, index.expand(words[0].shape).unsqueeze(0)).squeeze(0)
    if bits == 8:
        return (word >> (8 * ((q & 1) * 2 + (kv & 1)))) & 0xFF
    return (word >> (16 * (kv & 1))) & 0xFFFF


def threshold(p, bits=16):
    """Kept where the uniform is below round((1 - p) * 2^bits), halves
    rounded away from zero as C++'s std::round (Python's round takes them to
    even: p = 3/512 would keep 254 of 256 instead of 255)."""
    return int(math.floor((1.0 - p) * float(1 << bits) + 0.5))
