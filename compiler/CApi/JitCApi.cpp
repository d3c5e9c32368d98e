//===- JitCApi.cpp - C entry points of the Kiln compiler ------------------===//

#include "kiln/kiln_jit_c.h"

#include "CTensors.h"
#include "SpecCache.h"

#include "kiln/Kiln.h"
#include "kiln/SpecFormat.h"

#include <cstdlib>
#include <cstring>

struct kiln_host_program {
  std::unique_ptr<kiln::HostProgram> program;
  std::string forwardPlan, backwardPlan; ///< JSON, for kiln_host_program_plan
};

namespace {

using kiln::capi::report;

kiln::Status toVariant(const kiln_variant_options *o, kiln::Variant &variant,
                       kiln::CompileOptions &options) {
  if (!o || !o->mlir)
    return kiln::Status::error("no variant: kiln_variant_options.mlir is null");
  if (o->head_dim < 0 || o->head_dim_v < 0)
    return kiln::Status::error("head dims must be >= 0 (0: the variant's)");
  if (o->page_size < 0)
    return kiln::Status::error("page_size must be >= 0 (0: dense K and V)");
  options.pageSize = o->page_size;
  if (!(o->dropout_p >= 0.0 && o->dropout_p < 1.0))
    return kiln::Status::error("dropout_p must be in [0, 1) (0: the "
                               "variant's)");
  options.dropoutP = o->dropout_p;
  if (o->capture_gradients < 0 || o->capture_gradients > 2)
    return kiln::Status::error("capture_gradients must be 0 (none), 1 (f32 "
                               "atomics) or 2 (deterministic)");
  options.captureGradients = o->capture_gradients != 0;
  options.deterministicCaptureGradients = o->capture_gradients == 2;
  options.varlen = o->varlen != 0;
  if (o->block_sparse[0] < 0 || o->block_sparse[1] < 0 ||
      (o->block_sparse[0] > 0) != (o->block_sparse[1] > 0))
    return kiln::Status::error("block_sparse must be two positive block sizes "
                               "(or both 0: dense)");
  options.blockSparse[0] = o->block_sparse[0];
  options.blockSparse[1] = o->block_sparse[1];
  options.buildBlockMask = o->build_block_mask != 0;
  variant.mlir = o->mlir;
  variant.name = o->name ? o->name : "";
  options.headDim = o->head_dim;
  options.headDimV = o->head_dim_v;
  options.dtype = o->dtype ? o->dtype : "";
  if (!options.dtype.empty() && options.dtype != "bf16" &&
      options.dtype != "fp16")
    return kiln::Status::error("dtype must be bf16 or fp16, got '" +
                               options.dtype + "'");
  return kiln::Status();
}

kiln::Status compileSpec(const kiln_variant_options *o, const char *program,
                         const char *arch, char **specJson) {
  if (!specJson)
    return kiln::Status::error("kiln_compile_spec needs an output pointer");
  kiln::Variant variant;
  kiln::CompileOptions options;
  if (kiln::Status s = toVariant(o, variant, options); !s.ok())
    return s;
  std::string which = program ? program : "";
  options.arch = arch ? arch : "";
  if (options.arch != "sm_80" && options.arch != "sm_90a")
    return kiln::Status::error("arch must be sm_80 or sm_90a, got '" +
                               options.arch + "'");
  if (which != "forward" && which != "backward" &&
      which != "backward-two-kernel" && which != "backward-atomic" &&
      which != "backward-deterministic")
    return kiln::Status::error("program must be forward, backward, "
                               "backward-two-kernel, backward-atomic or "
                               "backward-deterministic, got '" +
                               which + "'");
  // A spec compiled before, by this compiler, with these options
  // (SpecCache.h), or compiled now and kept.
  std::string key = kiln::capi::specCacheKey(*o, which, options.arch);
  std::string json;
  if (!kiln::capi::lookupSpec(key, json)) {
    kiln::ProgramSpec spec;
    kiln::Status s = which == "forward"
                         ? kiln::compileSpec(variant, options, spec)
                         : kiln::compileBackwardSpec(
                               variant, options,
                               which == "backward-two-kernel"
                                   ? kiln::BackwardSchedule::TwoKernel
                               : which == "backward-atomic"
                                   ? kiln::BackwardSchedule::AtomicDQ
                               : which == "backward-deterministic"
                                   ? kiln::BackwardSchedule::Deterministic
                                   : kiln::BackwardSchedule::Auto,
                               spec);
    if (!s.ok())
      return s;
    json = kiln::writeSpecJson(spec);
    kiln::capi::storeSpec(key, json);
  }
  *specJson = static_cast<char *>(std::malloc(json.size() + 1));
  if (!*specJson)
    return kiln::Status::error("out of memory for the spec");
  std::memcpy(*specJson, json.c_str(), json.size() + 1);
  return kiln::Status();
}

/// "forward" / "backward" as a kind; false for anything else.
bool kindOf(const char *which, kiln::HostProgram::Kind &kind) {
  std::string w = which ? which : "";
  if (w != "forward" && w != "backward")
    return false;
  kind = w == "forward" ? kiln::HostProgram::Kind::Forward
                        : kiln::HostProgram::Kind::Backward;
  return true;
}

} // namespace

extern "C" int kiln_compile_spec(const kiln_variant_options *options,
                                 const char *program, const char *arch,
                                 char **specJson, char *error, int errorSize) {
  return report(compileSpec(options, program, arch, specJson), error,
                errorSize);
}

extern "C" void kiln_string_free(char *text) { std::free(text); }

extern "C" int kiln_host_program_compile(const kiln_variant_options *options,
                                         kiln_host_program **program,
                                         char *error, int errorSize) {
  if (!program)
    return report(kiln::Status::error(
                      "kiln_host_program_compile needs an output pointer"),
                  error, errorSize);
  kiln::Variant variant;
  kiln::CompileOptions compileOptions;
  if (kiln::Status s = toVariant(options, variant, compileOptions); !s.ok())
    return report(s, error, errorSize);
  auto result = std::make_unique<kiln_host_program>();
  if (kiln::Status s =
          kiln::HostProgram::compile(variant, compileOptions, result->program);
      !s.ok())
    return report(s, error, errorSize);
  // The plans without source: the host program has none.
  result->forwardPlan = kiln::writeSpecJson(
      result->program->plan(kiln::HostProgram::Kind::Forward));
  result->backwardPlan = kiln::writeSpecJson(
      result->program->plan(kiln::HostProgram::Kind::Backward));
  *program = result.release();
  return 0;
}

extern "C" const char *kiln_host_program_plan(const kiln_host_program *program,
                                              const char *which) {
  kiln::HostProgram::Kind kind;
  if (!program || !kindOf(which, kind))
    return nullptr;
  return kind == kiln::HostProgram::Kind::Forward
             ? program->forwardPlan.c_str()
             : program->backwardPlan.c_str();
}

extern "C" int kiln_host_program_run(kiln_host_program *program,
                                     const char *which,
                                     const kiln_tensor *tensors,
                                     int numTensors,
                                     const kiln_tensor *captures,
                                     int numCaptures, char *error,
                                     int errorSize) {
  kiln::HostProgram::Kind kind;
  if (!program)
    return report(kiln::Status::error(
                      "kiln_host_program_run needs a compiled program"),
                  error, errorSize);
  if (!kindOf(which, kind))
    return report(kiln::Status::error(
                      std::string("which must be forward or backward, got '") +
                      (which ? which : "(null)") + "'"),
                  error, errorSize);
  std::vector<kiln::NamedTensor> named;
  std::vector<kiln::TensorRef> refs;
  if (kiln::Status s =
          kiln::capi::fromC(program->program->plan(kind), tensors, numTensors,
                            captures, numCaptures, named, refs);
      !s.ok())
    return report(s, error, errorSize);
  return report(program->program->run(kind, named, refs), error, errorSize);
}

extern "C" void kiln_host_program_free(kiln_host_program *program) {
  delete program;
}
