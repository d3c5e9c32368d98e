//===- ProblemInputs.cpp - the problem and random inputs of a run ---------===//

#include "compiler/Driver/ProblemInputs.h"

#include <random>

using namespace mlir;

namespace kiln::driver {

DType deviceDType(ElementKind kind) {
  switch (kind) {
  case ElementKind::BF16:
    return DType::BF16;
  case ElementKind::F16:
    return DType::F16;
  case ElementKind::F32:
    return DType::F32;
  case ElementKind::F64:
    return DType::F64;
  case ElementKind::I32:
    return DType::I32;
  case ElementKind::I64:
    return DType::I64;
  }
  return DType::F32;
}

ElementKind hostKind(DType dtype) {
  for (ElementKind kind :
       {ElementKind::BF16, ElementKind::F16, ElementKind::F32, ElementKind::F64,
        ElementKind::I32, ElementKind::I64})
    if (deviceDType(kind) == dtype)
      return kind;
  return ElementKind::F32;
}

namespace {

/// The element kind a capture's memref holds on the host, if supported.
std::optional<ElementKind> captureKind(Type t) {
  if (t.isF32())
    return ElementKind::F32;
  if (t.isF64())
    return ElementKind::F64;
  if (t.isInteger(32))
    return ElementKind::I32;
  if (t.isInteger(64) || t.isIndex())
    return ElementKind::I64;
  return std::nullopt;
}

/// Resolves a capture's symbolic dimensions against the problem.
std::optional<int64_t> resolveDim(Attribute dim, const Problem &p) {
  if (auto size = dyn_cast<IntegerAttr>(dim))
    return size.getInt();
  StringRef name = cast<StringAttr>(dim).getValue();
  if (name == "batch")
    return p.batch;
  if (name == "heads")
    return p.heads;
  if (name == "kv_heads")
    return p.kvHeads;
  if (name == "seq_q")
    return p.seqQ;
  if (name == "seq_kv")
    return p.seqKV;
  return std::nullopt;
}

} // namespace

int makeProblem(const RunOptions &o, attn::AttentionOp spec, Problem &p,
                llvm::raw_ostream &err) {
  p.batch = o.batch;
  p.heads = o.heads;
  int64_t group = spec.getGqaGroup();
  if (o.heads % group != 0) {
    err << "kiln: error: --heads " << o.heads
        << " is not a multiple of the variant's gqa_group " << group << "\n";
    return kBadInput;
  }
  p.kvHeads = o.heads / group;
  p.seqQ = o.seqQ;
  p.seqKV = o.seqKV > 0 ? o.seqKV : o.seqQ;
  p.dqk = spec.getQkHeadDim();
  p.dv = spec.getVHeadDim();
  p.pad = o.pad;
  p.io = spec.getElementType().isBF16() ? ElementKind::BF16 : ElementKind::F16;
  constexpr int64_t kMaxHeadDim = 512;
  if (o.backend == "cpu" && (p.dqk > kMaxHeadDim || p.dv > kMaxHeadDim)) {
    err << "kiln: error: head dims up to " << kMaxHeadDim
        << " are supported on the cpu backend, got " << p.dqk << "/" << p.dv
        << "\n";
    return kBadInput;
  }
  return 0;
}

int makeInputs(const Problem &p, attn::AttentionOp spec, uint64_t seed,
               Inputs &in, std::vector<HostBuffer> &captures,
               llvm::raw_ostream &err) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  in.q = HostBuffer::allocate(p.io, {p.batch, p.seqQ, p.heads, p.dqk}, p.pad);
  in.k =
      HostBuffer::allocate(p.io, {p.batch, p.seqKV, p.kvHeads, p.dqk}, p.pad);
  in.v = HostBuffer::allocate(p.io, {p.batch, p.seqKV, p.kvHeads, p.dv}, p.pad);
  in.o = HostBuffer::allocate(p.io, {p.batch, p.seqQ, p.heads, p.dv}, p.pad);
  in.lse = HostBuffer::allocate(ElementKind::F32, {p.batch, p.heads, p.seqQ});
  for (HostBuffer *t : {&in.q, &in.k, &in.v})
    for (int64_t i = 0, n = t->numElements(); i < n; ++i)
      t->set(i, normal(rng));
  in.o.poison();
  in.lse.poison();
  for (attn::CaptureAttr decl : spec.getCaptureDecls()) {
    auto kind = captureKind(decl.getType().getElementType());
    if (!kind) {
      err << "kiln: error: capture '" << decl.getName().getValue() << "' holds "
          << decl.getType().getElementType()
          << "; the driver fills f32, f64, i32, i64 and index captures\n";
      return kBadInput;
    }
    std::vector<int64_t> sizes;
    for (Attribute dim : decl.getDims())
      sizes.push_back(*resolveDim(dim, p));
    HostBuffer buffer = HostBuffer::allocate(*kind, sizes);
    // Floats in (0, 1) (ALiBi-like slopes, biases); integers in [0, 3]
    // (segment / document ids).
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::uniform_int_distribution<int> small(0, 3);
    bool isFloat = *kind == ElementKind::F32 || *kind == ElementKind::F64;
    for (int64_t i = 0, n = buffer.numElements(); i < n; ++i)
      buffer.set(i, isFloat ? unit(rng) : small(rng));
    captures.push_back(std::move(buffer));
  }
  return 0;
}

void makeGradients(const Problem &p, uint64_t seed, Gradients &g) {
  std::mt19937_64 rng(seed ^ 0x5eedull);
  std::normal_distribution<double> normal(0.0, 1.0);
  g.dO = HostBuffer::allocate(p.io, {p.batch, p.seqQ, p.heads, p.dv}, p.pad);
  for (int64_t i = 0, n = g.dO.numElements(); i < n; ++i)
    g.dO.set(i, normal(rng));
  // Gradients come back in the input type, like the inputs.
  g.dq = HostBuffer::allocate(p.io, {p.batch, p.seqQ, p.heads, p.dqk}, p.pad);
  g.dk =
      HostBuffer::allocate(p.io, {p.batch, p.seqKV, p.kvHeads, p.dqk}, p.pad);
  g.dv = HostBuffer::allocate(p.io, {p.batch, p.seqKV, p.kvHeads, p.dv}, p.pad);
  for (HostBuffer *t : {&g.dq, &g.dk, &g.dv})
    t->poison();
}

} // namespace kiln::driver
