//===- TmaCheck.cpp - TMA tensor maps from a launch plan, on a GPU --------===//
//
//   build/bin/kiln-tma-check                 (an sm_90 GPU; exits 0 on success)
//   build/bin/kiln-tma-check --compile-only  (NVRTC only, no GPU: make check)
//
// The runtime encodes a plan's tensor_map argument (cuTensorMapEncodeTiled)
// and passes it by value; a test kernel loads 64 x 64 boxes of a
// [B, N, H, 64] bf16 tensor with kiln::tma_load_4d, completes them on an
// mbarrier and writes them back out, unswizzling the 128-byte swizzle where
// the plan asks for one. The copy must be exact, rows past N must read
// zeros (and be dropped), and malformed tensors must be refused before
// launch. The kernel is a test of the device library's TMA primitives and
// of the runtime, not a Kiln kernel: Kiln's kernels are generated.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime.h"

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

using namespace kiln;

namespace {

const char *kSource = R"(
#include "kiln/kiln.cuh"
// Row r of a 128-byte-row tile: the 16-byte chunk j sits at chunk j ^ (r % 8)
// under the 128-byte swizzle.
template <int SWIZZLE>
__device__ void copyOut(const kiln::bf16 *tile, kiln::Tensor<kiln::bf16, 4> y,
                        int r0, int h, int b) {
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) {
    int r = i / 64, c = i % 64;
    if (r0 + r >= y.size[1])
      continue;
    int chunk = c / 8;
    if (SWIZZLE == 128)
      chunk ^= r % 8;
    kiln::bf16 v = tile[r * 64 + chunk * 8 + c % 8];
    y.ptr[b * y.stride[0] + (long long)(r0 + r) * y.stride[1] + h * y.stride[2] + c] = v;
  }
}

template <int SWIZZLE>
__device__ void tmaCopy(const kiln::TensorMap &map, kiln::Tensor<kiln::bf16, 4> y) {
  extern __shared__ __align__(128) unsigned char smem[];
  // 1024-byte alignment for the 128-byte swizzle's pattern.
  unsigned char *base = smem + ((1024 - kiln::smem_addr(smem) % 1024) % 1024);
  kiln::bf16 *tile = reinterpret_cast<kiln::bf16 *>(base);
  unsigned long long *bar = reinterpret_cast<unsigned long long *>(base + 64 * 64 * 2);
  int r0 = blockIdx.x * 64, h = blockIdx.y, b = blockIdx.z;
  if (threadIdx.x == 0)
    kiln::mbarrier_init(bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    kiln::mbarrier_arrive_expect_tx(bar, 64 * 64 * 2);
    kiln::tma_load_4d(tile, map, bar, 0, r0, h, b);
  }
  kiln::mbarrier_wait(bar, 0);
  copyOut<SWIZZLE>(tile, y, r0, h, b);
}

extern "C" __global__ void tma_copy(const __grid_constant__ kiln::TensorMap map,
                                    kiln::Tensor<kiln::bf16, 4> y) {
  tmaCopy<0>(map, y);
}
extern "C" __global__ void tma_copy_swizzled(const __grid_constant__ kiln::TensorMap map,
                                             kiln::Tensor<kiln::bf16, 4> y) {
  tmaCopy<128>(map, y);
}
)";

ProgramSpec plan(const char *kernel, int64_t swizzle) {
  auto sym = SizeExpr::named;
  auto c = SizeExpr::constant;
  ProgramSpec p;
  p.variant = "tma_check";
  p.kind = "forward";
  p.arch = "sm_90a";
  p.source = kSource;
  p.tensors = {
      {"x", DType::BF16, {sym("batch"), sym("seq_q"), sym("heads"), c(64)}, 16},
      {"y", DType::BF16, {sym("batch"), sym("seq_q"), sym("heads"), c(64)}, 0}};
  KernelLaunch k;
  k.name = kernel;
  k.grid = {SizeExpr::apply(SizeExpr::Op::CeilDiv, {sym("seq_q"), c(64)}),
            sym("heads"), sym("batch")};
  k.numThreads = 128;
  k.sharedBytes = 64 * 64 * 2 + 8 + 1024;
  KernelArg map;
  map.kind = KernelArg::Kind::TensorMap;
  map.name = "x";
  map.mapDims = {3, 1, 2, 0}; // D, N, H, B: a box is 64 rows of one head
  map.box = {64, 64};
  map.swizzle = swizzle;
  KernelArg y;
  y.kind = KernelArg::Kind::Tensor;
  y.name = "y";
  y.rank = 4;
  k.args = {map, y};
  p.kernels = {k};
  return p;
}

int failures = 0;

void expect(bool ok, const std::string &what) {
  std::printf("%s  %s\n", ok ? "PASS" : "FAIL", what.c_str());
  failures += !ok;
}

/// Copies x [B, N, H, 64] through the program and compares bit for bit.
void checkCopy(const Program &program, int64_t B, int64_t N, int64_t H,
               int64_t rowPad) {
  int64_t D = 64, rowStride = H * (D + rowPad);
  std::vector<int64_t> sizes{B, N, H, D};
  std::vector<int64_t> strides{N * rowStride, rowStride, D + rowPad, 1};
  size_t elements = static_cast<size_t>(B * N * rowStride);
  std::vector<uint16_t> host(elements), back(elements, 0xffff);
  std::mt19937 rng(static_cast<unsigned>(N * 131 + H));
  for (uint16_t &v : host)
    v = static_cast<uint16_t>(rng());
  void *x = nullptr, *y = nullptr;
  cuda::malloc(&x, elements * 2);
  cuda::malloc(&y, elements * 2);
  cuda::copyToDevice(x, host.data(), elements * 2);
  cuda::copyToDevice(y, back.data(), elements * 2);
  Status s = program.run({{"x", {x, DType::BF16, sizes, strides}},
                          {"y", {y, DType::BF16, sizes, strides}}},
                         {}, nullptr);
  if (s.ok())
    s = cuda::synchronize();
  if (s.ok())
    s = cuda::copyToHost(back.data(), y, elements * 2);
  size_t wrong = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d) {
          size_t i = b * strides[0] + n * strides[1] + h * strides[2] + d;
          wrong += host[i] != back[i];
        }
  char what[160];
  std::snprintf(what, sizeof(what),
                "%s: B=%lld N=%lld H=%lld row pad %lld: %zu of %lld elements "
                "differ%s%s",
                program.spec().kernels[0].name.c_str(), (long long)B,
                (long long)N, (long long)H, (long long)rowPad, wrong,
                (long long)(B * N * H * D), s.ok() ? "" : "; ",
                s.ok() ? "" : s.message().c_str());
  expect(s.ok() && wrong == 0, what);
  cuda::free(x);
  cuda::free(y);
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "--compile-only") == 0) {
    // The device library's TMA and mbarrier primitives through NVRTC and
    // ptxas for sm_90a: what make check can test without a GPU.
    std::string cubin, log;
    Status s = compileToCubin(kSource, "sm_90a", "tma_check", cubin, log);
    std::printf("%s  tma_check for sm_90a: %zu bytes of cubin%s%s\n",
                s.ok() ? "PASS" : "FAIL", cubin.size(), s.ok() ? "" : ": ",
                s.ok() ? "" : s.message().c_str());
    return s.ok() ? 0 : 1;
  }
  std::string arch, name;
  if (Status s = cuda::init(0); !s.ok()) {
    std::printf("FAIL  %s\n", s.message().c_str());
    return 1;
  }
  if (Status s = deviceArch(0, arch, name); !s.ok() || arch != "sm_90a") {
    std::printf("FAIL  TMA needs an sm_90 GPU: %s\n",
                s.ok() ? name.c_str() : s.message().c_str());
    return 1;
  }
  std::printf("device: %s\n", name.c_str());
  for (auto [kernel, swizzle] : {std::pair<const char *, int64_t>{"tma_copy", 0},
                                 {"tma_copy_swizzled", 128}}) {
    std::unique_ptr<Program> program;
    Status s = Program::load(plan(kernel, swizzle), 0, program);
    expect(s.ok(), std::string("load ") + kernel + (s.ok() ? "" : ": " + s.message()));
    if (!s.ok())
      continue;
    checkCopy(*program, 2, 256, 3, 0);
    checkCopy(*program, 1, 1000, 2, 0); // a partial last box: zeros, dropped
    checkCopy(*program, 1, 77, 1, 8);   // rows padded by 16 bytes
  }

  // Refusals before launch.
  std::unique_ptr<Program> program;
  Program::load(plan("tma_copy", 0), 0, program);
  std::vector<int64_t> sizes{1, 64, 1, 64}, padded{64 * 68, 68, 68, 1};
  void *x = nullptr;
  cuda::malloc(&x, 64 * 68 * 2 + 16);
  TensorRef misaligned{static_cast<char *>(x) + 2, DType::BF16, sizes, padded};
  TensorRef ok{x, DType::BF16, sizes, padded};
  Status s = program->run({{"x", misaligned}, {"y", ok}}, {}, nullptr);
  expect(s.message().find("16-byte aligned") != std::string::npos,
         "misaligned base refused: " + s.message());
  std::vector<int64_t> odd{64 * 67, 67, 67, 1};
  s = program->run({{"x", {x, DType::BF16, sizes, odd}}, {"y", ok}}, {},
                   nullptr);
  // x is declared with 16-byte aligned rows, so the plan's tensor check
  // refuses it first.
  expect(s.message().find("16-byte aligned rows") != std::string::npos,
         "row stride of 134 bytes refused: " + s.message());
  cuda::free(x);
  ProgramSpec sm80 = plan("tma_copy", 0);
  sm80.arch = "sm_80";
  s = Program::load(sm80, 0, program);
  expect(s.message().find("needs sm_90a") != std::string::npos,
         "tensor maps refused for sm_80: " + s.message());
  std::printf("%s (%d failed)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
