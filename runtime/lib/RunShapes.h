//===- RunShapes.h - a run's shape-only work, kept per shape ----*- C++ -*-===//
//
// Most of what Program::run works out depends on the tensors' shapes alone:
// the plan's symbols, which kernels launch, their grids and scalar
// arguments, the workspace layout, and every check of dtypes, ranks, sizes,
// strides, constraints and limits. Training and decoding loops call a
// program with the same shapes again and again, so a run keeps that work
// per shape and redoes only what depends on the pointers (null, alignment,
// device memory, tensor maps). Issue 13: the runtime's own share of a
// launch's host time.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_RUNSHAPES_H
#define KILN_RUNTIME_LIB_RUNSHAPES_H

#include "kiln/LaunchPlan.h"

#include <array>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace kiln::detail {

/// The shape-only results of binding a run (bindRun and what follows it).
struct RunShape {
  std::vector<bool> launched;                ///< per kernel: its `when`
  std::vector<std::array<int64_t, 3>> grids; ///< per launched kernel
  WorkspaceLayout layout;
  std::vector<std::vector<int64_t>> scalars; ///< per kernel, its Scalar args
};

/// The key of a run's shapes: each tensor's dtype, rank, sizes and strides
/// (in the plan's order), then each capture's.
std::vector<int64_t> runShapeKey(const std::vector<const TensorRef *> &tensors,
                                 const std::vector<TensorRef> &captures);

/// The last few shapes a program ran with (concurrent runs are safe). A
/// small table: a program sees few shapes at a time, and a miss only costs
/// the binding the run would do anyway.
class RunShapes {
public:
  /// Off when $KILN_RUN_SHAPE_CACHE is 0 (the ablation: every run binds).
  RunShapes();
  bool enabled() const { return enabled_; }
  std::shared_ptr<const RunShape> find(const std::vector<int64_t> &key);
  void insert(std::vector<int64_t> key, std::shared_ptr<const RunShape> shape);

private:
  static constexpr size_t kCapacity = 16;
  bool enabled_ = true;
  std::mutex mutex_;
  std::vector<std::pair<std::vector<int64_t>, std::shared_ptr<const RunShape>>>
      entries_;
  size_t next_ = 0; ///< the entry the next insert replaces once full
};

} // namespace kiln::detail

#endif // KILN_RUNTIME_LIB_RUNSHAPES_H
