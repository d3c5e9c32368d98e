//===- CompileUnits.h - a program's kernels compiled one by one -*- C++ -*-===//
//
// NVRTC spends nearly all of a compile optimizing and assembling kernels
// (NVVM and ptxas), and a program holds several kernels (prefill, decode and
// combine; preprocess, dQ and dK/dV) that share nothing but the device
// library. So each kernel is compiled on its own, concurrently, and cached on
// its own: the program's compile time is about its largest kernel's.
//
// The emitted source is a preamble (the device library's include) followed
// by one section per kernel, each starting with the marker line
// "// kiln-kernel: <name>". A source without markers (spec formats 2 and 3,
// hand-written programs) is compiled whole, as one unit.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILEUNITS_H
#define KILN_COMPILEUNITS_H

#include "kiln/LaunchPlan.h"
#include "kiln/Types.h"

#include <string>
#include <vector>

namespace kiln {

/// The line that starts a kernel's section of a program's source.
inline constexpr const char *kKernelSectionMarker = "// kiln-kernel: ";

/// What NVRTC compiles at once: the preamble and one kernel's section (or a
/// whole source without markers).
struct CompileUnit {
  std::string name;            ///< the kernel's name, or the program's
  std::string source;          ///< CUDA C++
  std::vector<size_t> kernels; ///< indices into the spec's kernels it defines
};

/// Splits `spec.source` at the section markers into one unit per kernel of
/// the plan. Fails when a marker names no kernel of the plan, or a kernel
/// has no section or two.
Status splitCompileUnits(const ProgramSpec &spec,
                         std::vector<CompileUnit> &units);

/// A unit's cubin and NVRTC's log; `ms` is its own compile time (0 when the
/// cache had it).
struct CompiledUnit {
  std::string cubin, log;
  double ms = 0;
  bool cacheHit = false;
};

/// Compiles `units` for `arch`, several at once (at most $KILN_NVRTC_THREADS,
/// default: the machine's hardware threads; 1 compiles one after another),
/// each found in or added to the cubin cache when `useCache`. On failure,
/// returns the first failing unit's error (in unit order).
Status compileUnits(const std::vector<CompileUnit> &units,
                    const std::string &arch, bool useCache,
                    std::vector<CompiledUnit> &compiled);

} // namespace kiln

#endif // KILN_COMPILEUNITS_H
