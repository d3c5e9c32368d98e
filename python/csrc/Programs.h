//===- Programs.h - compiled programs of a variant, kept per key -*- C++
//-*-===//
//
// The C++ ops (Attention.cpp) run a variant's programs through libkiln's C
// API (kiln_jit_c.h, kiln_c.h): compiled on first use, then found in a table
// keyed by what specialises them, so a call costs a lookup. kiln/ops.py's
// Python ops (paged, block-sparse, capture gradients) keep theirs in Python
// by the same key.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PYTHON_CSRC_PROGRAMS_H
#define KILN_PYTHON_CSRC_PROGRAMS_H

#include "kiln/kiln_jit_c.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::torch_ops {

/// What specialises a compiled program: kiln_variant_options' fields that
/// the C++ ops set.
struct ProgramOptions {
  std::string_view text;
  std::string_view name; ///< empty: the text's only attn.attention
  int64_t headDim = 0, headDimV = 0;
  const char *dtype = nullptr; ///< "bf16" or "fp16"
  double dropoutP = 0;
  bool varlen = false;
  int64_t pageSize = 0; ///< > 0: K and V in a paged KV cache
};

/// The program `which` ("forward" or "backward") of the variant, loaded on
/// CUDA device `device` (compiled for its architecture on first use). Throws
/// (fail) with Kiln's message when the variant does not compile.
kiln_program *deviceProgram(const ProgramOptions &options, const char *which,
                            int device);

/// The variant JIT-compiled for the host (its forward and backward).
kiln_host_program *hostProgram(const ProgramOptions &options);

/// Throws Kiln's error to Python: a RuntimeError whose message starts with
/// "kiln: " (the Python API re-raises it as kiln.KilnError).
[[noreturn]] void fail(const std::string &message);

/// The calling thread's buffer for the C API's messages.
char *errorBuffer();
constexpr int kErrorBufferSize = 8192;

} // namespace kiln::torch_ops

#endif // KILN_PYTHON_CSRC_PROGRAMS_H
