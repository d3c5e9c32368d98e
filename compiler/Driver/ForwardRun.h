//===- ForwardRun.h - `kiln run`: lower, JIT, check -------------*- C++ -*-===//

#ifndef KILN_COMPILER_DRIVER_FORWARDRUN_H
#define KILN_COMPILER_DRIVER_FORWARDRUN_H

#include "compiler/Driver/RunOptions.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln::driver {

/// Runs `kiln run` with parsed options: prints a stage's IR (-emit), or
/// lowers the variant, runs it on random inputs and, with --check, compares
/// against the float64 reference. Returns the process exit code: 0 on
/// success, 1 on a numerical mismatch, 2 on bad input, 3 when compiling or
/// running a valid input fails (an internal error).
int runForward(const RunOptions &options, llvm::raw_ostream &out,
               llvm::raw_ostream &err);

/// `kiln compile`: emits the variant's CUDA kernel and compiles it with
/// NVRTC for --arch (default sm_90a) into -o; needs no GPU.
int compileVariant(const RunOptions &options, llvm::raw_ostream &out,
                   llvm::raw_ostream &err);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_FORWARDRUN_H
