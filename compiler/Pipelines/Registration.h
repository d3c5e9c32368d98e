//===- Registration.h - dialects and interfaces Kiln tools load -*- C++ -*-===//

#ifndef KILN_COMPILER_PIPELINES_REGISTRATION_H
#define KILN_COMPILER_PIPELINES_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace kiln {

/// Every dialect a Kiln pipeline produces or consumes, with the external
/// interface models (bufferization, LLVM translation) those pipelines need.
void registerKilnDialects(mlir::DialectRegistry &registry);

/// Kiln's passes and pipelines plus the upstream passes they are built from,
/// so kiln-opt can run each step on its own.
void registerKilnPasses();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINES_REGISTRATION_H
