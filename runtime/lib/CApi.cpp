//===- CApi.cpp - C entry points of the Kiln runtime ----------------------===//

#include "kiln/kiln_c.h"

#include "kiln/Program.h"
#include "kiln/SpecFormat.h"

#include <cstring>

struct kiln_program {
  std::unique_ptr<kiln::Program> program;
  /// Derived symbols set with kiln_program_set_symbol, for every run.
  kiln::SymbolValues overrides;
};

namespace {

int report(const kiln::Status &s, char *error, int size) {
  if (s.ok())
    return 0;
  if (error && size > 0) {
    std::strncpy(error, s.message().c_str(), size - 1);
    error[size - 1] = '\0';
  }
  return 1;
}

/// The C API's dtype codes (kiln_c.h); anything else is an error.
kiln::Status dtypeFromCode(int code, const std::string &what,
                           kiln::DType &dtype) {
  static const kiln::DType codes[] = {kiln::DType::BF16, kiln::DType::F16,
                                      kiln::DType::F32,  kiln::DType::F64,
                                      kiln::DType::I32,  kiln::DType::I64};
  if (code < 0 || code > 5)
    return kiln::Status::error(what + " has dtype code " +
                               std::to_string(code) +
                               "; codes are 0 bf16, 1 fp16, 2 f32, 3 f64, "
                               "4 i32, 5 i64");
  dtype = codes[code];
  return kiln::Status();
}

kiln::Status toTensorRef(const kiln_tensor &c, const std::string &what,
                         kiln::TensorRef &t) {
  if (c.rank < 0 || c.rank > 8 || (c.rank > 0 && (!c.sizes || !c.strides)))
    return kiln::Status::error(what + " has rank " + std::to_string(c.rank) +
                               " or null sizes / strides");
  if (kiln::Status s = dtypeFromCode(c.dtype, what, t.dtype); !s.ok())
    return s;
  t.data = c.data;
  t.sizes.assign(c.sizes, c.sizes + c.rank);
  t.strides.assign(c.strides, c.strides + c.rank);
  return kiln::Status();
}

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
                 void *stream) {
  if (!program)
    return kiln::Status::error("kiln_program_run needs a loaded program");
  if (numTensors < 0 || numCaptures < 0 || (numTensors && !tensors) ||
      (numCaptures && !captures))
    return kiln::Status::error("kiln_program_run: bad tensor or capture "
                               "arrays");
  const kiln::ProgramSpec &spec = program->program->spec();
  std::vector<kiln::NamedTensor> named;
  for (int i = 0; i < numTensors; ++i) {
    if (!tensors[i].name)
      return kiln::Status::error("tensor " + std::to_string(i) +
                                 " has no name");
    kiln::NamedTensor t;
    t.name = tensors[i].name;
    if (kiln::Status s = toTensorRef(tensors[i], t.name, t.tensor); !s.ok())
      return s;
    named.push_back(std::move(t));
  }
  std::vector<kiln::TensorRef> refs(numCaptures);
  for (int i = 0; i < numCaptures; ++i) {
    std::string what = "capture " + std::to_string(i);
    if (captures[i].name && i < static_cast<int>(spec.captures.size()) &&
        spec.captures[i].name != captures[i].name)
      return kiln::Status::error(what + " is named '" + captures[i].name +
                                 "'; variant '" + spec.variant + "' expects '" +
                                 spec.captures[i].name + "' there");
    if (kiln::Status s = toTensorRef(captures[i], what, refs[i]); !s.ok())
      return s;
  }
  return program->program->run(named, refs, stream, program->overrides);
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

extern "C" int kiln_program_run(kiln_program *program,
                                const kiln_tensor *tensors, int numTensors,
                                const kiln_tensor *captures, int numCaptures,
                                void *stream, char *error, int errorSize) {
  return report(
      run(program, tensors, numTensors, captures, numCaptures, stream), error,
      errorSize);
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

extern "C" void kiln_program_free(kiln_program *program) { delete program; }
