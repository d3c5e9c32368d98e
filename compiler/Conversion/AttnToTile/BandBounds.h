//===- BandBounds.h - index ranges from an attn.band ------------*- C++ -*-===//
//
// `attn-infer-mask-bounds` proves that every key a query q keeps lies in
// [max_i lower_i(q), min_j upper_j(q)] with each bound q_coeff*q + offset
// (+ Lk - Lq), q_coeff 0 or 1. The forward bounds each Q block's KV loop by
// it; the backward's dK/dV kernel needs the inverse: the queries whose band
// reaches a KV block.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CONVERSION_ATTNTOTILE_BANDBOUNDS_H
#define KILN_COMPILER_CONVERSION_ATTNTOTILE_BANDBOUNDS_H

#include "compiler/Conversion/AttnToTile/ProgramBuilder.h"

#include <optional>
#include <utility>

namespace kiln {

/// Evaluates `q_coeff * q + offset (+ Lk - Lq)`.
Value evalBound(ProgramBuilder &pb, attn::KVBoundAttr bound, Value q,
                Value diagOffset);

/// max over lower bounds (or `fallback` when there are none).
Value evalLower(ProgramBuilder &pb, ArrayAttr bounds, Value q, Value diag,
                Value fallback);

/// min over upper bounds plus one (exclusive end), clamped to `limit`.
Value evalUpperExclusive(ProgramBuilder &pb, ArrayAttr bounds, Value q,
                         Value diag, Value limit);

/// The end of the keys the queries [q0, q0 + rows) of [0, lenQ) may see:
/// the last one's upper bounds plus one (they are non-decreasing in q), at
/// most lenK; lenK without a band.
Value keysEndOfQueries(ProgramBuilder &pb, attn::BandAttr band, Value q0,
                       int64_t rows, Value lenQ, Value lenK);

/// [first, end) of the queries in [0, lenQ) whose band contains some key of
/// [kvFirst, kvLast]: a query needs kvFirst <= upper(q) and
/// lower(q) <= kvLast. Bounds with q_coeff 1 give q >= kvFirst - offset and
/// q <= kvLast - offset; bounds with q_coeff 0 hold for every query or for
/// none. Without a band: [0, lenQ).
std::pair<Value, Value> queriesReachingKeys(ProgramBuilder &pb,
                                            attn::BandAttr band, Value kvFirst,
                                            Value kvLast, Value diag,
                                            Value lenQ);

/// [fullStart, fullEnd): the whole `block`-sized steps inside [lo, hi) of a
/// loop over [start, end) whose steps start at `start`, clamped so that
/// start <= fullStart <= fullEnd <= the end of the loop's last step; the
/// loop splits into [start, fullStart), [fullStart, fullEnd) and
/// [fullEnd, end). A null `lo` (no bound below) starts the full steps at
/// `start`: no leading partial steps.
std::pair<Value, Value> fullBlocks(ProgramBuilder &pb, Value start, Value end,
                                   Value lo, Value hi, int64_t block);

/// [first, end) of the queries in [0, lenQ) whose band contains every key
/// of [kvFirst, kvLast]: kvLast <= upper(q) and lower(q) <= kvFirst.
/// Without a band: [0, lenQ).
std::pair<Value, Value> queriesSeeingAllKeys(ProgramBuilder &pb,
                                             attn::BandAttr band, Value kvFirst,
                                             Value kvLast, Value diag,
                                             Value lenQ);

/// How the work of a grid of query blocks changes along axis 0 under
/// `band`, as a tile.block_cost value, or none where it does not move one
/// way for every (head, batch) alike. The bounds are non-decreasing in q:
/// with q_coeff-1 bounds above the keys only (causal), later query blocks
/// reach more keys; with them below only, fewer; with both (a window) or
/// neither, about as many.
std::optional<llvm::StringRef> blockCost(attn::BandAttr band);

/// The same for a grid of key blocks (the backward's dK/dV kernels): a
/// key block reaches the queries whose band holds it, so the work moves
/// the other way: fewer queries for later key blocks under upper bounds
/// alone (causal), more under lower bounds alone.
std::optional<llvm::StringRef> keyBlockCost(attn::BandAttr band);

} // namespace kiln

#endif // KILN_COMPILER_CONVERSION_ATTNTOTILE_BANDBOUNDS_H
