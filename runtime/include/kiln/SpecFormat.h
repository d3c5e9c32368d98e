//===- SpecFormat.h - compiled programs as JSON files -----------*- C++ -*-===//
//
// The one format of a compiled program (`kiln compile`'s <file>.json, the C
// API's kiln_program_load): a JSON object with "format": "kiln-program" and
// a "version". Written and read here, with nlohmann/json, by the compiler and
// the runtime alike; a spec of another version is refused with a message
// saying how to make a new one.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SPECFORMAT_H
#define KILN_SPECFORMAT_H

#include "kiln/LaunchPlan.h"

namespace kiln {

/// The version this runtime writes; it reads this one and version 2 (the
/// same without derived "symbols" and kernels' "when"). Version 1 was the
/// unversioned per-kind JSON of Kiln 0.1 (fixed argument orders, no plan).
inline constexpr int kSpecFormatVersion = 3;

/// The spec as JSON text (indented, so that a reader can follow it).
std::string writeSpecJson(const ProgramSpec &spec);

/// Parses and verifies (verifyPlan) a spec; an error names the field.
Status readSpecJson(const std::string &text, ProgramSpec &spec);

/// readSpecJson of a file.
Status readSpecFile(const std::string &path, ProgramSpec &spec);

/// "bf16", "fp16", "f32", "f64", "i32", "i64" back to a DType.
bool dtypeFromName(const std::string &name, DType &dtype);

} // namespace kiln

#endif // KILN_SPECFORMAT_H
