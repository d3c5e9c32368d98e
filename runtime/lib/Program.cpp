//===- Program.cpp - load and launch any compiled program -----------------===//

#include "kiln/Program.h"

#include "CudaApi.h"
#include "Launch.h"
#include "RunShapes.h"
#include "StreamWorkspaces.h"

namespace kiln {

using namespace detail;

Program::Program()
    : workspaces_(std::make_unique<StreamWorkspaces>()),
      shapes_(std::make_unique<RunShapes>()) {}

Program::~Program() {
  // The workspaces and the module belong to the context they were made in.
  ScopedContext scope(context_);
  workspaces_.reset();
  for (void *module : modules_)
    unloadModule(module);
}

Status Program::load(const ProgramSpec &spec, int ordinal,
                     std::unique_ptr<Program> &program) {
  if (Status s = verifyPlan(spec); !s.ok())
    return s;
  // Tensor maps are Hopper's (compute capability 9.0).
  for (const KernelLaunch &k : spec.kernels)
    for (const KernelArg &a : k.args)
      if (a.kind == KernelArg::Kind::TensorMap && spec.arch != "sm_90a")
        return Status::error("kernel '" + k.name +
                             "' takes a TMA tensor map "
                             "of '" +
                             a.name +
                             "', which needs sm_90a; the "
                             "program is compiled for " +
                             spec.arch);
  LoadedProgram loaded;
  if (Status s = loadProgram(spec, ordinal, loaded); !s.ok())
    return s;
  auto result = std::unique_ptr<Program>(new Program());
  result->spec_ = spec;
  result->context_ = loaded.context;
  result->modules_ = loaded.modules;
  result->functions_ = loaded.functions;
  result->device_ = loaded.device;
  result->compileMs_ = loaded.compileMs;
  result->loadMs_ = loaded.loadMs;
  result->cacheHit_ = loaded.cacheHit;
  program = std::move(result);
  return Status();
}

size_t Program::workspaceBytes() const { return workspaces_->lastBytes(); }

namespace {

/// A contiguous array of `sizes` at `data`.
TensorRef contiguous(void *data, DType dtype, std::vector<int64_t> sizes) {
  TensorRef t;
  t.data = data;
  t.dtype = dtype;
  t.strides.assign(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;)
    t.strides[i - 1] = t.strides[i] * sizes[i];
  t.sizes = std::move(sizes);
  return t;
}

} // namespace

Status Program::bindShape(const std::vector<NamedTensor> &tensors,
                          const std::vector<TensorRef> &captures,
                          const SymbolValues &overrides,
                          std::shared_ptr<const RunShape> &shape) const {
  const ProgramSpec &s = spec_;
  BoundRun bound;
  if (Status st = bindRun(s, tensors, captures, device_, bound, overrides);
      !st.ok())
    return st;
  auto made = std::make_shared<RunShape>();
  made->launched.resize(s.kernels.size());
  made->grids.resize(s.kernels.size());
  made->scalars.resize(s.kernels.size());
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    const KernelLaunch &kernel = s.kernels[k];
    bool launches = false;
    if (Status st = kernelLaunches(kernel, bound.symbols, launches); !st.ok())
      return st;
    made->launched[k] = launches;
    if (!launches)
      continue;
    if (Status st = evaluateGrid(s, kernel, bound.symbols, made->grids[k]);
        !st.ok())
      return st;
    for (const KernelArg &a : kernel.args) {
      if (a.kind != KernelArg::Kind::Scalar)
        continue;
      int64_t value = 0;
      if (Status st = evaluate(a.value, bound.symbols, value); !st.ok())
        return Status::error("kernel '" + kernel.name +
                             "' scalar: " + st.message());
      made->scalars[k].push_back(value);
    }
  }
  if (Status st = layoutWorkspaces(s, bound.symbols, made->layout); !st.ok())
    return st;
  shape = std::move(made);
  return Status();
}

Status Program::run(const std::vector<NamedTensor> &tensors,
                    const std::vector<TensorRef> &captures, void *stream,
                    const SymbolValues &overrides,
                    const WorkspaceAllocator &allocate) const {
  ScopedContext scope(context_);
  if (!scope.status().ok())
    return scope.status();
  const ProgramSpec &s = spec_;
  std::vector<const TensorRef *> slots;
  if (Status st = matchTensors(s, tensors, slots); !st.ok())
    return st;
  // The shape-only work from an earlier run with the same shapes (only
  // the pointers are checked again), or bound now and kept.
  bool keep = overrides.empty() && shapes_->enabled();
  std::vector<int64_t> key;
  std::shared_ptr<const RunShape> shape;
  if (keep) {
    key = runShapeKey(slots, captures);
    shape = shapes_->find(key);
  }
  if (shape) {
    if (Status st = checkPointers(s, slots, captures); !st.ok())
      return st;
  } else {
    if (Status st = bindShape(tensors, captures, overrides, shape); !st.ok())
      return st;
    if (keep)
      shapes_->insert(std::move(key), shape);
  }
  for (size_t i = 0; i < s.tensors.size(); ++i)
    if (Status st = checkOnDevice(s.tensors[i].name.c_str(), *slots[i]);
        !st.ok())
      return st;
  for (size_t i = 0; i < captures.size(); ++i) {
    std::string what = "capture '" + s.captures[i].name + "'";
    if (Status st = checkOnDevice(what.c_str(), captures[i]); !st.ok())
      return st;
  }
  const WorkspaceLayout &layout = shape->layout;

  const api::Driver *d = nullptr;
  if (Status st = api::driver(d); !st.ok())
    return st;
  // Held until the last launch is enqueued (see StreamWorkspaces::lock);
  // not taken when the caller allocates.
  std::unique_lock<std::mutex> guard;
  std::vector<TensorRef> workspaces;
  struct Clear {
    void *data;
    size_t bytes;
    const std::string *name;
  };
  std::vector<Clear> clears; // enqueued with the kernels, below
  void *buffer = nullptr;
  if (allocate) {
    if (layout.totalBytes > 0) {
      buffer = allocate(layout.totalBytes);
      if (!buffer)
        return Status::error("the caller's allocator gave no " +
                             std::to_string(layout.totalBytes) +
                             "-byte workspace for '" + s.variant + "'");
      if (reinterpret_cast<uintptr_t>(buffer) % 256 != 0)
        return Status::error("the caller's workspace for '" + s.variant +
                             "' is not 256-byte aligned");
    }
  } else {
    guard = workspaces_->lock();
    if (layout.totalBytes > 0) {
      if (Status st = workspaces_->acquire(stream, layout.totalBytes, buffer);
          !st.ok())
        return st;
    } else {
      workspaces_->noteUnused();
    }
  }
  for (size_t w = 0; w < s.workspaces.size(); ++w) {
    void *data =
        buffer ? static_cast<char *>(buffer) + layout.offsets[w] : nullptr;
    workspaces.push_back(
        contiguous(data, s.workspaces[w].dtype, layout.shapes[w]));
    size_t end =
        w + 1 < s.workspaces.size() ? layout.offsets[w + 1] : layout.totalBytes;
    if (s.workspaces[w].zeroFill && end > layout.offsets[w])
      clears.push_back({data, end - layout.offsets[w], &s.workspaces[w].name});
  }

  // Every kernel's arguments first (tensor maps are encoded and checked
  // here), so a refused argument leaves nothing enqueued.
  std::vector<KernelParams> allParams(s.kernels.size());
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    if (!shape->launched[k])
      continue;
    size_t scalar = 0;
    const KernelLaunch &kernel = s.kernels[k];
    KernelParams &params = allParams[k];
    for (const KernelArg &a : kernel.args) {
      switch (a.kind) {
      case KernelArg::Kind::Tensor:
        params.addTensor(*slots[s.findTensor(a.name) - s.tensors.data()],
                         a.rank);
        break;
      case KernelArg::Kind::Workspace:
        params.addTensor(
            workspaces[s.findWorkspace(a.name) - s.workspaces.data()], a.rank);
        break;
      case KernelArg::Kind::Capture:
        params.addTensor(captures[a.capture], a.rank);
        break;
      case KernelArg::Kind::Scalar:
        params.addInt64(shape->scalars[k][scalar++]);
        break;
      case KernelArg::Kind::TensorMap: {
        TensorMapLayout mapLayout;
        // A tensor's map, or a workspace's (verifyPlan checked it is one).
        const TensorDecl *decl = s.findTensor(a.name);
        const TensorRef &tensor =
            decl ? *slots[decl - s.tensors.data()]
                 : workspaces[s.findWorkspace(a.name) - s.workspaces.data()];
        if (Status st = tensorMapLayout(kernel.name, a, tensor, mapLayout);
            !st.ok())
          return st;
        if (!d->cuTensorMapEncodeTiled)
          return Status::error("kernel '" + kernel.name +
                               "' takes a TMA tensor map, and this CUDA "
                               "driver has no cuTensorMapEncodeTiled");
        // CUtensorMap: 128 bytes, 64-byte aligned. Element strides 1, no
        // interleave, 128-byte L2 promotion, zeros past the tensor.
        alignas(128) unsigned char map[128];
        const unsigned elementStrides[5] = {1, 1, 1, 1, 1};
        if (Status st = api::check(
                d->cuTensorMapEncodeTiled(
                    map, mapLayout.dataType, mapLayout.rank, mapLayout.address,
                    mapLayout.dims, mapLayout.strides, mapLayout.box,
                    elementStrides,
                    /*interleave=*/0, mapLayout.swizzle, /*l2Promotion=*/2,
                    /*oobFill=*/0),
                ("cuTensorMapEncodeTiled for '" + a.name + "' of '" +
                 kernel.name + "'")
                    .c_str());
            !st.ok())
          return st;
        params.addBytes(map, sizeof(map));
        break;
      }
      }
    }
  }
  // Then the zero-filled workspaces' clears, ahead of the kernels on the
  // stream (a kernel that accumulates into one, such as deterministic
  // capture gradients' fixed-point sums, starts from zeros every run).
  for (const Clear &c : clears)
    if (Status st = api::check(
            d->cuMemsetD8Async(reinterpret_cast<api::CUdeviceptr>(c.data), 0,
                               c.bytes, stream),
            ("clearing workspace '" + *c.name + "'").c_str());
        !st.ok())
      return st;
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    if (!shape->launched[k])
      continue;
    const KernelLaunch &kernel = s.kernels[k];
    const std::array<int64_t, 3> &grid = shape->grids[k];
    if (Status st = launch(functions_[k], grid[0], grid[1], grid[2],
                           kernel.numThreads, kernel.sharedBytes, stream,
                           allParams[k], kernel.name, kernel.overlapsPrior);
        !st.ok())
      return st;
  }
  return Status();
}

} // namespace kiln
