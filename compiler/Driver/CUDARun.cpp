//===- CUDARun.cpp - `kiln run --backend cuda` ----------------------------===//

#include "compiler/Driver/CUDARun.h"
#include "compiler/Driver/Timing.h"

#include "compiler/Driver/CUDACompile.h"
#include "compiler/Driver/ProblemInputs.h"

#include "kiln/Runtime.h"

#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace mlir;

namespace kiln::driver {

std::optional<int> compileForCUDA(ModuleOp module, ModuleOp variant,
                                  const RunOptions &o, CUDAPrograms &programs,
                                  llvm::raw_ostream &out,
                                  llvm::raw_ostream &err) {
  // The GPU path picks its own tiles for the device; -emit works without a
  // GPU and targets sm_90a unless --arch says otherwise.
  std::string arch = o.arch;
  if (arch.empty() && o.backend == "cuda" && o.emit == EmitStage::None) {
    std::string deviceName;
    if (Status s = cuda::init(0); !s.ok()) {
      err << "kiln: error: " << s.message() << "\n";
      return kBadInput;
    }
    if (Status s = deviceArch(0, arch, deviceName); !s.ok()) {
      err << "kiln: error: " << s.message() << "\n";
      return kBadInput;
    }
  }
  if (arch.empty())
    arch = "sm_90a";
  std::string tgpuIR;
  auto start = std::chrono::steady_clock::now();
  if (Status s =
          compileForwardCUDA(module, arch, programs.forward,
                             scheduleChoices(o), &tgpuIR);
      !s.ok()) {
    err << "kiln: error: " << s.message() << "\n";
    return kBadInput;
  }
  if (o.backward) {
    // The backward kernels from their own copy of the spec.
    OwningOpRef<ModuleOp> backwardModule = variant.clone();
    std::string backwardIR;
    if (Status s = compileBackwardCUDA(*backwardModule, arch,
                                       o.backwardSchedule, programs.backward,
                                       scheduleChoices(o), &backwardIR);
        !s.ok()) {
      err << "kiln: error: " << s.message() << "\n";
      return kBadInput;
    }
    tgpuIR += "\n" + backwardIR;
  }
  programs.loweringMs = millisecondsSince(start);
  if (o.emit == EmitStage::TGPU) {
    out << tgpuIR << "\n";
    return 0;
  }
  if (o.emit == EmitStage::CUDA) {
    out << programs.forward.source;
    if (o.backward)
      out << "\n" << programs.backward.source;
    return 0;
  }
  if (o.emit != EmitStage::None) {
    err << "kiln: error: -emit=tile and -emit=llvm show the cpu backend's "
           "stages; use -emit=tgpu or -emit=cuda with --backend cuda\n";
    return kBadInput;
  }
  return std::nullopt;
}

int runOnCUDA(const ProgramSpec &spec, const Problem &p, Inputs &in,
              std::vector<HostBuffer> &captures, const RunOptions &o,
              double &compileMs, double &runMs, std::string &note,
              llvm::raw_ostream &err) {
  auto fail = [&](const Status &s, int code) {
    err << "kiln: error: " << s.message() << "\n";
    return code;
  };
  std::unique_ptr<ForwardKernel> kernel;
  auto start = std::chrono::steady_clock::now();
  if (Status s = ForwardKernel::load(spec, 0, kernel); !s.ok())
    return fail(s, kBadInput); // no usable device, or the wrong one
  compileMs = millisecondsSince(start);
  note += llvm::formatv("  kernel {0}: {1} ({2}), NVRTC {3:f1} ms, load "
                        "{4:f2} ms\n",
                        spec.kernels.front().name, spec.arch,
                        kernel->cacheHit() ? "cache hit" : "compiled",
                        kernel->compileMs(), kernel->loadMs())
              .str();

  // The named tensors first (out and lse among them, copied back), then
  // the captures.
  std::vector<std::string> names;
  std::vector<HostBuffer *> host;
  for (auto &[name, buffer] : in.forwardTensors()) {
    names.push_back(name);
    host.push_back(buffer);
  }
  size_t numNamed = host.size();
  for (HostBuffer &c : captures)
    host.push_back(&c);
  std::vector<void *> device(host.size(), nullptr);
  std::vector<TensorRef> refs;
  auto cleanup = [&] {
    for (void *ptr : device)
      if (ptr)
        cuda::free(ptr);
  };
  for (size_t i = 0; i < host.size(); ++i) {
    size_t bytes = host[i]->storage.size() * 8;
    if (Status s = cuda::malloc(&device[i], bytes); !s.ok()) {
      cleanup();
      return fail(s, kInternalError);
    }
    if (Status s = cuda::copyToDevice(device[i], host[i]->data(), bytes);
        !s.ok()) {
      cleanup();
      return fail(s, kInternalError);
    }
    refs.push_back({device[i], deviceDType(host[i]->kind), host[i]->sizes,
                    host[i]->strides});
  }
  std::vector<TensorRef> captureRefs(refs.begin() + numNamed, refs.end());
  std::vector<NamedTensor> named;
  for (size_t i = 0; i < numNamed; ++i)
    named.push_back({names[i], refs[i]});
  auto launch = [&] {
    return kernel->program().run(named, captureRefs, nullptr,
                                 kvSplitsOverride(o));
  };
  start = std::chrono::steady_clock::now();
  // A launch that validation refused is bad input; a failure while the
  // kernel runs is ours.
  if (Status s = launch(); !s.ok()) {
    cleanup();
    return fail(s, kBadInput);
  }
  if (Status s = cuda::synchronize(); !s.ok()) {
    cleanup();
    return fail(s, kInternalError);
  }
  runMs = millisecondsSince(start);
  // Outputs back: out and lse (a block mask's builder: its lists).
  for (size_t i = 0; i < numNamed; ++i) {
    if (names[i] != "out" && names[i] != "lse" && !in.builtLists)
      continue;
    if (Status c = cuda::copyToHost(host[i]->data(), device[i],
                                    host[i]->storage.size() * 8);
        !c.ok()) {
      cleanup();
      return fail(c, kInternalError);
    }
  }
  if (o.repeats > 0) {
    double ms = 0;
    for (int i = 0; i < 3; ++i)
      launch();
    if (Status t = cuda::timeMs(launch, static_cast<int>(o.repeats), ms);
        !t.ok()) {
      cleanup();
      return fail(t, kInternalError);
    }
    // Forward FLOPs counted dense: 2 matmuls of 2*Lq*Lk*D each. Masked
    // variants do less work (causal about half), so their figure is an
    // upper bound of the rate; bench/ counts causal as half.
    double flops = 2.0 * p.pairs() * p.heads * (p.dqk + p.dv);
    note += llvm::formatv("  timed {0} launches: {1:f4} ms, {2:f1} TFLOP/s "
                          "(dense count)\n",
                          o.repeats, ms, flops / (ms * 1e-3) / 1e12)
                .str();
  }
  cleanup();
  return 0;
}

} // namespace kiln::driver
