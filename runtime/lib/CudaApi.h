//===- CudaApi.h - NVRTC and CUDA driver entry points via dlopen -*- C++
//-*-===//
//
// The few declarations Kiln needs, written out so the runtime builds without
// CUDA headers and starts on machines without CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDAAPI_H
#define KILN_RUNTIME_LIB_CUDAAPI_H

#include "kiln/Runtime.h"

#include <cstddef>

namespace kiln::api {

using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;
using CUdeviceptr = unsigned long long;

enum : int {
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_MEMORYTYPE_DEVICE = 2,
};

/// cuLaunchKernelEx's attribute and configuration (cuda.h's CUlaunchAttribute
/// and CUlaunchConfig, CUDA 11.8 and later): an id padded to 8 bytes and a
/// 64-byte value union, whose largest members are 8-byte aligned.
enum : int { CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };
struct CUlaunchAttribute {
  int id;
  char pad[4];
  union alignas(8) {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
  } value;
};
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};
// The layouts of cuda.h (CUDA 13.0) on LP64.
static_assert(sizeof(CUlaunchAttribute) == 72 &&
                  offsetof(CUlaunchAttribute, value) == 8,
              "cuda.h's CUlaunchAttribute");
static_assert(sizeof(CUlaunchConfig) == 56 &&
                  offsetof(CUlaunchConfig, hStream) == 32 &&
                  offsetof(CUlaunchConfig, attrs) == 40 &&
                  offsetof(CUlaunchConfig, numAttrs) == 48,
              "cuda.h's CUlaunchConfig");

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction,
                                                          int, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemGetInfo)(size_t *, size_t *);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  /// Optional (drivers for CUDA 12 and later): null where the driver lacks
  /// it; only plans with TMA tensor maps need it.
  CUresult (*cuTensorMapEncodeTiled)(void *tensorMap, int dataType,
                                     unsigned rank, void *globalAddress,
                                     const unsigned long long *globalDim,
                                     const unsigned long long *globalStrides,
                                     const unsigned *boxDim,
                                     const unsigned *elementStrides,
                                     int interleave, int swizzle,
                                     int l2Promotion, int oobFill);
  /// Optional (CUDA 11.8 and later): null where the driver lacks it; then
  /// kernels that could overlap the previous one launch as others do.
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *config, CUfunction,
                               void **kernelParams, void **extra);
};

using nvrtcResult = int;
using nvrtcProgram = void *;

struct Nvrtc {
  const char *(*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcVersion)(int *, int *);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *,
                                    int, const char *const *,
                                    const char *const *);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
};

/// The driver, loaded and initialised once; an error says why not (no
/// libcuda.so.1, no device, ...).
Status driver(const Driver *&out);
/// NVRTC, loaded once.
Status nvrtc(const Nvrtc *&out);

/// Which NVRTC a compile would use, for cache keys, without loading it
/// (loading takes ~6 ms, which a warm start should not pay): the real path,
/// size and modification time of the libnvrtc.so.13 already loaded in the
/// process (PyTorch's), else of the first one in $LD_LIBRARY_PATH's
/// folders, the system's library folders and the CUDA toolkit's (the order
/// dlopen and loadNvrtc search); NVRTC's version, loading it, when no such
/// file is found. Computed once per process.
const std::string &nvrtcIdentity();
/// "cuFoo failed: <driver's message>".
Status check(CUresult result, const char *what);

/// The device library headers, embedded at build time: include names and
/// contents, in the same order.
extern const char *const kDeviceLibraryNames[];
extern const char *const kDeviceLibrarySources[];
extern const int kDeviceLibraryCount;

} // namespace kiln::api

#endif // KILN_RUNTIME_LIB_CUDAAPI_H
