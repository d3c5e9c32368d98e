//===- KilnApi.cpp - Kiln's C++ JIT API (kiln/Kiln.h) ---------------------===//

#include "kiln/Kiln.h"

#include "compiler/Driver/CUDACompile.h"
#include "compiler/Driver/Variant.h"
#include "compiler/Pipelines/Registration.h"
#include "dialects/Attn/IR/AttnDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <fstream>
#include <functional>
#include <sstream>

using namespace mlir;

namespace kiln {

Status loadVariantFile(const std::string &path, Variant &variant) {
  std::ifstream in(path);
  if (!in)
    return Status::error("cannot read variant file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  variant.mlir = text.str();
  return Status();
}

namespace {

/// Parses `variant`, keeps only the chosen attn.attention and applies the
/// head-dim / dtype overrides of `options`; then runs `lower` on the module.
Status withVariantModule(const Variant &variant, const CompileOptions &options,
                         const std::function<Status(ModuleOp)> &lower) {
  if (options.arch.empty())
    return Status::error("compiling a spec needs an arch (sm_80 or sm_90a)");
  MLIRContext context(driver::kilnRegistry());
  context.loadAllAvailableDialects();
  driver::VariantSpecialization specialization;
  specialization.headDim = options.headDim;
  specialization.headDimV = options.headDimV;
  specialization.dtype = options.dtype;
  specialization.pageSize = options.pageSize;
  specialization.dropoutP = options.dropoutP;
  specialization.dropoutBits = options.dropoutBits;
  specialization.varlen = options.varlen;
  specialization.blockSparseQ = options.blockSparse[0];
  specialization.blockSparseKV = options.blockSparse[1];
  specialization.buildBlockMask = options.buildBlockMask;
  OwningOpRef<ModuleOp> module;
  if (Status s = driver::parseVariantText(context, variant.mlir, variant.name,
                                          specialization, module);
      !s.ok())
    return s;
  return lower(*module);
}

/// `options` with the arch of its device filled in when none is given.
Status resolveArch(const CompileOptions &options, CompileOptions &resolved) {
  resolved = options;
  if (!resolved.arch.empty())
    return Status();
  if (Status s = cuda::init(options.device); !s.ok())
    return s;
  std::string name;
  return deviceArch(options.device, resolved.arch, name);
}

} // namespace

Status compileSpec(const Variant &variant, const CompileOptions &options,
                   ProgramSpec &spec) {
  return withVariantModule(variant, options, [&](ModuleOp module) {
    return driver::compileForwardCUDA(module, options.arch, spec);
  });
}

Status compile(const Variant &variant, const CompileOptions &options,
               std::unique_ptr<ForwardKernel> &kernel) {
  CompileOptions resolved;
  if (Status s = resolveArch(options, resolved); !s.ok())
    return s;
  ProgramSpec spec;
  if (Status s = compileSpec(variant, resolved, spec); !s.ok())
    return s;
  return ForwardKernel::load(spec, options.device, kernel);
}

Status compileBackwardSpec(const Variant &variant,
                           const CompileOptions &options,
                           BackwardSchedule schedule, ProgramSpec &spec) {
  return withVariantModule(variant, options, [&](ModuleOp module) {
    driver::ScheduleChoices choices;
    choices.captureGradients = options.captureGradients;
    choices.deterministicCaptureGradients =
        options.deterministicCaptureGradients;
    return driver::compileBackwardCUDA(
        module, options.arch,
        schedule == BackwardSchedule::AtomicDQ        ? "atomic"
        : schedule == BackwardSchedule::TwoKernel     ? "two-kernel"
        : schedule == BackwardSchedule::Deterministic ? "deterministic"
                                                      : "auto",
        spec, choices);
  });
}

Status compileBackward(const Variant &variant, const CompileOptions &options,
                       BackwardSchedule schedule,
                       std::unique_ptr<BackwardKernel> &kernel) {
  CompileOptions resolved;
  if (Status s = resolveArch(options, resolved); !s.ok())
    return s;
  ProgramSpec spec;
  if (Status s = compileBackwardSpec(variant, resolved, schedule, spec);
      !s.ok())
    return s;
  return BackwardKernel::load(spec, options.device, kernel);
}

} // namespace kiln
