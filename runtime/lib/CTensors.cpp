//===- CTensors.cpp - what the C APIs share -------------------------------===//

#include "CTensors.h"

#include <algorithm>
#include <cstring>

namespace kiln::capi {

int report(const Status &s, char *error, int size) {
  if (s.ok())
    return 0;
  if (error && size > 0) {
    const std::string &message = s.message();
    size_t n = std::min(message.size(), static_cast<size_t>(size) - 1);
    // Cut before a UTF-8 character the buffer cannot hold whole (the
    // message may quote the caller's names or text): a torn one is invalid
    // UTF-8, which Python's decode() rejects.
    if (n < message.size())
      while (n > 0 && (static_cast<unsigned char>(message[n]) & 0xC0) == 0x80)
        --n;
    std::memcpy(error, message.data(), n);
    error[n] = '\0';
  }
  return 1;
}

namespace {

/// The C API's dtype codes (kiln_c.h); anything else is an error.
Status dtypeFromCode(int code, const std::string &what,
                           DType &dtype) {
  static const DType codes[] = {DType::BF16, DType::F16,
                                      DType::F32,  DType::F64,
                                      DType::I32,  DType::I64};
  if (code < 0 || code > 5)
    return Status::error(what + " has dtype code " +
                               std::to_string(code) +
                               "; codes are 0 bf16, 1 fp16, 2 f32, 3 f64, "
                               "4 i32, 5 i64");
  dtype = codes[code];
  return Status();
}

} // namespace

Status toTensorRef(const kiln_tensor &c, const std::string &what,
                         TensorRef &t) {
  if (c.rank < 0 || c.rank > 8 || (c.rank > 0 && (!c.sizes || !c.strides)))
    return Status::error(what + " has rank " + std::to_string(c.rank) +
                               " or null sizes / strides");
  if (Status s = dtypeFromCode(c.dtype, what, t.dtype); !s.ok())
    return s;
  t.data = c.data;
  t.sizes.assign(c.sizes, c.sizes + c.rank);
  t.strides.assign(c.strides, c.strides + c.rank);
  return Status();
}

Status fromC(const ProgramSpec &spec, const kiln_tensor *tensors,
             int numTensors, const kiln_tensor *captures, int numCaptures,
             std::vector<NamedTensor> &named, std::vector<TensorRef> &refs) {
  if (numTensors < 0 || numCaptures < 0 || (numTensors && !tensors) ||
      (numCaptures && !captures))
    return Status::error("bad tensor or capture arrays (negative counts or "
                         "null arrays)");
  named.clear();
  for (int i = 0; i < numTensors; ++i) {
    if (!tensors[i].name)
      return Status::error("tensor " + std::to_string(i) +
                                 " has no name");
    NamedTensor t;
    t.name = tensors[i].name;
    if (Status s = toTensorRef(tensors[i], t.name, t.tensor); !s.ok())
      return s;
    named.push_back(std::move(t));
  }
  refs.assign(numCaptures, TensorRef());
  for (int i = 0; i < numCaptures; ++i) {
    std::string what = "capture " + std::to_string(i);
    if (captures[i].name && i < static_cast<int>(spec.captures.size()) &&
        spec.captures[i].name != captures[i].name)
      return Status::error(what + " is named '" + captures[i].name +
                                 "'; variant '" + spec.variant + "' expects '" +
                                 spec.captures[i].name + "' there");
    if (Status s = toTensorRef(captures[i], what, refs[i]); !s.ok())
      return s;
  }
  return Status();
}

} // namespace kiln::capi
