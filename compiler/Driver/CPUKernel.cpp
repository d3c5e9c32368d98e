//===- CPUKernel.cpp - a tile program JIT-compiled for the host -----------===//

#include "compiler/Driver/CPUKernel.h"

#include "reference/Numerics.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <cstring>

namespace kiln::driver {
namespace {

// x86 has no bf16 registers without AVX512-BF16: LLVM keeps bf16 values in
// f32 registers and rounds them back with compiler-rt's __truncsfbf2, which
// neither libgcc 12 nor the JIT provides. Kiln provides it (and the f16
// pair), rounding to nearest even like the hardware. A 16-bit float is
// returned in xmm0, as _Float16 is.
_Float16 truncSFBF2(float x) {
  uint16_t bits = ref::floatToBF16(x);
  _Float16 out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}
_Float16 truncSFHF2(float x) {
  uint16_t bits = ref::floatToF16(x);
  _Float16 out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}
float extendHFSF2(_Float16 x) {
  uint16_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return ref::f16ToFloat(bits);
}

} // namespace

std::unique_ptr<CPUKernel> CPUKernel::compile(mlir::ModuleOp module,
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
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](const char *name, auto *fn) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                                 llvm::JITSymbolFlags::Exported};
    };
    add("__truncsfbf2", &truncSFBF2);
    add("__truncsfhf2", &truncSFHF2);
    add("__extendhfsf2", &extendHFSF2);
    return symbols;
  });
  auto kernel = std::unique_ptr<CPUKernel>(new CPUKernel());
  kernel->engine = std::move(*engine);
  return kernel;
}

bool CPUKernel::launch(llvm::StringRef launcher, llvm::ArrayRef<Arg> launchArgs,
                       std::array<int64_t, 3> grid, std::string &error) {
  // A ranked memref descriptor: allocated and aligned pointers, offset, then
  // sizes and strides (MLIR's C interface), passed by pointer; a scalar by
  // value. The packed call takes a pointer to each.
  std::vector<std::vector<int64_t>> descriptors(launchArgs.size());
  std::vector<void *> descriptorPtrs(launchArgs.size());
  std::vector<int64_t> scalars(launchArgs.size());
  std::vector<void *> args;
  for (size_t i = 0; i < launchArgs.size(); ++i) {
    if (const int64_t *scalar = std::get_if<int64_t>(&launchArgs[i])) {
      scalars[i] = *scalar;
      args.push_back(&scalars[i]);
      continue;
    }
    HostBuffer *buffer = std::get<HostBuffer *>(launchArgs[i]);
    std::vector<int64_t> &d = descriptors[i];
    auto ptr = reinterpret_cast<int64_t>(buffer->data());
    d.push_back(ptr);
    d.push_back(ptr);
    d.push_back(0);
    d.insert(d.end(), buffer->sizes.begin(), buffer->sizes.end());
    d.insert(d.end(), buffer->strides.begin(), buffer->strides.end());
    descriptorPtrs[i] = d.data();
    args.push_back(&descriptorPtrs[i]);
  }
  std::array<int64_t, 3> gridArgs = grid;
  for (int64_t &g : gridArgs)
    args.push_back(&g);
  if (llvm::Error err =
          engine->invokePacked(("_mlir_ciface_" + launcher).str(), args)) {
    error = "could not call " + launcher.str() + ": " +
            llvm::toString(std::move(err));
    return false;
  }
  return true;
}

} // namespace kiln::driver
