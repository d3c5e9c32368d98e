//===- PackedBatch.cpp - kiln run's varlen batches ------------------------===//

#include "compiler/Driver/PackedBatch.h"

#include "compiler/Driver/ReferenceCheck.h"

#include <limits>

namespace kiln::driver {

namespace {

/// cu_seqlens of `lens`: [0, L_0, L_0 + L_1, ...] as i32.
HostBuffer offsetsOf(const std::vector<int64_t> &lens) {
  HostBuffer cu =
      HostBuffer::allocate(ElementKind::I32, {int64_t(lens.size()) + 1});
  int64_t total = 0;
  cu.set(0, 0);
  for (size_t b = 0; b < lens.size(); ++b)
    cu.set(b + 1, double(total += lens[b]));
  return cu;
}

int64_t totalOf(const std::vector<int64_t> &lens) {
  int64_t total = 0;
  for (int64_t len : lens)
    total += len;
  return total;
}

/// Visits the rows of a dense [B, L, H, D] buffer: f(dense element, packed
/// element or -1 past the sequence), sequence b's rows being dense[b, 0 ..
/// lens[b]) and packed rows start_b .. start_b + lens[b] - 1.
template <typename F>
void forEachRow(const HostBuffer &dense, const std::vector<int64_t> &lens,
                F f) {
  int64_t seq = dense.sizes[1], rowElems = dense.sizes[2] * dense.sizes[3];
  int64_t start = 0;
  for (size_t b = 0; b < lens.size(); ++b) {
    for (int64_t r = 0; r < seq; ++r)
      for (int64_t e = 0; e < rowElems; ++e)
        f((int64_t(b) * seq + r) * rowElems + e,
          r < lens[b] ? (start + r) * rowElems + e : -1);
    start += lens[b];
  }
}

void packRows(const HostBuffer &dense, HostBuffer &packed,
              const std::vector<int64_t> &lens) {
  forEachRow(dense, lens, [&](int64_t d, int64_t pk) {
    if (pk >= 0)
      packed.set(pk, dense.get(d));
  });
}

/// Dense rows past a sequence get `fill`.
void unpackRows(HostBuffer &dense, const HostBuffer &packed,
                const std::vector<int64_t> &lens, double fill) {
  forEachRow(dense, lens, [&](int64_t d, int64_t pk) {
    dense.set(d, pk >= 0 ? packed.get(pk) : fill);
  });
}

} // namespace

PackedBatch packBatch(const Problem &p, const Inputs &in) {
  PackedBatch packed;
  packed.lensQ = p.lensQ;
  packed.lensKV = p.lensKV;
  packed.cuQ = offsetsOf(p.lensQ);
  packed.cuKV = offsetsOf(p.lensKV);
  // At least one row, so that every tensor has a size of at least 1.
  int64_t tq = std::max<int64_t>(totalOf(p.lensQ), 1);
  int64_t tk = std::max<int64_t>(totalOf(p.lensKV), 1);
  packed.q = HostBuffer::allocate(p.io, {tq, p.heads, p.dqk}, p.pad);
  packed.k = HostBuffer::allocate(p.io, {tk, p.kvHeads, p.dqk}, p.pad);
  packed.v = HostBuffer::allocate(p.io, {tk, p.kvHeads, p.dv}, p.pad);
  packed.o = HostBuffer::allocate(p.io, {tq, p.heads, p.dv}, p.pad);
  packed.lse = HostBuffer::allocate(ElementKind::F32, {p.heads, tq});
  // Rows no sequence owns (only the spare one of an empty batch) stay NaN.
  for (HostBuffer *t :
       {&packed.q, &packed.k, &packed.v, &packed.o, &packed.lse})
    t->poison();
  packRows(in.q, packed.q, p.lensQ);
  packRows(in.k, packed.k, p.lensKV);
  packRows(in.v, packed.v, p.lensKV);
  return packed;
}

void packGradients(const Problem &p, const Gradients &g, PackedBatch &packed) {
  packed.dO = HostBuffer::allocate(p.io, packed.o.sizes, p.pad);
  packed.dq = HostBuffer::allocate(p.io, packed.q.sizes, p.pad);
  packed.dk = HostBuffer::allocate(p.io, packed.k.sizes, p.pad);
  packed.dv = HostBuffer::allocate(p.io, packed.v.sizes, p.pad);
  for (HostBuffer *t : {&packed.dO, &packed.dq, &packed.dk, &packed.dv})
    t->poison();
  packRows(g.dO, packed.dO, p.lensQ);
}

void unpackOutputs(const Problem &p, const PackedBatch &packed, Inputs &in) {
  unpackRows(in.o, packed.o, p.lensQ, 0.0);
  // LSE: dense [B, H, L], packed [H, T].
  int64_t total = packed.lse.sizes[1], start = 0;
  double negInf = -std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t r = 0; r < p.seqQ; ++r)
        in.lse.set((b * p.heads + h) * p.seqQ + r,
                   r < p.lensQ[b] ? packed.lse.get(h * total + start + r)
                                  : negInf);
    start += p.lensQ[b];
  }
}

void unpackGradients(const Problem &p, const PackedBatch &packed,
                     Gradients &g) {
  unpackRows(g.dq, packed.dq, p.lensQ, 0.0);
  unpackRows(g.dk, packed.dk, p.lensKV, 0.0);
  unpackRows(g.dv, packed.dv, p.lensKV, 0.0);
}

} // namespace kiln::driver
