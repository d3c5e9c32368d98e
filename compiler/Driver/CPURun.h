//===- CPURun.h - `kiln run --backend cpu` ----------------------*- C++ -*-===//
//
// The CPU backend's part of a run: the tile program, its launch plans and
// its lowering to LLVM (or one of them printed, for -emit), then the plans
// run by the ExecutionEngine.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_CPURUN_H
#define KILN_COMPILER_DRIVER_CPURUN_H

#include "compiler/Driver/CPUKernel.h"
#include "compiler/Driver/ReferenceCheck.h"
#include "compiler/Driver/RunOptions.h"

#include "kiln/LaunchPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>

namespace kiln::driver {

/// A variant lowered for the CPU: its JIT-compiled module and the plans of
/// its forward and (with --backward) backward programs.
struct CPUPrograms {
  std::unique_ptr<CPUKernel> kernel;
  ProgramSpec forward, backward;
  double loweringMs = 0, compileMs = 0;
};

/// Lowers the (specialised) variant in `module` for the CPU and JIT-compiles
/// it. Returns an exit code when the run ends here: a stage printed for
/// -emit=tile|llvm (0) or a failure (after a message on `err`).
std::optional<int> compileForCPU(mlir::ModuleOp module, const RunOptions &o,
                                 CPUPrograms &programs, llvm::raw_ostream &out,
                                 llvm::raw_ostream &err);

/// Runs the forward plan, and the backward's after it with --backward
/// (random dO into `g`); 0 or an exit code after a message.
int runOnCPU(CPUPrograms &programs, const RunOptions &o, const Problem &p,
             Inputs &in, std::vector<HostBuffer> &captures, Gradients &g,
             double &runMs, llvm::raw_ostream &err);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_CPURUN_H
