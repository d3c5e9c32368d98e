//===- CUDACompile.h - attn variant -> CUDA kernel spec ---------*- C++ -*-===//

#ifndef KILN_COMPILER_DRIVER_CUDACOMPILE_H
#define KILN_COMPILER_DRIVER_CUDACOMPILE_H

#include "kiln/Runtime.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln::driver {

/// Lowers the single attn.attention of `module` (consumed) through the CUDA
/// pipeline for `arch` and emits its kernel. `tgpuIR` / `cudaSource`, when
/// given, receive the scheduled IR and the CUDA C++.
Status compileForwardCUDA(mlir::ModuleOp module, const std::string &arch,
                          ForwardKernelSpec &spec,
                          std::string *tgpuIR = nullptr,
                          bool overlapCopies = true, int64_t blockM = 0,
                          int64_t blockN = 0, bool prefetchNextStep = true);

/// Lowers the single attn.attention of `module` through the backward CUDA
/// pipeline (two-kernel, or atomic dQ with `atomicDQ`) and emits its
/// kernels into one source.
Status compileBackwardCUDA(mlir::ModuleOp module, const std::string &arch,
                           bool atomicDQ, BackwardKernelSpec &spec,
                           std::string *tgpuIR = nullptr,
                           bool overlapCopies = true, int64_t blockM = 0,
                           int64_t blockN = 0);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_CUDACOMPILE_H
