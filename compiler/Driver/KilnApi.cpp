//===- KilnApi.cpp - Kiln's C++ JIT API (kiln/Kiln.h) ---------------------===//

#include "kiln/Kiln.h"

#include "compiler/Driver/CUDACompile.h"
#include "compiler/Pipelines/Registration.h"
#include "dialects/Attn/IR/AttnDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <fstream>
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

Status compileSpec(const Variant &variant, const CompileOptions &options,
                   ForwardKernelSpec &spec) {
  if (options.arch.empty())
    return Status::error("compileSpec needs an arch (sm_80 or sm_90a)");
  DialectRegistry registry;
  registerKilnDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagStream << d.getLocation() << ": " << d << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(variant.mlir, &context, "variant");
  if (!module)
    return Status::error("the variant does not parse:\n" + diagnostics);
  SmallVector<attn::AttentionOp> all;
  module->walk([&](attn::AttentionOp op) { all.push_back(op); });
  attn::AttentionOp chosen;
  for (attn::AttentionOp op : all)
    if (variant.name.empty() ? all.size() == 1
                             : op.getSymName() == variant.name)
      chosen = op;
  if (!chosen)
    return Status::error(variant.name.empty()
                             ? "the variant text must hold exactly one "
                               "attn.attention (or name one)"
                             : "no attn.attention named '" + variant.name +
                                   "'");
  for (attn::AttentionOp op : all)
    if (op != chosen)
      op.erase();
  Builder b(&context);
  if (options.headDim > 0) {
    chosen.setQkHeadDim(options.headDim);
    chosen.setVHeadDim(options.headDim);
  }
  if (options.dtype == "bf16")
    chosen.setElementType(b.getBF16Type());
  else if (options.dtype == "fp16")
    chosen.setElementType(b.getF16Type());
  else if (!options.dtype.empty())
    return Status::error("dtype must be bf16 or fp16, got '" + options.dtype +
                         "'");
  if (failed(verify(*module)))
    return Status::error("the variant is invalid:\n" + diagnostics);
  return driver::compileForwardCUDA(*module, options.arch, spec);
}

Status compile(const Variant &variant, const CompileOptions &options,
               std::unique_ptr<ForwardKernel> &kernel) {
  CompileOptions resolved = options;
  if (resolved.arch.empty()) {
    if (Status s = cuda::init(options.device); !s.ok())
      return s;
    std::string name;
    if (Status s = deviceArch(options.device, resolved.arch, name); !s.ok())
      return s;
  }
  ForwardKernelSpec spec;
  if (Status s = compileSpec(variant, resolved, spec); !s.ok())
    return s;
  return ForwardKernel::load(spec, options.device, kernel);
}

} // namespace kiln
