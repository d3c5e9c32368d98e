//===- Launch.cpp - what every kernel launcher shares ---------------------===//

#include "Launch.h"

#include "CudaApi.h"
#include "KernelCache.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace kiln::detail {

namespace {

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Part of the cache key: must name what compileToCubin passes to NVRTC.
std::string nvrtcOptionsFor(const std::string &arch) {
  return "--gpu-architecture=" + arch + " -std=c++17 -default-device";
}

} // namespace

std::string shapeString(const std::vector<int64_t> &v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i)
    os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

Status checkTensor(const char *what, const TensorRef &t, DType dtype,
                   const std::vector<int64_t> &want) {
  if (t.dtype != dtype)
    return Status::error(std::string(what) + " must be " + dtypeName(dtype) +
                         ", got " + dtypeName(t.dtype));
  if (t.sizes.size() != want.size() || t.strides.size() != want.size())
    return Status::error(
        std::string(what) + " must have rank " + std::to_string(want.size()) +
        " (sizes and strides), got " + std::to_string(t.sizes.size()) +
        " sizes and " + std::to_string(t.strides.size()) + " strides");
  if (t.sizes != want)
    return Status::error(std::string(what) + " has shape " +
                         shapeString(t.sizes) + ", expected " +
                         shapeString(want));
  for (int64_t stride : t.strides)
    if (stride < 0)
      return Status::error(std::string(what) +
                           " has a negative stride; strides must be >= 0");
  for (int64_t size : t.sizes)
    if (size >= (int64_t{1} << 31))
      return Status::error(std::string(what) + " has a dimension of " +
                           std::to_string(size) +
                           "; dimensions must be below 2^31");
  if (!t.data)
    return Status::error(std::string(what) + " is a null pointer");
  return Status();
}

Status checkStaged(const char *what, const TensorRef &t) {
  int64_t chunk = 16 / static_cast<int64_t>(dtypeBytes(t.dtype));
  if (t.strides[3] != 1)
    return Status::error(std::string(what) +
                         " must be contiguous in its last (head) dimension, "
                         "got stride " +
                         std::to_string(t.strides[3]));
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
    return Status::error(std::string(what) +
                         " must be 16-byte aligned for cp.async");
  for (int dim : {0, 1, 2})
    if (t.strides[dim] % chunk != 0)
      return Status::error(
          std::string(what) + " stride " + std::to_string(t.strides[dim]) +
          " of dimension " + std::to_string(dim) + " must be a multiple of " +
          std::to_string(chunk) + " elements (16-byte aligned rows)");
  return Status();
}

Status checkOnDevice(const char *what, const TensorRef &t) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  unsigned memoryType = 0;
  if (d->cuPointerGetAttribute(
          &memoryType, api::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
          reinterpret_cast<api::CUdeviceptr>(t.data)) != 0 ||
      memoryType != api::CU_MEMORYTYPE_DEVICE)
    return Status::error(std::string(what) +
                         " is not device memory of the current context");
  return Status();
}

Status problemSizes(const TensorRef &q, const TensorRef &k, int64_t gqaGroup,
                    const std::string &variant, ProblemSizes &sizes) {
  if (q.sizes.size() != 4 || k.sizes.size() != 4)
    return Status::error("q and k must be rank-4 [batch, seq, heads, head_dim] "
                         "tensors");
  sizes = {q.sizes[0], q.sizes[2], k.sizes[2], q.sizes[1], k.sizes[1]};
  if (sizes.batch < 1 || sizes.seqQ < 1 || sizes.heads < 1 || sizes.seqKV < 1 ||
      sizes.kvHeads < 1)
    return Status::error("every size must be at least 1, got q " +
                         shapeString(q.sizes) + " and k " +
                         shapeString(k.sizes));
  if (sizes.heads != sizes.kvHeads * gqaGroup)
    return Status::error(
        "q has " + std::to_string(sizes.heads) + " heads and k " +
        std::to_string(sizes.kvHeads) + "; variant '" + variant +
        "' needs heads = kv_heads * " + std::to_string(gqaGroup));
  if (sizes.batch > 65535 || sizes.heads > 65535)
    return Status::error("batch and heads must be at most 65535 (grid limits)");
  return Status();
}

Status checkCaptures(const std::string &variant,
                     const std::vector<CaptureSpec> &decls,
                     const std::vector<TensorRef> &captures,
                     const ProblemSizes &sizes) {
  if (captures.size() != decls.size())
    return Status::error("variant '" + variant + "' captures " +
                         std::to_string(decls.size()) + " tensors, got " +
                         std::to_string(captures.size()));
  for (size_t i = 0; i < captures.size(); ++i) {
    const CaptureSpec &decl = decls[i];
    std::vector<int64_t> want;
    for (const std::string &dim : decl.dims) {
      if (dim == "batch")
        want.push_back(sizes.batch);
      else if (dim == "heads")
        want.push_back(sizes.heads);
      else if (dim == "kv_heads")
        want.push_back(sizes.kvHeads);
      else if (dim == "seq_q")
        want.push_back(sizes.seqQ);
      else if (dim == "seq_kv")
        want.push_back(sizes.seqKV);
      else {
        // A literal size; anything else is a malformed spec, not a crash.
        char *end = nullptr;
        long long size = std::strtoll(dim.c_str(), &end, 10);
        if (dim.empty() || *end != '\0' || size < 0)
          return Status::error(
              "capture '" + decl.name + "' declares dim '" + dim +
              "'; a dim is batch, heads, kv_heads, seq_q, seq_kv or a size");
        want.push_back(size);
      }
    }
    std::string what = "capture '" + decl.name + "'";
    Status st;
    if (!(st = checkTensor(what.c_str(), captures[i], decl.dtype, want)).ok() ||
        !(st = checkOnDevice(what.c_str(), captures[i])).ok())
      return st;
    if (want.size() > 4)
      return Status::error(what + " has rank above 4");
  }
  return Status();
}

void KernelParams::addTensor(const TensorRef &t, size_t rank) {
  std::vector<char> bytes(8 + 16 * rank, 0);
  std::memcpy(bytes.data(), &t.data, 8);
  for (size_t i = 0; i < rank && i < t.sizes.size(); ++i) {
    long long size = t.sizes[i], stride = t.strides[i];
    std::memcpy(bytes.data() + 8 + 8 * i, &size, 8);
    std::memcpy(bytes.data() + 8 + 8 * rank + 8 * i, &stride, 8);
  }
  storage_.push_back(std::move(bytes));
}

void KernelParams::addCaptures(const std::vector<CaptureSpec> &decls,
                               const std::vector<TensorRef> &captures) {
  for (size_t i = 0; i < captures.size(); ++i)
    addTensor(captures[i], decls[i].dims.empty() ? 1 : decls[i].dims.size());
}

void **KernelParams::pointers() {
  pointers_.clear();
  for (std::vector<char> &bytes : storage_)
    pointers_.push_back(bytes.data());
  return pointers_.data();
}

Status loadModule(const std::string &source, const std::string &arch,
                  const std::string &name, int ordinal,
                  const std::vector<FunctionRequest> &functions,
                  LoadedModule &loaded) {
  if (Status s = cuda::init(ordinal); !s.ok())
    return s;
  std::string deviceArchName, deviceName;
  if (Status s = deviceArch(ordinal, deviceArchName, deviceName); !s.ok())
    return s;
  if (deviceArchName != arch)
    return Status::error("kernel '" + name + "' was compiled for " + arch +
                         " but device " + std::to_string(ordinal) + " (" +
                         deviceName + ") needs " + deviceArchName);
  const api::Driver *d = nullptr;
  api::driver(d);

  LoadedModule result;
  d->cuCtxGetCurrent(&result.context);
  auto start = std::chrono::steady_clock::now();
  std::string key = cacheKey(source, arch, nvrtcOptionsFor(arch));
  std::string cubin;
  result.cacheHit = lookupCubin(key, cubin);
  if (!result.cacheHit) {
    std::string log;
    if (Status s = compileToCubin(source, arch, name, cubin, log); !s.ok())
      return s;
    storeCubin(key, cubin);
    result.compileMs = msSince(start);
    start = std::chrono::steady_clock::now();
  }
  api::CUmodule module;
  if (Status s = api::check(d->cuModuleLoadData(&module, cubin.data()),
                            "cuModuleLoadData");
      !s.ok())
    return s;
  // Unloads the module on every failure below.
  struct Unload {
    void *module;
    ~Unload() { unloadModule(module); }
  } unload{module};

  api::CUdevice device;
  d->cuDeviceGet(&device, ordinal);
  int maxShared = 0;
  d->cuDeviceGetAttribute(
      &maxShared, api::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
      device);
  for (const FunctionRequest &request : functions) {
    api::CUfunction function;
    if (Status s = api::check(
            d->cuModuleGetFunction(&function, module, request.name.c_str()),
            "cuModuleGetFunction");
        !s.ok())
      return s;
    if (request.sharedBytes > maxShared)
      return Status::error("kernel '" + request.name + "' needs " +
                           std::to_string(request.sharedBytes) +
                           " bytes of shared memory; " + deviceName +
                           " allows " + std::to_string(maxShared));
    if (Status s = api::check(
            d->cuFuncSetAttribute(
                function, api::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                static_cast<int>(request.sharedBytes)),
            "cuFuncSetAttribute(max dynamic shared memory)");
        !s.ok())
      return s;
    result.functions.push_back(function);
  }
  unload.module = nullptr;
  result.module = module;
  result.maxShared = maxShared;
  result.loadMs = msSince(start);
  loaded = std::move(result);
  return Status();
}

ScopedContext::ScopedContext(void *context) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok()) {
    status_ = s;
    return;
  }
  api::CUcontext current = nullptr;
  d->cuCtxGetCurrent(&current);
  if (!context || current == context)
    return;
  status_ = api::check(d->cuCtxPushCurrent(context),
                       "making the kernel's CUDA context current");
  pushed_ = status_.ok();
}

ScopedContext::~ScopedContext() {
  const api::Driver *d = nullptr;
  if (pushed_ && api::driver(d).ok()) {
    api::CUcontext popped = nullptr;
    d->cuCtxPopCurrent(&popped);
  }
}

void unloadModule(void *module) {
  const api::Driver *d = nullptr;
  if (module && api::driver(d).ok())
    d->cuModuleUnload(module);
}

Status launch(void *function, int64_t gridX, int64_t gridY, int64_t gridZ,
              int64_t numThreads, int64_t sharedBytes, void *stream,
              KernelParams &params, const std::string &what) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  return api::check(d->cuLaunchKernel(function, static_cast<unsigned>(gridX),
                                      static_cast<unsigned>(gridY),
                                      static_cast<unsigned>(gridZ),
                                      static_cast<unsigned>(numThreads), 1, 1,
                                      static_cast<unsigned>(sharedBytes),
                                      stream, params.pointers(), nullptr),
                    what.c_str());
}

} // namespace kiln::detail
