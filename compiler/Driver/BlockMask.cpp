//===- BlockMask.cpp - kiln run's block-sparse lists ----------------------===//

#include "compiler/Driver/BlockMask.h"

#include "compiler/Driver/ReferenceCheck.h"

#include <algorithm>
#include <memory>
#include <tuple>

namespace kiln::driver {
namespace {

bool causallyVisible(ref::CausalAlignment causal, int64_t q, int64_t kv,
                     int64_t lenQ, int64_t lenK) {
  switch (causal) {
  case ref::CausalAlignment::None:
    return true;
  case ref::CausalAlignment::TopLeft:
    return kv <= q;
  case ref::CausalAlignment::BottomRight:
    return kv <= q + lenK - lenQ;
  }
  return true;
}

/// Empty lists of `p`'s shape, counts 0 and entries -1.
BlockMaskLists emptyLists(const Problem &p, int64_t rowsPerBlock,
                          int64_t keysPerBlock) {
  BlockMaskLists l;
  l.rowsPerBlock = rowsPerBlock;
  l.keysPerBlock = keysPerBlock;
  // Rounded up without forming seq + block - 1, which overflows for a
  // block near 2^63.
  l.queryBlocks = p.seqQ / rowsPerBlock + (p.seqQ % rowsPerBlock != 0);
  l.keyBlocks = p.seqKV / keysPerBlock + (p.seqKV % keysPerBlock != 0);
  std::vector<int64_t> counts{p.batch, p.heads, l.queryBlocks};
  std::vector<int64_t> lists{p.batch, p.heads, l.queryBlocks, l.keyBlocks};
  std::vector<int64_t> qCounts{p.batch, p.heads, l.keyBlocks};
  std::vector<int64_t> qLists{p.batch, p.heads, l.keyBlocks, l.queryBlocks};
  l.kvNum = HostBuffer::allocate(ElementKind::I32, counts);
  l.fullNum = HostBuffer::allocate(ElementKind::I32, counts);
  l.kvIdx = HostBuffer::allocate(ElementKind::I32, lists);
  l.fullIdx = HostBuffer::allocate(ElementKind::I32, lists);
  l.qNum = HostBuffer::allocate(ElementKind::I32, qCounts);
  l.fullQNum = HostBuffer::allocate(ElementKind::I32, qCounts);
  l.qIdx = HostBuffer::allocate(ElementKind::I32, qLists);
  l.fullQIdx = HostBuffer::allocate(ElementKind::I32, qLists);
  for (HostBuffer *t : {&l.kvNum, &l.fullNum, &l.qNum, &l.fullQNum})
    for (int64_t i = 0; i < t->numElements(); ++i)
      t->set(i, 0);
  for (HostBuffer *t : {&l.kvIdx, &l.fullIdx, &l.qIdx, &l.fullQIdx})
    for (int64_t i = 0; i < t->numElements(); ++i)
      t->set(i, -1);
  l.kinds.assign(size_t(p.batch * p.heads * l.queryBlocks * l.keyBlocks),
                 BlockKind::Skipped);
  return l;
}

/// Writes `kinds`' lists, each block row's blocks in `order`.
void fillLists(BlockMaskLists &l, const std::vector<int64_t> &order) {
  int64_t rows = int64_t(l.kinds.size()) / l.keyBlocks;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t partial = 0, full = 0;
    for (int64_t j : order) {
      BlockKind kind = l.kinds[r * l.keyBlocks + j];
      if (kind == BlockKind::Partial)
        l.kvIdx.set(r * l.keyBlocks + partial++, double(j));
      else if (kind == BlockKind::Full)
        l.fullIdx.set(r * l.keyBlocks + full++, double(j));
    }
    l.kvNum.set(r, double(partial));
    l.fullNum.set(r, double(full));
  }
  // The transposed lists: per (batch, head, key block), its query blocks.
  int64_t heads = rows / l.queryBlocks;
  for (int64_t bh = 0; bh < heads; ++bh)
    for (int64_t j = 0; j < l.keyBlocks; ++j) {
      int64_t partial = 0, full = 0, at = bh * l.keyBlocks + j;
      for (int64_t i = 0; i < l.queryBlocks; ++i) {
        BlockKind kind = l.kinds[(bh * l.queryBlocks + i) * l.keyBlocks + j];
        if (kind == BlockKind::Partial)
          l.qIdx.set(at * l.queryBlocks + partial++, double(i));
        else if (kind == BlockKind::Full)
          l.fullQIdx.set(at * l.queryBlocks + full++, double(i));
      }
      l.qNum.set(at, double(partial));
      l.fullQNum.set(at, double(full));
    }
}

} // namespace

BlockMaskLists blockMaskFromMask(const Problem &p, int64_t rowsPerBlock,
                                 int64_t keysPerBlock,
                                 const ref::AttentionSpec &visible,
                                 bool perBatch, bool perHead) {
  BlockMaskLists l = emptyLists(p, rowsPerBlock, keysPerBlock);
  auto kindAt = [&](int64_t b, int64_t h, int64_t qb, int64_t kb) {
    bool any = false, all = true;
    for (int64_t q = qb * rowsPerBlock;
         q < std::min(p.seqQ, (qb + 1) * rowsPerBlock) && (all || !any); ++q)
      for (int64_t kv = kb * keysPerBlock;
           kv < std::min(p.seqKV, (kb + 1) * keysPerBlock); ++kv) {
        bool keep = causallyVisible(visible.causal, q, kv, p.seqQ, p.seqKV) &&
                    (!visible.maskMod || visible.maskMod(b, h, q, kv));
        any |= keep;
        all &= keep;
        if (any && !all)
          break;
      }
    return !any  ? BlockKind::Skipped
           : all ? BlockKind::Full
                 : BlockKind::Partial;
  };
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t qb = 0; qb < l.queryBlocks; ++qb)
        for (int64_t kb = 0; kb < l.keyBlocks; ++kb) {
          size_t at = size_t(
              ((b * p.heads + h) * l.queryBlocks + qb) * l.keyBlocks + kb);
          // A mask the same for every batch / head: copied from the first.
          if ((!perBatch && b > 0) || (!perHead && h > 0)) {
            int64_t b0 = perBatch ? b : 0, h0 = perHead ? h : 0;
            l.kinds[at] = l.kinds[size_t(
                ((b0 * p.heads + h0) * l.queryBlocks + qb) * l.keyBlocks + kb)];
            continue;
          }
          l.kinds[at] = kindAt(b, h, qb, kb);
        }
  std::vector<int64_t> ascending(size_t(l.keyBlocks));
  for (int64_t j = 0; j < l.keyBlocks; ++j)
    ascending[size_t(j)] = j;
  fillLists(l, ascending);
  return l;
}

BlockMaskLists randomBlockMask(const Problem &p, int64_t rowsPerBlock,
                               int64_t keysPerBlock, double density,
                               std::mt19937_64 &rng) {
  BlockMaskLists l = emptyLists(p, rowsPerBlock, keysPerBlock);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (BlockKind &kind : l.kinds)
    if (unit(rng) < density)
      kind = unit(rng) < 0.5 ? BlockKind::Partial : BlockKind::Full;
  std::vector<int64_t> order(size_t(l.keyBlocks));
  for (int64_t j = 0; j < l.keyBlocks; ++j)
    order[size_t(j)] = j;
  std::shuffle(order.begin(), order.end(), rng);
  fillLists(l, order);
  return l;
}

BlockMaskLists poisonedLists(const Problem &p, int64_t rowsPerBlock,
                             int64_t keysPerBlock, bool perHead) {
  Problem shape = p;
  if (!perHead)
    shape.heads = 1;
  BlockMaskLists l = emptyLists(shape, rowsPerBlock, keysPerBlock);
  for (HostBuffer *t : {&l.kvNum, &l.fullNum, &l.qNum, &l.fullQNum, &l.kvIdx,
                        &l.fullIdx, &l.qIdx, &l.fullQIdx})
    for (int64_t i = 0; i < t->numElements(); ++i)
      t->set(i, -2);
  return l;
}

int64_t differingRows(const BlockMaskLists &got, const BlockMaskLists &want,
                      std::string &first) {
  int64_t differ = 0;
  for (auto [name, gotNum, gotIdx, wantNum, wantIdx] :
       {std::tuple<const char *, const HostBuffer *, const HostBuffer *,
                   const HostBuffer *, const HostBuffer *>{
            "kv", &got.kvNum, &got.kvIdx, &want.kvNum, &want.kvIdx},
        {"full_kv", &got.fullNum, &got.fullIdx, &want.fullNum, &want.fullIdx},
        {"q", &got.qNum, &got.qIdx, &want.qNum, &want.qIdx},
        {"full_q", &got.fullQNum, &got.fullQIdx, &want.fullQNum,
         &want.fullQIdx}}) {
    int64_t batch = wantNum->sizes[0], heads = wantNum->sizes[1],
            perRow = wantNum->sizes[2], width = wantIdx->sizes[3];
    int64_t gotHeads = gotNum->sizes[1];
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < perRow; ++i) {
          int64_t r = (b * heads + h) * perRow + i;
          int64_t g = (b * gotHeads + (gotHeads == 1 ? 0 : h)) * perRow + i;
          bool same = gotNum->get(g) == wantNum->get(r);
          for (int64_t e = 0; same && e < int64_t(wantNum->get(r)); ++e)
            same = gotIdx->get(g * width + e) == wantIdx->get(r * width + e);
          if (!same && differ++ == 0)
            first = std::string(name) + " [" + std::to_string(b) + ", " +
                    std::to_string(h) + ", " + std::to_string(i) +
                    "]: " + std::to_string(int64_t(gotNum->get(g))) +
                    " blocks built, " +
                    std::to_string(int64_t(wantNum->get(r))) + " expected";
        }
  }
  return differ;
}

void applyBlockMask(const Problem &p, const BlockMaskLists &lists,
                    ref::AttentionSpec &spec) {
  ref::CausalAlignment causal = spec.causal;
  ref::MaskMod mask = spec.maskMod;
  spec.causal = ref::CausalAlignment::None;
  int64_t lenQ = p.seqQ, lenK = p.seqKV, heads = p.heads;
  // The kinds (not the lists' buffers) travel with the callback.
  BlockMaskLists kinds;
  kinds.rowsPerBlock = lists.rowsPerBlock;
  kinds.keysPerBlock = lists.keysPerBlock;
  kinds.queryBlocks = lists.queryBlocks;
  kinds.keyBlocks = lists.keyBlocks;
  kinds.kinds = lists.kinds;
  auto l = std::make_shared<const BlockMaskLists>(std::move(kinds));
  spec.maskMod = [=](int64_t b, int64_t h, int64_t q, int64_t kv) {
    if (q >= lenQ || kv >= lenK)
      return false;
    switch (l->kind(b, h, heads, q, kv)) {
    case BlockKind::Skipped:
      return false;
    case BlockKind::Full:
      return true;
    case BlockKind::Partial:
      return causallyVisible(causal, q, kv, lenQ, lenK) &&
             (!mask || mask(b, h, q, kv));
    }
    return false;
  };
}

} // namespace kiln::driver
