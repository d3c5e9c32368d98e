//===- EmitCUDA.h - print CUDA C++ from tgpu-level IR -----------*- C++ -*-===//

#ifndef KILN_COMPILER_EMIT_CUDA_EMITCUDA_H
#define KILN_COMPILER_EMIT_CUDA_EMITCUDA_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln {

/// Prints every scheduled kernel (a func.func with tgpu.num_warps) of
/// `module` as CUDA C++ that includes the device library "kiln/kiln.cuh".
/// Fails with a diagnostic on an op the emitter cannot print. How the
/// kernels are launched is the launch plan's (compiler/Emit/LaunchPlan).
mlir::LogicalResult emitCUDA(mlir::ModuleOp module, llvm::raw_ostream &os);

/// Registers `--emit-cuda` for kiln-translate.
void registerEmitCUDATranslation();

} // namespace kiln

#endif // KILN_COMPILER_EMIT_CUDA_EMITCUDA_H
