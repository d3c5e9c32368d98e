//===- BandBounds.cpp - index ranges from an attn.band --------------------===//

#include "compiler/Conversion/AttnToTile/BandBounds.h"

#include "dialects/Tile/IR/TileAttrNames.h"

namespace kiln {

Value evalBound(ProgramBuilder &pb, attn::KVBoundAttr bound, Value q,
                Value diagOffset) {
  Value v = pb.index(bound.getOffset());
  if (bound.getQCoeff() != 0)
    v = pb.add(v, pb.mul(q, pb.index(bound.getQCoeff())));
  if (bound.getDiag())
    v = pb.add(v, diagOffset);
  return v;
}

Value evalLower(ProgramBuilder &pb, ArrayAttr bounds, Value q, Value diag,
                Value fallback) {
  Value result = fallback;
  for (Attribute attr : bounds)
    result = pb.maxIndex(result,
                         evalBound(pb, cast<attn::KVBoundAttr>(attr), q, diag));
  return result;
}

Value evalUpperExclusive(ProgramBuilder &pb, ArrayAttr bounds, Value q,
                         Value diag, Value limit) {
  Value result = limit;
  for (Attribute attr : bounds) {
    Value end = pb.add(evalBound(pb, cast<attn::KVBoundAttr>(attr), q, diag),
                       pb.index(1));
    result = pb.minIndex(result, end);
  }
  return result;
}

Value keysEndOfQueries(ProgramBuilder &pb, attn::BandAttr band, Value q0,
                       int64_t rows, Value lenQ, Value lenK) {
  if (!band)
    return lenK;
  Value qLast =
      pb.sub(pb.minIndex(pb.add(q0, pb.index(rows)), lenQ), pb.index(1));
  return evalUpperExclusive(pb, band.getUpper(), qLast, pb.sub(lenK, lenQ),
                            lenK);
}

namespace {
/// The queries in [0, lenQ) with upperKey <= upper(q) and lower(q) <=
/// lowerKey.
std::pair<Value, Value> queriesBetween(ProgramBuilder &pb, attn::BandAttr band,
                                       Value upperKey, Value lowerKey,
                                       Value diag, Value lenQ) {
  Value zero = pb.index(0);
  Value first = zero, end = lenQ;
  if (!band)
    return {first, end};
  // The bound's value at q = 0: offset (+ Lk - Lq).
  auto constantPart = [&](attn::KVBoundAttr bound) {
    return evalBound(pb,
                     attn::KVBoundAttr::get(bound.getContext(), 0,
                                            bound.getOffset(), bound.getDiag()),
                     zero, diag);
  };
  for (Attribute attr : band.getUpper()) {
    auto bound = cast<attn::KVBoundAttr>(attr);
    Value c = constantPart(bound);
    if (bound.getQCoeff() == 1) {
      // upperKey <= q + c  <=>  q >= upperKey - c.
      first = pb.maxIndex(first, pb.sub(upperKey, c));
    } else {
      // upperKey <= c for every query, or for none.
      Value above = arith::CmpIOp::create(
          pb.b, pb.loc, arith::CmpIPredicate::sgt, upperKey, c);
      first = arith::SelectOp::create(pb.b, pb.loc, above, lenQ, first);
    }
  }
  for (Attribute attr : band.getLower()) {
    auto bound = cast<attn::KVBoundAttr>(attr);
    Value c = constantPart(bound);
    if (bound.getQCoeff() == 1) {
      // q + c <= lowerKey  <=>  q < lowerKey - c + 1.
      end = pb.minIndex(end, pb.add(pb.sub(lowerKey, c), pb.index(1)));
    } else {
      Value below = arith::CmpIOp::create(
          pb.b, pb.loc, arith::CmpIPredicate::slt, lowerKey, c);
      end = arith::SelectOp::create(pb.b, pb.loc, below, zero, end);
    }
  }
  first = pb.minIndex(first, lenQ);
  end = pb.maxIndex(end, zero);
  return {first, end};
}
} // namespace

std::pair<Value, Value> fullBlocks(ProgramBuilder &pb, Value start, Value end,
                                   Value lo, Value hi, int64_t block) {
  Value endBlock = pb.maxIndex(start, pb.ceilTo(end, block));
  Value fullStart =
      lo ? pb.minIndex(pb.maxIndex(pb.ceilTo(lo, block), start), endBlock)
         : start;
  Value fullEnd =
      pb.minIndex(pb.maxIndex(pb.floorTo(hi, block), fullStart), endBlock);
  return {fullStart, fullEnd};
}

std::pair<Value, Value> queriesReachingKeys(ProgramBuilder &pb,
                                            attn::BandAttr band, Value kvFirst,
                                            Value kvLast, Value diag,
                                            Value lenQ) {
  return queriesBetween(pb, band, kvFirst, kvLast, diag, lenQ);
}

std::pair<Value, Value> queriesSeeingAllKeys(ProgramBuilder &pb,
                                             attn::BandAttr band, Value kvFirst,
                                             Value kvLast, Value diag,
                                             Value lenQ) {
  return queriesBetween(pb, band, kvLast, kvFirst, diag, lenQ);
}

std::optional<llvm::StringRef> blockCost(attn::BandAttr band) {
  if (!band)
    return std::nullopt;
  auto moves = [](ArrayAttr bounds) {
    return llvm::any_of(bounds, [](Attribute attr) {
      return cast<attn::KVBoundAttr>(attr).getQCoeff() != 0;
    });
  };
  bool upper = moves(band.getUpper()), lower = moves(band.getLower());
  if (upper == lower)
    return std::nullopt;
  return upper ? tile::attrs::kBlockCostGrows : tile::attrs::kBlockCostShrinks;
}

std::optional<llvm::StringRef> keyBlockCost(attn::BandAttr band) {
  std::optional<llvm::StringRef> byQueries = blockCost(band);
  if (!byQueries)
    return std::nullopt;
  return *byQueries == tile::attrs::kBlockCostGrows
             ? tile::attrs::kBlockCostShrinks
             : tile::attrs::kBlockCostGrows;
}

} // namespace kiln
