//===- Passes.h - attn dialect passes ---------------------------*- C++ -*-===//

#ifndef KILN_DIALECTS_ATTN_TRANSFORMS_PASSES_H
#define KILN_DIALECTS_ATTN_TRANSFORMS_PASSES_H

#include "dialects/Attn/IR/AttnDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln::attn {

#define GEN_PASS_DECL
#include "dialects/Attn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/Attn/Transforms/Passes.h.inc"

} // namespace kiln::attn

#endif // KILN_DIALECTS_ATTN_TRANSFORMS_PASSES_H
