//===- CompileCommand.cpp - `kiln compile` --------------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/Timing.h"

#include "compiler/Driver/CUDACompile.h"
#include "compiler/Driver/ReferenceCheck.h"

#include "kiln/Runtime.h"
#include "kiln/SpecFormat.h"

#include "llvm/Support/Format.h"

#include <chrono>

using namespace mlir;

namespace kiln::driver {

namespace {

/// NVRTC-compiles the program's source, writes the cubin to -o and the spec
/// (source and launch plan, for runtimes that load it without MLIR: bench/
/// through the C API) next to it as <file>.json.
int writeCompiled(const RunOptions &o, const ProgramSpec &spec,
                  const std::string &summary, llvm::raw_ostream &out,
                  llvm::raw_ostream &err) {
  const std::string &arch = spec.arch, &source = spec.source;
  std::string name = spec.displayName();
  std::string cubin, log;
  auto start = std::chrono::steady_clock::now();
  if (Status s = kiln::compileToCubin(source, arch, name, cubin, log);
      !s.ok()) {
    err << "kiln: error: " << s.message() << "\n";
    return kInternalError;
  }
  double ms = millisecondsSince(start);
  std::error_code ec;
  llvm::raw_fd_ostream file(o.output, ec);
  if (ec) {
    err << "kiln: error: cannot write '" << o.output << "': " << ec.message()
        << "\n";
    return kBadInput;
  }
  file.write(cubin.data(), cubin.size());
  llvm::raw_fd_ostream specFile(o.output + ".json", ec);
  if (ec) {
    err << "kiln: error: cannot write '" << o.output
        << ".json': " << ec.message() << "\n";
    return kBadInput;
  }
  specFile << writeSpecJson(spec);
  out << "kiln compile: " << name << " for " << arch << ", " << cubin.size()
      << " bytes of cubin in " << llvm::format("%.1f", ms) << " ms (NVRTC), "
      << summary << " -> " << o.output << "\n";
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
    if (Status s =
            compileBackwardCUDA(*module, arch, o.backwardSchedule == "atomic",
                                spec, scheduleChoices(o));
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
