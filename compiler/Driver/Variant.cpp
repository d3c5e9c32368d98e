//===- Variant.cpp - parse, select and specialise a variant ---------------===//

#include "compiler/Driver/Variant.h"

#include "compiler/Driver/ReferenceCheck.h"
#include "compiler/Pipelines/Registration.h"
#include "dialects/Attn/IR/AttnAttrNames.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

namespace kiln::driver {

Status selectAndSpecialize(ModuleOp module, const std::string &name,
                           const VariantSpecialization &s,
                           attn::AttentionOp &chosen) {
  SmallVector<attn::AttentionOp> all;
  module.walk([&](attn::AttentionOp op) { all.push_back(op); });
  chosen = nullptr;
  if (all.empty())
    return Status::error("the input has no attn.attention op");
  if (name.empty()) {
    if (all.size() > 1) {
      std::string names;
      for (attn::AttentionOp op : all)
        names += (names.empty() ? "" : ", ") + op.getSymName().str();
      return Status::error("the input has " + std::to_string(all.size()) +
                           " attn.attention ops; pick one by name (" + names +
                           ")");
    }
    chosen = all.front();
  } else {
    for (attn::AttentionOp op : all)
      if (op.getSymName() == name)
        chosen = op;
    if (!chosen)
      return Status::error("no attn.attention named '" + name + "'");
  }
  for (attn::AttentionOp op : all)
    if (op != chosen)
      op.erase();

  Builder b(module.getContext());
  if (s.headDim > 0) {
    bool sameDims = chosen.getQkHeadDim() == chosen.getVHeadDim();
    chosen.setQkHeadDim(s.headDim);
    if (s.headDimV <= 0 && sameDims)
      chosen.setVHeadDim(s.headDim);
  }
  if (s.headDimV > 0)
    chosen.setVHeadDim(s.headDimV);
  if (s.pageSize > 0)
    chosen.setPageSize(s.pageSize);
  if (s.dropoutP > 0)
    chosen.setDropoutPAttr(b.getF64FloatAttr(s.dropoutP));
  if (s.dropoutBits > 0) {
    // A width for no dropout is a mistake, not a no-op.
    if (!chosen.hasDropout())
      return Status::error("dropout_bits " + std::to_string(s.dropoutBits) +
                           " needs dropout: the variant has no dropout_p "
                           "(give one, e.g. --dropout P)");
    chosen.setDropoutBitsAttr(b.getI64IntegerAttr(s.dropoutBits));
  }
  if (s.varlen)
    chosen.setVarlen(true);
  if (s.blockSparseQ > 0 || s.blockSparseKV > 0)
    chosen.setBlockSparse(ArrayRef<int64_t>{s.blockSparseQ, s.blockSparseKV});
  if (s.buildBlockMask) {
    if (!chosen.getBlockSparse())
      return Status::error("building a block mask needs a block-sparse "
                           "variant (block_sparse, or --block-sparse)");
    chosen->setAttr(attn::attrs::kBuildBlockMask, b.getUnitAttr());
  }
  if (s.dtype == "bf16")
    chosen.setElementType(b.getBF16Type());
  else if (s.dtype == "fp16")
    chosen.setElementType(b.getF16Type());
  else if (!s.dtype.empty())
    return Status::error("dtype must be bf16 or fp16, got '" + s.dtype + "'");
  if (failed(verify(module)))
    return Status::error("the variant is invalid");
  return Status();
}

DialectRegistry kilnRegistry() {
  DialectRegistry registry;
  registerKilnDialects(registry);
  return registry;
}

VariantSession::VariantSession(llvm::raw_ostream &err)
    : context(kilnRegistry()), diagnostics(sourceMgr, &context, err) {
  context.loadAllAvailableDialects();
}

Status parseVariantText(MLIRContext &context, const std::string &text,
                        const std::string &name,
                        const VariantSpecialization &s,
                        OwningOpRef<ModuleOp> &module) {
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagStream << d.getLocation() << ": " << d << "\n";
    return success();
  });
  module = parseSourceString<ModuleOp>(text, &context, "variant");
  if (!module)
    return Status::error("the variant does not parse:\n" + diagnostics);
  attn::AttentionOp chosen;
  if (Status st = selectAndSpecialize(*module, name, s, chosen); !st.ok()) {
    module = nullptr;
    return Status::error(st.message() +
                         (diagnostics.empty() ? "" : ":\n" + diagnostics));
  }
  return Status();
}

int VariantSession::load(const std::string &path, const std::string &name,
                         const VariantSpecialization &s,
                         llvm::raw_ostream &err) {
  module = parseSourceFile<ModuleOp>(path, sourceMgr, &context);
  if (!module) {
    err << "kiln: error: could not read a valid module from '" << path << "'\n";
    return kBadInput;
  }
  if (Status st = selectAndSpecialize(*module, name, s, spec); !st.ok()) {
    err << "kiln: error: " << st.message() << "\n";
    return kBadInput;
  }
  return 0;
}

} // namespace kiln::driver
