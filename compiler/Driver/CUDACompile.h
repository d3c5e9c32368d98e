//===- CUDACompile.h - attn variant -> CUDA kernel spec ---------*- C++ -*-===//

#ifndef KILN_COMPILER_DRIVER_CUDACOMPILE_H
#define KILN_COMPILER_DRIVER_CUDACOMPILE_H

#include "kiln/Runtime.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln::driver {

/// Lowers the single attn.attention of `module` (consumed) through the CUDA
/// pipeline for `arch`: `spec` receives the emitted source and the launch
/// plan of the forward program. `tgpuIR`, when given, receives the
/// scheduled IR.
Status compileForwardCUDA(mlir::ModuleOp module, const std::string &arch,
                          ProgramSpec &spec, std::string *tgpuIR = nullptr,
                          bool overlapCopies = true, int64_t blockM = 0,
                          int64_t blockN = 0, bool prefetchNextStep = true,
                          bool fastMath = true);

/// Lowers the single attn.attention of `module` through the backward CUDA
/// pipeline (two-kernel, or atomic dQ with `atomicDQ`) and emits its
/// kernels into one source.
Status compileBackwardCUDA(mlir::ModuleOp module, const std::string &arch,
                           bool atomicDQ, ProgramSpec &spec,
                           std::string *tgpuIR = nullptr,
                           bool overlapCopies = true, int64_t blockM = 0,
                           int64_t blockN = 0, bool fastMath = true);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_CUDACOMPILE_H
