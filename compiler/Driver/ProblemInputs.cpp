//===- ProblemInputs.cpp - the problem and random inputs of a run ---------===//

#include "compiler/Driver/ProblemInputs.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <unistd.h>

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

/// Checks that the problem's host buffers can exist, before makeInputs
/// allocates them: dimensions below 2^31 (the runtime's limit, which would
/// only refuse them after the driver had filled them), captures the driver
/// can fill, and, where `kiln run` will allocate (no -emit stage), sizes that
/// fit this machine's memory (an allocation that fails aborts the process).
int checkProblemSize(const RunOptions &o, attn::AttentionOp spec,
                     const Problem &p, llvm::raw_ostream &err) {
  constexpr int64_t kMaxDim = int64_t{1} << 31;
  auto tooLarge = [&](const char *flag, int64_t value) {
    if (value < kMaxDim)
      return false;
    err << "kiln: error: " << flag << " is " << value
        << "; dimensions must be below 2^31\n";
    return true;
  };
  // --pad first: the head dims are below 2^31 (the verifier), so the padded
  // rows cannot overflow once it is.
  if (tooLarge("--pad", p.pad) || tooLarge("--batch (sequences)", p.batch) ||
      tooLarge("--heads", p.heads) ||
      tooLarge("--seqlen (or the longest of --seqlens)", p.seqQ) ||
      tooLarge("--seqlen-kv (or the longest of --seqlens-kv)", p.seqKV) ||
      tooLarge("the qk head dim plus --pad", p.dqk + p.pad) ||
      tooLarge("the v head dim plus --pad", p.dv + p.pad))
    return kBadInput;
  // Bytes of the host buffers: Q, K, V, O (their gradients too with
  // --backward), the LSE and the captures; products of dims below 2^31,
  // summed in double to stay clear of overflow.
  double io = 2; // bf16 or fp16
  double rowsQ = double(p.batch) * double(p.seqQ) * double(p.heads);
  double rowsKV = double(p.batch) * double(p.seqKV) * double(p.kvHeads);
  double bytes =
      io * (rowsQ * double(p.dqk + p.pad) + rowsKV * double(p.dqk + p.pad) +
            rowsKV * double(p.dv + p.pad) + rowsQ * double(p.dv + p.pad)) +
      4 * rowsQ;
  if (o.backward)
    bytes *= 2;
  for (attn::CaptureAttr decl : spec.getCaptureDecls()) {
    if (!captureKind(decl.getType().getElementType())) {
      err << "kiln: error: capture '" << decl.getName().getValue() << "' holds "
          << decl.getType().getElementType()
          << "; the driver fills f32, f64, i32, i64 and index captures\n";
      return kBadInput;
    }
    if (decl.getDims().size() > 4) {
      err << "kiln: error: capture '" << decl.getName().getValue() << "' has "
          << decl.getDims().size() << " dims; captures have at most 4\n";
      return kBadInput;
    }
    double elements = 1;
    for (Attribute dim : decl.getDims()) {
      int64_t size = *resolveDim(dim, p);
      if (size >= kMaxDim) {
        err << "kiln: error: capture '" << decl.getName().getValue()
            << "' has a dimension of " << size
            << "; dimensions must be below 2^31\n";
        return kBadInput;
      }
      elements *= double(size);
    }
    bytes += 8 * elements;
  }
  // Block-sparse lists: counts and numbers per (batch, head, block row),
  // and their transposes, int32.
  if (std::optional<std::pair<int64_t, int64_t>> blocks =
          spec.getSparseBlocks()) {
    double rows = std::ceil(double(p.seqQ) / double(blocks->first));
    double cols = std::ceil(double(p.seqKV) / double(blocks->second));
    bytes += 4 * 4 * double(p.batch) * double(p.heads) * rows * (cols + 1);
  }
  if (o.emit != EmitStage::None)
    return 0; // an -emit stage allocates nothing
  // This machine's memory, or 1 TiB where sysconf cannot say: the bound
  // also keeps HostBuffer::allocate's int64 sizes from overflowing.
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  double memory = pages > 0 && pageSize > 0 ? double(pages) * double(pageSize)
                                            : double(int64_t{1} << 40);
  if (bytes > memory) {
    err << "kiln: error: the problem's host buffers need "
        << llvm::format("%.3g", bytes / double(1ull << 30))
        << " GiB, more than this machine's "
        << llvm::format("%.3g", memory / double(1ull << 30))
        << " GiB of memory\n";
    return kBadInput;
  }
  return 0;
}

/// The paged cache of `k` and `v` (see PagedKV): sequence 0 holds all
/// seqKV keys, the others between half and all of them (varlen: their
/// --seqlens-kv lengths); the pages of all
/// sequences, and one spare, in a random order; table slots past a
/// sequence's pages are -1, which no kernel may follow.
PagedKV makePagedKV(const Problem &p, const HostBuffer &k, const HostBuffer &v,
                    std::mt19937_64 &rng) {
  int64_t ps = p.pageSize;
  int64_t maxPages = (p.seqKV + ps - 1) / ps;
  int64_t numPages = p.batch * maxPages + 1;
  PagedKV paged;
  paged.kPool =
      HostBuffer::allocate(p.io, {numPages, ps, p.kvHeads, p.dqk}, p.pad);
  paged.vPool =
      HostBuffer::allocate(p.io, {numPages, ps, p.kvHeads, p.dv}, p.pad);
  paged.table = HostBuffer::allocate(ElementKind::I32, {p.batch, maxPages});
  paged.lens = HostBuffer::allocate(ElementKind::I32, {p.batch});
  paged.kPool.poison();
  paged.vPool.poison();
  std::vector<int64_t> order(numPages);
  for (int64_t i = 0; i < numPages; ++i)
    order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::uniform_int_distribution<int64_t> length((p.seqKV + 1) / 2, p.seqKV);
  for (int64_t b = 0; b < p.batch; ++b) {
    int64_t len = p.varlen() ? p.lensKV[b] : b == 0 ? p.seqKV : length(rng);
    paged.lens.set(b, double(len));
    for (int64_t slot = 0; slot < maxPages; ++slot) {
      bool used = slot * ps < len;
      int64_t page = order[b * maxPages + slot];
      paged.table.set(b * maxPages + slot, used ? double(page) : -1.0);
      if (!used)
        continue;
      for (int64_t r = slot * ps; r < std::min(len, (slot + 1) * ps); ++r)
        for (int64_t h = 0; h < p.kvHeads; ++h) {
          for (int64_t d = 0; d < p.dqk; ++d)
            paged.kPool.set(
                ((page * ps + r % ps) * p.kvHeads + h) * p.dqk + d,
                k.get(((b * p.seqKV + r) * p.kvHeads + h) * p.dqk + d));
          for (int64_t d = 0; d < p.dv; ++d)
            paged.vPool.set(
                ((page * ps + r % ps) * p.kvHeads + h) * p.dv + d,
                v.get(((b * p.seqKV + r) * p.kvHeads + h) * p.dv + d));
        }
    }
  }
  return paged;
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
  // A variant that declares a paged cache or a packed batch gets inputs in
  // that layout even without --page-size / --varlen (its kernels take no
  // other).
  p.pageSize = spec.getPageSize().value_or(0);
  p.blockDensity = o.blockDensity;
  p.buildBlockMask = o.buildBlockMask;
  if (p.buildBlockMask && (p.blockDensity > 0 || o.backward)) {
    err << "kiln: error: --build-block-mask builds the lists of the "
           "variant's own mask (not with --block-density or --backward)\n";
    return kBadInput;
  }
  if (p.blockDensity > 0 && !spec.getBlockSparse()) {
    err << "kiln: error: --block-density needs a block-sparse variant "
           "(block_sparse, or --block-sparse)\n";
    return kBadInput;
  }
  if (spec.getVarlen()) {
    // Varlen: the dense problem holds every sequence at the longest's
    // length; the kernels see them packed (PackedBatch.h).
    p.lensQ =
        o.seqLens.empty() ? std::vector<int64_t>(o.batch, p.seqQ) : o.seqLens;
    p.lensKV = !o.seqLensKV.empty() ? o.seqLensKV
               : !o.seqLens.empty() ? o.seqLens
                                    : std::vector<int64_t>(o.batch, p.seqKV);
    p.batch = int64_t(p.lensQ.size());
    p.seqQ =
        std::max<int64_t>(1, *std::max_element(p.lensQ.begin(), p.lensQ.end()));
    p.seqKV = std::max<int64_t>(
        1, *std::max_element(p.lensKV.begin(), p.lensKV.end()));
  }
  if (p.pageSize > 0 && o.backward) {
    err << "kiln: error: a paged KV cache (page_size, or --page-size) is a "
           "forward (inference) layout; --backward takes dense K and V\n";
    return kBadInput;
  }
  p.io = spec.getElementType().isBF16() ? ElementKind::BF16 : ElementKind::F16;
  constexpr int64_t kMaxHeadDim = 512;
  if (o.backend == "cpu" && (p.dqk > kMaxHeadDim || p.dv > kMaxHeadDim)) {
    err << "kiln: error: head dims up to " << kMaxHeadDim
        << " are supported on the cpu backend, got " << p.dqk << "/" << p.dv
        << "\n";
    return kBadInput;
  }
  return checkProblemSize(o, spec, p, err);
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
  if (p.pageSize > 0)
    in.paged = makePagedKV(p, in.k, in.v, rng);
  if (p.varlen())
    in.packed = packBatch(p, in);
  if (spec.hasDropout()) {
    // A fresh seed and offset per run, as every input (the offset's high
    // word too, which the generator's key reads).
    in.dropoutRng = HostBuffer::allocate(ElementKind::I64, {2});
    auto *state = static_cast<uint64_t *>(in.dropoutRng->data());
    state[0] = rng();
    state[1] = rng();
  }
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
  if (auto blocks = spec.getSparseBlocks()) {
    if (p.blockDensity > 0) {
      in.blockMask = randomBlockMask(p, blocks->first, blocks->second,
                                     p.blockDensity, rng);
      return 0;
    }
    // The variant's own mask, evaluated by the reference on each block.
    std::vector<const HostBuffer *> views;
    for (HostBuffer &c : captures)
      views.push_back(&c);
    ReferenceVariant variant;
    if (int rc = makeReferenceVariant(spec, views,
                                      in.dropoutRng ? &*in.dropoutRng : nullptr,
                                      variant, err))
      return rc;
    Region &mask = spec.getMaskMod();
    bool perBatch = !mask.empty() && !mask.getArgument(0).use_empty();
    bool perHead = !mask.empty() && !mask.getArgument(1).use_empty();
    in.blockMask = blockMaskFromMask(p, blocks->first, blocks->second,
                                     variant.spec, perBatch, perHead);
    if (p.buildBlockMask)
      in.builtLists = poisonedLists(p, blocks->first, blocks->second, perHead);
  }
  return 0;
}

void makeGradients(const Problem &p, Inputs &in, uint64_t seed,
                   const ProgramSpec &backward,
                   const std::vector<HostBuffer> &captures, Gradients &g) {
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
  if (in.packed)
    packGradients(p, g, *in.packed);
  g.planTensors.clear();
  for (const TensorDecl &t : backward.tensors)
    g.planTensors.push_back(t.name);
  // The backward adds the captures' gradients into zeros.
  g.captureGrads.clear();
  for (const TensorDecl &t : backward.tensors) {
    if (t.name.rfind("grad_", 0) != 0)
      continue;
    for (unsigned c = 0; c < backward.captures.size(); ++c) {
      if ("grad_" + backward.captures[c].name != t.name)
        continue;
      HostBuffer grad =
          HostBuffer::allocate(ElementKind::F32, captures[c].sizes);
      for (int64_t i = 0, n = grad.numElements(); i < n; ++i)
        grad.set(i, 0.0);
      g.captureGrads.push_back({c, t.name, std::move(grad)});
    }
  }
}

} // namespace kiln::driver
