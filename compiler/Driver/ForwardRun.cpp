//===- ForwardRun.cpp - `kiln run`: lower, JIT, check ---------------------===//

#include "compiler/Driver/ForwardRun.h"

#include "compiler/Driver/CPUKernel.h"
#include "compiler/Driver/HostBuffer.h"
#include "compiler/Driver/ModInterpreter.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Pipelines/Registration.h"
#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Attn/Transforms/Passes.h"
#include "reference/Numerics.h"
#include "reference/ReferenceAttention.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Diagnostics.h"

#include <chrono>
#include <cmath>
#include <random>

using namespace mlir;

namespace kiln::driver {
namespace {

constexpr int kMismatch = 1;
constexpr int kBadInput = 2;

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Picks the attn.attention to run and erases the others.
attn::AttentionOp selectVariant(ModuleOp module, const std::string &name,
                                llvm::raw_ostream &err) {
  SmallVector<attn::AttentionOp> all;
  module.walk([&](attn::AttentionOp op) { all.push_back(op); });
  attn::AttentionOp chosen;
  if (all.empty()) {
    err << "kiln: error: the input has no attn.attention op\n";
    return {};
  }
  if (name.empty()) {
    if (all.size() > 1) {
      err << "kiln: error: the input has " << all.size()
          << " attn.attention ops; pick one with --variant (";
      llvm::interleaveComma(all, err,
                            [&](attn::AttentionOp op) { err << op.getSymName(); });
      err << ")\n";
      return {};
    }
    chosen = all.front();
  } else {
    for (attn::AttentionOp op : all)
      if (op.getSymName() == name)
        chosen = op;
    if (!chosen) {
      err << "kiln: error: no attn.attention named '" << name << "'\n";
      return {};
    }
  }
  for (attn::AttentionOp op : all)
    if (op != chosen)
      op.erase();
  return chosen;
}

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

struct Problem {
  int64_t batch, heads, kvHeads, seqQ, seqKV, dqk, dv, pad;
  ElementKind io;
};

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

void printErrorLine(llvm::raw_ostream &out, const char *what,
                    const ref::ErrorStats &stats) {
  out << llvm::format("  %-7s max |err| %.3e, rel L2 err %.3e", what,
                      stats.maxAbs, stats.relL2);
}

} // namespace

int runForward(const RunOptions &o, llvm::raw_ostream &out,
               llvm::raw_ostream &err) {
  DialectRegistry registry;
  registerKilnDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context, err);

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(o.input, sourceMgr,
                                                           &context);
  if (!module) {
    err << "kiln: error: could not read a valid module from '" << o.input
        << "'\n";
    return kBadInput;
  }
  attn::AttentionOp spec = selectVariant(*module, o.variant, err);
  if (!spec)
    return kBadInput;

  // Flags specialise the variant: head dims and element type are defaults.
  Builder b(&context);
  if (o.headDim > 0) {
    bool sameDims = spec.getQkHeadDim() == spec.getVHeadDim();
    spec.setQkHeadDim(o.headDim);
    if (o.headDimV <= 0 && sameDims)
      spec.setVHeadDim(o.headDim);
  }
  if (o.headDimV > 0)
    spec.setVHeadDim(o.headDimV);
  if (!o.dtype.empty())
    spec.setElementType(o.dtype == "bf16" ? Type(b.getBF16Type())
                                          : Type(b.getF16Type()));
  if (failed(verify(*module)))
    return kBadInput;

  Problem p;
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
  if (p.dqk > kMaxHeadDim || p.dv > kMaxHeadDim) {
    err << "kiln: error: head dims up to " << kMaxHeadDim
        << " are supported on the cpu backend, got " << p.dqk << "/" << p.dv
        << "\n";
    return kBadInput;
  }

  PassManager attnPM(&context);
  attnPM.addPass(attn::createAttnInferMaskBounds());
  if (failed(attnPM.run(*module)))
    return kBadInput;
  if (o.emit == EmitStage::Attn) {
    module->print(out);
    out << "\n";
    return 0;
  }

  // The reference evaluates the variant's own regions: keep a copy of the
  // spec before lowering consumes it.
  OwningOpRef<ModuleOp> specCopy = module->clone();
  attn::AttentionOp refSpec = *specCopy->getOps<attn::AttentionOp>().begin();
  std::string variantName = spec.getSymName().str();

  spec = nullptr; // lowering erases it; refSpec stays valid
  ForwardPipelineOptions pipelineOptions;
  pipelineOptions.blockM = o.blockM;
  pipelineOptions.blockN = o.blockN;
  pipelineOptions.splitMaskedBlocks = o.splitMaskedBlocks;
  auto compileStart = std::chrono::steady_clock::now();
  PassManager tilePM(&context);
  buildForwardTilePipeline(tilePM, pipelineOptions);
  if (failed(tilePM.run(*module)))
    return kBadInput;
  if (o.emit == EmitStage::Tile) {
    module->print(out);
    out << "\n";
    return 0;
  }
  PassManager cpuPM(&context);
  buildCPULoweringPipeline(cpuPM);
  if (failed(cpuPM.run(*module))) {
    err << "kiln: error: the CPU lowering failed\n";
    return kBadInput;
  }
  if (o.emit == EmitStage::LLVM) {
    llvm::LLVMContext llvmContext;
    auto llvmModule = translateModuleToLLVMIR(*module, llvmContext);
    if (!llvmModule) {
      err << "kiln: error: translation to LLVM IR failed\n";
      return kBadInput;
    }
    llvmModule->print(out, nullptr);
    return 0;
  }

  // Inputs: fresh N(0, 1) values rounded to the element type; outputs
  // poisoned with NaN so that anything left unwritten is caught.
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto q = HostBuffer::allocate(p.io, {p.batch, p.seqQ, p.heads, p.dqk}, p.pad);
  auto k = HostBuffer::allocate(p.io, {p.batch, p.seqKV, p.kvHeads, p.dqk}, p.pad);
  auto v = HostBuffer::allocate(p.io, {p.batch, p.seqKV, p.kvHeads, p.dv}, p.pad);
  auto o_ = HostBuffer::allocate(p.io, {p.batch, p.seqQ, p.heads, p.dv}, p.pad);
  auto lse = HostBuffer::allocate(ElementKind::F32, {p.batch, p.heads, p.seqQ});
  for (HostBuffer *t : {&q, &k, &v})
    for (int64_t i = 0, n = t->numElements(); i < n; ++i)
      t->set(i, normal(rng));
  o_.poison();
  lse.poison();

  std::vector<HostBuffer> captures;
  for (attn::CaptureAttr decl : refSpec.getCaptureDecls()) {
    auto kind = captureKind(decl.getType().getElementType());
    if (!kind) {
      err << "kiln: error: capture '" << decl.getName().getValue()
          << "' holds " << decl.getType().getElementType()
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

  std::string error;
  auto kernel = CPUKernel::compile(*module, variantName + "_fwd_grid", error);
  if (!kernel) {
    err << "kiln: error: " << error << "\n";
    return kBadInput;
  }
  double compileMs = millisecondsSince(compileStart);
  std::vector<HostBuffer *> args{&q, &k, &v, &o_, &lse};
  for (HostBuffer &c : captures)
    args.push_back(&c);
  std::array<int64_t, 3> grid{(p.seqQ + o.blockM - 1) / o.blockM, p.heads,
                              p.batch};
  auto runStart = std::chrono::steady_clock::now();
  if (!kernel->launch(args, grid, error)) {
    err << "kiln: error: " << error << "\n";
    return kBadInput;
  }
  double runMs = millisecondsSince(runStart);

  out << "kiln run: " << variantName << " on cpu, B=" << p.batch
      << " H=" << p.heads << " Hkv=" << p.kvHeads << " Lq=" << p.seqQ
      << " Lk=" << p.seqKV << " D=" << p.dqk << "/" << p.dv << " "
      << (p.io == ElementKind::BF16 ? "bf16" : "fp16") << ", blocks "
      << o.blockM << "x" << o.blockN << (p.pad ? ", padded rows" : "")
      << "\n";
  out << llvm::format("  compile %.1f ms, run %.1f ms\n", compileMs, runMs);
  if (!o.check)
    return 0;

  // The float64 reference on the very same (rounded) inputs.
  auto toDoubles = [](const HostBuffer &t) {
    std::vector<double> values(t.numElements());
    for (int64_t i = 0, n = t.numElements(); i < n; ++i)
      values[i] = t.get(i);
    return values;
  };
  std::vector<double> qd = toDoubles(q), kd = toDoubles(k), vd = toDoubles(v);
  std::vector<const HostBuffer *> captureViews;
  for (HostBuffer &c : captures)
    captureViews.push_back(&c);

  ref::ProblemShape shape{p.batch, p.heads, p.kvHeads, p.seqQ,
                          p.seqKV, p.dqk,   p.dv};
  ref::AttentionSpec refAttention;
  refAttention.scale = refSpec.getEffectiveScale();
  switch (refSpec.getCausal()) {
  case attn::CausalAlignment::none:
    refAttention.causal = ref::CausalAlignment::None;
    break;
  case attn::CausalAlignment::top_left:
    refAttention.causal = ref::CausalAlignment::TopLeft;
    break;
  case attn::CausalAlignment::bottom_right:
    refAttention.causal = ref::CausalAlignment::BottomRight;
    break;
  }
  std::unique_ptr<ModInterpreter> scoreMod, maskMod;
  if (refSpec.hasScoreMod()) {
    scoreMod = ModInterpreter::create(refSpec.getScoreMod(), captureViews, error);
    if (!scoreMod) {
      err << "kiln: error: " << error << "\n";
      return kBadInput;
    }
    refAttention.scoreMod = [&](double s, int64_t b, int64_t h, int64_t qi,
                                int64_t kv) {
      ModValue args[5];
      args[0].f = s;
      args[1].i = b;
      args[2].i = h;
      args[3].i = qi;
      args[4].i = kv;
      return scoreMod->run(args).f;
    };
  }
  if (refSpec.hasMaskMod()) {
    maskMod = ModInterpreter::create(refSpec.getMaskMod(), captureViews, error);
    if (!maskMod) {
      err << "kiln: error: " << error << "\n";
      return kBadInput;
    }
    refAttention.maskMod = [&](int64_t b, int64_t h, int64_t qi, int64_t kv) {
      ModValue args[4];
      args[0].i = b;
      args[1].i = h;
      args[2].i = qi;
      args[3].i = kv;
      return maskMod->run(args).i != 0;
    };
  }
  std::vector<double> outRef(o_.numElements()), lseRef(lse.numElements());
  ref::attentionForward(shape, refAttention, qd.data(), kd.data(), vd.data(),
                        outRef.data(), lseRef.data());

  std::vector<double> outGot = toDoubles(o_), lseGot = toDoubles(lse);
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
  out << llvm::format(" (tolerance %.1e)\n", o.tolerance);
  printErrorLine(out, "lse:", lseStats);
  out << "\n";
  out << "  rows with no visible key: " << emptyRows << " (" << badEmptyRows
      << " not exactly O = 0, LSE = -inf)\n";
  out << "  non-finite values: " << outStats.nonFinite + lseStats.nonFinite
      << "\n";
  bool pass = outStats.relL2 <= o.tolerance &&
              lseStats.relL2 <= o.tolerance && outStats.nonFinite == 0 &&
              lseStats.nonFinite == 0 && outStats.infMismatch == 0 &&
              lseStats.infMismatch == 0 && badEmptyRows == 0;
  out << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? 0 : kMismatch;
}

} // namespace kiln::driver
