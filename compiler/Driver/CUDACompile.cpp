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

Status compileForwardCUDA(ModuleOp module, const std::string &arch,
                          ForwardKernelSpec &spec, std::string *tgpuIR,
                          bool overlapCopies, int64_t blockM, int64_t blockN,
                          bool prefetchNextStep) {
  auto specs = module.getOps<attn::AttentionOp>();
  if (std::distance(specs.begin(), specs.end()) != 1)
    return Status::error("compile exactly one attn.attention at a time");
  attn::AttentionOp op = *specs.begin();
  spec.variant = op.getSymName().str();
  spec.arch = arch;
  spec.headDimQK = op.getQkHeadDim();
  spec.headDimV = op.getVHeadDim();
  spec.gqaGroup = op.getGqaGroup();
  spec.dtype = dtypeOf(op.getElementType());
  // mma.m16n8k16 steps over 16 columns; the accumulator (BLOCK_M x D_v f32
  // over 128 threads) fits the register file up to 256.
  for (int64_t d : {spec.headDimQK, spec.headDimV})
    if (d % 16 != 0 || d > 256)
      return Status::error("the GPU backend supports head dims that are "
                           "multiples of 16 up to 256; '" +
                           spec.variant + "' has " +
                           std::to_string(spec.headDimQK) + "/" +
                           std::to_string(spec.headDimV));
  spec.captures.clear();
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
    spec.captures.push_back(std::move(c));
  }

  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    diagStream << d.getLocation() << ": " << d << "\n";
    return success();
  });
  CUDAPipelineOptions options;
  options.arch = arch;
  options.overlapCopies = overlapCopies;
  options.blockM = blockM;
  options.blockN = blockN;
  options.prefetchNextStep = prefetchNextStep;
  PassManager pm(module.getContext());
  int64_t elementBytes = 2;
  buildCUDAForwardPipeline(pm, options, spec.headDimQK, spec.headDimV,
                           elementBytes);
  if (failed(pm.run(module)))
    return Status::error("lowering '" + spec.variant +
                         "' for the GPU failed:\n" + diagnostics);
  if (tgpuIR) {
    llvm::raw_string_ostream os(*tgpuIR);
    module.print(os);
  }
  std::vector<EmittedKernel> kernels;
  spec.source.clear();
  llvm::raw_string_ostream source(spec.source);
  if (failed(emitCUDA(module, source, &kernels)) || kernels.size() != 1)
    return Status::error("emitting CUDA for '" + spec.variant + "' failed:\n" +
                         diagnostics);
  spec.kernelName = kernels[0].name;
  spec.numThreads = kernels[0].numThreads;
  spec.sharedBytes = kernels[0].sharedBytes;
  spec.blockM = kernels[0].blockM;
  return Status();
}

} // namespace kiln::driver
