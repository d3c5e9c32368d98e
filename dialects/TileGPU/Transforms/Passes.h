//===- Passes.h - tgpu schedule passes --------------------------*- C++ -*-===//

#ifndef KILN_DIALECTS_TILEGPU_TRANSFORMS_PASSES_H
#define KILN_DIALECTS_TILEGPU_TRANSFORMS_PASSES_H

#include "dialects/TileGPU/IR/TileGPUDialect.h"
#include "mlir/Pass/Pass.h"

namespace kiln::tgpu {

#define GEN_PASS_DECL
#include "dialects/TileGPU/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/TileGPU/Transforms/Passes.h.inc"

} // namespace kiln::tgpu

#endif // KILN_DIALECTS_TILEGPU_TRANSFORMS_PASSES_H
