//===- bench_launch.cpp - host time of one kiln_program_run, and its parts
//-===//
//
// Issue 13's per-call host time, below Python and torch: kiln_program_run of
// a causal forward on a tiny bf16 problem (no synchronization between calls),
// next to the driver calls a run is made of, each timed alone on the same
// host: an empty kernel's cuLaunchKernel, cuPointerGetAttribute,
// cuTensorMapEncodeTiled and a context push/pop. Built on the GPU host
// against libkiln.so and the driver:
//
//   g++ -O2 -std=c++17 bench/bench_launch.cpp -Iruntime/include \
//       -I/usr/local/cuda/include -L<dir of libkiln.so> -l:libkiln.so \
//       -l:libcuda.so.1 -Wl,-rpath,<dir> -o /tmp/bench_launch
//   /tmp/bench_launch examples/causal.mlir
//
// (The build machine compiles it as build/bench/kiln-bench-launch when CUDA's
// headers are there, so that it keeps compiling; bench/CMakeLists.txt.)
//
//===----------------------------------------------------------------------===//

#include "kiln/kiln_jit_c.h"

#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace {

char error[8192];

#define CHECK_KILN(call)                                                       \
  if (call) {                                                                  \
    std::fprintf(stderr, "error: %s\n", error);                                \
    return 1;                                                                  \
  }
#define CHECK_CU(call)                                                         \
  if (CUresult r = call; r != CUDA_SUCCESS) {                                  \
    std::fprintf(stderr, "error: %s = %d\n", #call, static_cast<int>(r));      \
    return 1;                                                                  \
  }

/// Microseconds per call of `fn`, after a warm-up, over `calls` calls; the
/// stream is drained every 1000 calls so launch queues never fill.
double perCallUs(CUstream stream, const std::function<void()> &fn,
                 int calls = 20000) {
  for (int i = 0; i < 1000; ++i)
    fn();
  cuStreamSynchronize(stream);
  double total = 0;
  for (int done = 0; done < calls; done += 1000) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 1000; ++i)
      fn();
    total += std::chrono::duration<double, std::micro>(
                 std::chrono::steady_clock::now() - start)
                 .count();
    cuStreamSynchronize(stream);
  }
  return total / calls;
}

const char *kEmptyPtx = ".version 8.0\n.target sm_80\n.address_size 64\n"
                        ".visible .entry empty() { ret; }\n";

} // namespace

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "examples/causal.mlir";
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  std::string mlir = text.str();

  CHECK_CU(cuInit(0));
  CUdevice device;
  CHECK_CU(cuDeviceGet(&device, 0));
  CUcontext context;
  CHECK_CU(cuDevicePrimaryCtxRetain(&context, device));
  CHECK_CU(cuCtxSetCurrent(context));
  CUstream stream;
  CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

  char arch[16];
  CHECK_KILN(kiln_device_arch(0, arch, sizeof(arch), error, sizeof(error)));
  kiln_variant_options options{};
  options.mlir = mlir.c_str();
  options.head_dim = 64;
  options.dtype = "bf16";
  char *spec = nullptr;
  CHECK_KILN(kiln_compile_spec(&options, "forward", arch, &spec, error,
                               sizeof(error)));
  kiln_program *program = nullptr;
  CHECK_KILN(kiln_program_load(spec, 0, &program, error, sizeof(error)));
  kiln_string_free(spec);

  // q, k, v [1, 16, 1, 64] bf16, out likewise, lse [1, 1, 16] f32.
  long long sizes[4] = {1, 16, 1, 64}, strides[4] = {1024, 64, 64, 1};
  long long lseSizes[3] = {1, 1, 16}, lseStrides[3] = {16, 16, 1};
  CUdeviceptr buffers[5];
  for (CUdeviceptr &b : buffers)
    CHECK_CU(cuMemAlloc(&b, 4096));
  const char *names[5] = {"q", "k", "v", "out", "lse"};
  kiln_tensor tensors[5];
  for (int i = 0; i < 5; ++i)
    tensors[i] = kiln_tensor{names[i],
                             reinterpret_cast<void *>(buffers[i]),
                             i == 4 ? KILN_F32 : KILN_BF16,
                             i == 4 ? 3 : 4,
                             i == 4 ? lseSizes : sizes,
                             i == 4 ? lseStrides : strides};
  CHECK_KILN(kiln_program_run(program, tensors, 5, nullptr, 0, stream, error,
                              sizeof(error)));
  CHECK_CU(cuStreamSynchronize(stream));

  CUmodule module;
  CHECK_CU(cuModuleLoadData(&module, kEmptyPtx));
  CUfunction empty;
  CHECK_CU(cuModuleGetFunction(&empty, module, "empty"));

  double run = perCallUs(stream, [&] {
    kiln_program_run(program, tensors, 5, nullptr, 0, stream, error,
                     sizeof(error));
  });
  double launch = perCallUs(stream, [&] {
    cuLaunchKernel(empty, 1, 1, 1, 128, 1, 1, 0, stream, nullptr, nullptr);
  });
  double pointer = perCallUs(stream, [&] {
    unsigned type = 0;
    cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, buffers[0]);
  });
  double encode = perCallUs(stream, [&] {
    alignas(128) CUtensorMap map;
    cuuint64_t dims[3] = {64, 16, 1}, byteStrides[2] = {128, 2048};
    cuuint32_t box[3] = {64, 16, 1}, elementStrides[3] = {1, 1, 1};
    cuTensorMapEncodeTiled(
        &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3,
        reinterpret_cast<void *>(buffers[0]), dims, byteStrides, box,
        elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  });
  double push = perCallUs(stream, [&] {
    cuCtxPushCurrent(context);
    CUcontext popped;
    cuCtxPopCurrent(&popped);
  });
  std::printf("host time per call (µs), %s, %s:\n", path, arch);
  std::printf("  kiln_program_run (causal forward, 5 tensors)  %6.2f\n", run);
  std::printf("  cuLaunchKernel of an empty kernel             %6.2f\n",
              launch);
  std::printf("  cuPointerGetAttribute                         %6.2f\n",
              pointer);
  std::printf("  cuTensorMapEncodeTiled                        %6.2f\n",
              encode);
  std::printf("  cuCtxPushCurrent + cuCtxPopCurrent            %6.2f\n", push);
  kiln_program_free(program);
  return 0;
}
