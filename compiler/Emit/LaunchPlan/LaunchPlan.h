//===- LaunchPlan.h - a tile program's launch plan --------------*- C++ -*-===//
//
// Reads the launch attributes of a module's kernels (TileAttrNames.h: grid,
// argument roles and shapes; after scheduling, TileGPUAttrNames.h: warps and
// shared memory) into the runtime's ProgramSpec. Works on tile-level IR (the
// CPU backend runs the plan through its `_grid` launchers) and on scheduled
// tgpu-level IR (the CUDA backend, which also learns which tensors are
// copied with cp.async and so need 16-byte aligned rows).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_EMIT_LAUNCHPLAN_LAUNCHPLAN_H
#define KILN_COMPILER_EMIT_LAUNCHPLAN_LAUNCHPLAN_H

#include "kiln/LaunchPlan.h"

#include "mlir/IR/BuiltinOps.h"

namespace kiln {

/// The plan of the module's kernels of `kind` ("forward": kernels without a
/// backward stage; "backward": those with one), in module order, which is
/// their launch order. Fails with a diagnostic on a kernel without launch
/// attributes or with arguments that disagree between kernels. `source`,
/// `arch` and the schedule are left to the caller.
mlir::LogicalResult buildLaunchPlan(mlir::ModuleOp module, llvm::StringRef kind,
                                    ProgramSpec &plan);

/// Registers `--emit-launch-plan` for kiln-translate: the plans of a module
/// (forward, then backward, whichever it has) as JSON specs without source.
void registerEmitLaunchPlanTranslation();

} // namespace kiln

#endif // KILN_COMPILER_EMIT_LAUNCHPLAN_LAUNCHPLAN_H
