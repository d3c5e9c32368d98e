//===- CPUProgram.cpp - run a launch plan with the CPU backend ------------===//

#include "compiler/Driver/CPUProgram.h"

#include "compiler/Conversion/Passes.h"
#include "compiler/Driver/ProblemInputs.h"

#include <cstdlib>
#include <cstring>
#include <memory>

namespace kiln::driver {

namespace {

TensorRef refOf(HostBuffer &buffer) {
  return {buffer.data(), deviceDType(buffer.kind), buffer.sizes,
          buffer.strides};
}

} // namespace

bool runPlanOnCPU(CPUKernel &kernel, const ProgramSpec &plan,
                  const std::map<std::string, HostBuffer *> &tensors,
                  std::vector<HostBuffer> &captures, std::string &error,
                  const SymbolValues &overrides) {
  std::vector<NamedTensor> named;
  for (const auto &[name, buffer] : tensors)
    named.push_back({name, refOf(*buffer)});
  std::vector<TensorRef> captureRefs;
  for (HostBuffer &c : captures)
    captureRefs.push_back(refOf(c));
  // One "multiprocessor": the CPU runs one program at a time.
  BoundRun bound;
  if (Status s =
          bindRun(plan, named, captureRefs, DeviceSymbols(/*numSms=*/1), bound,
                  overrides);
      !s.ok()) {
    error = s.message();
    return false;
  }
  // Host memory: a paged cache's table and lengths, a varlen batch's
  // offsets and a block mask's lists are checked here.
  for (Status s : {validatePagedKV(plan, bound), validateVarlen(plan, bound),
                   validateBlockLists(plan, bound)})
    if (!s.ok()) {
      error = s.message();
      return false;
    }
  // Every launch condition and grid before any memory is taken: a problem
  // the plan refuses (more than 65535 batches) must not first ask the host
  // for its workspaces.
  std::vector<bool> launched(plan.kernels.size());
  std::vector<std::array<int64_t, 3>> grids(plan.kernels.size());
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    bool launches = false;
    if (Status s = kernelLaunches(plan.kernels[i], bound.symbols, launches);
        !s.ok()) {
      error = s.message();
      return false;
    }
    launched[i] = launches;
    if (!launches)
      continue;
    if (Status s = evaluateGrid(plan, plan.kernels[i], bound.symbols, grids[i]);
        !s.ok()) {
      error = s.message();
      return false;
    }
  }
  WorkspaceLayout layout;
  if (Status s = layoutWorkspaces(plan, bound.symbols, layout); !s.ok()) {
    error = s.message();
    return false;
  }
  // One block for all workspaces, at the layout's offsets as on the GPU.
  // malloc, not a vector: this library has no exceptions, so a vector's
  // failed allocation would abort the caller's process instead of
  // returning an error.
  std::unique_ptr<char, decltype(&std::free)> block(nullptr, &std::free);
  if (layout.totalBytes > 0) {
    block.reset(static_cast<char *>(std::malloc(layout.totalBytes)));
    if (!block) {
      error = "variant '" + plan.variant + "' needs " +
              std::to_string(layout.totalBytes) +
              " bytes of host workspace for this problem, which could not "
              "be allocated";
      return false;
    }
  }
  std::vector<HostBuffer> workspaces;
  for (size_t w = 0; w < plan.workspaces.size(); ++w) {
    const WorkspaceDecl &decl = plan.workspaces[w];
    char *data = block.get() + layout.offsets[w];
    size_t end = w + 1 < plan.workspaces.size() ? layout.offsets[w + 1]
                                                : layout.totalBytes;
    // Poisoned (NaN for floats) unless the plan says the runtime clears
    // it: a kernel that reads scratch it never wrote shows up.
    ElementKind kind = hostKind(decl.dtype);
    bool integer = kind == ElementKind::I32 || kind == ElementKind::I64;
    int fill = decl.zeroFill ? 0 : integer ? 0x5a : 0xff;
    if (data && end > layout.offsets[w])
      std::memset(data, fill, end - layout.offsets[w]);
    std::vector<int64_t> strides(layout.shapes[w].size(), 1);
    for (size_t d = strides.size(); d-- > 1;)
      strides[d - 1] = strides[d] * layout.shapes[w][d];
    workspaces.push_back(
        HostBuffer::view(kind, data, layout.shapes[w], std::move(strides)));
  }
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const KernelLaunch &k = plan.kernels[i];
    if (!launched[i])
      continue;
    std::vector<CPUKernel::Arg> args;
    for (const KernelArg &a : k.args) {
      switch (a.kind) {
      case KernelArg::Kind::Tensor:
        args.push_back(tensors.at(a.name));
        break;
      case KernelArg::Kind::Workspace:
        args.push_back(
            &workspaces[plan.findWorkspace(a.name) - plan.workspaces.data()]);
        break;
      case KernelArg::Kind::Capture:
        args.push_back(&captures[a.capture]);
        break;
      case KernelArg::Kind::Scalar: {
        int64_t value = 0;
        if (Status s = evaluate(a.value, bound.symbols, value); !s.ok()) {
          error = "kernel '" + k.name + "' scalar: " + s.message();
          return false;
        }
        args.push_back(value);
        break;
      }
      case KernelArg::Kind::TensorMap:
        error = "kernel '" + k.name +
                "' takes a tensor-map argument, which the CPU backend's "
                "launchers do not pass";
        return false;
      }
    }
    if (!kernel.launch(k.name + kCPULauncherSuffix.str(), args, grids[i],
                       error))
      return false;
  }
  return true;
}

} // namespace kiln::driver
