//===- CUDACompile.cpp - attn variant -> CUDA kernel spec -----------------===//

#include "compiler/Driver/CUDACompile.h"

#include "compiler/Emit/CUDA/EmitCUDA.h"
#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Attn/IR/AttnDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace kiln::driver {

static DType dtypeOf(Type t) {
  if (t.isBF16())
    return DType::BF16;
  if (t.isF16())
    return DType::F16;
  if (t.isF64())
    return DType::F64;
  if (t.isInteger(32))
    return DType::I32;
  if (t.isInteger(64) || t.isIndex())
    return DType::I64;
  return DType::F32;
}

namespace {

/// What every kernel spec of a variant shares (ForwardKernelSpec and
/// BackwardKernelSpec name these fields alike): its name, head dims, GQA
/// group, dtype and captures, checked against what the GPU backend supports.
template <typename Spec>
Status describeVariant(ModuleOp module, const std::string &arch, Spec &info) {
  info.arch = arch;
  auto specs = module.getOps<attn::AttentionOp>();
  if (std::distance(specs.begin(), specs.end()) != 1)
    return Status::error("compile exactly one attn.attention at a time");
  attn::AttentionOp op = *specs.begin();
  info.variant = op.getSymName().str();
  info.headDimQK = op.getQkHeadDim();
  info.headDimV = op.getVHeadDim();
  info.gqaGroup = op.getGqaGroup();
  info.dtype = dtypeOf(op.getElementType());
  // mma.m16n8k16 steps over 16 columns; the accumulator (BLOCK_M x D_v f32
  // over 128 threads) fits the register file up to 256.
  for (int64_t d : {info.headDimQK, info.headDimV})
    if (d % 16 != 0 || d > 256)
      return Status::error("the GPU backend supports head dims that are "
                           "multiples of 16 up to 256; '" +
                           info.variant + "' has " +
                           std::to_string(info.headDimQK) + "/" +
                           std::to_string(info.headDimV));
  info.captures.clear();
  for (attn::CaptureAttr capture : op.getCaptureDecls()) {
    CaptureSpec c;
    c.name = capture.getName().str();
    Type elt = capture.getType().getElementType();
    if (!elt.isF32() && !elt.isF64() && !elt.isInteger(32) &&
        !elt.isInteger(64))
      return Status::error("capture '" + c.name +
                           "' holds an element type "
                           "the GPU backend does not pass (f32, f64, i32, "
                           "i64)");
    c.dtype = dtypeOf(elt);
    for (Attribute dim : capture.getDims()) {
      if (auto name = dyn_cast<StringAttr>(dim))
        c.dims.push_back(name.str());
      else
        c.dims.push_back(std::to_string(cast<IntegerAttr>(dim).getInt()));
    }
    info.captures.push_back(std::move(c));
  }
  return Status();
}

/// The options both GPU pipelines take from the driver.
void setPipelineOptions(CUDAPipelineOptions &options, const std::string &arch,
                        bool overlapCopies, int64_t blockM, int64_t blockN) {
  options.arch = arch;
  options.overlapCopies = overlapCopies;
  options.blockM = blockM;
  options.blockN = blockN;
}

/// Runs `pm` over `module` and emits its scheduled kernels.
Status lowerAndEmit(ModuleOp module, PassManager &pm, const std::string &what,
                    std::string *tgpuIR, std::string &source,
                    std::vector<EmittedKernel> &kernels) {
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    diagStream << d.getLocation() << ": " << d << "\n";
    return success();
  });
  if (failed(pm.run(module)))
    return Status::error("lowering '" + what + "' for the GPU failed:\n" +
                         diagnostics);
  if (tgpuIR) {
    llvm::raw_string_ostream os(*tgpuIR);
    module.print(os);
  }
  source.clear();
  llvm::raw_string_ostream os(source);
  if (failed(emitCUDA(module, os, &kernels)))
    return Status::error("emitting CUDA for '" + what + "' failed:\n" +
                         diagnostics);
  return Status();
}

} // namespace

Status compileForwardCUDA(ModuleOp module, const std::string &arch,
                          ForwardKernelSpec &spec, std::string *tgpuIR,
                          bool overlapCopies, int64_t blockM, int64_t blockN,
                          bool prefetchNextStep) {
  if (Status s = describeVariant(module, arch, spec); !s.ok())
    return s;
  CUDAPipelineOptions options;
  setPipelineOptions(options, arch, overlapCopies, blockM, blockN);
  options.prefetchNextStep = prefetchNextStep;
  PassManager pm(module.getContext());
  int64_t elementBytes = 2;
  buildCUDAForwardPipeline(pm, options, spec.headDimQK, spec.headDimV,
                           elementBytes);
  std::vector<EmittedKernel> kernels;
  if (Status s =
          lowerAndEmit(module, pm, spec.variant, tgpuIR, spec.source, kernels);
      !s.ok())
    return s;
  if (kernels.size() != 1)
    return Status::error("expected one forward kernel for '" + spec.variant +
                         "', emitted " + std::to_string(kernels.size()));
  spec.kernelName = kernels[0].name;
  spec.numThreads = kernels[0].numThreads;
  spec.sharedBytes = kernels[0].sharedBytes;
  spec.blockM = kernels[0].blockM;
  return Status();
}

Status compileBackwardCUDA(ModuleOp module, const std::string &arch,
                           bool atomicDQ, BackwardKernelSpec &spec,
                           std::string *tgpuIR, bool overlapCopies,
                           int64_t blockM, int64_t blockN) {
  if (Status s = describeVariant(module, arch, spec); !s.ok())
    return s;
  spec.atomicDQ = atomicDQ;
  CUDAPipelineOptions options;
  setPipelineOptions(options, arch, overlapCopies, blockM, blockN);
  options.backwardSchedule = atomicDQ ? "atomic" : "two-kernel";
  PassManager pm(module.getContext());
  buildCUDABackwardPipeline(pm, options, spec.headDimQK, spec.headDimV);
  std::vector<EmittedKernel> kernels;
  if (Status s =
          lowerAndEmit(module, pm, spec.variant, tgpuIR, spec.source, kernels);
      !s.ok())
    return s;
  spec.preprocess = spec.dq = spec.dkdv = spec.convert = KernelEntry();
  for (const EmittedKernel &k : kernels) {
    KernelEntry entry{k.name, k.numThreads, k.sharedBytes};
    StringRef name(k.name);
    if (name.ends_with("_bwd_preprocess"))
      spec.preprocess = entry;
    else if (name.ends_with("_bwd_dq"))
      spec.dq = entry;
    else if (name.ends_with("_bwd_dkdv"))
      spec.dkdv = entry;
    else if (name.ends_with("_bwd_dq_convert"))
      spec.convert = entry;
    else
      return Status::error("unexpected backward kernel '" + k.name + "'");
  }
  ForwardTiles tiles =
      chooseBackwardTiles(spec.headDimQK, spec.headDimV, blockM, blockN);
  spec.blockM = tiles.blockM;
  spec.blockN = tiles.blockN;
  if (spec.preprocess.name.empty() || spec.dkdv.name.empty() ||
      (atomicDQ ? spec.convert.name.empty() : spec.dq.name.empty()))
    return Status::error("the backward lowering of '" + spec.variant +
                         "' did not produce every kernel of its schedule");
  return Status();
}

} // namespace kiln::driver
