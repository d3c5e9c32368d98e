//===- CApi.cpp - C entry points of the Kiln runtime ----------------------===//

#include "kiln/kiln_c.h"

#include "CTensors.h"

#include "kiln/CompileUnits.h"
#include "kiln/Program.h"
#include "kiln/Runtime.h"
#include "kiln/SpecFormat.h"

#include <cstring>

struct kiln_program {
  std::unique_ptr<kiln::Program> program;
  /// Derived symbols set with kiln_program_set_symbol, for every run.
  kiln::SymbolValues overrides;
};

namespace {

using kiln::capi::report;

kiln::Status load(const kiln::Status &read, const kiln::ProgramSpec &spec,
                  int device, kiln_program **program) {
  if (!read.ok())
    return read;
  if (!program)
    return kiln::Status::error("kiln_program_load needs an output pointer");
  auto result = std::make_unique<kiln_program>();
  if (kiln::Status s = kiln::Program::load(spec, device, result->program);
      !s.ok())
    return s;
  *program = result.release();
  return kiln::Status();
}

kiln::Status run(kiln_program *program, const kiln_tensor *tensors,
                 int numTensors, const kiln_tensor *captures, int numCaptures,
                 void *stream,
                 const kiln::WorkspaceAllocator &allocate = nullptr) {
  if (!program)
    return kiln::Status::error("kiln_program_run needs a loaded program");
  std::vector<kiln::NamedTensor> named;
  std::vector<kiln::TensorRef> refs;
  if (kiln::Status s =
          kiln::capi::fromC(program->program->spec(), tensors, numTensors,
                            captures, numCaptures, named, refs);
      !s.ok())
    return s;
  return program->program->run(named, refs, stream, program->overrides,
                               allocate);
}

} // namespace

extern "C" int kiln_program_load(const char *specJson, int device,
                                 kiln_program **program, char *error,
                                 int errorSize) {
  kiln::ProgramSpec spec;
  kiln::Status read =
      specJson ? kiln::readSpecJson(specJson, spec)
               : kiln::Status::error("kiln_program_load needs spec text");
  return report(load(read, spec, device, program), error, errorSize);
}

extern "C" int kiln_program_load_file(const char *path, int device,
                                      kiln_program **program, char *error,
                                      int errorSize) {
  kiln::ProgramSpec spec;
  kiln::Status read =
      path ? kiln::readSpecFile(path, spec)
           : kiln::Status::error("kiln_program_load_file needs a path");
  return report(load(read, spec, device, program), error, errorSize);
}

extern "C" int kiln_program_precompile(const char *specJson, int *cached,
                                       char *error, int errorSize) {
  kiln::ProgramSpec spec;
  if (kiln::Status s =
          specJson ? kiln::readSpecJson(specJson, spec)
                   : kiln::Status::error("kiln_program_precompile needs spec "
                                         "text");
      !s.ok())
    return report(s, error, errorSize);
  std::vector<kiln::CompileUnit> units;
  std::vector<kiln::CompiledUnit> compiled;
  if (kiln::Status s = kiln::verifyPlan(spec); !s.ok())
    return report(s, error, errorSize);
  if (kiln::Status s = kiln::splitCompileUnits(spec, units); !s.ok())
    return report(s, error, errorSize);
  if (kiln::Status s =
          kiln::compileUnits(units, spec.arch, /*useCache=*/true, compiled);
      !s.ok())
    return report(s, error, errorSize);
  if (cached) {
    *cached = 0;
    for (const kiln::CompiledUnit &unit : compiled)
      *cached += unit.cacheHit;
  }
  return 0;
}

extern "C" int kiln_program_run(kiln_program *program,
                                const kiln_tensor *tensors, int numTensors,
                                const kiln_tensor *captures, int numCaptures,
                                void *stream, char *error, int errorSize) {
  return report(
      run(program, tensors, numTensors, captures, numCaptures, stream), error,
      errorSize);
}

extern "C" int kiln_program_run_with_allocator(
    kiln_program *program, const kiln_tensor *tensors, int numTensors,
    const kiln_tensor *captures, int numCaptures, void *stream,
    kiln_workspace_allocator allocate, void *allocatorContext, char *error,
    int errorSize) {
  if (!allocate)
    return report(kiln::Status::error(
                      "kiln_program_run_with_allocator needs an allocator"),
                  error, errorSize);
  return report(run(program, tensors, numTensors, captures, numCaptures, stream,
                    [&](size_t bytes) {
                      return allocate(allocatorContext,
                                      static_cast<long long>(bytes));
                    }),
                error, errorSize);
}

extern "C" int kiln_program_set_symbol(kiln_program *program,
                                       const char *name, long long value,
                                       char *error, int errorSize) {
  if (!program || !name)
    return report(kiln::Status::error(
                      "kiln_program_set_symbol needs a program and a name"),
                  error, errorSize);
  const kiln::ProgramSpec &spec = program->program->spec();
  if (!spec.derives(name))
    return report(kiln::Status::error("program '" + spec.variant +
                                      "' derives no symbol '" + name + "'"),
                  error, errorSize);
  // 0 or below: back to the plan's own expression.
  if (value < 1)
    program->overrides.erase(name);
  else
    program->overrides[name] = value;
  return 0;
}

extern "C" long long kiln_program_workspace_bytes(const kiln_program *program) {
  return program ? static_cast<long long>(program->program->workspaceBytes())
                 : 0;
}

extern "C" int kiln_device_arch(int device, char *arch, int archSize,
                                char *error, int errorSize) {
  std::string name, result;
  kiln::Status s = kiln::deviceArch(device, result, name);
  if (s.ok() && (!arch || archSize <= static_cast<int>(result.size())))
    s = kiln::Status::error("kiln_device_arch needs a buffer of at least " +
                            std::to_string(result.size() + 1) + " bytes");
  if (s.ok())
    std::memcpy(arch, result.c_str(), result.size() + 1);
  return report(s, error, errorSize);
}

extern "C" void kiln_program_free(kiln_program *program) { delete program; }
