//===- Launch.cpp - what every kernel launcher shares ---------------------===//

#include "Launch.h"

#include "CudaApi.h"

#include "kiln/CompileUnits.h"

#include <algorithm>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace kiln::detail {

namespace {

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

std::string shapeString(const std::vector<int64_t> &v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i)
    os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

Status checkTensor(const char *what, const TensorRef &t, DType dtype,
                   const std::vector<int64_t> &want) {
  if (t.dtype != dtype)
    return Status::error(std::string(what) + " must be " + dtypeName(dtype) +
                         ", got " + dtypeName(t.dtype));
  if (t.sizes.size() != want.size() || t.strides.size() != want.size())
    return Status::error(
        std::string(what) + " must have rank " + std::to_string(want.size()) +
        " (sizes and strides), got " + std::to_string(t.sizes.size()) +
        " sizes and " + std::to_string(t.strides.size()) + " strides");
  if (t.sizes != want)
    return Status::error(std::string(what) + " has shape " +
                         shapeString(t.sizes) + ", expected " +
                         shapeString(want));
  for (int64_t stride : t.strides)
    if (stride < 0)
      return Status::error(std::string(what) +
                           " has a negative stride; strides must be >= 0");
  for (int64_t size : t.sizes)
    if (size >= (int64_t{1} << 31))
      return Status::error(std::string(what) + " has a dimension of " +
                           std::to_string(size) +
                           "; dimensions must be below 2^31");
  // The last element's byte offset, in 64 bits: strides past it would wrap
  // around and silently alias other elements (or other memory).
  int64_t extent = 0, step = 0;
  bool overflow = false;
  for (size_t d = 0; d < t.sizes.size() && !overflow; ++d)
    overflow = __builtin_mul_overflow(t.sizes[d] - 1, t.strides[d], &step) ||
               __builtin_add_overflow(extent, step, &extent);
  if (overflow ||
      __builtin_mul_overflow(extent, static_cast<int64_t>(dtypeBytes(t.dtype)),
                             &extent))
    return Status::error(std::string(what) + " with sizes " +
                         shapeString(t.sizes) + " and strides " +
                         shapeString(t.strides) +
                         " spans more than 2^63 bytes");
  if (!t.data)
    return Status::error(std::string(what) + " is a null pointer");
  return Status();
}

/// A declared tensor's alignment, at least its element size: the kernels
/// index its innermost dimension with a literal stride of 1, whatever the
/// spec says (a spec of an older compiler may say 0).
static int64_t minimumAlignment(const TensorDecl &decl) {
  return std::max(decl.alignBytes,
                  static_cast<int64_t>(dtypeBytes(decl.dtype)));
}

Status checkAligned(const char *what, const TensorRef &t, int64_t alignBytes) {
  int64_t chunk = alignBytes / static_cast<int64_t>(dtypeBytes(t.dtype));
  size_t rank = t.strides.size();
  if (rank == 0 || chunk < 1)
    return Status();
  // (A last dimension of one element is only ever read at index 0.)
  if (t.strides[rank - 1] != 1 && t.sizes[rank - 1] != 1)
    return Status::error(std::string(what) +
                         " must be contiguous in its last dimension, got "
                         "stride " +
                         std::to_string(t.strides[rank - 1]));
  if (reinterpret_cast<uintptr_t>(t.data) % alignBytes != 0)
    return Status::error(std::string(what) + " must be " +
                         std::to_string(alignBytes) + "-byte aligned (" +
                         (chunk == 1 ? std::string("its element size")
                                     : "its rows are copied in " +
                                           std::to_string(alignBytes) +
                                           "-byte chunks") +
                         ")");
  for (size_t dim = 0; dim + 1 < rank; ++dim)
    if (t.strides[dim] % chunk != 0)
      return Status::error(std::string(what) + " stride " +
                           std::to_string(t.strides[dim]) + " of dimension " +
                           std::to_string(dim) + " must be a multiple of " +
                           std::to_string(chunk) + " elements (" +
                           std::to_string(alignBytes) + "-byte aligned rows)");
  return Status();
}

Status checkOnDevice(const char *what, const TensorRef &t) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  unsigned memoryType = 0;
  if (d->cuPointerGetAttribute(
          &memoryType, api::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
          reinterpret_cast<api::CUdeviceptr>(t.data)) != 0 ||
      memoryType != api::CU_MEMORYTYPE_DEVICE)
    return Status::error(std::string(what) +
                         " is not device memory of the current context");
  return Status();
}

char *KernelParams::append(size_t size) {
  // 16-byte aligned slots in one buffer: one allocation per launch, not one
  // per argument.
  if (bytes_.empty())
    bytes_.reserve(2048); // a backward kernel's tensors and maps fit
  size_t offset = (bytes_.size() + 15) / 16 * 16;
  offsets_.push_back(offset);
  bytes_.resize(offset + size, 0);
  return bytes_.data() + offset;
}

void KernelParams::addTensor(const TensorRef &t, size_t rank) {
  char *bytes = append(8 + 16 * rank);
  std::memcpy(bytes, &t.data, 8);
  for (size_t i = 0; i < rank && i < t.sizes.size(); ++i) {
    long long size = t.sizes[i], stride = t.strides[i];
    std::memcpy(bytes + 8 + 8 * i, &size, 8);
    std::memcpy(bytes + 8 + 8 * rank + 8 * i, &stride, 8);
  }
}

void KernelParams::addBytes(const void *bytes, size_t size) {
  std::memcpy(append(size), bytes, size);
}

void KernelParams::addInt64(int64_t value) {
  std::memcpy(append(8), &value, 8);
}

void **KernelParams::pointers() {
  pointers_.clear();
  for (size_t offset : offsets_)
    pointers_.push_back(bytes_.data() + offset);
  return pointers_.data();
}

Status tensorMapLayout(const std::string &kernel, const KernelArg &arg,
                       const TensorRef &t, TensorMapLayout &layout) {
  // Made only for a message: this is every launch's path.
  auto what = [&] {
    return "tensor map of '" + arg.name + "' (kernel '" + kernel + "')";
  };
  // CUtensorMapDataType of each DType.
  int dataType = -1;
  switch (t.dtype) {
  case DType::BF16:
    dataType = 9;
    break;
  case DType::F16:
    dataType = 6;
    break;
  case DType::F32:
    dataType = 7;
    break;
  case DType::F64:
    dataType = 8;
    break;
  case DType::I32:
    dataType = 3;
    break;
  case DType::I64:
    dataType = 5;
    break;
  }
  size_t rank = t.sizes.size();
  size_t bytes = dtypeBytes(t.dtype);
  if (rank < 1 || rank > 5 || t.strides.size() != rank)
    return Status::error(what() + ": the tensor has rank " +
                         std::to_string(rank) + "; TMA takes 1 to 5");
  if (t.strides[rank - 1] != 1)
    return Status::error(what() +
                         ": the tensor must be contiguous in its last "
                         "dimension, got stride " +
                         std::to_string(t.strides[rank - 1]));
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
    return Status::error(what() + ": the tensor must be 16-byte aligned");
  layout = TensorMapLayout();
  layout.dataType = dataType;
  layout.rank = static_cast<unsigned>(rank);
  layout.address = t.data;
  if (arg.mapDims.size() != rank)
    return Status::error(what() + ": the map orders " +
                         std::to_string(arg.mapDims.size()) +
                         " dimensions, the tensor has " + std::to_string(rank));
  for (size_t i = 0; i < rank; ++i) {
    size_t d = static_cast<size_t>(arg.mapDims[i]); // innermost first
    if (t.sizes[d] < 1 || t.sizes[d] > (int64_t{1} << 32))
      return Status::error(what() + ": dimension " + std::to_string(d) +
                           " is " + std::to_string(t.sizes[d]) +
                           "; TMA takes 1 to 2^32");
    layout.dims[i] = static_cast<unsigned long long>(t.sizes[d]);
    if (i > 0) {
      unsigned long long stride =
          static_cast<unsigned long long>(t.strides[d]) * bytes;
      if (stride % 16 != 0 || stride >= (1ull << 40))
        return Status::error(what() + ": stride " +
                             std::to_string(t.strides[d]) + " of dimension " +
                             std::to_string(d) +
                             " is not a multiple of 16 bytes below 2^40");
      layout.strides[i - 1] = stride;
    }
    layout.box[i] = i < arg.box.size() ? static_cast<unsigned>(arg.box[i]) : 1;
  }
  if (arg.box.size() > rank)
    return Status::error(what() + ": the box has " +
                         std::to_string(arg.box.size()) +
                         " dimensions, the tensor " + std::to_string(rank));
  // CUtensorMapSwizzle: none, 32, 64, 128 bytes.
  layout.swizzle = arg.swizzle == 128  ? 3
                   : arg.swizzle == 64 ? 2
                   : arg.swizzle == 32 ? 1
                                       : 0;
  return Status();
}

Status loadProgram(const ProgramSpec &spec, int ordinal,
                   LoadedProgram &loaded) {
  const std::string &arch = spec.arch;
  if (Status s = cuda::init(ordinal); !s.ok())
    return s;
  std::string deviceArchName, deviceName;
  if (Status s = deviceArch(ordinal, deviceArchName, deviceName); !s.ok())
    return s;
  if (deviceArchName != arch)
    return Status::error("kernel '" + spec.displayName() +
                         "' was compiled for " + arch + " but device " +
                         std::to_string(ordinal) + " (" + deviceName +
                         ") needs " + deviceArchName);
  const api::Driver *d = nullptr;
  api::driver(d);

  LoadedProgram result;
  d->cuCtxGetCurrent(&result.context);
  std::vector<CompileUnit> units;
  if (Status s = splitCompileUnits(spec, units); !s.ok())
    return s;
  auto start = std::chrono::steady_clock::now();
  std::vector<CompiledUnit> compiled;
  if (Status s = compileUnits(units, arch, /*useCache=*/true, compiled);
      !s.ok())
    return s;
  result.cacheHit = std::all_of(compiled.begin(), compiled.end(),
                                [](const CompiledUnit &c) { return c.cacheHit; });
  if (!result.cacheHit) {
    result.compileMs = msSince(start);
    start = std::chrono::steady_clock::now();
  }
  // Unloads every module on failure below.
  struct Unload {
    std::vector<void *> modules;
    ~Unload() {
      for (void *module : modules)
        unloadModule(module);
    }
  } unload;
  result.functions.assign(spec.kernels.size(), nullptr);
  for (size_t u = 0; u < units.size(); ++u) {
    api::CUmodule module;
    if (Status s = api::check(
            d->cuModuleLoadData(&module, compiled[u].cubin.data()),
            ("cuModuleLoadData of '" + units[u].name + "'").c_str());
        !s.ok())
      return s;
    unload.modules.push_back(module);
    for (size_t k : units[u].kernels) {
      const std::string &name = spec.kernels[k].name;
      if (Status s = api::check(
              d->cuModuleGetFunction(&result.functions[k], module, name.c_str()),
              ("cuModuleGetFunction of '" + name + "'").c_str());
          !s.ok())
        return s;
    }
  }

  api::CUdevice device;
  d->cuDeviceGet(&device, ordinal);
  int maxShared = 0;
  d->cuDeviceGetAttribute(
      &maxShared, api::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
      device);
  int numSms = 0;
  d->cuDeviceGetAttribute(
      &numSms, api::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
  for (size_t k = 0; k < spec.kernels.size(); ++k) {
    const KernelLaunch &kernel = spec.kernels[k];
    if (kernel.sharedBytes > maxShared)
      return Status::error("kernel '" + kernel.name + "' needs " +
                           std::to_string(kernel.sharedBytes) +
                           " bytes of shared memory; " + deviceName +
                           " allows " + std::to_string(maxShared));
    if (Status s = api::check(
            d->cuFuncSetAttribute(
                result.functions[k],
                api::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                static_cast<int>(kernel.sharedBytes)),
            "cuFuncSetAttribute(max dynamic shared memory)");
        !s.ok())
      return s;
    // How many CTAs of it a multiprocessor holds (ctas_per_sm.<kernel>).
    int ctas = 0;
    if (Status s = api::check(d->cuOccupancyMaxActiveBlocksPerMultiprocessor(
                                  &ctas, result.functions[k],
                                  static_cast<int>(kernel.numThreads),
                                  static_cast<size_t>(kernel.sharedBytes)),
                              "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        !s.ok())
      return s;
    result.device.ctasPerSm[kernel.name] = std::max(ctas, 1);
  }
  result.modules = std::move(unload.modules);
  unload.modules.clear();
  result.maxShared = maxShared;
  result.device.numSms = numSms;
  result.loadMs = msSince(start);
  loaded = std::move(result);
  return Status();
}

ScopedContext::ScopedContext(void *context) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok()) {
    status_ = s;
    return;
  }
  api::CUcontext current = nullptr;
  d->cuCtxGetCurrent(&current);
  if (!context || current == context)
    return;
  status_ = api::check(d->cuCtxPushCurrent(context),
                       "making the kernel's CUDA context current");
  pushed_ = status_.ok();
}

ScopedContext::~ScopedContext() {
  const api::Driver *d = nullptr;
  if (pushed_ && api::driver(d).ok()) {
    api::CUcontext popped = nullptr;
    d->cuCtxPopCurrent(&popped);
  }
}

void unloadModule(void *module) {
  const api::Driver *d = nullptr;
  if (module && api::driver(d).ok())
    d->cuModuleUnload(module);
}

Status launch(void *function, int64_t gridX, int64_t gridY, int64_t gridZ,
              int64_t numThreads, int64_t sharedBytes, void *stream,
              KernelParams &params, const std::string &kernel,
              bool overlapPrior) {
  const api::Driver *d = nullptr;
  if (Status s = api::driver(d); !s.ok())
    return s;
  // A kernel that waits for the previous grids itself (griddepcontrol.wait
  // before its first global access) may start while they finish.
  if (overlapPrior && d->cuLaunchKernelEx) {
    api::CUlaunchAttribute attribute{};
    attribute.id = api::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    api::CUlaunchConfig config{};
    config.gridDimX = static_cast<unsigned>(gridX);
    config.gridDimY = static_cast<unsigned>(gridY);
    config.gridDimZ = static_cast<unsigned>(gridZ);
    config.blockDimX = static_cast<unsigned>(numThreads);
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = static_cast<unsigned>(sharedBytes);
    config.hStream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    if (d->cuLaunchKernelEx(&config, function, params.pointers(), nullptr) == 0)
      return Status();
    // Refused (a device or driver without programmatic stream
    // serialization): launched as any other kernel, whose wait then returns
    // at once; a launch that fails for another reason fails again below,
    // with cuLaunchKernel's message.
  }
  int result = d->cuLaunchKernel(
      function, static_cast<unsigned>(gridX), static_cast<unsigned>(gridY),
      static_cast<unsigned>(gridZ), static_cast<unsigned>(numThreads), 1, 1,
      static_cast<unsigned>(sharedBytes), stream, params.pointers(), nullptr);
  // The message is made only on failure: this is every launch's path.
  if (result == 0)
    return Status();
  return api::check(result, ("cuLaunchKernel of '" + kernel + "'").c_str());
}

} // namespace kiln::detail

namespace kiln {

using detail::checkAligned;
using detail::checkTensor;
using detail::shapeString;

namespace {

/// The dims a capture declares, resolved: symbols by their values, literal
/// sizes as written.
Status captureShape(const CaptureSpec &decl, const SymbolValues &symbols,
                    std::vector<int64_t> &want) {
  for (const std::string &dim : decl.dims) {
    auto it = symbols.find(dim);
    if (it != symbols.end() && !isDeviceSymbol(dim)) {
      want.push_back(it->second);
      continue;
    }
    // A literal size; anything else is a malformed spec, not a crash.
    char *end = nullptr;
    long long size = std::strtoll(dim.c_str(), &end, 10);
    if (dim.empty() || *end != '\0' || size < 0)
      return Status::error(
          "capture '" + decl.name + "' declares dim '" + dim +
          "'; a dim is batch, heads, kv_heads, seq_q, seq_kv or a size");
    want.push_back(size);
  }
  return Status();
}

/// A capture's pointer must be aligned to its element: the kernels load it
/// as T (a misaligned f32 on the GPU is a fault that poisons the context).
/// Unlike a tensor, any strides are fine: score_mod indexes it itself.
Status checkCaptureAligned(const std::string &what, const TensorRef &t) {
  size_t bytes = dtypeBytes(t.dtype);
  if (reinterpret_cast<uintptr_t>(t.data) % bytes != 0)
    return Status::error(what + " must be " + std::to_string(bytes) +
                         "-byte aligned (its element size)");
  return Status();
}

} // namespace

Status matchTensors(const ProgramSpec &spec,
                    const std::vector<NamedTensor> &tensors,
                    std::vector<const TensorRef *> &slots) {
  slots.assign(spec.tensors.size(), nullptr);
  for (const NamedTensor &given : tensors) {
    size_t i = 0;
    while (i < spec.tensors.size() && spec.tensors[i].name != given.name)
      ++i;
    if (i == spec.tensors.size()) {
      std::string names;
      for (const TensorDecl &t : spec.tensors)
        names += (names.empty() ? "" : ", ") + t.name;
      return Status::error("the " + spec.kind + " of variant '" + spec.variant +
                           "' has no tensor '" + given.name + "' (it takes " +
                           names + ")");
    }
    if (slots[i])
      return Status::error("tensor '" + given.name + "' is given twice");
    slots[i] = &given.tensor;
  }
  for (size_t i = 0; i < spec.tensors.size(); ++i)
    if (!slots[i])
      return Status::error("the " + spec.kind + " of variant '" + spec.variant +
                           "' needs tensor '" + spec.tensors[i].name + "'");
  return Status();
}

Status checkPointers(const ProgramSpec &spec,
                     const std::vector<const TensorRef *> &slots,
                     const std::vector<TensorRef> &captures) {
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    const TensorDecl &decl = spec.tensors[i];
    if (!slots[i]->data)
      return Status::error(decl.name + " is a null pointer");
    if (Status s = checkAligned(decl.name.c_str(), *slots[i],
                                detail::minimumAlignment(decl));
        !s.ok())
      return s;
  }
  for (size_t i = 0; i < captures.size() && i < spec.captures.size(); ++i) {
    std::string what = "capture '" + spec.captures[i].name + "'";
    if (!captures[i].data)
      return Status::error(what + " is a null pointer");
    if (Status s = checkCaptureAligned(what, captures[i]); !s.ok())
      return s;
  }
  return Status();
}

Status bindRun(const ProgramSpec &spec, const std::vector<NamedTensor> &tensors,
               const std::vector<TensorRef> &captures,
               const DeviceSymbols &device, BoundRun &bound,
               const SymbolValues &overrides) {
  std::string program = "variant '" + spec.variant + "'";
  bound = BoundRun();
  if (Status s = matchTensors(spec, tensors, bound.tensors); !s.ok())
    return s;

  // Symbols: the first bare use in declaration order defines each.
  bound.symbols["num_sms"] = device.numSms;
  for (const KernelLaunch &k : spec.kernels) {
    auto it = device.ctasPerSm.find(k.name);
    bound.symbols[ctasPerSmSymbol(k.name)] =
        it == device.ctasPerSm.end() ? 1 : it->second;
  }
  std::vector<std::string> origin;
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    const TensorDecl &decl = spec.tensors[i];
    const TensorRef &t = *bound.tensors[i];
    const char *what = decl.name.c_str();
    if (t.dtype != decl.dtype)
      return Status::error(decl.name + " must be " + dtypeName(decl.dtype) +
                           ", got " + dtypeName(t.dtype));
    if (t.sizes.size() != decl.shape.size() ||
        t.strides.size() != decl.shape.size())
      return Status::error(std::string(what) + " must have rank " +
                           std::to_string(decl.shape.size()) +
                           " (sizes and strides), got " +
                           std::to_string(t.sizes.size()) + " sizes and " +
                           std::to_string(t.strides.size()) + " strides");
    for (size_t d = 0; d < decl.shape.size(); ++d) {
      const SizeExpr &e = decl.shape[d];
      // A bare symbol, or symbol + constant (a varlen batch's cu_seqlens,
      // [batch + 1]), binds the symbol.
      const SizeExpr *symbol = &e;
      int64_t plus = 0;
      if (e.op == SizeExpr::Op::Add && e.operands.size() == 2 &&
          e.operands[0].op == SizeExpr::Op::Symbol &&
          e.operands[1].op == SizeExpr::Op::Constant) {
        symbol = &e.operands[0];
        plus = e.operands[1].value;
      }
      if (symbol->op != SizeExpr::Op::Symbol ||
          bound.symbols.count(symbol->symbol))
        continue;
      if (t.sizes[d] - plus < 1)
        return Status::error("every size must be at least 1, got " + decl.name +
                             " " + shapeString(t.sizes) +
                             (plus ? " (" + e.str() + ")" : std::string()));
      bound.symbols[symbol->symbol] = t.sizes[d] - plus;
    }
  }
  for (const auto &[lhs, rhs] : spec.constraints) {
    int64_t l = 0, r = 0;
    if (Status s = evaluate(lhs, bound.symbols, l); !s.ok())
      return s;
    if (Status s = evaluate(rhs, bound.symbols, r); !s.ok())
      return s;
    if (l != r) {
      std::string values;
      for (const auto &[name, value] : bound.symbols)
        if (!isDeviceSymbol(name))
          values += (values.empty() ? "" : ", ") + name + " = " +
                    std::to_string(value);
      return Status::error(program + " needs " + lhs.str() + " = " + rhs.str() +
                           ", got " + std::to_string(l) + " and " +
                           std::to_string(r) + " (" + values + ")");
    }
  }
  // Dropout's generator keys each element by batch << 16 | head
  // (reference/Philox.h): beyond 16 bits two heads would share a mask.
  if (spec.findTensor("dropout_rng"))
    for (const char *name : {"batch", "heads"})
      if (auto it = bound.symbols.find(name);
          it != bound.symbols.end() && it->second > 65535)
        return Status::error(program +
                             " has dropout, which takes at most "
                             "65535 " +
                             name + ", got " + std::to_string(it->second));
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    const TensorDecl &decl = spec.tensors[i];
    std::vector<int64_t> want(decl.shape.size());
    for (size_t d = 0; d < want.size(); ++d)
      if (Status s = evaluate(decl.shape[d], bound.symbols, want[d]); !s.ok())
        return Status::error(decl.name + ": " + s.message());
    if (Status s =
            checkTensor(decl.name.c_str(), *bound.tensors[i], decl.dtype, want);
        !s.ok())
      return s;
    if (Status s = checkAligned(decl.name.c_str(), *bound.tensors[i],
                                detail::minimumAlignment(decl));
        !s.ok())
      return s;
  }

  if (captures.size() != spec.captures.size())
    return Status::error(program + " captures " +
                         std::to_string(spec.captures.size()) +
                         " tensors, got " + std::to_string(captures.size()));
  for (size_t i = 0; i < captures.size(); ++i) {
    const CaptureSpec &decl = spec.captures[i];
    std::vector<int64_t> want;
    if (Status s = captureShape(decl, bound.symbols, want); !s.ok())
      return s;
    std::string what = "capture '" + decl.name + "'";
    if (want.size() > 4)
      return Status::error(what + " has rank above 4");
    if (Status s = checkTensor(what.c_str(), captures[i], decl.dtype, want);
        !s.ok())
      return s;
    if (Status s = checkCaptureAligned(what, captures[i]); !s.ok())
      return s;
  }

  // The plan's derived symbols: each from the problem's symbols, or set.
  for (const auto &[name, value] : overrides) {
    if (!spec.derives(name)) {
      std::string names;
      for (const auto &symbol : spec.symbols)
        names += (names.empty() ? "" : ", ") + symbol.first;
      return Status::error(program + " has no symbol '" + name +
                           "' to set" +
                           (names.empty() ? std::string(" (it derives none)")
                                          : " (it derives " + names + ")"));
    }
  }
  SymbolValues derived;
  for (const auto &[name, expr] : spec.symbols) {
    int64_t value = 0;
    auto set = overrides.find(name);
    if (set != overrides.end())
      value = set->second;
    else if (Status s = evaluate(expr, bound.symbols, value); !s.ok())
      return Status::error("symbol '" + name + "': " + s.message());
    if (value < 1)
      return Status::error(program + ": symbol '" + name + "' is " +
                           std::to_string(value) +
                           (set != overrides.end()
                                ? "; a value set for it must be at least 1"
                                : " for this problem; it must be at least 1"));
    derived[name] = value;
  }
  bound.symbols.insert(derived.begin(), derived.end());
  return Status();
}

Status kernelLaunches(const KernelLaunch &kernel, const SymbolValues &symbols,
                      bool &launches) {
  int64_t value = 0;
  if (Status s = evaluate(kernel.when, symbols, value); !s.ok())
    return Status::error("kernel '" + kernel.name + "' 'when': " + s.message());
  launches = value >= 1;
  return Status();
}

Status layoutWorkspaces(const ProgramSpec &spec, const SymbolValues &symbols,
                        WorkspaceLayout &layout) {
  // Past the previous one, aligned for any vector access the kernels make.
  constexpr size_t kAlignment = 256;
  layout = WorkspaceLayout();
  for (const WorkspaceDecl &w : spec.workspaces) {
    std::vector<int64_t> shape(w.shape.size());
    int64_t elements = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (Status s = evaluate(w.shape[d], symbols, shape[d]); !s.ok())
        return Status::error("workspace '" + w.name + "': " + s.message());
      if (shape[d] < 0 || __builtin_mul_overflow(elements, shape[d], &elements))
        return Status::error("workspace '" + w.name + "' has shape " +
                             shapeString(shape) + ", which is not a size");
    }
    // Checked: a plan's expressions may ask for more than 64 bits hold.
    uint64_t bytes = 0, offset = 0, end = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(elements),
                               static_cast<uint64_t>(dtypeBytes(w.dtype)),
                               &bytes) ||
        __builtin_add_overflow(static_cast<uint64_t>(layout.totalBytes),
                               uint64_t{kAlignment - 1}, &offset) ||
        __builtin_add_overflow(offset / kAlignment * kAlignment, bytes, &end))
      return Status::error("workspace '" + w.name + "' of shape " +
                           shapeString(shape) + " needs more than 2^64 bytes");
    offset = offset / kAlignment * kAlignment;
    layout.offsets.push_back(offset);
    layout.shapes.push_back(shape);
    layout.totalBytes = end;
  }
  return Status();
}

Status evaluateGrid(const ProgramSpec &spec, const KernelLaunch &kernel,
                    const SymbolValues &symbols, std::array<int64_t, 3> &grid) {
  const int64_t limits[3] = {(int64_t{1} << 31) - 1, 65535, 65535};
  for (int axis = 0; axis < 3; ++axis)
    if (Status s = evaluate(kernel.grid[axis], symbols, grid[axis]); !s.ok())
      return Status::error("kernel '" + kernel.name + "' grid: " + s.message());
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] < 1 || grid[axis] > limits[axis])
      return Status::error("kernel '" + kernel.name + "' of variant '" +
                           spec.variant + "' needs a grid of " +
                           shapeString({grid[0], grid[1], grid[2]}) +
                           " for this problem; CUDA allows 1 to " +
                           shapeString({limits[0], limits[1], limits[2]}) +
                           " (one CTA per tile: batch and heads must be at "
                           "most 65535)");
  return Status();
}

} // namespace kiln
