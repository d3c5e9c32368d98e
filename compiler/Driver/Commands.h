//===- Commands.h - the `kiln` driver's commands ----------------*- C++ -*-===//

#ifndef KILN_COMPILER_DRIVER_COMMANDS_H
#define KILN_COMPILER_DRIVER_COMMANDS_H

#include "compiler/Driver/RunOptions.h"
#include "compiler/Driver/Variant.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln::driver {

/// `kiln run` (RunCommand.cpp): prints a stage's IR (-emit), or lowers the
/// variant for the backend, runs it on random inputs and, with --check,
/// compares against the float64 reference. Returns the process exit code: 0
/// on success, 1 on a numerical mismatch, 2 on bad input, 3 when compiling
/// or running a valid input fails (an internal error).
int runCommand(const RunOptions &options, llvm::raw_ostream &out,
               llvm::raw_ostream &err);

/// `kiln compile` (CompileCommand.cpp): the variant's forward, or backward
/// with --backward, for --arch (default sm_90a), compiled by NVRTC into -o,
/// with its spec (source and launch plan) in <-o>.json; needs no GPU.
int compileCommand(const RunOptions &options, llvm::raw_ostream &out,
                   llvm::raw_ostream &err);

/// The head dims and dtype the flags give a variant.
VariantSpecialization specialization(const RunOptions &options);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_COMMANDS_H
