//===- ModInterpreter.h - float64 evaluation of mod regions -----*- C++ -*-===//
//
// The reference must compute the same variant as the kernel without anyone
// writing it twice: it evaluates the very score_mod / mask_mod regions of the
// attn.attention op, one element at a time, in float64 (integers in 64 bits,
// wrapped to their declared width).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_MODINTERPRETER_H
#define KILN_COMPILER_DRIVER_MODINTERPRETER_H

#include "compiler/Driver/HostBuffer.h"

#include "mlir/IR/Region.h"
#include "mlir/Support/LLVM.h"

#include <functional>
#include <memory>
#include <vector>

namespace kiln::driver {

/// One value of a mod region: floats in `f`, integers/index/i1 in `i`.
struct ModValue {
  double f = 0.0;
  int64_t i = 0;
};

class ModInterpreter {
public:
  /// Prepares `region` (a verified mod) for evaluation; `captures` back its
  /// trailing memref arguments. Fails, with `error` set, on an op the
  /// interpreter does not know.
  static std::unique_ptr<ModInterpreter>
  create(mlir::Region &region, std::vector<const HostBuffer *> captures,
         std::string &error);

  /// Runs the region on leading arguments (score as .f, indices as .i) and
  /// returns the yielded value. Safe to call from several threads.
  ModValue run(llvm::ArrayRef<ModValue> leadingArgs) const;

private:
  using Step = std::function<void(std::vector<ModValue> &)>;
  std::vector<Step> steps;
  size_t numSlots = 0;
  unsigned numLeading = 0;
  unsigned resultSlot = 0;
  std::vector<const HostBuffer *> captures;
  friend class ModCompiler;
};

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_MODINTERPRETER_H
