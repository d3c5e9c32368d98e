//===- CApi.cpp - C entry points of the Kiln runtime ----------------------===//

#include "kiln/kiln_c.h"

#include "kiln/Runtime.h"

#include <cstring>

struct kiln_forward_kernel {
  std::unique_ptr<kiln::ForwardKernel> kernel;
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
    return report(kiln::Status::error(
                      std::string("kernel '") + kernelName + "' reads " +
                      std::to_string(numCaptures) +
                      " captured tensors; the C API does not pass captures "
                      "yet (use the C++ API)"),
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
  spec.dtype = dtype == 0 ? kiln::DType::BF16 : kiln::DType::F16;
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
