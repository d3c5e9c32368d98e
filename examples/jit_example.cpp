//===- jit_example.cpp - Kiln's C++ JIT API end to end --------------------===//
//
//   kiln-jit-example [variant.mlir]     (default: examples/causal_softcap.mlir)
//
// Compiles a variant's forward and backward for the GPU at hand, runs them
// on random bf16 inputs and checks O, dQ, dK and dV against the float64
// reference with the variant's softcap written out by hand (the
// `kiln run --check` driver interprets the regions instead).
//
//===----------------------------------------------------------------------===//

#include "kiln/Kiln.h"
#include "reference/Numerics.h"
#include "reference/ReferenceAttention.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <tuple>
#include <vector>

static int fail(const kiln::Status &s) {
  std::fprintf(stderr, "error: %s\n", s.message().c_str());
  return 1;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "examples/causal_softcap.mlir";
  const int64_t B = 2, N = 1000, H = 4, D = 64;

  kiln::Variant variant;
  if (kiln::Status s = kiln::loadVariantFile(path, variant); !s.ok())
    return fail(s);
  std::unique_ptr<kiln::ForwardKernel> kernel;
  kiln::CompileOptions options;
  options.headDim = D;
  options.dtype = "bf16";
  if (kiln::Status s = kiln::compile(variant, options, kernel); !s.ok())
    return fail(s);
  std::printf("compiled %s for %s (%s, %.1f ms NVRTC, %.2f ms load)\n",
              kernel->spec().kernels.front().name.c_str(),
              kernel->spec().arch.c_str(),
              kernel->cacheHit() ? "cache hit" : "compiled",
              kernel->compileMs(), kernel->loadMs());

  // [B, N, H, D] bf16 inputs, contiguous.
  size_t count = B * N * H * D;
  std::vector<uint16_t> q(count), k(count), v(count), o(count);
  std::vector<double> qd(count), kd(count), vd(count);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (size_t i = 0; i < count; ++i) {
    q[i] = kiln::ref::floatToBF16(normal(rng));
    k[i] = kiln::ref::floatToBF16(normal(rng));
    v[i] = kiln::ref::floatToBF16(normal(rng));
    qd[i] = kiln::ref::bf16ToFloat(q[i]);
    kd[i] = kiln::ref::bf16ToFloat(k[i]);
    vd[i] = kiln::ref::bf16ToFloat(v[i]);
  }
  // Device buffers: inputs, the forward's out and lse, then dO and the
  // gradients for the backward.
  void *qDev, *kDev, *vDev, *outDev, *lseDev, *doutDev, *dqDev, *dkDev, *dvDev;
  size_t bytes = count * 2, lseBytes = B * H * N * 4;
  for (auto [ptr, size] : {std::pair<void **, size_t>{&qDev, bytes},
                           {&kDev, bytes},
                           {&vDev, bytes},
                           {&outDev, bytes},
                           {&lseDev, lseBytes},
                           {&doutDev, bytes},
                           {&dqDev, bytes},
                           {&dkDev, bytes},
                           {&dvDev, bytes}})
    if (kiln::Status s = kiln::cuda::malloc(ptr, size); !s.ok())
      return fail(s);
  kiln::cuda::copyToDevice(qDev, q.data(), bytes);
  kiln::cuda::copyToDevice(kDev, k.data(), bytes);
  kiln::cuda::copyToDevice(vDev, v.data(), bytes);

  std::vector<int64_t> sizes{B, N, H, D}, strides{N * H * D, H * D, D, 1};
  auto bf16Tensor = [&](void *ptr) {
    return kiln::TensorRef{ptr, kiln::DType::BF16, sizes, strides};
  };
  kiln::TensorRef tq = bf16Tensor(qDev), tk = bf16Tensor(kDev),
                  tv = bf16Tensor(vDev), tout = bf16Tensor(outDev);
  kiln::TensorRef tlse{lseDev, kiln::DType::F32, {B, H, N}, {H * N, N, 1}};
  if (kiln::Status s = kernel->forward(tq, tk, tv, tout, tlse, {}, nullptr);
      !s.ok())
    return fail(s);
  if (kiln::Status s = kiln::cuda::synchronize(); !s.ok())
    return fail(s);
  kiln::cuda::copyToHost(o.data(), outDev, bytes);

  // causal_softcap: top-left causal, score = 20 * tanh(score / 20).
  kiln::ref::AttentionSpec spec;
  spec.scale = 1.0 / std::sqrt(double(D));
  spec.causal = kiln::ref::CausalAlignment::TopLeft;
  spec.scoreMod = [](double s, int64_t, int64_t, int64_t, int64_t) {
    return 20.0 * std::tanh(s / 20.0);
  };
  kiln::ref::ProblemShape shape{B, H, H, N, N, D, D};
  std::vector<double> ref(count), lse(B * H * N), got(count);
  kiln::ref::attentionForward(shape, spec, qd.data(), kd.data(), vd.data(),
                              ref.data(), lse.data());
  for (size_t i = 0; i < count; ++i)
    got[i] = kiln::ref::bf16ToFloat(o[i]);
  kiln::ref::ErrorStats err = kiln::ref::compare(got.data(), ref.data(), count);
  std::printf("forward: rel L2 error vs float64 reference: %.3e (max |err| "
              "%.3e)\n",
              err.relL2, err.maxAbs);
  bool ok = err.relL2 < 1e-2 && err.nonFinite == 0;

  // The backward of the same variant, derived by the compiler: gradients of
  // sum(dout * out) with a random dout.
  std::unique_ptr<kiln::BackwardKernel> backward;
  if (kiln::Status s = kiln::compileBackward(
          variant, options, kiln::BackwardSchedule::TwoKernel, backward);
      !s.ok())
    return fail(s);
  std::vector<uint16_t> dout(count), grad(count);
  std::vector<double> doutD(count), dqRef(count), dkRef(count), dvRef(count);
  for (size_t i = 0; i < count; ++i) {
    dout[i] = kiln::ref::floatToBF16(normal(rng));
    doutD[i] = kiln::ref::bf16ToFloat(dout[i]);
  }
  kiln::cuda::copyToDevice(doutDev, dout.data(), bytes);
  if (kiln::Status s = backward->backward(
          tq, tk, tv, tout, bf16Tensor(doutDev), tlse, bf16Tensor(dqDev),
          bf16Tensor(dkDev), bf16Tensor(dvDev), {}, nullptr);
      !s.ok())
    return fail(s);
  if (kiln::Status s = kiln::cuda::synchronize(); !s.ok())
    return fail(s);
  // The reference differentiates the float64 forward of the bf16 inputs.
  kiln::ref::attentionBackward(shape, spec, qd.data(), kd.data(), vd.data(),
                               doutD.data(), dqRef.data(), dkRef.data(),
                               dvRef.data());
  for (auto [name, ptr, expected] :
       {std::tuple<const char *, void *, std::vector<double> *>{"dq", dqDev,
                                                                &dqRef},
        {"dk", dkDev, &dkRef},
        {"dv", dvDev, &dvRef}}) {
    kiln::cuda::copyToHost(grad.data(), ptr, bytes);
    for (size_t i = 0; i < count; ++i)
      got[i] = kiln::ref::bf16ToFloat(grad[i]);
    kiln::ref::ErrorStats e =
        kiln::ref::compare(got.data(), expected->data(), count);
    std::printf("backward %s: rel L2 error vs float64 reference: %.3e\n", name,
                e.relL2);
    ok = ok && e.relL2 < 1e-2 && e.nonFinite == 0;
  }
  for (void *ptr :
       {qDev, kDev, vDev, outDev, lseDev, doutDev, dqDev, dkDev, dvDev})
    kiln::cuda::free(ptr);
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
