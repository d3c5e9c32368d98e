//===- CApi.cpp - C entry points of the Kiln runtime ----------------------===//

#include "kiln/kiln_c.h"

#include "kiln/Runtime.h"

#include <cstring>

struct kiln_forward_kernel {
  std::unique_ptr<kiln::ForwardKernel> kernel;
};

struct kiln_backward_kernel {
  std::unique_ptr<kiln::BackwardKernel> kernel;
};

namespace {

int report(const kiln::Status &s, char *error, int size) {
  if (s.ok())
    return 0;
  if (error && size > 0) {
    std::strncpy(error, s.message().c_str(), size - 1);
    error[size - 1] = '\0';
  }
  return 1;
}

/// Captured tensors need their declarations (dims, dtypes), which the C API
/// does not carry; `subject` names what reads them.
kiln::Status capturesRefused(const std::string &subject, int count) {
  return kiln::Status::error(subject + " reads " + std::to_string(count) +
                             " captured tensors; the C API does not pass "
                             "captures yet (use the C++ API)");
}

/// The C API's dtype codes: 0 bf16, 1 fp16; anything else is an error.
kiln::Status dtypeFromCode(int code, kiln::DType &dtype) {
  if (code != 0 && code != 1)
    return kiln::Status::error("dtype code " + std::to_string(code) +
                               " is not 0 (bf16) or 1 (fp16)");
  dtype = code == 0 ? kiln::DType::BF16 : kiln::DType::F16;
  return kiln::Status();
}

kiln::TensorRef tensor(void *data, kiln::DType dtype, const long long *sizes,
                       const long long *strides, int rank) {
  kiln::TensorRef t;
  t.data = data;
  t.dtype = dtype;
  t.sizes.assign(sizes, sizes + rank);
  t.strides.assign(strides, strides + rank);
  return t;
}

} // namespace

extern "C" int kiln_forward_load(const char *source, const char *kernelName,
                                 const char *arch, int numThreads,
                                 int sharedBytes, int blockM, int headDimQK,
                                 int headDimV, int gqaGroup, int dtype,
                                 int numCaptures, int device,
                                 kiln_forward_kernel **kernel, char *error,
                                 int errorSize) {
  if (numCaptures != 0)
    return report(capturesRefused(std::string("kernel '") + kernelName + "'",
                                  numCaptures),
                  error, errorSize);
  kiln::ForwardKernelSpec spec;
  spec.variant = kernelName;
  spec.kernelName = kernelName;
  spec.source = source;
  spec.arch = arch;
  spec.numThreads = numThreads;
  spec.sharedBytes = sharedBytes;
  spec.blockM = blockM;
  spec.headDimQK = headDimQK;
  spec.headDimV = headDimV;
  spec.gqaGroup = gqaGroup;
  if (kiln::Status s = dtypeFromCode(dtype, spec.dtype); !s.ok())
    return report(s, error, errorSize);
  auto result = new kiln_forward_kernel();
  kiln::Status s = kiln::ForwardKernel::load(spec, device, result->kernel);
  if (!s.ok()) {
    delete result;
    return report(s, error, errorSize);
  }
  *kernel = result;
  return 0;
}

extern "C" int kiln_forward_run(
    kiln_forward_kernel *kernel, void *q, const long long *qSizes,
    const long long *qStrides, void *k, const long long *kSizes,
    const long long *kStrides, void *v, const long long *vSizes,
    const long long *vStrides, void *out, const long long *outSizes,
    const long long *outStrides, void *lse, const long long *lseSizes,
    const long long *lseStrides, void *stream, char *error, int errorSize) {
  kiln::DType dt = kernel->kernel->spec().dtype;
  return report(kernel->kernel->forward(
                    tensor(q, dt, qSizes, qStrides, 4),
                    tensor(k, dt, kSizes, kStrides, 4),
                    tensor(v, dt, vSizes, vStrides, 4),
                    tensor(out, dt, outSizes, outStrides, 4),
                    tensor(lse, kiln::DType::F32, lseSizes, lseStrides, 3), {},
                    stream),
                error, errorSize);
}

extern "C" void kiln_forward_free(kiln_forward_kernel *kernel) {
  delete kernel;
}

namespace {

kiln::KernelEntry entry(const kiln_kernel_entry &e) {
  kiln::KernelEntry result;
  result.name = e.name ? e.name : "";
  result.numThreads = e.num_threads;
  result.sharedBytes = e.shared_bytes;
  return result;
}

} // namespace

extern "C" int kiln_backward_load(const kiln_backward_spec *spec, int device,
                                  kiln_backward_kernel **kernel, char *error,
                                  int errorSize) {
  if (!spec || !spec->source || !spec->arch)
    return report(kiln::Status::error("kiln_backward_load needs a spec with "
                                      "a source and an arch"),
                  error, errorSize);
  std::string variant = spec->variant ? spec->variant : "";
  if (spec->num_captures != 0)
    return report(capturesRefused("the backward of '" + variant + "'",
                                  spec->num_captures),
                  error, errorSize);
  kiln::BackwardKernelSpec s;
  s.variant = variant;
  s.source = spec->source;
  s.arch = spec->arch;
  s.atomicDQ = spec->atomic_dq != 0;
  s.blockM = spec->block_m;
  s.blockN = spec->block_n;
  s.headDimQK = spec->head_dim_qk;
  s.headDimV = spec->head_dim_v;
  s.gqaGroup = spec->gqa_group;
  if (kiln::Status st = dtypeFromCode(spec->dtype, s.dtype); !st.ok())
    return report(st, error, errorSize);
  s.preprocess = entry(spec->preprocess);
  s.dq = entry(spec->dq);
  s.dkdv = entry(spec->dkdv);
  s.convert = entry(spec->convert);
  auto result = new kiln_backward_kernel();
  kiln::Status st = kiln::BackwardKernel::load(s, device, result->kernel);
  if (!st.ok()) {
    delete result;
    return report(st, error, errorSize);
  }
  *kernel = result;
  return 0;
}

extern "C" int kiln_backward_run(
    kiln_backward_kernel *kernel, void *q, const long long *qSizes,
    const long long *qStrides, void *k, const long long *kSizes,
    const long long *kStrides, void *v, const long long *vSizes,
    const long long *vStrides, void *out, const long long *outSizes,
    const long long *outStrides, void *dout, const long long *doutSizes,
    const long long *doutStrides, void *lse, const long long *lseSizes,
    const long long *lseStrides, void *dq, const long long *dqSizes,
    const long long *dqStrides, void *dk, const long long *dkSizes,
    const long long *dkStrides, void *dv, const long long *dvSizes,
    const long long *dvStrides, void *stream, char *error, int errorSize) {
  kiln::DType dt = kernel->kernel->spec().dtype;
  return report(kernel->kernel->backward(
                    tensor(q, dt, qSizes, qStrides, 4),
                    tensor(k, dt, kSizes, kStrides, 4),
                    tensor(v, dt, vSizes, vStrides, 4),
                    tensor(out, dt, outSizes, outStrides, 4),
                    tensor(dout, dt, doutSizes, doutStrides, 4),
                    tensor(lse, kiln::DType::F32, lseSizes, lseStrides, 3),
                    tensor(dq, dt, dqSizes, dqStrides, 4),
                    tensor(dk, dt, dkSizes, dkStrides, 4),
                    tensor(dv, dt, dvSizes, dvStrides, 4), {}, stream),
                error, errorSize);
}

extern "C" void kiln_backward_free(kiln_backward_kernel *kernel) {
  delete kernel;
}
