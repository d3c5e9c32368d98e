//===- CUDABackwardRun.cpp - kiln run --backward on the GPU ---------------===//

#include "compiler/Driver/CUDABackwardRun.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstring>
#include <random>

namespace kiln::driver {

namespace cuda = kiln::cuda;

namespace {

/// Device copies of host buffers, freed on every path.
class DeviceBuffers {
public:
  ~DeviceBuffers() {
    for (void *ptr : pointers)
      cuda::free(ptr);
  }
  /// Allocates a device copy of `host` (its bytes, strides included).
  Status add(HostBuffer &host, TensorRef &ref) {
    size_t bytes = host.storage.size() * 8;
    void *ptr = nullptr;
    if (Status s = cuda::malloc(&ptr, bytes); !s.ok())
      return s;
    pointers.push_back(ptr);
    ref = {ptr, deviceDType(host.kind), host.sizes, host.strides};
    return cuda::copyToDevice(ptr, host.data(), bytes);
  }

private:
  std::vector<void *> pointers;
};

} // namespace

int runBackwardOnCUDA(const ProgramSpec &spec, const Problem &p, Inputs &in,
                      std::vector<HostBuffer> &captures, const RunOptions &o,
                      Gradients &g, std::string &note, llvm::raw_ostream &err) {
  auto fail = [&](const Status &s, int code) {
    err << "kiln: error: " << s.message() << "\n";
    return code;
  };
  // atomic-ordered: the atomic schedule with ordered dQ adds (--ordered-dq,
  // or --bwd-schedule deterministic where it takes them).
  bool ordered = spec.schedule == "atomic-ordered";
  bool atomic = spec.schedule == "atomic" || ordered;
  std::unique_ptr<BackwardKernel> kernel;
  if (Status s = BackwardKernel::load(spec, 0, kernel); !s.ok())
    return fail(s, kBadInput);
  note += llvm::formatv("  backward ({0}): {1}, NVRTC {2:f1} ms, load "
                        "{3:f2} ms\n",
                        ordered  ? "atomic dQ, ordered adds"
                        : atomic ? "atomic dQ"
                                 : "two kernels",
                        kernel->cacheHit() ? "cache hit" : "compiled",
                        kernel->compileMs(), kernel->loadMs())
              .str();
  makeGradients(p, in, o.seed, spec, captures, g);
  DeviceBuffers device;
  // The named tensors (q, ..., dv, dropout's state, the captures'
  // gradients), then the captures.
  std::vector<std::string> names;
  std::vector<HostBuffer *> host;
  for (auto &[name, buffer] : g.tensors(in)) {
    names.push_back(name);
    host.push_back(buffer);
  }
  size_t numNamed = host.size();
  for (HostBuffer &c : captures)
    host.push_back(&c);
  std::vector<TensorRef> refs(host.size());
  for (size_t i = 0; i < host.size(); ++i)
    if (Status s = device.add(*host[i], refs[i]); !s.ok())
      return fail(s, kInternalError);
  std::vector<TensorRef> captureRefs(refs.begin() + numNamed, refs.end());
  std::vector<NamedTensor> named;
  for (size_t i = 0; i < numNamed; ++i)
    named.push_back({names[i], refs[i]});
  auto indexOf = [&](const std::string &name) {
    return size_t(std::find(names.begin(), names.end(), name) - names.begin());
  };
  // The captures' gradients are added to: zeros before every launch.
  std::vector<uint64_t> zeros;
  auto launch = [&]() -> Status {
    for (Gradients::CaptureGradient &c : g.captureGrads) {
      zeros.assign(c.grad.storage.size(), 0);
      if (Status s = cuda::copyToDevice(refs[indexOf(c.tensor)].data,
                                        zeros.data(), zeros.size() * 8);
          !s.ok())
        return s;
    }
    return kernel->program().run(named, captureRefs, nullptr);
  };
  // dQ, dK, dV: compared across reruns; the captures' gradients too when
  // they are deterministic (f32 atomics otherwise, like the atomic
  // schedule's dQ: their order is not fixed).
  std::vector<std::string> compared{"dq", "dk", "dv"};
  if (o.deterministicCaptureGradients)
    for (Gradients::CaptureGradient &c : g.captureGrads)
      compared.push_back(c.tensor);
  auto gradientBytes = [&](std::vector<std::vector<uint64_t>> &out) -> Status {
    out.clear();
    for (const std::string &name : compared) {
      size_t i = indexOf(name);
      out.emplace_back(host[i]->storage.size());
      if (Status s = cuda::copyToHost(out.back().data(), refs[i].data,
                                      out.back().size() * 8);
          !s.ok())
        return s;
    }
    return Status();
  };
  // A launch that validation refused is bad input; a failure while the
  // kernels run is ours.
  if (Status s = launch(); !s.ok())
    return fail(s, kBadInput);
  if (Status s = cuda::synchronize(); !s.ok())
    return fail(s, kInternalError);
  std::vector<std::vector<uint64_t>> first, again;
  if (Status s = gradientBytes(first); !s.ok())
    return fail(s, kInternalError);
  for (size_t i = 0; i < 3; ++i)
    std::memcpy(host[indexOf(compared[i])]->data(), first[i].data(),
                first[i].size() * 8);
  for (Gradients::CaptureGradient &c : g.captureGrads)
    if (Status s = cuda::copyToHost(c.grad.data(), refs[indexOf(c.tensor)].data,
                                    c.grad.storage.size() * 8);
        !s.ok())
      return fail(s, kInternalError);

  // Determinism: the two-kernel schedule and ordered dQ adds have a fixed
  // summation order, and deterministic capture gradients sum integers.
  int differing = 0, capturesDiffering = 0;
  for (int run = 0; run < 2; ++run) {
    if (Status s = launch(); !s.ok())
      return fail(s, kInternalError);
    if (Status s = cuda::synchronize(); !s.ok())
      return fail(s, kInternalError);
    if (Status s = gradientBytes(again); !s.ok())
      return fail(s, kInternalError);
    if (!std::equal(again.begin(), again.begin() + 3, first.begin()))
      ++differing;
    if (!std::equal(again.begin() + 3, again.end(), first.begin() + 3))
      ++capturesDiffering;
  }
  note +=
      llvm::formatv("  backward reruns: {0} of 2 differ bitwise from the "
                    "first run{1}\n",
                    differing,
                    atomic && !ordered ? " (atomic dQ: order not fixed)" : "")
          .str();
  if (o.deterministicCaptureGradients)
    note += llvm::formatv("  deterministic capture gradients: {0} of 2 "
                          "reruns differ bitwise from the first run\n",
                          capturesDiffering)
                .str();
  if ((!atomic || ordered) && differing > 0) {
    err << "kiln: error: the "
        << (atomic ? "atomic backward schedule with ordered dQ adds"
                   : "two-kernel backward schedule")
        << " gave different gradients across runs; it must be "
           "deterministic\n";
    return kMismatch;
  }
  if (capturesDiffering > 0) {
    err << "kiln: error: deterministic capture gradients differed across "
           "runs\n";
    return kMismatch;
  }

  if (o.repeats > 0) {
    double ms = 0;
    if (Status t = cuda::timeMs(launch, static_cast<int>(o.repeats), ms);
        !t.ok())
      return fail(t, kInternalError);
    // Backward FLOPs, dense: the five products of one pass (S, dP, dV, dK,
    // dQ), 2.5x the forward, as FlashAttention counts them; the two-kernel
    // schedule computes S and dP twice but is credited once.
    double flops = 2.5 * 2.0 * p.pairs() * p.heads * (p.dqk + p.dv);
    note += llvm::formatv("  timed {0} backward launches: {1:f4} ms, {2:f1} "
                          "TFLOP/s (dense count)\n",
                          o.repeats, ms, flops / (ms * 1e-3) / 1e12)
                .str();
  }
  return 0;
}

} // namespace kiln::driver
