//===- CudaApi.cpp - NVRTC and CUDA driver entry points via dlopen --------===//

#include "CudaApi.h"

#include "KernelCache.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::api {
namespace {

template <typename F>
bool bind(void *lib, F &fn, std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (void *sym = dlsym(lib, name)) {
      fn = reinterpret_cast<F>(sym);
      return true;
    }
  return false;
}

Status loadDriver(Driver &d) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib)
    return Status::error(
        std::string("cannot load the CUDA driver (libcuda.so.1): ") +
        dlerror() + "; is an NVIDIA driver installed?");
  bool ok =
      bind(lib, d.cuInit, {"cuInit"}) &&
      bind(lib, d.cuDeviceGetCount, {"cuDeviceGetCount"}) &&
      bind(lib, d.cuDeviceGet, {"cuDeviceGet"}) &&
      bind(lib, d.cuDeviceGetName, {"cuDeviceGetName"}) &&
      bind(lib, d.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}) &&
      bind(lib, d.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}) &&
      bind(lib, d.cuCtxSetCurrent, {"cuCtxSetCurrent"}) &&
      bind(lib, d.cuCtxGetCurrent, {"cuCtxGetCurrent"}) &&
      bind(lib, d.cuCtxSynchronize, {"cuCtxSynchronize"}) &&
      bind(lib, d.cuCtxPushCurrent,
           {"cuCtxPushCurrent_v2", "cuCtxPushCurrent"}) &&
      bind(lib, d.cuCtxPopCurrent, {"cuCtxPopCurrent_v2", "cuCtxPopCurrent"}) &&
      bind(lib, d.cuStreamSynchronize, {"cuStreamSynchronize"}) &&
      bind(lib, d.cuModuleLoadData, {"cuModuleLoadData"}) &&
      bind(lib, d.cuModuleUnload, {"cuModuleUnload"}) &&
      bind(lib, d.cuModuleGetFunction, {"cuModuleGetFunction"}) &&
      bind(lib, d.cuFuncSetAttribute, {"cuFuncSetAttribute"}) &&
      bind(lib, d.cuOccupancyMaxActiveBlocksPerMultiprocessor,
           {"cuOccupancyMaxActiveBlocksPerMultiprocessor"}) &&
      bind(lib, d.cuLaunchKernel, {"cuLaunchKernel"}) &&
      bind(lib, d.cuMemAlloc, {"cuMemAlloc_v2"}) &&
      bind(lib, d.cuMemFree, {"cuMemFree_v2"}) &&
      bind(lib, d.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}) &&
      bind(lib, d.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}) &&
      bind(lib, d.cuMemGetInfo, {"cuMemGetInfo_v2"}) &&
      bind(lib, d.cuMemsetD8Async, {"cuMemsetD8Async"}) &&
      bind(lib, d.cuPointerGetAttribute, {"cuPointerGetAttribute"}) &&
      bind(lib, d.cuEventCreate, {"cuEventCreate"}) &&
      bind(lib, d.cuEventRecord, {"cuEventRecord"}) &&
      bind(lib, d.cuEventSynchronize, {"cuEventSynchronize"}) &&
      bind(lib, d.cuEventElapsedTime,
           {"cuEventElapsedTime_v2", "cuEventElapsedTime"}) &&
      bind(lib, d.cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"}) &&
      bind(lib, d.cuGetErrorString, {"cuGetErrorString"});
  if (!ok)
    return Status::error("the CUDA driver lacks an entry point Kiln needs; "
                         "update the NVIDIA driver");
  if (!bind(lib, d.cuTensorMapEncodeTiled, {"cuTensorMapEncodeTiled"}))
    d.cuTensorMapEncodeTiled = nullptr;
  if (!bind(lib, d.cuLaunchKernelEx, {"cuLaunchKernelEx"}))
    d.cuLaunchKernelEx = nullptr;
  if (d.cuInit(0) != 0)
    return Status::error("cuInit failed: no usable CUDA device or driver");
  int count = 0;
  if (d.cuDeviceGetCount(&count) != 0 || count == 0)
    return Status::error("the CUDA driver reports no device");
  return Status();
}

Status loadNvrtc(Nvrtc &n) {
  // libnvrtc loads libnvrtc-builtins by bare name: load it first from the
  // usual toolkit folders so that lookup succeeds without LD_LIBRARY_PATH.
  const char *folders[] = {"", "/usr/local/cuda/lib64/",
                           "/usr/local/cuda/targets/x86_64-linux/lib/"};
  void *lib = nullptr;
  std::string tried;
  for (const char *folder : folders) {
    std::string builtins = std::string(folder) + "libnvrtc-builtins.so.13.0";
    dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL);
    std::string path = std::string(folder) + "libnvrtc.so.13";
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib)
      break;
    tried += (tried.empty() ? "" : ", ") + path;
  }
  if (!lib)
    return Status::error("cannot load NVRTC (tried " + tried +
                         "); install CUDA 13's NVRTC");
  bool ok = bind(lib, n.nvrtcGetErrorString, {"nvrtcGetErrorString"}) &&
            bind(lib, n.nvrtcVersion, {"nvrtcVersion"}) &&
            bind(lib, n.nvrtcCreateProgram, {"nvrtcCreateProgram"}) &&
            bind(lib, n.nvrtcCompileProgram, {"nvrtcCompileProgram"}) &&
            bind(lib, n.nvrtcGetProgramLogSize, {"nvrtcGetProgramLogSize"}) &&
            bind(lib, n.nvrtcGetProgramLog, {"nvrtcGetProgramLog"}) &&
            bind(lib, n.nvrtcGetCUBINSize, {"nvrtcGetCUBINSize"}) &&
            bind(lib, n.nvrtcGetCUBIN, {"nvrtcGetCUBIN"}) &&
            bind(lib, n.nvrtcDestroyProgram, {"nvrtcDestroyProgram"});
  if (!ok)
    return Status::error("NVRTC lacks an entry point Kiln needs");
  return Status();
}

} // namespace

Status driver(const Driver *&out) {
  static Driver d;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] { status = loadDriver(d); });
  out = status.ok() ? &d : nullptr;
  return status;
}

Status nvrtc(const Nvrtc *&out) {
  static Nvrtc n;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] { status = loadNvrtc(n); });
  out = status.ok() ? &n : nullptr;
  return status;
}

const std::string &nvrtcIdentity() {
  static const std::string identity = [] {
    // An NVRTC already in the process (PyTorch loads its own) is the one
    // loadNvrtc's dlopen will return.
    if (void *loaded = dlopen("libnvrtc.so.13", RTLD_LAZY | RTLD_NOLOAD)) {
      std::string known = symbolFileIdentity(dlsym(loaded, "nvrtcVersion"));
      dlclose(loaded);
      if (!known.empty())
        return known;
    }
    std::vector<std::string> folders;
    if (const char *path = std::getenv("LD_LIBRARY_PATH")) {
      std::stringstream parts(path);
      for (std::string folder; std::getline(parts, folder, ':');)
        if (!folder.empty())
          folders.push_back(folder);
    }
    for (const char *folder :
         {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
          "/usr/lib64", "/lib", "/usr/lib", "/usr/local/cuda/lib64",
          "/usr/local/cuda/targets/x86_64-linux/lib"})
      folders.push_back(folder);
    for (const std::string &folder : folders)
      if (std::string known =
              fileIdentity((folder + "/libnvrtc.so.13").c_str());
          !known.empty())
        return known;
    const Nvrtc *n = nullptr;
    int major = 0, minor = 0;
    if (nvrtc(n).ok())
      n->nvrtcVersion(&major, &minor);
    return "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
  }();
  return identity;
}

Status check(CUresult result, const char *what) {
  if (result == 0)
    return Status();
  const Driver *d = nullptr;
  const char *message = nullptr;
  if (driver(d).ok())
    d->cuGetErrorString(result, &message);
  return Status::error(
      std::string(what) + " failed: " +
      (message ? message : "CUDA error " + std::to_string(result)));
}

} // namespace kiln::api
