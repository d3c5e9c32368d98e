//===- CPUProgram.h - run a launch plan with the CPU backend ----*- C++ -*-===//
//
// The CPU backend's counterpart of the runtime's Program: the same plan
// (read off the tile program before its CPU lowering) decides the kernels,
// their order, grids, arguments and workspaces; each kernel runs through its
// `<name>_grid` launcher.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_CPUPROGRAM_H
#define KILN_COMPILER_DRIVER_CPUPROGRAM_H

#include "compiler/Driver/CPUKernel.h"
#include "compiler/Driver/HostBuffer.h"

#include "kiln/LaunchPlan.h"

#include <map>

namespace kiln::driver {

/// Validates `tensors` (by name) and `captures` against `plan` as the
/// runtime would, allocates its workspaces on the host and runs every kernel
/// of the plan that launches, in order. `overrides` sets derived symbols
/// (Program::run's). False with `error` set on a refused argument or a
/// failed call.
bool runPlanOnCPU(CPUKernel &kernel, const ProgramSpec &plan,
                  const std::map<std::string, HostBuffer *> &tensors,
                  std::vector<HostBuffer> &captures, std::string &error,
                  const SymbolValues &overrides = {});

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_CPUPROGRAM_H
