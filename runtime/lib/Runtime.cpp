//===- Runtime.cpp - versions, dtypes, NVRTC and device helpers -----------===//

#include "CudaApi.h"
#include "Launch.h"

#include "kiln/Runtime.h"

#include <vector>

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

std::vector<std::string> nvrtcOptions(const std::string &arch) {
  return {"--gpu-architecture=" + arch, "-std=c++17", "-default-device"};
}

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
  std::vector<std::string> options = nvrtcOptions(arch);
  std::vector<const char *> optionPointers;
  for (const std::string &option : options)
    optionPointers.push_back(option.c_str());
  int result =
      nv->nvrtcCompileProgram(program, static_cast<int>(optionPointers.size()),
                              optionPointers.data());
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

} // namespace kiln
