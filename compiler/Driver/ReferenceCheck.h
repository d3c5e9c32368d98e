//===- ReferenceCheck.h - kiln run's comparison with float64 ----*- C++ -*-===//
//
// The host buffers of a run and their comparison with the float64
// reference, which evaluates the variant's own score_mod / mask_mod regions
// through the interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_REFERENCECHECK_H
#define KILN_COMPILER_DRIVER_REFERENCECHECK_H

#include "compiler/Driver/HostBuffer.h"
#include "compiler/Driver/ModInterpreter.h"
#include "dialects/Attn/IR/AttnDialect.h"
#include "reference/ReferenceAttention.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <vector>

namespace kiln::driver {

/// kiln run's exit codes.
constexpr int kMismatch = 1;
constexpr int kBadInput = 2;
constexpr int kInternalError = 3;

struct Problem {
  int64_t batch, heads, kvHeads, seqQ, seqKV, dqk, dv, pad;
  ElementKind io;
};

/// Q, K, V in, O and LSE out, as the kernels see them.
struct Inputs {
  HostBuffer q, k, v, o, lse;
};

/// Backward buffers: a random dO and the gradients (input type). Scratch
/// (D, the atomic schedule's f32 dQ sum) is the plan's workspace.
struct Gradients {
  HostBuffer dO, dq, dk, dv;
};

/// The reference's view of a variant: scale, causality and the mods as
/// callbacks into the float64 interpreter of the variant's own regions.
struct ReferenceVariant {
  ref::AttentionSpec spec;
  std::unique_ptr<ModInterpreter> scoreMod, maskMod;
};

/// Fills `out` from the spec; 0 or an exit code after a message on `err`.
int makeReferenceVariant(attn::AttentionOp refSpec,
                         const std::vector<const HostBuffer *> &captureViews,
                         ReferenceVariant &out, llvm::raw_ostream &err);

/// Compares O and LSE with the reference; prints the errors and PASS/FAIL.
/// Returns 0 or kMismatch (or kBadInput when the mods cannot be evaluated).
int checkAgainstReference(const Problem &p, attn::AttentionOp refSpec,
                          Inputs &in, std::vector<HostBuffer> &captures,
                          double tolerance, llvm::raw_ostream &out,
                          llvm::raw_ostream &err);

/// Compares dQ, dK, dV with the float64 reference gradients.
int checkBackward(const Problem &p, attn::AttentionOp refSpec, Inputs &in,
                  std::vector<HostBuffer> &captures, Gradients &g,
                  double tolerance, llvm::raw_ostream &out,
                  llvm::raw_ostream &err);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_REFERENCECHECK_H
