//===- CTensors.h - what the C APIs share -----------------------*- C++ -*-===//
//
// The runtime's C API (kiln_c.h) and the compiler's (kiln_jit_c.h) take
// tensors and report errors the same way; this is that common part.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CTENSORS_H
#define KILN_RUNTIME_LIB_CTENSORS_H

#include "kiln/LaunchPlan.h"
#include "kiln/kiln_c.h"

#include <string>
#include <vector>

namespace kiln::capi {

/// 0 when `s` is ok; else copies its message into `error` (at most `size`
/// bytes with the NUL) and returns 1.
int report(const Status &s, char *error, int size);

/// A kiln_tensor as a TensorRef; `what` names it in messages.
Status toTensorRef(const kiln_tensor &c, const std::string &what,
                   TensorRef &t);

/// The tensors by name and the captures in `spec`'s order, as kiln_c.h
/// documents them (every tensor named; a named capture must match the
/// spec's name at its position).
Status fromC(const ProgramSpec &spec, const kiln_tensor *tensors,
             int numTensors, const kiln_tensor *captures, int numCaptures,
             std::vector<NamedTensor> &named, std::vector<TensorRef> &refs);

} // namespace kiln::capi

#endif // KILN_RUNTIME_LIB_CTENSORS_H
