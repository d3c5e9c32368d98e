//===- ProblemInputs.h - the problem and random inputs of a run -*- C++ -*-===//
//
// `kiln run` makes its problem from the flags and the variant, and fills
// fresh random inputs (outputs poisoned) for either backend.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_PROBLEMINPUTS_H
#define KILN_COMPILER_DRIVER_PROBLEMINPUTS_H

#include "compiler/Driver/HostBuffer.h"
#include "compiler/Driver/ReferenceCheck.h"
#include "compiler/Driver/RunOptions.h"
#include "dialects/Attn/IR/AttnDialect.h"
#include "kiln/Types.h"

#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace kiln::driver {

/// The runtime's name for a host element kind, and back.
DType deviceDType(ElementKind kind);
ElementKind hostKind(DType dtype);

/// The problem of `o` for the (specialised) variant `spec`: sizes, KV heads
/// from the GQA group, head dims and element type; 0 or kBadInput after a
/// message (heads not a multiple of the group, head dims the CPU backend
/// does not take).
int makeProblem(const RunOptions &o, attn::AttentionOp spec, Problem &p,
                llvm::raw_ostream &err);

/// Fresh N(0, 1) inputs rounded to the element type; outputs poisoned with
/// NaN so that anything a kernel leaves unwritten is caught; captures filled
/// per their declaration.
int makeInputs(const Problem &p, attn::AttentionOp spec, uint64_t seed,
               Inputs &in, std::vector<HostBuffer> &captures,
               llvm::raw_ostream &err);

/// A random dO (normal, from `seed`), and the gradients poisoned, in the
/// shapes of `p` (gradients in the input type); zeros for the gradients of
/// captures that the `backward` plan takes (tensors "grad_<capture>").
/// Varlen: dO packed, and the packed gradients poisoned, in `in.packed`.
void makeGradients(const Problem &p, Inputs &in, uint64_t seed,
                   const ProgramSpec &backward,
                   const std::vector<HostBuffer> &captures, Gradients &g);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_PROBLEMINPUTS_H
