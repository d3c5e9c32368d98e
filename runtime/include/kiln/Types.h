//===- Types.h - the runtime's basic types (no MLIR) ------------*- C++ -*-===//
//
// Status, element types and device arrays: what the plan, the spec format
// and the launchers share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TYPES_H
#define KILN_TYPES_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// Kiln's version, part of every cache key.
const char *runtimeVersion();

/// An error message, empty on success.
class Status {
public:
  Status() = default;
  static Status error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return message_.empty(); }
  const std::string &message() const { return message_; }

private:
  std::string message_;
};

enum class DType { BF16, F16, F32, F64, I32, I64 };
const char *dtypeName(DType dtype);
size_t dtypeBytes(DType dtype);

/// A device array: sizes and strides in elements.
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::BF16;
  std::vector<int64_t> sizes, strides;
};

/// A captured tensor's declaration: dims name problem symbols (batch, heads,
/// kv_heads, seq_q, seq_kv) or give a size ("16").
struct CaptureSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::string> dims;
};

} // namespace kiln

#endif // KILN_TYPES_H
