//===- CPUKernel.cpp - a tile program JIT-compiled for the host -----------===//

#include "compiler/Driver/CPUKernel.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/Support/TargetSelect.h"

namespace kiln::driver {

std::unique_ptr<CPUKernel> CPUKernel::compile(mlir::ModuleOp module,
                                              std::string launcher,
                                              std::string &error) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  mlir::ExecutionEngineOptions options;
  options.transformer = mlir::makeOptimizingTransformer(
      /*optLevel=*/2, /*sizeLevel=*/0, /*targetMachine=*/nullptr);
  auto engine = mlir::ExecutionEngine::create(module, options);
  if (!engine) {
    error = "JIT compilation failed: " + llvm::toString(engine.takeError());
    return nullptr;
  }
  auto kernel = std::unique_ptr<CPUKernel>(new CPUKernel());
  kernel->engine = std::move(*engine);
  kernel->launcher = std::move(launcher);
  return kernel;
}

bool CPUKernel::launch(llvm::ArrayRef<HostBuffer *> memrefs,
                       std::array<int64_t, 3> grid, std::string &error) {
  // A ranked memref descriptor: allocated and aligned pointers, offset, then
  // sizes and strides (MLIR's C interface).
  std::vector<std::vector<int64_t>> descriptors;
  for (HostBuffer *buffer : memrefs) {
    std::vector<int64_t> d;
    auto ptr = reinterpret_cast<int64_t>(buffer->data());
    d.push_back(ptr);
    d.push_back(ptr);
    d.push_back(0);
    d.insert(d.end(), buffer->sizes.begin(), buffer->sizes.end());
    d.insert(d.end(), buffer->strides.begin(), buffer->strides.end());
    descriptors.push_back(std::move(d));
  }
  std::vector<void *> descriptorPtrs;
  for (auto &d : descriptors)
    descriptorPtrs.push_back(d.data());
  std::array<int64_t, 3> gridArgs = grid;
  std::vector<void *> args;
  for (void *&p : descriptorPtrs)
    args.push_back(&p);
  for (int64_t &g : gridArgs)
    args.push_back(&g);
  if (llvm::Error err =
          engine->invokePacked("_mlir_ciface_" + launcher, args)) {
    error = "could not call " + launcher + ": " + llvm::toString(std::move(err));
    return false;
  }
  return true;
}

} // namespace kiln::driver
