// How fast can L2 absorb the atomic backward's f32 dQ shares? A probe, not a
// Kiln kernel: each CTA plays one KV block of the dK/dV kernel and adds a
// 64 x D f32 share into every query block of its head, with no products, so
// the time is the reductions' alone. Modes:
//   0  red.global.add.v2.f32 from the wgmma accumulator layout (today's
//      kiln::atomic_add), dQacc laid out as Q: [N, H, D]
//   1  the share staged in shared memory, one bulk reduce
//      (cp.reduce.async.bulk .add.f32) per row, [N, H, D]
//   2  the same, dQacc laid out [H, N, D] so a share is one 32 KiB bulk reduce
//   3  mode 2 with two staging buffers (the next share's stores overlap the
//      previous reduce)
// Build: nvcc -arch=sm_90a -O3 -o probe bench/probe_dq_reduce.cu
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

constexpr int kRows = 64;
constexpr int kThreads = 128;

__device__ __forceinline__ unsigned smemAddr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

template <int D, int Mode>
__global__ void __launch_bounds__(kThreads, 2)
    probe(float *acc, int heads, int n, float value) {
  extern __shared__ __align__(128) float stage[];
  constexpr int kPerThread = kRows * D / kThreads; // 64 at D = 128
  int head = blockIdx.y;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float x[kPerThread];
#pragma unroll
  for (int e = 0; e < kPerThread; ++e)
    x[e] = value;
  int blocks = n / kRows;
  for (int qb = 0; qb < blocks; ++qb) {
    // Vary the values a little so nothing can be folded.
    x[0] += 0.0f * qb;
    int buf = (Mode == 3) ? (qb & 1) : 0;
    float *s = stage + buf * kRows * D;
    if (Mode == 0) {
      // wgmma m64nD f32 layout: warp w rows 16w + lane/4 (+8), columns
      // 8 nt + 2 (lane % 4) (+1).
#pragma unroll
      for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          int r = qb * kRows + warp * 16 + lane / 4 + half * 8;
          int c = nt * 8 + (lane % 4) * 2;
          float *p = acc + (size_t(r) * heads + head) * D + c;
          asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p),
                       "f"(x[nt * 4 + half * 2]), "f"(x[nt * 4 + half * 2 + 1])
                       : "memory");
        }
      continue;
    }
    // Before the buffer is written again, its last reduce has read it.
    if (threadIdx.x == 0)
      asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Mode == 3 ? 1
                                                                         : 0)
                   : "memory");
    __syncthreads();
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        int r = warp * 16 + lane / 4 + half * 8;
        int c = nt * 8 + (lane % 4) * 2;
        *reinterpret_cast<float2 *>(s + r * D + c) =
            make_float2(x[nt * 4 + half * 2], x[nt * 4 + half * 2 + 1]);
      }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (Mode == 1) {
      if (warp == 0) {
        for (int r = lane; r < kRows; r += 32) {
          float *p = acc + (size_t(qb * kRows + r) * heads + head) * D;
          asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group."
                       "add.f32 [%0], [%1], %2;\n" ::"l"(p),
                       "r"(smemAddr(s + r * D)), "n"(D * 4)
                       : "memory");
        }
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        // Only lane 0 waits above, so every lane's group must be done.
        asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
      }
    } else if (threadIdx.x == 0) {
      float *p = acc + (size_t(head) * n + qb * kRows) * D;
      asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add."
                   "f32 [%0], [%1], %2;\n" ::"l"(p),
                   "r"(smemAddr(s)), "n"(kRows * D * 4)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
    }
  }
  if (Mode != 0 && threadIdx.x == 0)
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

template <int D, int Mode> double run(int heads, int n, bool check) {
  size_t elems = size_t(heads) * n * D;
  float *acc;
  cudaMalloc(&acc, elems * 4);
  cudaMemset(acc, 0, elems * 4);
  int smem = Mode == 0 ? 0 : (Mode == 3 ? 2 : 1) * kRows * D * 4;
  cudaFuncSetAttribute(probe<D, Mode>,
                       cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  dim3 grid(n / kRows, heads);
  probe<D, Mode><<<grid, kThreads, smem>>>(acc, heads, n, 1.0f);
  cudaDeviceSynchronize();
  if (check) {
    std::vector<float> h(elems);
    cudaMemcpy(h.data(), acc, elems * 4, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (size_t i = 0; i < elems; ++i)
      bad += h[i] != float(n / kRows);
    if (bad)
      printf("  mode %d D %d: %d of %zu wrong (%g)\n", Mode, D, bad, elems,
             h[0]);
  }
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  int reps = 20;
  cudaEventRecord(a);
  for (int i = 0; i < reps; ++i)
    probe<D, Mode><<<grid, kThreads, smem>>>(acc, heads, n, 1.0f);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    printf("error: %s\n", cudaGetErrorString(err));
  cudaFree(acc);
  double bytes = double(n / kRows) * elems * 4; // every KV block adds all
  return bytes / (ms / reps * 1e-3) / 1e12;     // TB/s
}

int main(int argc, char **argv) {
  int heads = 16, n = argc > 1 ? atoi(argv[1]) : 4096;
  printf("f32 dQ reductions into L2, %d heads, N = %d (TB/s of shares)\n",
         heads, n);
  printf("D  red.v2  bulk/row  bulk/tile  bulk/tile x2\n");
  printf("64  %.2f  %.2f  %.2f  %.2f\n", run<64, 0>(heads, n, true),
         run<64, 1>(heads, n, true), run<64, 2>(heads, n, true),
         run<64, 3>(heads, n, true));
  printf("128 %.2f  %.2f  %.2f  %.2f\n", run<128, 0>(heads, n, true),
         run<128, 1>(heads, n, true), run<128, 2>(heads, n, true),
         run<128, 3>(heads, n, true));
  return 0;
}
