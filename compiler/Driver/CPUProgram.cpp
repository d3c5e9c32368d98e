//===- CPUProgram.cpp - run a launch plan with the CPU backend ------------===//

#include "compiler/Driver/CPUProgram.h"

#include "compiler/Conversion/Passes.h"
#include "compiler/Driver/ProblemInputs.h"

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
  WorkspaceLayout layout;
  if (Status s = layoutWorkspaces(plan, bound.symbols, layout); !s.ok()) {
    error = s.message();
    return false;
  }
  std::vector<HostBuffer> workspaces;
  for (size_t w = 0; w < plan.workspaces.size(); ++w) {
    HostBuffer buffer = HostBuffer::allocate(hostKind(plan.workspaces[w].dtype),
                                             layout.shapes[w]);
    // Poisoned unless the plan says the runtime clears it: a kernel that
    // reads scratch it never wrote shows up as NaN.
    if (!plan.workspaces[w].zeroFill)
      buffer.poison();
    workspaces.push_back(std::move(buffer));
  }
  for (const KernelLaunch &k : plan.kernels) {
    bool launches = false;
    if (Status s = kernelLaunches(k, bound.symbols, launches); !s.ok()) {
      error = s.message();
      return false;
    }
    if (!launches)
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
    std::array<int64_t, 3> grid;
    if (Status s = evaluateGrid(plan, k, bound.symbols, grid); !s.ok()) {
      error = s.message();
      return false;
    }
    if (!kernel.launch(k.name + kCPULauncherSuffix.str(), args, grid, error))
      return false;
  }
  return true;
}

} // namespace kiln::driver
