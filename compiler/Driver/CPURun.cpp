//===- CPURun.cpp - `kiln run --backend cpu` ------------------------------===//

#include "compiler/Driver/CPURun.h"
#include "compiler/Driver/Timing.h"

#include "compiler/Driver/CPUProgram.h"
#include "compiler/Driver/ProblemInputs.h"
#include "compiler/Emit/LaunchPlan/LaunchPlan.h"
#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Attn/Transforms/ChooseTiles.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <chrono>

using namespace mlir;

namespace kiln::driver {

std::optional<int> compileForCPU(ModuleOp module, const RunOptions &o,
                                 CPUPrograms &programs, llvm::raw_ostream &out,
                                 llvm::raw_ostream &err) {
  MLIRContext &context = *module.getContext();
  ForwardPipelineOptions pipelineOptions;
  pipelineOptions.blockM = o.blockM;
  pipelineOptions.blockN = o.blockN;
  // A block-sparse variant's tiles (unless given) fit its mask blocks.
  module.walk([&](attn::AttentionOp spec) {
    if (auto blocks = spec.getSparseBlocks()) {
      if (!o.blockMGiven)
        pipelineOptions.blockM = attn::fitTileToBlock(o.blockM, blocks->first);
      if (!o.blockNGiven)
        pipelineOptions.blockN = attn::fitTileToBlock(o.blockN, blocks->second);
    }
  });
  pipelineOptions.splitMaskedBlocks = o.splitMaskedBlocks;
  pipelineOptions.groupSteps = o.groupSteps;
  pipelineOptions.splitKv = o.splitKv;
  pipelineOptions.decodeRows = o.decodeRows;
  pipelineOptions.wideDecodeRows = o.wideDecodeRows;
  pipelineOptions.wideDecodeKeys = o.wideDecodeKeys;
  pipelineOptions.shortRows = o.shortRows;
  pipelineOptions.shortKeys = o.shortKeys;
  pipelineOptions.gqaPack = o.gqaPack;
  pipelineOptions.combineByRows = o.combineByRows;
  pipelineOptions.combineBySplits = o.combineBySplits;
  pipelineOptions.visibleBelow = o.visibleBelow;
  pipelineOptions.branchMaskedSteps = o.branchMaskedSteps;
  pipelineOptions.staticMax = o.staticMax;
  pipelineOptions.branchMaskedBackwardSteps = o.branchMaskedBackwardSteps;
  pipelineOptions.splitPositionDifferences = o.splitPositionDifferences;
  pipelineOptions.reassociateLowRank = o.cpuReassociateLowRank;
  pipelineOptions.rowTermsAfterMax = o.rowTermsAfterMax;
  pipelineOptions.hoistInvariantReads = o.hoistInvariantReads;
  pipelineOptions.scaleAfterMax = o.scaleAfterMax;
  pipelineOptions.columnBounds = o.columnBounds;
  pipelineOptions.oneSidedBoundsElements = o.oneSidedBoundsElements;
  pipelineOptions.lazyRescale = o.lazyRescale;
  pipelineOptions.backward = o.backward;
  pipelineOptions.backwardSchedule = o.backwardSchedule;
  // The CPU computes the same gradients either way: queries by keys unless
  // asked (no producer here).
  pipelineOptions.keysByQueries = o.keysByQueries == KeysByQueries::On;
  // Likewise one dK/dV program unless asked.
  pipelineOptions.splitDkdvAbove = o.splitDkdv == SplitDkDv::On ? 0 : -1;
  pipelineOptions.keyBlock = o.keyBlock;
  pipelineOptions.captureGradients = o.captureGradients;
  pipelineOptions.deterministicCaptureGradients =
      o.deterministicCaptureGradients;
  pipelineOptions.orderedDq = o.orderedDq;
  auto start = std::chrono::steady_clock::now();
  PassManager tilePM(&context);
  buildForwardTilePipeline(tilePM, pipelineOptions);
  if (failed(tilePM.run(module)))
    return kBadInput;
  if (o.emit == EmitStage::Tile) {
    module.print(out);
    out << "\n";
    return 0;
  }
  if (failed(buildLaunchPlan(module, "forward", programs.forward)) ||
      (o.backward &&
       failed(buildLaunchPlan(module, "backward", programs.backward)))) {
    err << "kiln: error: the tile program has no consistent launch plan\n";
    return kInternalError;
  }
  PassManager cpuPM(&context);
  buildCPULoweringPipeline(cpuPM);
  if (failed(cpuPM.run(module))) {
    err << "kiln: error: the CPU lowering failed\n";
    return kInternalError;
  }
  programs.loweringMs = millisecondsSince(start);
  if (o.emit == EmitStage::LLVM) {
    llvm::LLVMContext llvmContext;
    auto llvmModule = translateModuleToLLVMIR(module, llvmContext);
    if (!llvmModule) {
      err << "kiln: error: translation to LLVM IR failed\n";
      return kInternalError;
    }
    llvmModule->print(out, nullptr);
    return 0;
  }
  std::string error;
  auto compileStart = std::chrono::steady_clock::now();
  programs.kernel = CPUKernel::compile(module, error);
  if (!programs.kernel) {
    err << "kiln: error: " << error << "\n";
    return kInternalError;
  }
  programs.compileMs = millisecondsSince(compileStart);
  return std::nullopt;
}

int runOnCPU(CPUPrograms &programs, const RunOptions &o, const Problem &p,
             Inputs &in, std::vector<HostBuffer> &captures, Gradients &g,
             double &runMs, llvm::raw_ostream &err) {
  std::string error;
  auto runStart = std::chrono::steady_clock::now();
  if (!runPlanOnCPU(*programs.kernel, programs.forward, in.forwardTensors(),
                    captures, error, kvSplitsOverride(o))) {
    err << "kiln: error: " << error << "\n";
    return kInternalError;
  }
  runMs = millisecondsSince(runStart);
  if (!o.backward)
    return 0;
  makeGradients(p, in, o.seed, programs.backward, captures, g);
  if (!runPlanOnCPU(*programs.kernel, programs.backward, g.tensors(in),
                    captures, error)) {
    err << "kiln: error: " << error << "\n";
    return kInternalError;
  }
  return 0;
}

} // namespace kiln::driver
