//===- CUDABackwardRun.h - kiln run --backward on the GPU -------*- C++ -*-===//

#ifndef KILN_COMPILER_DRIVER_CUDABACKWARDRUN_H
#define KILN_COMPILER_DRIVER_CUDABACKWARDRUN_H

#include "compiler/Driver/ProblemInputs.h"
#include "compiler/Driver/ReferenceCheck.h"
#include "compiler/Driver/RunOptions.h"

#include "kiln/Runtime.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln::driver {

/// Runs the backward kernels of `spec` on device 0 for the forward's
/// results in `in`, copies dQ, dK, dV back into `g`, and appends timing and
/// determinism notes to `note`. Every backward is run three times: the
/// two-kernel schedule must give bit-identical gradients each time (exit 1
/// otherwise); the atomic schedule's differences are reported.
int runBackwardOnCUDA(const ProgramSpec &spec, const Problem &p, Inputs &in,
                      std::vector<HostBuffer> &captures, const RunOptions &o,
                      Gradients &g, std::string &note, llvm::raw_ostream &err);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_CUDABACKWARDRUN_H
