//===- RunShapes.cpp - a run's shape-only work, kept per shape ------------===//

#include "RunShapes.h"

#include <cstdlib>
#include <cstring>

namespace kiln::detail {

namespace {

void appendShape(std::vector<int64_t> &key, const TensorRef &t) {
  key.push_back(static_cast<int64_t>(t.dtype));
  key.push_back(static_cast<int64_t>(t.sizes.size()));
  key.push_back(static_cast<int64_t>(t.strides.size()));
  key.insert(key.end(), t.sizes.begin(), t.sizes.end());
  key.insert(key.end(), t.strides.begin(), t.strides.end());
}

} // namespace

std::vector<int64_t> runShapeKey(const std::vector<const TensorRef *> &tensors,
                                 const std::vector<TensorRef> &captures) {
  std::vector<int64_t> key;
  key.reserve(12 * (tensors.size() + captures.size()) + 1);
  for (const TensorRef *t : tensors)
    appendShape(key, *t);
  key.push_back(static_cast<int64_t>(captures.size()));
  for (const TensorRef &t : captures)
    appendShape(key, t);
  return key;
}

RunShapes::RunShapes() {
  const char *setting = std::getenv("KILN_RUN_SHAPE_CACHE");
  enabled_ = !(setting && std::strcmp(setting, "0") == 0);
}

std::shared_ptr<const RunShape>
RunShapes::find(const std::vector<int64_t> &key) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &[k, shape] : entries_)
    if (k == key)
      return shape;
  return nullptr;
}

void RunShapes::insert(std::vector<int64_t> key,
                       std::shared_ptr<const RunShape> shape) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &[k, s] : entries_)
    if (k == key)
      return;
  if (entries_.size() < kCapacity) {
    entries_.emplace_back(std::move(key), std::move(shape));
    return;
  }
  entries_[next_] = {std::move(key), std::move(shape)};
  next_ = (next_ + 1) % kCapacity;
}

} // namespace kiln::detail
