//===- ForwardKernel.cpp - compile, cache, load, validate, launch ---------===//

#include "CudaApi.h"
#include "KernelCache.h"

#include "kiln/Runtime.h"

#include <chrono>
#include <cstring>
#include <mutex>
#include <sstream>

namespace kiln {

const char *runtimeVersion() { return "kiln-0.1.0"; }

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "fp16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "?";
}

size_t dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  }
  return 0;
}

namespace {

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

std::string nvrtcOptionsFor(const std::string &arch) {
  return "--gpu-architecture=" + arch + " -std=c++17 -default-device";
}

} // namespace

Status compileToCubin(const std::string &source, const std::string &arch,
                      const std::string &nameForErrors, std::string &cubin,
                      std::string &log) {
  if (arch != "sm_80" && arch != "sm_90a")
    return Status::error("unsupported arch '" + arch +
                         "': Kiln compiles for sm_80 and sm_90a");
  const api::Nvrtc *nv = nullptr;
  if (Status s = api::nvrtc(nv); !s.ok())
    return s;
  api::nvrtcProgram program = nullptr;
  std::string fileName = nameForErrors + ".cu";
  if (nv->nvrtcCreateProgram(
          &program, source.c_str(), fileName.c_str(), api::kDeviceLibraryCount,
          api::kDeviceLibrarySources, api::kDeviceLibraryNames) != 0)
    return Status::error("nvrtcCreateProgram failed for " + nameForErrors);
  std::string archOption = "--gpu-architecture=" + arch;
  const char *options[] = {archOption.c_str(), "-std=c++17", "-default-device"};
  int result = nv->nvrtcCompileProgram(program, 3, options);
  size_t logSize = 0;
  nv->nvrtcGetProgramLogSize(program, &logSize);
  log.assign(logSize, '\0');
  if (logSize)
    nv->nvrtcGetProgramLog(program, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  if (result != 0) {
    nv->nvrtcDestroyProgram(&program);
    return Status::error("NVRTC could not compile kernel '" + nameForErrors +
                         "' for " + arch + ": " +
                         nv->nvrtcGetErrorString(result) + "\n" + log);
  }
  size_t size = 0;
  nv->nvrtcGetCUBINSize(program, &size);
  cubin.assign(size, '\0');
  nv->nvrtcGetCUBIN(program, cubin.data());
  nv->nvrtcDestroyProgram(&program);
  return Status();
}

namespace cuda {

Status init(int ordinal) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  int count = 0;
  d->cuDeviceGetCount(&count);
  if (ordinal < 0 || ordinal >= count)
    return Status::error("no CUDA device " + std::to_string(ordinal) +
                         " (the driver reports " + std::to_string(count) + ")");
  api::CUdevice device;
  if (Status s = api::check(d->cuDeviceGet(&device, ordinal), "cuDeviceGet");
      !s.ok())
    return s;
  api::CUcontext current = nullptr;
  d->cuCtxGetCurrent(&current);
  if (current)
    return Status();
  api::CUcontext context;
  if (Status s = api::check(d->cuDevicePrimaryCtxRetain(&context, device),
                            "cuDevicePrimaryCtxRetain");
      !s.ok())
    return s;
  return api::check(d->cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

Status malloc(void **ptr, size_t bytes) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  api::CUdeviceptr p = 0;
  Status s = api::check(d->cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc");
  *ptr = reinterpret_cast<void *>(p);
  return s;
}

Status free(void *ptr) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  return api::check(d->cuMemFree(reinterpret_cast<api::CUdeviceptr>(ptr)),
                    "cuMemFree");
}

Status copyToDevice(void *dst, const void *src, size_t bytes) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  return api::check(
      d->cuMemcpyHtoD(reinterpret_cast<api::CUdeviceptr>(dst), src, bytes),
      "cuMemcpyHtoD");
}

Status copyToHost(void *dst, const void *src, size_t bytes) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  return api::check(
      d->cuMemcpyDtoH(dst, reinterpret_cast<api::CUdeviceptr>(src), bytes),
      "cuMemcpyDtoH");
}

Status synchronize() {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  return api::check(d->cuCtxSynchronize(), "kernel execution");
}

Status memoryInfo(size_t &freeBytes, size_t &totalBytes) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  return api::check(d->cuMemGetInfo(&freeBytes, &totalBytes), "cuMemGetInfo");
}

Status timeMs(const std::function<Status()> &fn, int repeats, double &ms) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  api::CUevent start, stop;
  d->cuEventCreate(&start, 0);
  d->cuEventCreate(&stop, 0);
  d->cuEventRecord(start, nullptr);
  for (int i = 0; i < repeats; ++i)
    if (Status s = fn(); !s.ok())
      return s;
  d->cuEventRecord(stop, nullptr);
  Status s = api::check(d->cuEventSynchronize(stop), "kernel execution");
  float elapsed = 0;
  d->cuEventElapsedTime(&elapsed, start, stop);
  d->cuEventDestroy(start);
  d->cuEventDestroy(stop);
  ms = elapsed / repeats;
  return s;
}

} // namespace cuda

Status deviceArch(int ordinal, std::string &arch, std::string &name) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  api::CUdevice device;
  if (Status s = api::check(d->cuDeviceGet(&device, ordinal), "cuDeviceGet");
      !s.ok())
    return s;
  char buffer[256] = {0};
  d->cuDeviceGetName(buffer, sizeof(buffer) - 1, device);
  name = buffer;
  int major = 0, minor = 0;
  d->cuDeviceGetAttribute(
      &major, api::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  d->cuDeviceGetAttribute(
      &minor, api::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  // sm_80 cubins run on every 8.x device; sm_90a is Hopper's own.
  if (major == 8)
    arch = "sm_80";
  else if (major == 9 && minor == 0)
    arch = "sm_90a";
  else
    return Status::error(name + " has compute capability " +
                         std::to_string(major) + "." + std::to_string(minor) +
                         "; Kiln supports 8.x (sm_80) and 9.0 (sm_90a)");
  return Status();
}

Status ForwardKernel::load(const ForwardKernelSpec &spec, int ordinal,
                           std::unique_ptr<ForwardKernel> &kernel) {
  if (Status s = cuda::init(ordinal); !s.ok())
    return s;
  std::string arch, deviceName;
  if (Status s = deviceArch(ordinal, arch, deviceName); !s.ok())
    return s;
  if (arch != spec.arch)
    return Status::error("kernel '" + spec.kernelName + "' was compiled for " +
                         spec.arch + " but device " + std::to_string(ordinal) +
                         " (" + deviceName + ") needs " + arch);
  const api::Driver *d = nullptr;
  api::driver(d);

  auto result = std::unique_ptr<ForwardKernel>(new ForwardKernel());
  result->spec_ = spec;
  auto start = std::chrono::steady_clock::now();
  std::string key =
      cacheKey(spec.source, spec.arch, nvrtcOptionsFor(spec.arch));
  std::string cubin;
  result->cacheHit_ = lookupCubin(key, cubin);
  if (!result->cacheHit_) {
    std::string log;
    if (Status s =
            compileToCubin(spec.source, spec.arch, spec.kernelName, cubin, log);
        !s.ok())
      return s;
    storeCubin(key, cubin);
    result->compileMs_ = msSince(start);
    start = std::chrono::steady_clock::now();
  }
  api::CUmodule module;
  if (Status s = api::check(d->cuModuleLoadData(&module, cubin.data()),
                            "cuModuleLoadData");
      !s.ok())
    return s;
  // From here on the module belongs to `result` (unloaded on every path).
  result->module_ = module;
  api::CUfunction function;
  if (Status s = api::check(
          d->cuModuleGetFunction(&function, module, spec.kernelName.c_str()),
          "cuModuleGetFunction");
      !s.ok())
    return s;
  api::CUdevice device;
  d->cuDeviceGet(&device, ordinal);
  int maxShared = 0;
  d->cuDeviceGetAttribute(
      &maxShared, api::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
      device);
  if (spec.sharedBytes > maxShared)
    return Status::error("kernel '" + spec.kernelName + "' needs " +
                         std::to_string(spec.sharedBytes) +
                         " bytes of shared memory; " + deviceName + " allows " +
                         std::to_string(maxShared));
  if (Status s = api::check(
          d->cuFuncSetAttribute(
              function, api::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              static_cast<int>(spec.sharedBytes)),
          "cuFuncSetAttribute(max dynamic shared memory)");
      !s.ok())
    return s;
  result->function_ = function;
  result->maxShared_ = maxShared;
  result->loadMs_ = msSince(start);
  kernel = std::move(result);
  return Status();
}

ForwardKernel::~ForwardKernel() {
  const api::Driver *d = nullptr;
  if (module_ && api::driver(d).ok())
    d->cuModuleUnload(module_);
}

namespace {

std::string shapeString(const std::vector<int64_t> &v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i)
    os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

/// The kernel's view of a TensorRef: Tensor<T, R> by value.
struct PackedTensor {
  void *ptr;
  long long size[4];
  long long stride[4];
};

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

/// cp.async reads q/k/v in 16-byte chunks: unit inner stride, aligned rows.
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

} // namespace

Status ForwardKernel::forward(const TensorRef &q, const TensorRef &k,
                              const TensorRef &v, const TensorRef &out,
                              const TensorRef &lse,
                              const std::vector<TensorRef> &captures,
                              void *stream) const {
  const ForwardKernelSpec &s = spec_;
  if (q.sizes.size() != 4 || k.sizes.size() != 4)
    return Status::error("q and k must be rank-4 [batch, seq, heads, head_dim] "
                         "tensors");
  int64_t batch = q.sizes[0], seqQ = q.sizes[1], heads = q.sizes[2];
  int64_t seqKV = k.sizes[1], kvHeads = k.sizes[2];
  if (batch < 1 || seqQ < 1 || heads < 1 || seqKV < 1 || kvHeads < 1)
    return Status::error("every size must be at least 1, got q " +
                         shapeString(q.sizes) + " and k " +
                         shapeString(k.sizes));
  if (heads != kvHeads * s.gqaGroup)
    return Status::error("q has " + std::to_string(heads) + " heads and k " +
                         std::to_string(kvHeads) + "; variant '" + s.variant +
                         "' needs heads = kv_heads * " +
                         std::to_string(s.gqaGroup));
  if (batch > 65535 || heads > 65535)
    return Status::error("batch and heads must be at most 65535 (grid limits)");
  Status st;
  if (!(st = checkTensor("q", q, s.dtype, {batch, seqQ, heads, s.headDimQK}))
           .ok() ||
      !(st = checkTensor("k", k, s.dtype, {batch, seqKV, kvHeads, s.headDimQK}))
           .ok() ||
      !(st = checkTensor("v", v, s.dtype, {batch, seqKV, kvHeads, s.headDimV}))
           .ok() ||
      !(st = checkTensor("out", out, s.dtype, {batch, seqQ, heads, s.headDimV}))
           .ok() ||
      !(st = checkTensor("lse", lse, DType::F32, {batch, heads, seqQ})).ok() ||
      !(st = checkStaged("q", q)).ok() || !(st = checkStaged("k", k)).ok() ||
      !(st = checkStaged("v", v)).ok())
    return st;
  for (auto [name, t] : {std::pair<const char *, const TensorRef *>{"q", &q},
                         {"k", &k},
                         {"v", &v},
                         {"out", &out},
                         {"lse", &lse}})
    if (!(st = checkOnDevice(name, *t)).ok())
      return st;
  if (captures.size() != s.captures.size())
    return Status::error("variant '" + s.variant + "' captures " +
                         std::to_string(s.captures.size()) + " tensors, got " +
                         std::to_string(captures.size()));
  std::vector<PackedTensor> packed;
  for (const TensorRef *t : {&q, &k, &v, &out, &lse}) {
    PackedTensor p{t->data, {0, 0, 0, 0}, {0, 0, 0, 0}};
    for (size_t i = 0; i < t->sizes.size(); ++i) {
      p.size[i] = t->sizes[i];
      p.stride[i] = t->strides[i];
    }
    packed.push_back(p);
  }
  for (size_t i = 0; i < captures.size(); ++i) {
    const CaptureSpec &decl = s.captures[i];
    std::vector<int64_t> want;
    for (const std::string &dim : decl.dims) {
      if (dim == "batch")
        want.push_back(batch);
      else if (dim == "heads")
        want.push_back(heads);
      else if (dim == "kv_heads")
        want.push_back(kvHeads);
      else if (dim == "seq_q")
        want.push_back(seqQ);
      else if (dim == "seq_kv")
        want.push_back(seqKV);
      else
        want.push_back(std::stoll(dim));
    }
    std::string what = "capture '" + decl.name + "'";
    if (!(st = checkTensor(what.c_str(), captures[i], decl.dtype, want)).ok() ||
        !(st = checkOnDevice(what.c_str(), captures[i])).ok())
      return st;
    if (want.size() > 4)
      return Status::error(what + " has rank above 4");
    PackedTensor p{captures[i].data, {0, 0, 0, 0}, {0, 0, 0, 0}};
    for (size_t j = 0; j < want.size(); ++j) {
      p.size[j] = captures[i].sizes[j];
      p.stride[j] = captures[i].strides[j];
    }
    packed.push_back(p);
  }
  // Tensor<T, R> for R < 4 is a prefix of PackedTensor's layout only for
  // R = 4; rank-R arguments are passed as their own sized structs.
  std::vector<std::vector<char>> storage;
  std::vector<void *> params;
  std::vector<size_t> ranks = {4, 4, 4, 4, 3};
  for (const CaptureSpec &decl : s.captures)
    ranks.push_back(decl.dims.empty() ? 1 : decl.dims.size());
  for (size_t i = 0; i < packed.size(); ++i) {
    size_t r = ranks[i];
    std::vector<char> bytes(8 + 16 * r);
    std::memcpy(bytes.data(), &packed[i].ptr, 8);
    std::memcpy(bytes.data() + 8, packed[i].size, 8 * r);
    std::memcpy(bytes.data() + 8 + 8 * r, packed[i].stride, 8 * r);
    storage.push_back(std::move(bytes));
  }
  for (auto &bytes : storage)
    params.push_back(bytes.data());
  const api::Driver *d = nullptr;
  api::driver(d);
  unsigned gridX = static_cast<unsigned>((seqQ + s.blockM - 1) / s.blockM);
  return api::check(d->cuLaunchKernel(function_, gridX,
                                      static_cast<unsigned>(heads),
                                      static_cast<unsigned>(batch),
                                      static_cast<unsigned>(s.numThreads), 1, 1,
                                      static_cast<unsigned>(s.sharedBytes),
                                      stream, params.data(), nullptr),
                    "cuLaunchKernel");
}

} // namespace kiln
