//===- CompileCommand.cpp - `kiln compile` --------------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/Timing.h"

#include "compiler/Driver/CUDACompile.h"
#include "compiler/Driver/ReferenceCheck.h"

#include "kiln/CompileUnits.h"
#include "kiln/Runtime.h"
#include "kiln/SpecFormat.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace mlir;

namespace kiln::driver {

namespace {

/// `output` with `.<unit>` before its extension: x.cubin -> x.causal_fwd.cubin.
std::string unitPath(const std::string &output, const std::string &unit) {
  size_t slash = output.rfind('/');
  size_t dot = output.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return output + "." + unit;
  return output.substr(0, dot) + "." + unit + output.substr(dot);
}

/// NVRTC-compiles the program's kernels as the runtime does (one unit per
/// kernel, concurrently; CompileUnits.h, no cache), writes each unit's cubin
/// beside -o (x.cubin -> x.<kernel>.cubin) and the spec (source and launch
/// plan, for runtimes that load it without MLIR: bench/ through the C API)
/// to <-o>.json.
int writeCompiled(const RunOptions &o, ProgramSpec spec,
                  const std::string &summary, llvm::raw_ostream &out,
                  llvm::raw_ostream &err) {
  const std::string &arch = spec.arch;
  std::string name = spec.displayName();
  std::vector<CompileUnit> units;
  if (Status s = splitCompileUnits(spec, units); !s.ok()) {
    err << "kiln: error: " << s.message() << "\n";
    return kInternalError;
  }
  // A definition, not a comment, in every unit: nothing below Kiln that
  // keys on the preprocessed text or the module can have seen it.
  if (!o.nonce.empty())
    for (CompileUnit &unit : units)
      unit.source += "\n__device__ int kiln_nonce_" + o.nonce + ";\n";
  std::vector<CompiledUnit> compiled;
  auto start = std::chrono::steady_clock::now();
  if (Status s = compileUnits(units, arch, /*useCache=*/false, compiled);
      !s.ok()) {
    err << "kiln: error: " << s.message() << "\n";
    return kInternalError;
  }
  double ms = millisecondsSince(start);
  size_t bytes = 0;
  std::string perUnit;
  for (size_t u = 0; u < units.size(); ++u) {
    std::string path = unitPath(o.output, units[u].name);
    std::error_code ec;
    llvm::raw_fd_ostream file(path, ec);
    if (ec) {
      err << "kiln: error: cannot write '" << path << "': " << ec.message()
          << "\n";
      return kBadInput;
    }
    file.write(compiled[u].cubin.data(), compiled[u].cubin.size());
    bytes += compiled[u].cubin.size();
    perUnit += "kiln compile:   " + units[u].name + ": " +
               std::to_string(compiled[u].cubin.size()) + " bytes in " +
               llvm::formatv("{0:f1}", compiled[u].ms).str() + " ms -> " +
               path + "\n";
  }
  std::error_code ec;
  llvm::raw_fd_ostream specFile(o.output + ".json", ec);
  if (ec) {
    err << "kiln: error: cannot write '" << o.output
        << ".json': " << ec.message() << "\n";
    return kBadInput;
  }
  specFile << writeSpecJson(spec);
  out << "kiln compile: " << name << " for " << arch << ", " << bytes
      << " bytes of cubin in " << llvm::format("%.1f", ms) << " ms (NVRTC), "
      << summary << "\n"
      << perUnit;
  return 0;
}

} // namespace

int compileCommand(const RunOptions &o, llvm::raw_ostream &out,
                   llvm::raw_ostream &err) {
  VariantSession session(err);
  if (int rc = session.load(o.input, o.variant, specialization(o), err))
    return rc;
  OwningOpRef<ModuleOp> &module = session.module;
  if (o.output.empty()) {
    err << "kiln: error: kiln compile needs -o <file.cubin>\n";
    return kBadInput;
  }
  std::string arch = o.arch.empty() ? "sm_90a" : o.arch;
  ProgramSpec spec;
  if (o.backward) {
    if (Status s = compileBackwardCUDA(*module, arch, o.backwardSchedule, spec,
                                       scheduleChoices(o));
        !s.ok()) {
      err << "kiln: error: " << s.message() << "\n";
      return kBadInput;
    }
  } else if (Status s =
                 compileForwardCUDA(*module, arch, spec, scheduleChoices(o));
             !s.ok()) {
    err << "kiln: error: " << s.message() << "\n";
    return kBadInput;
  }
  std::string summary = spec.kind;
  if (!spec.schedule.empty())
    summary += " (" + spec.schedule + ")";
  summary += ", " + std::to_string(spec.kernels.size()) + " kernel" +
             (spec.kernels.size() == 1 ? "" : "s") + ":";
  for (const KernelLaunch &k : spec.kernels)
    summary += " " + k.name + " (" + std::to_string(k.numThreads) +
               " threads, " + std::to_string(k.sharedBytes) +
               " bytes of shared memory)";
  return writeCompiled(o, spec, summary, out, err);
}

} // namespace kiln::driver
