//===- CUDARun.h - `kiln run --backend cuda` --------------------*- C++ -*-===//
//
// The GPU's part of a run: the variant's forward (and backward) programs
// compiled for the device's arch, or one stage printed for -emit; then the
// forward on device 0 (the backward: CUDABackwardRun.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_CUDARUN_H
#define KILN_COMPILER_DRIVER_CUDARUN_H

#include "compiler/Driver/ReferenceCheck.h"
#include "compiler/Driver/RunOptions.h"

#include "kiln/LaunchPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace kiln::driver {

/// The forward and (with --backward) backward programs of a variant.
struct CUDAPrograms {
  ProgramSpec forward, backward;
  double loweringMs = 0;
};

/// Compiles the (specialised) variant in `module` (consumed) for the GPU:
/// --arch, else device 0's when running, else sm_90a; the backward from
/// `variant`, an unlowered copy. Returns an exit code when the run ends
/// here: a stage printed for -emit=tgpu|cuda (0) or a failure.
std::optional<int> compileForCUDA(mlir::ModuleOp module, mlir::ModuleOp variant,
                                  const RunOptions &o, CUDAPrograms &programs,
                                  llvm::raw_ostream &out,
                                  llvm::raw_ostream &err);

/// Compiles (or loads from the cache) and runs the forward on device 0,
/// copying inputs in and results back into `in`; with --repeats, times it.
int runOnCUDA(const ProgramSpec &spec, const Problem &p, Inputs &in,
              std::vector<HostBuffer> &captures, const RunOptions &o,
              double &compileMs, double &runMs, std::string &note,
              llvm::raw_ostream &err);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_CUDARUN_H
