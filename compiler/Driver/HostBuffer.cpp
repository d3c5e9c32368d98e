//===- HostBuffer.cpp - strided host arrays for JIT calls -----------------===//

#include "compiler/Driver/HostBuffer.h"

#include "reference/Numerics.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace kiln::driver {

size_t elementBytes(ElementKind kind) {
  switch (kind) {
  case ElementKind::BF16:
  case ElementKind::F16:
    return 2;
  case ElementKind::F32:
  case ElementKind::I32:
    return 4;
  case ElementKind::F64:
  case ElementKind::I64:
    return 8;
  }
  return 8;
}

HostBuffer HostBuffer::allocate(ElementKind kind, std::vector<int64_t> sizes,
                                int64_t pad) {
  HostBuffer buffer;
  buffer.kind = kind;
  buffer.sizes = sizes;
  buffer.strides.assign(sizes.size(), 1);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    buffer.strides[d] = stride;
    stride *=
        sizes[d] + (d == static_cast<int64_t>(sizes.size()) - 1 ? pad : 0);
  }
  size_t bytes = static_cast<size_t>(stride) * elementBytes(kind);
  buffer.storage.assign((bytes + 7) / 8 + 1, 0);
  return buffer;
}

HostBuffer HostBuffer::view(ElementKind kind, void *data,
                            std::vector<int64_t> sizes,
                            std::vector<int64_t> strides) {
  HostBuffer buffer;
  buffer.kind = kind;
  buffer.sizes = std::move(sizes);
  buffer.strides = std::move(strides);
  buffer.external = data;
  return buffer;
}

int64_t HostBuffer::numElements() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

int64_t HostBuffer::offsetOf(const int64_t *index) const {
  int64_t offset = 0;
  for (size_t d = 0; d < sizes.size(); ++d)
    offset += index[d] * strides[d];
  return offset;
}

/// Converts a row-major linear position to a storage offset.
static int64_t storageOffset(const HostBuffer &b, int64_t linear) {
  int64_t offset = 0;
  for (int64_t d = static_cast<int64_t>(b.sizes.size()) - 1; d >= 0; --d) {
    offset += (linear % b.sizes[d]) * b.strides[d];
    linear /= b.sizes[d];
  }
  return offset;
}

double HostBuffer::get(int64_t linear) const {
  const char *base = reinterpret_cast<const char *>(data()) +
                     storageOffset(*this, linear) * elementBytes(kind);
  switch (kind) {
  case ElementKind::BF16: {
    uint16_t bits;
    std::memcpy(&bits, base, 2);
    return ref::bf16ToFloat(bits);
  }
  case ElementKind::F16: {
    uint16_t bits;
    std::memcpy(&bits, base, 2);
    return ref::f16ToFloat(bits);
  }
  case ElementKind::F32: {
    float v;
    std::memcpy(&v, base, 4);
    return v;
  }
  case ElementKind::F64: {
    double v;
    std::memcpy(&v, base, 8);
    return v;
  }
  case ElementKind::I32: {
    int32_t v;
    std::memcpy(&v, base, 4);
    return v;
  }
  case ElementKind::I64: {
    int64_t v;
    std::memcpy(&v, base, 8);
    return static_cast<double>(v);
  }
  }
  return 0.0;
}

void HostBuffer::set(int64_t linear, double value) {
  char *base = reinterpret_cast<char *>(data()) +
               storageOffset(*this, linear) * elementBytes(kind);
  switch (kind) {
  case ElementKind::BF16: {
    uint16_t bits = ref::floatToBF16(static_cast<float>(value));
    std::memcpy(base, &bits, 2);
    return;
  }
  case ElementKind::F16: {
    uint16_t bits = ref::floatToF16(static_cast<float>(value));
    std::memcpy(base, &bits, 2);
    return;
  }
  case ElementKind::F32: {
    float v = static_cast<float>(value);
    std::memcpy(base, &v, 4);
    return;
  }
  case ElementKind::F64:
    std::memcpy(base, &value, 8);
    return;
  case ElementKind::I32: {
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(base, &v, 4);
    return;
  }
  case ElementKind::I64: {
    int64_t v = static_cast<int64_t>(value);
    std::memcpy(base, &v, 8);
    return;
  }
  }
}

void HostBuffer::poison() {
  if (kind == ElementKind::I32 || kind == ElementKind::I64) {
    std::memset(storage.data(), 0x5a, storage.size() * 8);
    return;
  }
  // 0xff.. is a NaN in every floating-point format here.
  std::memset(storage.data(), 0xff, storage.size() * 8);
}

} // namespace kiln::driver
