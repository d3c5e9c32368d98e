//===- LaunchPlan.cpp - a tile program's launch plan ----------------------===//

#include "compiler/Emit/LaunchPlan/LaunchPlan.h"
#include "compiler/Emit/EmitDialects.h"

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "kiln/SpecFormat.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

namespace kiln {

namespace {

/// The bytes a cp.async copy moves per row chunk: such rows need this
/// alignment in global memory.
constexpr int64_t kCopyAsyncBytes = 16;

SizeExpr toSizeExpr(Attribute attr) {
  if (auto constant = dyn_cast<IntegerAttr>(attr))
    return SizeExpr::constant(constant.getInt());
  if (auto symbol = dyn_cast<StringAttr>(attr))
    return SizeExpr::named(symbol.str());
  // Verified by the tile dialect: ["op", operands...] with a known op.
  auto array = cast<ArrayAttr>(attr);
  SizeExpr::Op op = SizeExpr::Op::Add;
  opFromName(cast<StringAttr>(array[0]).str(), op);
  std::vector<SizeExpr> operands;
  for (Attribute operand : array.getValue().drop_front())
    operands.push_back(toSizeExpr(operand));
  return SizeExpr::apply(op, std::move(operands));
}

std::vector<SizeExpr> toShape(ArrayAttr shape) {
  std::vector<SizeExpr> result;
  for (Attribute dim : shape)
    result.push_back(toSizeExpr(dim));
  return result;
}

std::string shapeText(const std::vector<SizeExpr> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}

std::optional<DType> dtypeOf(Type t) {
  if (t.isBF16())
    return DType::BF16;
  if (t.isF16())
    return DType::F16;
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (t.isInteger(32))
    return DType::I32;
  if (t.isInteger(64) || t.isIndex())
    return DType::I64;
  return std::nullopt;
}

/// The kernel arguments copied into shared memory with cp.async.
llvm::SmallDenseSet<unsigned> copiedArguments(func::FuncOp kernel) {
  llvm::SmallDenseSet<unsigned> copied;
  kernel.walk([&](tgpu::CopyAsyncOp copy) {
    if (auto view = copy.getSource().getDefiningOp<tile::ViewOp>())
      if (auto arg = dyn_cast<BlockArgument>(view.getBase()))
        if (arg.getOwner() == &kernel.front())
          copied.insert(arg.getArgNumber());
  });
  // TMA reads 16-byte aligned rows as well.
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
    if (auto map =
            kernel.getArgAttrOfType<DictionaryAttr>(i, tgpu::attrs::kTensorMap))
      if (auto tensor = map.getAs<IntegerAttr>(tgpu::attrs::kTensorMapTensor))
        copied.insert(unsigned(tensor.getInt()));
  return copied;
}

LogicalResult addCaptures(func::FuncOp kernel, ProgramSpec &plan) {
  auto captures = kernel->getAttrOfType<ArrayAttr>(tile::attrs::kCaptures);
  if (!captures || !plan.captures.empty())
    return success();
  for (Attribute attr : captures) {
    auto capture = dyn_cast<attn::CaptureAttr>(attr);
    if (!capture)
      return kernel.emitError() << "'" << tile::attrs::kCaptures
                                << "' must hold #attn.capture declarations";
    CaptureSpec c;
    c.name = capture.getName().str();
    Type elt = capture.getType().getElementType();
    std::optional<DType> dtype = dtypeOf(elt);
    if (!dtype || *dtype == DType::BF16 || *dtype == DType::F16)
      return kernel.emitError()
             << "capture '" << c.name << "' holds " << elt
             << "; the runtime passes f32, f64, i32 and i64 captures";
    c.dtype = *dtype;
    for (Attribute dim : capture.getDims()) {
      if (auto name = dyn_cast<StringAttr>(dim))
        c.dims.push_back(name.str());
      else
        c.dims.push_back(std::to_string(cast<IntegerAttr>(dim).getInt()));
    }
    plan.captures.push_back(std::move(c));
  }
  return success();
}

/// Declares the kernel's derived symbols, or checks them against an earlier
/// kernel's declarations of the same names.
LogicalResult addSymbols(func::FuncOp kernel, ProgramSpec &plan) {
  auto symbols = kernel->getAttrOfType<DictionaryAttr>(tile::attrs::kSymbols);
  if (!symbols)
    return success();
  for (NamedAttribute symbol : symbols) {
    std::string name = symbol.getName().str();
    SizeExpr value = toSizeExpr(symbol.getValue());
    auto earlier = llvm::find_if(
        plan.symbols, [&](const auto &s) { return s.first == name; });
    if (earlier == plan.symbols.end()) {
      plan.symbols.emplace_back(name, std::move(value));
      continue;
    }
    if (earlier->second.str() != value.str())
      return kernel.emitError()
             << "kernel '" << kernel.getName() << "' derives '" << name
             << "' as " << value.str() << ", an earlier kernel as "
             << earlier->second.str();
  }
  return success();
}

/// Appends the tensor map at argument `i` (its tensor is an earlier
/// argument, declared by then).
LogicalResult addTensorMap(func::FuncOp kernel, unsigned i,
                           KernelLaunch &launch) {
  auto info =
      kernel.getArgAttrOfType<DictionaryAttr>(i, tgpu::attrs::kTensorMap);
  auto tensorNumber =
      info ? info.getAs<IntegerAttr>(tgpu::attrs::kTensorMapTensor) : nullptr;
  auto dims =
      info ? info.getAs<DenseI64ArrayAttr>(tgpu::attrs::kTensorMapDims) : nullptr;
  auto box =
      info ? info.getAs<DenseI64ArrayAttr>(tgpu::attrs::kTensorMapBox) : nullptr;
  auto swizzle =
      info ? info.getAs<IntegerAttr>(tgpu::attrs::kTensorMapSwizzle) : nullptr;
  if (!tensorNumber || !dims || !box || !swizzle)
    return kernel.emitError()
           << "tensor map argument " << i << " of kernel '" << kernel.getName()
           << "' needs '" << tgpu::attrs::kTensorMap
           << "' = {tensor, dims, box, swizzle}";
  int64_t t = tensorNumber.getInt();
  // A tensor, or a workspace (the atomic backward's dQ accumulator, which
  // tgpu.tma_reduce_add adds into).
  StringAttr tensor;
  if (t >= 0 && t < int64_t(i)) {
    tensor =
        kernel.getArgAttrOfType<StringAttr>(unsigned(t), tile::attrs::kTensor);
    if (!tensor)
      tensor = kernel.getArgAttrOfType<StringAttr>(unsigned(t),
                                                   tile::attrs::kWorkspace);
  }
  if (!tensor)
    return kernel.emitError()
           << "tensor map argument " << i << " of kernel '" << kernel.getName()
           << "' describes argument " << t
           << ", which is not an earlier tile.tensor or tile.workspace "
              "argument";
  KernelArg arg;
  arg.kind = KernelArg::Kind::TensorMap;
  arg.name = tensor.str();
  arg.mapDims.assign(dims.asArrayRef().begin(), dims.asArrayRef().end());
  arg.box.assign(box.asArrayRef().begin(), box.asArrayRef().end());
  arg.swizzle = swizzle.getInt();
  launch.args.push_back(arg);
  return success();
}

/// Declares (or checks against an earlier kernel's declaration) the tensor
/// or workspace at argument `i` and appends the argument.
LogicalResult addArgument(func::FuncOp kernel, unsigned i, bool copied,
                          ProgramSpec &plan, KernelLaunch &launch) {
  auto type = dyn_cast<MemRefType>(kernel.getArgument(i).getType());
  KernelArg arg;
  if (isa<tgpu::TensorMapType>(kernel.getArgument(i).getType()))
    return addTensorMap(kernel, i, launch);
  if (Attribute scalar = kernel.getArgAttr(i, tile::attrs::kScalar)) {
    arg.kind = KernelArg::Kind::Scalar;
    arg.value = toSizeExpr(scalar);
    launch.args.push_back(arg);
    return success();
  }
  auto capture = kernel.getArgAttrOfType<IntegerAttr>(i, tile::attrs::kCapture);
  auto tensor = kernel.getArgAttrOfType<StringAttr>(i, tile::attrs::kTensor);
  auto workspace =
      kernel.getArgAttrOfType<StringAttr>(i, tile::attrs::kWorkspace);
  if (int(bool(capture)) + int(bool(tensor)) + int(bool(workspace)) > 1)
    return kernel.emitError()
           << "argument " << i << " of kernel '" << kernel.getName()
           << "' has more than one launch role";
  if (capture) {
    arg.kind = KernelArg::Kind::Capture;
    arg.capture = capture.getInt();
    // A scalar capture (memref<T>) is passed as Tensor<T, 1>, as the emitter
    // declares it.
    arg.rank = type ? std::max<int64_t>(type.getRank(), 1) : 1;
    launch.args.push_back(arg);
    return success();
  }
  auto shapeAttr = kernel.getArgAttrOfType<ArrayAttr>(i, tile::attrs::kShape);
  if ((!tensor && !workspace) || !shapeAttr || !type)
    return kernel.emitError()
           << "argument " << i << " of kernel '" << kernel.getName()
           << "' has no launch role: a memref with 'tile.tensor' or "
              "'tile.workspace' and 'tile.shape', 'tile.capture', or an i64 "
              "with 'tile.scalar'";
  std::optional<DType> dtype = dtypeOf(type.getElementType());
  if (!dtype)
    return kernel.emitError()
           << "argument " << i << " holds " << type.getElementType()
           << ", which the runtime does not pass";
  std::vector<SizeExpr> shape = toShape(shapeAttr);
  arg.name = (tensor ? tensor : workspace).str();
  arg.rank = type.getRank();
  arg.kind = tensor ? KernelArg::Kind::Tensor : KernelArg::Kind::Workspace;
  auto mismatch = [&](const std::string &earlier) {
    return kernel.emitError()
           << "kernel '" << kernel.getName() << "' declares '" << arg.name
           << "' as " << dtypeName(*dtype) << " " << shapeText(shape)
           << ", an earlier kernel as " << earlier;
  };
  if (tensor) {
    // Every tensor is contiguous in its last dimension (an alignment of at
    // least its element size makes the runtime check it), so the CUDA
    // emitter prints that stride as 1 and the kernels' index arithmetic
    // folds; rows copied by cp.async or TMA need 16-byte alignment.
    int64_t align =
        copied ? kCopyAsyncBytes : static_cast<int64_t>(dtypeBytes(*dtype));
    if (TensorDecl *decl = plan.findTensor(arg.name)) {
      if (decl->dtype != *dtype || shapeText(decl->shape) != shapeText(shape))
        return mismatch(std::string(dtypeName(decl->dtype)) + " " +
                        shapeText(decl->shape));
      decl->alignBytes = std::max(decl->alignBytes, align);
    } else {
      plan.tensors.push_back({arg.name, *dtype, shape, align});
    }
  } else {
    bool zeroFill = kernel.getArgAttr(i, tile::attrs::kZeroFill) != nullptr;
    if (WorkspaceDecl *decl = plan.findWorkspace(arg.name)) {
      if (decl->dtype != *dtype || shapeText(decl->shape) != shapeText(shape))
        return mismatch(std::string(dtypeName(decl->dtype)) + " " +
                        shapeText(decl->shape));
      decl->zeroFill |= zeroFill;
    } else {
      plan.workspaces.push_back({arg.name, *dtype, shape, zeroFill});
    }
  }
  launch.args.push_back(arg);
  return success();
}

} // namespace

LogicalResult buildLaunchPlan(ModuleOp module, StringRef kind,
                              ProgramSpec &plan) {
  plan = ProgramSpec();
  plan.kind = kind.str();
  bool backward = kind == "backward";
  for (auto kernel : module.getOps<func::FuncOp>()) {
    if (!kernel->hasAttr(tile::attrs::kKernel) ||
        kernel->hasAttr(tile::attrs::kBackwardStage) != backward)
      continue;
    auto grid = kernel->getAttrOfType<ArrayAttr>(tile::attrs::kGrid);
    auto variant = kernel->getAttrOfType<StringAttr>(tile::attrs::kVariant);
    if (!grid || grid.size() != 3 || !variant)
      return kernel.emitError()
             << "kernel '" << kernel.getName()
             << "' has no launch grid or variant ('" << tile::attrs::kGrid
             << "', '" << tile::attrs::kVariant << "')";
    if (!plan.kernels.empty() && plan.variant != variant.getValue())
      return kernel.emitError()
             << "the module holds " << kind << " kernels of variants '"
             << plan.variant << "' and '" << variant.getValue()
             << "'; a launch plan is one variant's";
    if (plan.kernels.empty()) {
      plan.variant = variant.str();
      if (auto g = kernel->getAttrOfType<IntegerAttr>(tile::attrs::kGqaGroup))
        plan.gqaGroup = g.getInt();
      if (auto m = kernel->getAttrOfType<IntegerAttr>(tile::attrs::kBlockM))
        plan.blockM = m.getInt();
      if (auto n = kernel->getAttrOfType<IntegerAttr>(tile::attrs::kBlockN))
        plan.blockN = n.getInt();
      if (auto arch = kernel->getAttrOfType<StringAttr>(tgpu::attrs::kArch))
        plan.arch = arch.str();
    }
    KernelLaunch launch;
    launch.name = kernel.getName().str();
    for (int axis = 0; axis < 3; ++axis)
      launch.grid[axis] = toSizeExpr(grid[axis]);
    if (auto when = kernel->getAttr(tile::attrs::kWhen))
      launch.when = toSizeExpr(when);
    if (failed(addSymbols(kernel, plan)))
      return failure();
    // Unscheduled (CPU) kernels run one program at a time.
    launch.numThreads = 1;
    if (auto warps = kernel->getAttrOfType<IntegerAttr>(tgpu::attrs::kNumWarps))
      launch.numThreads = warps.getInt() * 32;
    if (auto producers =
            kernel->getAttrOfType<IntegerAttr>(tgpu::attrs::kProducerWarps))
      launch.numThreads += producers.getInt() * 32;
    if (auto shared =
            kernel->getAttrOfType<IntegerAttr>(tgpu::attrs::kSharedBytes))
      launch.sharedBytes = shared.getInt();
    // Launched to overlap the previous grid only where the kernel waits for
    // it before anything else (tgpu-overlap-launches).
    if (kernel->hasAttr(tgpu::attrs::kOverlapsPriorGrid)) {
      Block &entry = kernel.front();
      auto first = entry.begin();
      bool waitsFirst = entry.getOperations().size() >= 2 &&
                        isa<tgpu::LaunchDependentsOp>(*first) &&
                        isa<tgpu::WaitPriorGridsOp>(*std::next(first));
      if (!waitsFirst)
        return kernel.emitError()
               << "kernel '" << kernel.getName() << "' is marked "
               << tgpu::attrs::kOverlapsPriorGrid
               << " but does not begin with tgpu.launch_dependents and "
                  "tgpu.wait_prior_grids";
      launch.overlapsPrior = true;
    }
    if (failed(addCaptures(kernel, plan)))
      return failure();
    llvm::SmallDenseSet<unsigned> copied = copiedArguments(kernel);
    for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
      if (failed(addArgument(kernel, i, copied.contains(i), plan, launch)))
        return failure();
    plan.kernels.push_back(std::move(launch));
  }
  if (plan.kernels.empty())
    return module.emitError() << "no " << kind << " kernel in the module";
  // H = Hkv * G: the heads of q and of k must agree through the group.
  SizeExpr heads = SizeExpr::named("heads");
  SizeExpr kvHeads = SizeExpr::named("kv_heads");
  if (plan.gqaGroup > 1)
    plan.constraints.push_back(
        {heads, SizeExpr::apply(SizeExpr::Op::Mul,
                                {kvHeads, SizeExpr::constant(plan.gqaGroup)})});
  else
    plan.constraints.push_back({heads, kvHeads});
  if (Status s = verifyPlan(plan); !s.ok())
    return module.emitError()
           << "the launch plan is inconsistent: " << s.message();
  // Descriptive: what the attention programs were compiled for (verified:
  // every shape has at least one dimension).
  if (const TensorDecl *q = plan.findTensor("q")) {
    plan.dtype = q->dtype;
    plan.headDimQK = q->shape.back().value;
  }
  if (const TensorDecl *v = plan.findTensor("v"))
    plan.headDimV = v->shape.back().value;
  return success();
}

void registerEmitLaunchPlanTranslation() {
  TranslateFromMLIRRegistration registration(
      "emit-launch-plan",
      "Print the launch plans of a module's tile kernels as JSON specs",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a module");
        bool any = false;
        for (StringRef kind : {"forward", "backward"}) {
          bool has = false;
          for (auto f : module.getOps<func::FuncOp>())
            has |=
                f->hasAttr(tile::attrs::kKernel) &&
                f->hasAttr(tile::attrs::kBackwardStage) == (kind == "backward");
          if (!has)
            continue;
          ProgramSpec plan;
          if (failed(buildLaunchPlan(module, kind, plan)))
            return failure();
          os << writeSpecJson(plan);
          any = true;
        }
        if (!any)
          return module.emitError() << "no tile kernel to plan";
        return success();
      },
      registerEmitDialects);
}

} // namespace kiln
