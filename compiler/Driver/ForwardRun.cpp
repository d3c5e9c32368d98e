//===- ForwardRun.cpp - `kiln run`: lower, JIT, check ---------------------===//

#include "compiler/Driver/ForwardRun.h"

#include "compiler/Driver/CPUProgram.h"
#include "compiler/Emit/LaunchPlan/LaunchPlan.h"
#include "kiln/SpecFormat.h"

#include "compiler/Driver/CPUKernel.h"
#include "compiler/Driver/CUDABackwardRun.h"
#include "compiler/Driver/CUDACompile.h"
#include "compiler/Driver/HostBuffer.h"
#include "compiler/Driver/ModInterpreter.h"
#include "compiler/Driver/ReferenceCheck.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Pipelines/Registration.h"
#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Attn/Transforms/Passes.h"
#include "reference/Numerics.h"
#include "reference/ReferenceAttention.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <cmath>
#include <random>

using namespace mlir;

namespace kiln::driver {
using kiln::DType;
using kiln::ForwardKernel;
using kiln::ProgramSpec;
using kiln::Status;
using kiln::TensorRef;
namespace cuda = kiln::cuda;
namespace {

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
      llvm::interleaveComma(
          all, err, [&](attn::AttentionOp op) { err << op.getSymName(); });
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

/// Parses the input, keeps the chosen attn.attention and specialises it
/// with the flags (head dims and element type are the variant's defaults).
int loadVariant(const RunOptions &o, MLIRContext &context,
                llvm::SourceMgr &sourceMgr, OwningOpRef<ModuleOp> &module,
                attn::AttentionOp &spec, llvm::raw_ostream &err) {
  module = parseSourceFile<ModuleOp>(o.input, sourceMgr, &context);
  if (!module) {
    err << "kiln: error: could not read a valid module from '" << o.input
        << "'\n";
    return kBadInput;
  }
  spec = selectVariant(*module, o.variant, err);
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
  return 0;
}

DialectRegistry kilnRegistry() {
  DialectRegistry registry;
  registerKilnDialects(registry);
  return registry;
}

/// The context a run works in, the variant it parsed and where parser and
/// verifier diagnostics go (members are destroyed module first).
struct Session {
  explicit Session(llvm::raw_ostream &err)
      : context(kilnRegistry()), diagnostics(sourceMgr, &context, err) {
    context.loadAllAvailableDialects();
  }
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics;
  OwningOpRef<ModuleOp> module;
  attn::AttentionOp spec;
};

/// Fresh N(0, 1) inputs rounded to the element type; outputs poisoned with
/// NaN so that anything a kernel leaves unwritten is caught; captures filled
/// per their declaration.
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

/// Compiles (or loads from the cache) and runs the kernel on device 0,
/// copying inputs in and results back into `in`.
int runOnCUDA(const ProgramSpec &spec, const Problem &p, Inputs &in,
              std::vector<HostBuffer> &captures, const RunOptions &o,
              double &compileMs, double &runMs, std::string &note,
              llvm::raw_ostream &out, llvm::raw_ostream &err) {
  auto fail = [&](const Status &s, int code) {
    err << "kiln: error: " << s.message() << "\n";
    return code;
  };
  std::unique_ptr<ForwardKernel> kernel;
  auto start = std::chrono::steady_clock::now();
  if (Status s = ForwardKernel::load(spec, 0, kernel); !s.ok())
    return fail(s, kBadInput); // no usable device, or the wrong one
  compileMs = millisecondsSince(start);
  note += llvm::formatv("  kernel {0}: {1} ({2}), NVRTC {3:f1} ms, load "
                        "{4:f2} ms\n",
                        spec.kernels.front().name, spec.arch,
                        kernel->cacheHit() ? "cache hit" : "compiled",
                        kernel->compileMs(), kernel->loadMs())
              .str();

  std::vector<HostBuffer *> host{&in.q, &in.k, &in.v, &in.o, &in.lse};
  for (HostBuffer &c : captures)
    host.push_back(&c);
  std::vector<void *> device(host.size(), nullptr);
  std::vector<TensorRef> refs;
  auto cleanup = [&] {
    for (void *ptr : device)
      if (ptr)
        cuda::free(ptr);
  };
  for (size_t i = 0; i < host.size(); ++i) {
    size_t bytes = host[i]->storage.size() * 8;
    if (Status s = cuda::malloc(&device[i], bytes); !s.ok()) {
      cleanup();
      return fail(s, kInternalError);
    }
    if (Status s = cuda::copyToDevice(device[i], host[i]->data(), bytes);
        !s.ok()) {
      cleanup();
      return fail(s, kInternalError);
    }
    refs.push_back({device[i], deviceDType(host[i]->kind), host[i]->sizes,
                    host[i]->strides});
  }
  std::vector<TensorRef> captureRefs(refs.begin() + 5, refs.end());
  auto launch = [&] {
    return kernel->forward(refs[0], refs[1], refs[2], refs[3], refs[4],
                           captureRefs, nullptr);
  };
  start = std::chrono::steady_clock::now();
  // A launch that validation refused is bad input; a failure while the
  // kernel runs is ours.
  if (Status s = launch(); !s.ok()) {
    cleanup();
    return fail(s, kBadInput);
  }
  if (Status s = cuda::synchronize(); !s.ok()) {
    cleanup();
    return fail(s, kInternalError);
  }
  runMs = millisecondsSince(start);
  for (size_t i : {size_t(3), size_t(4)})
    if (Status c = cuda::copyToHost(host[i]->data(), device[i],
                                    host[i]->storage.size() * 8);
        !c.ok()) {
      cleanup();
      return fail(c, kInternalError);
    }
  if (o.repeats > 0) {
    double ms = 0;
    for (int i = 0; i < 3; ++i)
      launch();
    if (Status t = cuda::timeMs(launch, static_cast<int>(o.repeats), ms);
        !t.ok()) {
      cleanup();
      return fail(t, kInternalError);
    }
    // Forward FLOPs counted dense: 2 matmuls of 2*Lq*Lk*D each. Masked
    // variants do less work (causal about half), so their figure is an
    // upper bound of the rate; bench/ counts causal as half.
    double flops = 2.0 * p.batch * p.heads * p.seqQ * p.seqKV * (p.dqk + p.dv);
    note += llvm::formatv("  timed {0} launches: {1:f4} ms, {2:f1} TFLOP/s "
                          "(dense count)\n",
                          o.repeats, ms, flops / (ms * 1e-3) / 1e12)
                .str();
  }
  cleanup();
  (void)out;
  return 0;
}

/// Runs the backward program's plan on the CPU after the forward.
int runBackwardCPU(CPUKernel &kernel, const ProgramSpec &plan, const Problem &p,
                   Inputs &in, std::vector<HostBuffer> &captures, uint64_t seed,
                   Gradients &g, llvm::raw_ostream &err) {
  makeGradients(p, seed, g);
  std::string error;
  if (!runPlanOnCPU(kernel, plan,
                    {{"q", &in.q},
                     {"k", &in.k},
                     {"v", &in.v},
                     {"out", &in.o},
                     {"dout", &g.dO},
                     {"lse", &in.lse},
                     {"dq", &g.dq},
                     {"dk", &g.dk},
                     {"dv", &g.dv}},
                    captures, error)) {
    err << "kiln: error: " << error << "\n";
    return kInternalError;
  }
  return 0;
}

} // namespace

int runForward(const RunOptions &o, llvm::raw_ostream &out,
               llvm::raw_ostream &err) {
  Session session(err);
  MLIRContext &context = session.context;
  OwningOpRef<ModuleOp> &module = session.module;
  attn::AttentionOp &spec = session.spec;
  if (int rc = loadVariant(o, context, session.sourceMgr, module, spec, err))
    return rc;

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
  if (o.backend == "cpu" && (p.dqk > kMaxHeadDim || p.dv > kMaxHeadDim)) {
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
  Inputs inputs;
  ProgramSpec cudaSpec, cudaBackwardSpec;
  // The CPU backend's plans, read off the tile program before its lowering.
  ProgramSpec cpuForwardPlan, cpuBackwardPlan;
  int64_t blockM = o.blockM, blockN = o.blockN;
  double loweringMs = 0;
  bool gpu = o.backend == "cuda" || o.emit == EmitStage::TGPU ||
             o.emit == EmitStage::CUDA;
  if (gpu) {
    // The GPU path picks its own tiles for the device; -emit works without a
    // GPU and targets sm_90a unless --arch says otherwise.
    std::string arch = o.arch;
    if (arch.empty() && o.backend == "cuda" && o.emit == EmitStage::None) {
      std::string deviceName;
      if (Status s = cuda::init(0); !s.ok()) {
        err << "kiln: error: " << s.message() << "\n";
        return kBadInput;
      }
      if (Status s = deviceArch(0, arch, deviceName); !s.ok()) {
        err << "kiln: error: " << s.message() << "\n";
        return kBadInput;
      }
    }
    if (arch.empty())
      arch = "sm_90a";
    std::string tgpuIR;
    auto start = std::chrono::steady_clock::now();
    if (Status s = compileForwardCUDA(
            *module, arch, cudaSpec, &tgpuIR, o.overlapCopies,
            o.blockMGiven ? o.blockM : 0, o.blockNGiven ? o.blockN : 0,
            o.prefetchNextStep);
        !s.ok()) {
      err << "kiln: error: " << s.message() << "\n";
      return kBadInput;
    }
    if (o.backward) {
      // The backward kernels from their own copy of the spec.
      OwningOpRef<ModuleOp> backwardModule = specCopy->clone();
      std::string backwardIR;
      if (Status s = compileBackwardCUDA(
              *backwardModule, arch, o.backwardSchedule == "atomic",
              cudaBackwardSpec, &backwardIR, o.overlapCopies,
              o.blockMGiven ? o.blockM : 0, o.blockNGiven ? o.blockN : 0);
          !s.ok()) {
        err << "kiln: error: " << s.message() << "\n";
        return kBadInput;
      }
      tgpuIR += "\n" + backwardIR;
    }
    loweringMs = millisecondsSince(start);
    if (o.emit == EmitStage::TGPU) {
      out << tgpuIR << "\n";
      return 0;
    }
    if (o.emit == EmitStage::CUDA) {
      out << cudaSpec.source;
      if (o.backward)
        out << "\n" << cudaBackwardSpec.source;
      return 0;
    }
    if (o.emit != EmitStage::None) {
      err << "kiln: error: -emit=tile and -emit=llvm show the cpu backend's "
             "stages; use -emit=tgpu or -emit=cuda with --backend cuda\n";
      return kBadInput;
    }
    blockM = cudaSpec.blockM;
    blockN = cudaSpec.blockN;
  } else {
    ForwardPipelineOptions pipelineOptions;
    pipelineOptions.blockM = o.blockM;
    pipelineOptions.blockN = o.blockN;
    pipelineOptions.splitMaskedBlocks = o.splitMaskedBlocks;
    pipelineOptions.backward = o.backward;
    pipelineOptions.backwardSchedule = o.backwardSchedule;
    auto start = std::chrono::steady_clock::now();
    PassManager tilePM(&context);
    buildForwardTilePipeline(tilePM, pipelineOptions);
    if (failed(tilePM.run(*module)))
      return kBadInput;
    if (o.emit == EmitStage::Tile) {
      module->print(out);
      out << "\n";
      return 0;
    }
    if (failed(buildLaunchPlan(*module, "forward", cpuForwardPlan)) ||
        (o.backward &&
         failed(buildLaunchPlan(*module, "backward", cpuBackwardPlan)))) {
      err << "kiln: error: the tile program has no consistent launch plan\n";
      return kInternalError;
    }
    PassManager cpuPM(&context);
    buildCPULoweringPipeline(cpuPM);
    if (failed(cpuPM.run(*module))) {
      err << "kiln: error: the CPU lowering failed\n";
      return kInternalError;
    }
    loweringMs = millisecondsSince(start);
    if (o.emit == EmitStage::LLVM) {
      llvm::LLVMContext llvmContext;
      auto llvmModule = translateModuleToLLVMIR(*module, llvmContext);
      if (!llvmModule) {
        err << "kiln: error: translation to LLVM IR failed\n";
        return kInternalError;
      }
      llvmModule->print(out, nullptr);
      return 0;
    }
  }

  std::vector<HostBuffer> captures;
  if (int rc = makeInputs(p, refSpec, o.seed, inputs, captures, err))
    return rc;

  Gradients gradients;
  std::string backendName = o.backend;
  double compileMs = 0, runMs = 0;
  std::string timingNote;
  if (o.backend == "cpu") {
    std::string error;
    auto compileStart = std::chrono::steady_clock::now();
    auto kernel = CPUKernel::compile(*module, error);
    if (!kernel) {
      err << "kiln: error: " << error << "\n";
      return kInternalError;
    }
    compileMs = millisecondsSince(compileStart) + loweringMs;
    auto runStart = std::chrono::steady_clock::now();
    if (!runPlanOnCPU(*kernel, cpuForwardPlan,
                      {{"q", &inputs.q},
                       {"k", &inputs.k},
                       {"v", &inputs.v},
                       {"out", &inputs.o},
                       {"lse", &inputs.lse}},
                      captures, error)) {
      err << "kiln: error: " << error << "\n";
      return kInternalError;
    }
    runMs = millisecondsSince(runStart);
    if (o.backward)
      if (int rc = runBackwardCPU(*kernel, cpuBackwardPlan, p, inputs, captures,
                                  o.seed, gradients, err))
        return rc;
  } else {
    if (int rc = runOnCUDA(cudaSpec, p, inputs, captures, o, compileMs, runMs,
                           timingNote, out, err))
      return rc;
    if (o.backward)
      if (int rc = runBackwardOnCUDA(cudaBackwardSpec, p, inputs, captures, o,
                                     gradients, timingNote, err))
        return rc;
  }

  out << "kiln run: " << variantName << " on " << backendName
      << ", B=" << p.batch << " H=" << p.heads << " Hkv=" << p.kvHeads
      << " Lq=" << p.seqQ << " Lk=" << p.seqKV << " D=" << p.dqk << "/" << p.dv
      << " " << (p.io == ElementKind::BF16 ? "bf16" : "fp16") << ", blocks "
      << blockM << "x" << blockN << (p.pad ? ", padded rows" : "") << "\n";
  out << llvm::format("  compile %.1f ms, run %.3f ms\n", compileMs, runMs);
  if (!timingNote.empty())
    out << timingNote;
  if (!o.check)
    return 0;
  int rc = checkAgainstReference(p, refSpec, inputs, captures, o.tolerance, out,
                                 err);
  if (rc != 0 || !o.backward)
    return rc;
  return checkBackward(p, refSpec, inputs, captures, gradients, o.tolerance,
                       out, err);
}

namespace {

/// NVRTC-compiles the program's source, writes the cubin to -o and the spec
/// (source and launch plan, for runtimes that load it without MLIR: bench/
/// through the C API) next to it as <file>.json.
int writeCompiled(const RunOptions &o, const ProgramSpec &spec,
                  const std::string &summary, llvm::raw_ostream &out,
                  llvm::raw_ostream &err) {
  const std::string &arch = spec.arch, &source = spec.source;
  std::string name = spec.displayName();
  std::string cubin, log;
  auto start = std::chrono::steady_clock::now();
  if (Status s = kiln::compileToCubin(source, arch, name, cubin, log);
      !s.ok()) {
    err << "kiln: error: " << s.message() << "\n";
    return kInternalError;
  }
  double ms = millisecondsSince(start);
  std::error_code ec;
  llvm::raw_fd_ostream file(o.output, ec);
  if (ec) {
    err << "kiln: error: cannot write '" << o.output << "': " << ec.message()
        << "\n";
    return kBadInput;
  }
  file.write(cubin.data(), cubin.size());
  llvm::raw_fd_ostream specFile(o.output + ".json", ec);
  if (ec) {
    err << "kiln: error: cannot write '" << o.output
        << ".json': " << ec.message() << "\n";
    return kBadInput;
  }
  specFile << writeSpecJson(spec);
  out << "kiln compile: " << name << " for " << arch << ", " << cubin.size()
      << " bytes of cubin in " << llvm::format("%.1f", ms) << " ms (NVRTC), "
      << summary << " -> " << o.output << "\n";
  return 0;
}

} // namespace

int compileVariant(const RunOptions &o, llvm::raw_ostream &out,
                   llvm::raw_ostream &err) {
  Session session(err);
  OwningOpRef<ModuleOp> &module = session.module;
  if (int rc = loadVariant(o, session.context, session.sourceMgr, module,
                           session.spec, err))
    return rc;
  if (o.output.empty()) {
    err << "kiln: error: kiln compile needs -o <file.cubin>\n";
    return kBadInput;
  }
  std::string arch = o.arch.empty() ? "sm_90a" : o.arch;
  int64_t blockM = o.blockMGiven ? o.blockM : 0;
  int64_t blockN = o.blockNGiven ? o.blockN : 0;
  ProgramSpec spec;
  if (o.backward) {
    if (Status s =
            compileBackwardCUDA(*module, arch, o.backwardSchedule == "atomic",
                                spec, nullptr, o.overlapCopies, blockM, blockN);
        !s.ok()) {
      err << "kiln: error: " << s.message() << "\n";
      return kBadInput;
    }
  } else if (Status s = compileForwardCUDA(*module, arch, spec, nullptr,
                                           o.overlapCopies, blockM, blockN,
                                           o.prefetchNextStep);
             !s.ok()) {
    err << "kiln: error: " << s.message() << "\n";
    return kBadInput;
  }
  std::string summary = spec.kind;
  if (!spec.schedule.empty())
    summary += " (" + spec.schedule + ")";
  summary += ", " + std::to_string(spec.kernels.size()) + " kernel" +
             (spec.kernels.size() == 1 ? "" : "s") + ":";
  for (const KernelLaunch &k : spec.kernels)
    summary += " " + k.name + " (" + std::to_string(k.numThreads) +
               " threads, " + std::to_string(k.sharedBytes) +
               " bytes of shared memory)";
  return writeCompiled(o, spec, summary, out, err);
}

} // namespace kiln::driver
