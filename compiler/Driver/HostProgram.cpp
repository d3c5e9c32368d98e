//===- HostProgram.cpp - a variant JIT-compiled for the host (Kiln.h) -----===//

#include "kiln/Kiln.h"

#include "compiler/Driver/CPUProgram.h"
#include "compiler/Driver/CPURun.h"
#include "compiler/Driver/ProblemInputs.h"
#include "compiler/Driver/Variant.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <map>
#include <mutex>

using namespace mlir;

namespace kiln {

struct HostProgram::Impl {
  // The engine's code stays valid after the module is gone; the context is
  // kept because the engine was built in it.
  std::unique_ptr<MLIRContext> context;
  driver::CPUPrograms programs;
  std::string backwardError; ///< set when only the forward was lowered
  std::mutex runMutex;
};

HostProgram::HostProgram() : impl_(std::make_unique<Impl>()) {}
HostProgram::~HostProgram() = default;

Status HostProgram::compile(const Variant &variant,
                            const CompileOptions &options,
                            std::unique_ptr<HostProgram> &program) {
  auto result = std::unique_ptr<HostProgram>(new HostProgram());
  Impl &impl = *result->impl_;
  // No thread pool: the context only outlives the JIT compile, and each
  // kept program would otherwise park one thread per core.
  impl.context = std::make_unique<MLIRContext>(driver::kilnRegistry(),
                                               MLIRContext::Threading::DISABLED);
  impl.context->loadAllAvailableDialects();
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
  // The passes' diagnostics, for the error (not the process's stderr).
  std::string diagnostics;
  auto lower = [&](bool backward) -> Status {
    OwningOpRef<ModuleOp> module;
    if (Status s = driver::parseVariantText(*impl.context, variant.mlir,
                                            variant.name, specialization,
                                            module);
        !s.ok())
      return s;
    diagnostics.clear();
    llvm::raw_string_ostream diagStream(diagnostics);
    ScopedDiagnosticHandler handler(impl.context.get(), [&](Diagnostic &d) {
      diagStream << d.getLocation() << ": " << d << "\n";
      return success();
    });
    // `kiln run --backend cpu [--backward]`'s lowering: default tiles and
    // schedule, both programs in one JIT-compiled module.
    driver::RunOptions o;
    o.backward = backward;
    o.captureGradients = options.captureGradients;
    o.deterministicCaptureGradients = options.deterministicCaptureGradients;
    impl.programs = driver::CPUPrograms();
    std::string printed, errors;
    llvm::raw_string_ostream out(printed), err(errors);
    if (driver::compileForCPU(*module, o, impl.programs, out, err))
      return Status::error(
          "lowering the variant for the CPU failed" +
          (errors.empty() ? std::string() : ": " + errors) +
          (diagnostics.empty() ? std::string() : ":\n" + diagnostics));
    return Status();
  };
  if (Status s = lower(/*backward=*/true); !s.ok()) {
    // A score_mod the backward cannot differentiate (math.erf, ...) still
    // has a forward; its backward reports why it is missing.
    Status forwardOnly = lower(/*backward=*/false);
    if (!forwardOnly.ok())
      return forwardOnly;
    impl.backwardError = "the variant has no backward: " + s.message();
  }
  program = std::move(result);
  return Status();
}

const ProgramSpec &HostProgram::plan(Kind kind) const {
  return kind == Kind::Forward ? impl_->programs.forward
                               : impl_->programs.backward;
}

Status HostProgram::run(Kind kind, const std::vector<NamedTensor> &tensors,
                        const std::vector<TensorRef> &captures,
                        const SymbolValues &overrides) const {
  // Views of the caller's memory; runPlanOnCPU checks them against the plan
  // (names, dtypes, shapes, strides) before any kernel runs.
  std::vector<driver::HostBuffer> views;
  views.reserve(tensors.size());
  std::map<std::string, driver::HostBuffer *> named;
  for (const NamedTensor &t : tensors) {
    if (named.count(t.name))
      return Status::error("tensor '" + t.name + "' is given twice");
    views.push_back(driver::HostBuffer::view(driver::hostKind(t.tensor.dtype),
                                             t.tensor.data, t.tensor.sizes,
                                             t.tensor.strides));
    named[t.name] = &views.back();
  }
  std::vector<driver::HostBuffer> captureViews;
  for (const TensorRef &c : captures)
    captureViews.push_back(driver::HostBuffer::view(
        driver::hostKind(c.dtype), c.data, c.sizes, c.strides));
  if (kind == Kind::Backward && !impl_->backwardError.empty())
    return Status::error(impl_->backwardError);
  std::lock_guard<std::mutex> lock(impl_->runMutex);
  std::string error;
  if (!driver::runPlanOnCPU(*impl_->programs.kernel, plan(kind), named,
                            captureViews, error, overrides))
    return Status::error(error);
  return Status();
}

} // namespace kiln
