//===- HostBuffer.h - strided host arrays for JIT calls ---------*- C++ -*-===//

#ifndef KILN_COMPILER_DRIVER_HOSTBUFFER_H
#define KILN_COMPILER_DRIVER_HOSTBUFFER_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::driver {

/// Element kinds a host buffer may hold (Kiln's I/O and capture types).
enum class ElementKind { BF16, F16, F32, F64, I32, I64 };

size_t elementBytes(ElementKind kind);

/// A host array with a shape and element strides, owning its storage or
/// viewing a caller's memory. It is what a memref descriptor points to when
/// the CPU JIT runs a kernel.
struct HostBuffer {
  ElementKind kind = ElementKind::F32;
  std::vector<int64_t> sizes, strides;
  std::vector<uint64_t> storage; ///< 8-byte aligned bytes (owned arrays)
  void *external = nullptr;      ///< the caller's memory (views)

  /// Allocates a row-major array whose innermost rows have `pad` extra
  /// elements (a non-contiguous layout when pad > 0).
  static HostBuffer allocate(ElementKind kind, std::vector<int64_t> sizes,
                             int64_t pad = 0);
  /// Views `data`, which the caller owns and keeps alive (HostProgram's
  /// tensors): nothing is copied.
  static HostBuffer view(ElementKind kind, void *data,
                         std::vector<int64_t> sizes,
                         std::vector<int64_t> strides);

  void *data() { return external ? external : storage.data(); }
  const void *data() const { return external ? external : storage.data(); }
  int64_t numElements() const;
  /// Offset in elements of a multi-index.
  int64_t offsetOf(const int64_t *index) const;
  /// Element at a linear row-major position (independent of strides), read
  /// as double or written from double, rounding to the element type.
  double get(int64_t linear) const;
  void set(int64_t linear, double value);
  /// Fills every element with a bit pattern: NaN for floats, so results that
  /// a kernel forgets to write are caught. Owned arrays only.
  void poison();
};

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_HOSTBUFFER_H
