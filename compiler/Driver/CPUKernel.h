//===- CPUKernel.h - a tile program JIT-compiled for the host ---*- C++ -*-===//

#ifndef KILN_COMPILER_DRIVER_CPUKERNEL_H
#define KILN_COMPILER_DRIVER_CPUKERNEL_H

#include "compiler/Driver/HostBuffer.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

#include <array>
#include <memory>
#include <string>
#include <variant>

namespace kiln::driver {

/// A module lowered to the LLVM dialect by the CPU pipeline, compiled with
/// MLIR's ExecutionEngine; `launch` calls one of its `<kernel>_grid`
/// launchers (CPUProgram runs a whole plan).
class CPUKernel {
public:
  static std::unique_ptr<CPUKernel> compile(mlir::ModuleOp module,
                                            std::string &error);

  /// One argument of a launcher: an array, or an i64 scalar.
  using Arg = std::variant<HostBuffer *, int64_t>;

  /// Runs the whole grid of `launcher`: its arguments in order, then the
  /// grid size.
  bool launch(llvm::StringRef launcher, llvm::ArrayRef<Arg> args,
              std::array<int64_t, 3> grid, std::string &error);

private:
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_CPUKERNEL_H
