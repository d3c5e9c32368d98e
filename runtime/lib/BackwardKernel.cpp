//===- BackwardKernel.cpp - load, validate, launch the backward kernels ---===//
//
// The backward of a variant is several kernels in one module: a preprocess
// (D = rowsum(dO * O)), then either a dQ kernel and a dK/dV kernel, or a dK/dV
// kernel that accumulates dQ with fp32 atomics and a kernel converting that
// accumulator to dq's dtype.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"
#include "StreamWorkspaces.h"

#include "kiln/Runtime.h"

namespace kiln {

namespace {

/// Where the dQ accumulator starts in the workspace: past D, aligned for any
/// vector access the kernels make.
constexpr size_t kWorkspaceAlignment = 256;

size_t alignUp(size_t n, size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

/// A used entry needs a name and a launchable block; an unused one is
/// ignored whatever it holds (the C API passes null names there).
Status checkEntry(const BackwardKernelSpec &spec, const char *role,
                  const KernelEntry &entry) {
  std::string where =
      "backward of '" + spec.variant + "': the " + role + " kernel (" +
      (spec.atomicDQ ? "atomic-dQ" : "two-kernel") + " schedule)";
  if (entry.name.empty())
    return Status::error(where + " has no name");
  if (entry.numThreads < 1 || entry.numThreads > 1024)
    return Status::error(where + " '" + entry.name + "' has " +
                         std::to_string(entry.numThreads) +
                         " threads; a block holds 1 to 1024");
  if (entry.sharedBytes < 0)
    return Status::error(where + " '" + entry.name +
                         "' has a negative shared memory size");
  return Status();
}

/// The entries the spec's schedule launches, in launch order.
std::vector<std::pair<const char *, const KernelEntry *>>
scheduleEntries(const BackwardKernelSpec &spec) {
  if (spec.atomicDQ)
    return {{"preprocess", &spec.preprocess},
            {"dkdv", &spec.dkdv},
            {"convert", &spec.convert}};
  return {
      {"preprocess", &spec.preprocess}, {"dq", &spec.dq}, {"dkdv", &spec.dkdv}};
}

/// A contiguous f32 array of `sizes` at `data`.
TensorRef contiguousF32(void *data, std::vector<int64_t> sizes) {
  TensorRef t;
  t.data = data;
  t.dtype = DType::F32;
  t.strides.assign(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;)
    t.strides[i - 1] = t.strides[i] * sizes[i];
  t.sizes = std::move(sizes);
  return t;
}

} // namespace

BackwardKernel::BackwardKernel()
    : workspaces_(std::make_unique<detail::StreamWorkspaces>()) {}

BackwardKernel::~BackwardKernel() {
  // The workspaces and the module belong to the context they were made in.
  detail::ScopedContext scope(context_);
  workspaces_.reset();
  detail::unloadModule(module_);
}

Status BackwardKernel::load(const BackwardKernelSpec &spec, int ordinal,
                            std::unique_ptr<BackwardKernel> &kernel) {
  if (spec.blockM < 1 || spec.blockN < 1)
    return Status::error("backward of '" + spec.variant + "' has block sizes " +
                         std::to_string(spec.blockM) + " x " +
                         std::to_string(spec.blockN) +
                         "; both must be at least 1");
  if (spec.headDimQK < 1 || spec.headDimV < 1)
    return Status::error("backward of '" + spec.variant + "' has head dims " +
                         std::to_string(spec.headDimQK) + "/" +
                         std::to_string(spec.headDimV) +
                         "; both must be at least 1");
  if (spec.gqaGroup < 1)
    return Status::error("backward of '" + spec.variant + "' has GQA group " +
                         std::to_string(spec.gqaGroup) +
                         "; it must be at least 1");
  std::vector<detail::FunctionRequest> requests;
  for (auto [role, entry] : scheduleEntries(spec)) {
    if (Status s = checkEntry(spec, role, *entry); !s.ok())
      return s;
    requests.push_back({entry->name, entry->sharedBytes});
  }
  detail::LoadedModule loaded;
  if (Status s =
          detail::loadModule(spec.source, spec.arch, spec.variant + "_bwd",
                             ordinal, requests, loaded);
      !s.ok())
    return s;
  auto result = std::unique_ptr<BackwardKernel>(new BackwardKernel());
  result->spec_ = spec;
  result->context_ = loaded.context;
  result->module_ = loaded.module;
  result->preprocess_ = loaded.functions[0];
  if (spec.atomicDQ) {
    result->dkdv_ = loaded.functions[1];
    result->convert_ = loaded.functions[2];
  } else {
    result->dq_ = loaded.functions[1];
    result->dkdv_ = loaded.functions[2];
  }
  result->compileMs_ = loaded.compileMs;
  result->loadMs_ = loaded.loadMs;
  result->cacheHit_ = loaded.cacheHit;
  kernel = std::move(result);
  return Status();
}

size_t BackwardKernel::workspaceBytes() const {
  return workspaces_->lastBytes();
}

Status BackwardKernel::backward(const TensorRef &q, const TensorRef &k,
                                const TensorRef &v, const TensorRef &out,
                                const TensorRef &dout, const TensorRef &lse,
                                const TensorRef &dq, const TensorRef &dk,
                                const TensorRef &dv,
                                const std::vector<TensorRef> &captures,
                                void *stream) const {
  using namespace detail;
  ScopedContext scope(context_);
  if (!scope.status().ok())
    return scope.status();
  const BackwardKernelSpec &s = spec_;
  // The checks and their messages follow ForwardKernel::forward.
  ProblemSizes sizes;
  if (Status st = problemSizes(q, k, s.gqaGroup, s.variant, sizes); !st.ok())
    return st;
  int64_t batch = sizes.batch, seqQ = sizes.seqQ, heads = sizes.heads;
  int64_t seqKV = sizes.seqKV, kvHeads = sizes.kvHeads;
  std::vector<int64_t> shapeQ{batch, seqQ, heads, s.headDimQK};
  std::vector<int64_t> shapeK{batch, seqKV, kvHeads, s.headDimQK};
  std::vector<int64_t> shapeV{batch, seqKV, kvHeads, s.headDimV};
  std::vector<int64_t> shapeO{batch, seqQ, heads, s.headDimV};
  std::vector<int64_t> shapeRows{batch, heads, seqQ};
  struct Arg {
    const char *name;
    const TensorRef *t;
    DType dtype;
    const std::vector<int64_t> *shape;
  };
  const Arg args[] = {
      {"q", &q, s.dtype, &shapeQ},       {"k", &k, s.dtype, &shapeK},
      {"v", &v, s.dtype, &shapeV},       {"out", &out, s.dtype, &shapeO},
      {"dout", &dout, s.dtype, &shapeO}, {"lse", &lse, DType::F32, &shapeRows},
      {"dq", &dq, s.dtype, &shapeQ},     {"dk", &dk, s.dtype, &shapeK},
      {"dv", &dv, s.dtype, &shapeV}};
  Status st;
  for (const Arg &a : args)
    if (!(st = checkTensor(a.name, *a.t, a.dtype, *a.shape)).ok())
      return st;
  // q, k, v and dout are read with cp.async; out, lse and the gradients with
  // plain loads and stores, which take any non-negative strides.
  if (!(st = checkStaged("q", q)).ok() || !(st = checkStaged("k", k)).ok() ||
      !(st = checkStaged("v", v)).ok() ||
      !(st = checkStaged("dout", dout)).ok())
    return st;
  for (const Arg &a : args)
    if (!(st = checkOnDevice(a.name, *a.t)).ok())
      return st;
  if (!(st = checkCaptures(s.variant, s.captures, captures,
                           {batch, heads, kvHeads, seqQ, seqKV}))
           .ok())
    return st;

  // The workspace: D [B, H, Lq], then for atomicDQ the accumulator
  // [B, Lq, H, Dqk], both f32 and contiguous (the kernels form 64-bit
  // element offsets, so only the sizes' own limits apply).
  int64_t deltaElements = batch * heads * seqQ;
  int64_t accumElements = s.atomicDQ ? deltaElements * s.headDimQK : 0;
  size_t accumOffset = alignUp(deltaElements * 4, kWorkspaceAlignment);
  size_t bytes = accumOffset + accumElements * 4;

  // Held until the last launch is enqueued (see StreamWorkspaces::lock).
  auto guard = workspaces_->lock();
  void *workspace = nullptr;
  if (!(st = workspaces_->acquire(stream, bytes, workspace)).ok())
    return st;
  TensorRef delta = contiguousF32(workspace, {batch, heads, seqQ});
  TensorRef dqAccum =
      contiguousF32(static_cast<char *>(workspace) + accumOffset,
                    {batch, seqQ, heads, s.headDimQK});

  int64_t qBlocks = ceilDiv(seqQ, s.blockM),
          kvBlocks = ceilDiv(seqKV, s.blockN);
  auto run = [&](void *function, const KernelEntry &entry, int64_t gridX,
                 int64_t gridY, KernelParams &params) {
    return launch(function, gridX, gridY, batch, entry.numThreads,
                  entry.sharedBytes, stream, params,
                  "cuLaunchKernel of '" + entry.name + "'");
  };

  // preprocess(out, dout, delta[, dqAccum]): D, and zeroes the accumulator.
  KernelParams pre;
  pre.addTensor(out, 4);
  pre.addTensor(dout, 4);
  pre.addTensor(delta, 3);
  if (s.atomicDQ)
    pre.addTensor(dqAccum, 4);
  if (!(st = run(preprocess_, s.preprocess, qBlocks, heads, pre)).ok())
    return st;

  // q, k, v, dout, lse, delta: what dq and dkdv both start with.
  auto common = [&](KernelParams &params) {
    for (const TensorRef *t : {&q, &k, &v, &dout})
      params.addTensor(*t, 4);
    params.addTensor(lse, 3);
    params.addTensor(delta, 3);
  };

  if (!s.atomicDQ) {
    // dq(q, k, v, dout, lse, delta, dq, captures...): one program per Q block.
    KernelParams params;
    common(params);
    params.addTensor(dq, 4);
    params.addCaptures(s.captures, captures);
    if (!(st = run(dq_, s.dq, qBlocks, heads, params)).ok())
      return st;
  }

  // dkdv(q, k, v, dout, lse, delta, dk, dv[, dqAccum], captures...): one
  // program per KV block and KV head, over the G query heads of its group.
  KernelParams params;
  common(params);
  params.addTensor(dk, 4);
  params.addTensor(dv, 4);
  if (s.atomicDQ)
    params.addTensor(dqAccum, 4);
  params.addCaptures(s.captures, captures);
  if (!(st = run(dkdv_, s.dkdv, kvBlocks, kvHeads, params)).ok())
    return st;

  if (s.atomicDQ) {
    // convert(dqAccum, dq): the f32 sums to dq's dtype and strides.
    KernelParams conv;
    conv.addTensor(dqAccum, 4);
    conv.addTensor(dq, 4);
    if (!(st = run(convert_, s.convert, qBlocks, heads, conv)).ok())
      return st;
  }
  return Status();
}

} // namespace kiln
