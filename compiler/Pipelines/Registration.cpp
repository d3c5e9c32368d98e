//===- Registration.cpp - dialects and interfaces Kiln tools load ---------===//

#include "compiler/Pipelines/Registration.h"

#include "compiler/Conversion/Passes.h"
#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Attn/Transforms/Passes.h"
#include "dialects/Tile/Transforms/Passes.h"
#include "dialects/TileGPU/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

namespace kiln {

void registerKilnDialects(mlir::DialectRegistry &registry) {
  using namespace mlir;
  registry.insert<attn::AttnDialect, tile::TileDialect, tgpu::TileGPUDialect,
                  arith::ArithDialect, math::MathDialect, memref::MemRefDialect,
                  scf::SCFDialect, tensor::TensorDialect, linalg::LinalgDialect,
                  bufferization::BufferizationDialect, func::FuncDialect,
                  cf::ControlFlowDialect, affine::AffineDialect,
                  index::IndexDialect, LLVM::LLVMDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

void registerKilnPasses() {
  attn::registerAttnPasses();
  tile::registerTilePasses();
  tgpu::registerTileGPUPasses();
  registerConversionPasses();
  registerPipelines();
  // Upstream passes the pipelines use, for running steps one at a time.
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerLoopInvariantCodeMotionPass();
  mlir::registerConvertElementwiseToLinalgPass();
  mlir::registerLinalgElementwiseOpFusionPass();
  mlir::registerConvertLinalgToLoopsPass();
  mlir::bufferization::registerOneShotBufferizePass();
  mlir::registerLowerAffinePass();
  mlir::registerSCFToControlFlowPass();
}

} // namespace kiln
