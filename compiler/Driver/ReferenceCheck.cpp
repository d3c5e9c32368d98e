//===- ReferenceCheck.cpp - kiln run's comparison with float64 ------------===//

#include "compiler/Driver/ReferenceCheck.h"

#include "reference/Numerics.h"
#include "reference/Philox.h"

#include "llvm/Support/Format.h"

#include <cmath>
#include <tuple>

using namespace mlir;

namespace kiln::driver {
namespace {

void printErrorLine(llvm::raw_ostream &out, const char *what,
                    const ref::ErrorStats &stats) {
  out << llvm::format("  %-7s max |err| %.3e, rel L2 err %.3e", what,
                      stats.maxAbs, stats.relL2);
}

} // namespace

int makeReferenceVariant(attn::AttentionOp refSpec,
                         const std::vector<const HostBuffer *> &captureViews,
                         const HostBuffer *dropoutRng, ReferenceVariant &out,
                         llvm::raw_ostream &err) {
  out.spec.scale = refSpec.getEffectiveScale();
  if (refSpec.hasDropout()) {
    if (!dropoutRng) {
      err << "kiln: error: the variant has dropout_p but the run has no "
             "dropout_rng\n";
      return kBadInput;
    }
    const auto *state = static_cast<const uint64_t *>(dropoutRng->data());
    uint64_t seed = state[0], offset = state[1];
    uint32_t threshold = refSpec.getDropoutThreshold();
    double scale = refSpec.getDropoutScale();
    unsigned bits = refSpec.getDropoutWidth();
    out.spec.dropout = [=](int64_t b, int64_t h, int64_t qi, int64_t kv) {
      return ref::dropoutUniform(seed, offset, b, h, qi, kv, bits) < threshold
                 ? scale
                 : 0.0;
    };
  }
  switch (refSpec.getCausal()) {
  case attn::CausalAlignment::none:
    out.spec.causal = ref::CausalAlignment::None;
    break;
  case attn::CausalAlignment::top_left:
    out.spec.causal = ref::CausalAlignment::TopLeft;
    break;
  case attn::CausalAlignment::bottom_right:
    out.spec.causal = ref::CausalAlignment::BottomRight;
    break;
  }
  std::string error;
  if (refSpec.hasScoreMod()) {
    out.scoreMod =
        ModInterpreter::create(refSpec.getScoreMod(), captureViews, error);
    if (!out.scoreMod) {
      err << "kiln: error: " << error << "\n";
      return kBadInput;
    }
    ModInterpreter *mod = out.scoreMod.get();
    out.spec.scoreMod = [mod](double s, int64_t b, int64_t h, int64_t qi,
                              int64_t kv) {
      ModValue args[5];
      args[0].f = s;
      args[1].i = b;
      args[2].i = h;
      args[3].i = qi;
      args[4].i = kv;
      return mod->run(args).f;
    };
  }
  if (refSpec.hasMaskMod()) {
    out.maskMod =
        ModInterpreter::create(refSpec.getMaskMod(), captureViews, error);
    if (!out.maskMod) {
      err << "kiln: error: " << error << "\n";
      return kBadInput;
    }
    ModInterpreter *mod = out.maskMod.get();
    out.spec.maskMod = [mod](int64_t b, int64_t h, int64_t qi, int64_t kv) {
      ModValue args[4];
      args[0].i = b;
      args[1].i = h;
      args[2].i = qi;
      args[3].i = kv;
      return mod->run(args).i != 0;
    };
  }
  return 0;
}

std::map<std::string, HostBuffer *> Gradients::tensors(Inputs &in) {
  std::map<std::string, HostBuffer *> named{
      {"q", &in.q},   {"k", &in.k},  {"v", &in.v},
      {"out", &in.o}, {"dout", &dO}, {"lse", &in.lse},
      {"dq", &dq},    {"dk", &dk},   {"dv", &dv}};
  if (in.packed) {
    PackedBatch &pk = *in.packed;
    named = {{"q", &pk.q},
             {"k", &pk.k},
             {"v", &pk.v},
             {"out", &pk.o},
             {"dout", &pk.dO},
             {"lse", &pk.lse},
             {"dq", &pk.dq},
             {"dk", &pk.dk},
             {"dv", &pk.dv},
             {"cu_seqlens_q", &pk.cuQ},
             {"cu_seqlens_kv", &pk.cuKV}};
  }
  if (in.dropoutRng)
    named["dropout_rng"] = &*in.dropoutRng;
  if (in.blockMask) {
    std::map<std::string, HostBuffer *> lists;
    Inputs::addBlockLists(lists, *in.blockMask, /*backward=*/true);
    for (auto &[name, buffer] : lists)
      if (llvm::is_contained(planTensors, name))
        named[name] = buffer;
  }
  for (CaptureGradient &c : captureGrads)
    named[c.tensor] = &c.grad;
  return named;
}

namespace {
/// The reference's variant for a run: its mods over the run's captures (the
/// interpreter reads them where they are, so a changed capture is seen)
/// and dropout's state. A paged or varlen run's sequences have lengths of
/// their own: the dense problem's keys past a sequence's are unseen, and
/// its rows past the sequence's see no key (varlen); bottom-right causal
/// aligns with the sequence's lengths.
int referenceVariantFor(const Problem &p, attn::AttentionOp refSpec, Inputs &in,
                        std::vector<HostBuffer> &captures,
                        ReferenceVariant &out, llvm::raw_ostream &err) {
  std::vector<const HostBuffer *> views;
  for (HostBuffer &c : captures)
    views.push_back(&c);
  if (int rc = makeReferenceVariant(
          refSpec, views, in.dropoutRng ? &*in.dropoutRng : nullptr, out, err))
    return rc;
  if (in.blockMask) {
    applyBlockMask(p, *in.blockMask, out.spec);
    return 0;
  }
  std::vector<int64_t> lensQ(p.batch, p.seqQ), lensKV;
  if (p.varlen()) {
    lensQ = p.lensQ;
    lensKV = p.lensKV;
  }
  if (in.paged) {
    lensKV.clear();
    for (int64_t b = 0; b < p.batch; ++b)
      lensKV.push_back(int64_t(in.paged->lens.get(b)));
  }
  if (lensKV.empty())
    return 0;
  ref::AttentionSpec &spec = out.spec;
  ref::CausalAlignment causal = spec.causal;
  ref::MaskMod mask = spec.maskMod;
  spec.causal = ref::CausalAlignment::None;
  spec.maskMod = [lensQ, lensKV, causal, mask](int64_t b, int64_t h, int64_t q,
                                               int64_t kv) {
    int64_t m = lensQ[b], n = lensKV[b];
    if (q >= m || kv >= n ||
        (causal == ref::CausalAlignment::TopLeft && kv > q) ||
        (causal == ref::CausalAlignment::BottomRight && kv > q + n - m))
      return false;
    return !mask || mask(b, h, q, kv);
  };
  return 0;
}

/// A buffer's elements in row-major order, as float64.
std::vector<double> toDoubles(const HostBuffer &t) {
  std::vector<double> values(t.numElements());
  for (int64_t i = 0, n = t.numElements(); i < n; ++i)
    values[i] = t.get(i);
  return values;
}

/// dL/d(capture c) of L = sum(dO * O) by central differences of the float64
/// reference forward: each element moved by 2^-10 of its size (at least
/// 2^-10; its f32 storage rounds the move, so the difference divides by
/// what was stored). Fails like makeReferenceVariant.
int captureGradientByDifferences(const Problem &p, attn::AttentionOp refSpec,
                                 Inputs &in, std::vector<HostBuffer> &captures,
                                 unsigned c, const std::vector<double> &q,
                                 const std::vector<double> &k,
                                 const std::vector<double> &v,
                                 const std::vector<double> &dO,
                                 std::vector<double> &grad,
                                 llvm::raw_ostream &err) {
  ref::ProblemShape shape{p.batch, p.heads, p.kvHeads, p.seqQ,
                          p.seqKV, p.dqk,   p.dv};
  ReferenceVariant variant;
  if (int rc = referenceVariantFor(p, refSpec, in, captures, variant, err))
    return rc;
  HostBuffer &capture = captures[c];
  grad.assign(capture.numElements(), 0.0);
  std::vector<double> out(in.o.numElements()), lse(in.lse.numElements());
  auto loss = [&] {
    ref::attentionForward(shape, variant.spec, q.data(), k.data(), v.data(),
                          out.data(), lse.data());
    double sum = 0;
    for (size_t i = 0; i < out.size(); ++i)
      sum += dO[i] * out[i];
    return sum;
  };
  for (int64_t i = 0; i < capture.numElements(); ++i) {
    double x = capture.get(i);
    double step = std::ldexp(std::max(1.0, std::fabs(x)), -10);
    capture.set(i, x + step);
    double up = capture.get(i), lossUp = loss();
    capture.set(i, x - step);
    double down = capture.get(i), lossDown = loss();
    capture.set(i, x);
    grad[i] = (lossUp - lossDown) / (up - down);
  }
  return 0;
}

} // namespace

/// Compares dQ, dK, dV with the float64 reference gradients.
int checkBackward(const Problem &p, attn::AttentionOp refSpec, Inputs &in,
                  std::vector<HostBuffer> &captures, Gradients &g,
                  double tolerance, llvm::raw_ostream &out,
                  llvm::raw_ostream &err) {
  ReferenceVariant refVariant;
  if (int rc = referenceVariantFor(p, refSpec, in, captures, refVariant, err))
    return rc;
  ref::ProblemShape shape{p.batch, p.heads, p.kvHeads, p.seqQ,
                          p.seqKV, p.dqk,   p.dv};
  std::vector<double> q = toDoubles(in.q), k = toDoubles(in.k),
                      v = toDoubles(in.v), dO = toDoubles(g.dO);
  std::vector<double> dqRef(g.dq.numElements()), dkRef(g.dk.numElements()),
      dvRef(g.dv.numElements());
  ref::attentionBackward(shape, refVariant.spec, q.data(), k.data(), v.data(),
                         dO.data(), dqRef.data(), dkRef.data(), dvRef.data());
  bool pass = true;
  for (auto [name, got, want] :
       {std::tuple<const char *, HostBuffer *, std::vector<double> *>{
            "dq:", &g.dq, &dqRef},
        {"dk:", &g.dk, &dkRef},
        {"dv:", &g.dv, &dvRef}}) {
    std::vector<double> values = toDoubles(*got);
    ref::ErrorStats stats =
        ref::compare(values.data(), want->data(), values.size());
    printErrorLine(out, name, stats);
    out << llvm::format(" (tolerance %.1e), non-finite %zu\n", tolerance,
                        stats.nonFinite);
    pass &= stats.relL2 <= tolerance && stats.nonFinite == 0 &&
            stats.infMismatch == 0;
  }
  for (Gradients::CaptureGradient &c : g.captureGrads) {
    std::vector<double> want;
    if (int rc = captureGradientByDifferences(
            p, refSpec, in, captures, c.capture, q, k, v, dO, want, err))
      return rc;
    std::vector<double> values = toDoubles(c.grad);
    ref::ErrorStats stats =
        ref::compare(values.data(), want.data(), values.size());
    std::string label = c.tensor + ":";
    printErrorLine(out, label.c_str(), stats);
    out << llvm::format(" (tolerance %.1e, central differences), "
                        "non-finite %zu\n",
                        tolerance, stats.nonFinite);
    pass &= stats.relL2 <= tolerance && stats.nonFinite == 0;
  }
  out << (pass ? "PASS" : "FAIL") << " (backward)\n";
  return pass ? 0 : kMismatch;
}

/// Compares O and LSE with the float64 reference evaluating the variant's
/// own regions; prints the errors and PASS/FAIL.
int checkAgainstReference(const Problem &p, attn::AttentionOp refSpec,
                          Inputs &in, std::vector<HostBuffer> &captures,
                          double tolerance, llvm::raw_ostream &out,
                          llvm::raw_ostream &err) {
  std::vector<double> qd = toDoubles(in.q), kd = toDoubles(in.k),
                      vd = toDoubles(in.v);
  ref::ProblemShape shape{p.batch, p.heads, p.kvHeads, p.seqQ,
                          p.seqKV, p.dqk,   p.dv};
  ReferenceVariant refVariant;
  if (int rc = referenceVariantFor(p, refSpec, in, captures, refVariant, err))
    return rc;
  ref::AttentionSpec &refAttention = refVariant.spec;
  std::vector<double> outRef(in.o.numElements()), lseRef(in.lse.numElements());
  ref::attentionForward(shape, refAttention, qd.data(), kd.data(), vd.data(),
                        outRef.data(), lseRef.data());

  std::vector<double> outGot = toDoubles(in.o), lseGot = toDoubles(in.lse);
  ref::ErrorStats outStats =
      ref::compare(outGot.data(), outRef.data(), outGot.size());
  ref::ErrorStats lseStats =
      ref::compare(lseGot.data(), lseRef.data(), lseGot.size());

  // Rows with no visible key must give exactly 0 and -inf.
  int64_t emptyRows = 0, badEmptyRows = 0;
  for (int64_t row = 0; row < p.batch * p.heads * p.seqQ; ++row) {
    if (!std::isinf(lseRef[row]))
      continue;
    ++emptyRows;
    int64_t bIdx = row / (p.heads * p.seqQ), hIdx = (row / p.seqQ) % p.heads,
            qIdx = row % p.seqQ;
    bool zero = lseGot[row] == lseRef[row];
    for (int64_t d = 0; d < p.dv; ++d)
      zero &= outGot[((bIdx * p.seqQ + qIdx) * p.heads + hIdx) * p.dv + d] == 0;
    badEmptyRows += !zero;
  }

  printErrorLine(out, "output:", outStats);
  out << llvm::format(" (tolerance %.1e)\n", tolerance);
  printErrorLine(out, "lse:", lseStats);
  out << "\n";
  out << "  rows with no visible key: " << emptyRows << " (" << badEmptyRows
      << " not exactly O = 0, LSE = -inf)\n";
  out << "  non-finite values: " << outStats.nonFinite + lseStats.nonFinite
      << "\n";
  bool pass = outStats.relL2 <= tolerance && lseStats.relL2 <= tolerance &&
              outStats.nonFinite == 0 && lseStats.nonFinite == 0 &&
              outStats.infMismatch == 0 && lseStats.infMismatch == 0 &&
              badEmptyRows == 0;
  out << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? 0 : kMismatch;
}

} // namespace kiln::driver
