//===- CUDACompile.cpp - attn variant -> CUDA kernel spec -----------------===//

#include "compiler/Driver/CUDACompile.h"

#include "compiler/Emit/CUDA/EmitCUDA.h"
#include "compiler/Emit/LaunchPlan/LaunchPlan.h"
#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Tile/IR/TileAttrNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln::driver {

namespace {

/// The variant's name and head dims, checked against what the GPU backend
/// supports.
Status checkVariant(ModuleOp module, std::string &variant, int64_t &headDimQK,
                    int64_t &headDimV) {
  auto specs = module.getOps<attn::AttentionOp>();
  if (std::distance(specs.begin(), specs.end()) != 1)
    return Status::error("compile exactly one attn.attention at a time");
  attn::AttentionOp op = *specs.begin();
  variant = op.getSymName().str();
  // The name prefixes the CUDA kernels' names (<variant>_fwd, ...): any
  // other symbol (@"a b") would reach NVRTC as broken, or foreign, source.
  bool identifier = !variant.empty() && !llvm::isDigit(variant[0]) &&
                    llvm::all_of(variant, [](char c) {
                      return llvm::isAlnum(c) || c == '_';
                    });
  if (!identifier)
    return Status::error("the GPU backend names its kernels after the "
                         "variant, so '" +
                         variant +
                         "' must be a C identifier (letters, digits and _, "
                         "not starting with a digit)");
  headDimQK = op.getQkHeadDim();
  headDimV = op.getVHeadDim();
  // mma.m16n8k16 steps over 16 columns; the accumulator (BLOCK_M x D_v f32
  // over 128 threads) fits the register file up to 256.
  for (int64_t d : {headDimQK, headDimV})
    if (d % 16 != 0 || d > 256)
      return Status::error("the GPU backend supports head dims that are "
                           "multiples of 16 up to 256; '" +
                           variant + "' has " + std::to_string(headDimQK) +
                           "/" + std::to_string(headDimV));
  return Status();
}

/// The options both GPU pipelines take from the driver.
void setPipelineOptions(CUDAPipelineOptions &options, const std::string &arch,
                        const ScheduleChoices &choices) {
  options.arch = arch;
  options.blockM = choices.blockM;
  options.blockN = choices.blockN;
  options.overlapCopies = choices.overlapCopies;
  options.prefetchNextStep = choices.prefetchNextStep;
  options.fastMath = choices.fastMath;
  options.philoxLanePairs = choices.philoxLanePairs;
  options.warpgroupMma = choices.warpgroupMma;
  options.doubleBuffer = choices.doubleBuffer;
  options.pipelineProducts = choices.pipelineProducts;
  options.warpSpecialize = choices.warpSpecialize;
  options.longestFirst = choices.longestFirst;
  options.backwardLongestFirst = choices.backwardLongestFirst;
  options.waveChunks = choices.waveChunks;
  options.splitKv = choices.splitKv;
  options.decodeRows = choices.decodeRows;
  options.wideDecodeRows = choices.wideDecodeRows;
  options.wideDecodeKeys = choices.wideDecodeKeys;
  options.shortRows = choices.shortRows;
  options.shortKeys = choices.shortKeys;
  options.gqaPack = choices.gqaPack;
  options.combineByRows = choices.combineByRows;
  options.combineBySplits = choices.combineBySplits;
  options.visibleBelow = choices.visibleBelow;
  options.branchMaskedSteps = choices.branchMaskedSteps;
  options.staticMax = choices.staticMax;
  options.narrowBandTiles = choices.narrowBandTiles;
  options.branchMaskedBackwardSteps = choices.branchMaskedBackwardSteps;
  options.splitPositionDifferences = choices.splitPositionDifferences;
  options.reassociateLowRank = choices.reassociateLowRank;
  options.rowTermsAfterMax = choices.rowTermsAfterMax;
  options.hoistInvariantReads = choices.hoistInvariantReads;
  options.backwardModRewritesMinHeadDim = choices.backwardModRewritesMinHeadDim;
  options.scaleAfterMax = choices.scaleAfterMax;
  options.columnBounds = choices.columnBounds;
  options.oneSidedBoundsElements = choices.oneSidedBoundsElements;
  options.lazyRescale = choices.lazyRescale;
  options.skipUnitScales = choices.skipUnitScales;
  options.pingPong = choices.pingPong;
  options.persistent = choices.persistent;
  options.doubleTileBuffers = choices.doubleTileBuffers;
  options.ringStages = choices.ringStages;
  options.maxCtasPerSM = choices.maxCtasPerSM;
  options.loadAhead = choices.loadAhead;
  options.ringVectors = choices.ringVectors;
  options.producerBits = choices.producerBits;
  options.producerBitsShare = choices.producerBitsShare;
  options.persistentBackward = choices.persistentBackward;
  options.overlapProducts = choices.overlapProducts;
  options.combineBeforeWaits = choices.combineBeforeWaits;
  options.bulkReductions = choices.bulkReductions;
  options.coreOrder = choices.coreOrder;
  options.deferFlush = choices.deferFlush;
  options.producerReductions = choices.producerReductions;
  options.deferredTurns = choices.deferredTurns;
  options.tmaStores = choices.tmaStores;
  options.overlapLaunches = choices.overlapLaunches;
  options.overlapBackwardLaunches = choices.overlapBackwardLaunches;
  options.stageInQ = choices.stageInQ;
  options.asyncAccumulate = choices.asyncAccumulate;
  options.packLhsFirst = choices.packLhsFirst;
  options.splitMaskedBlocks = choices.splitMaskedBlocks;
  options.groupSteps = choices.groupSteps;
  options.orderBeforeWaits = choices.orderBeforeWaits;
  options.keysByQueries = choices.keysByQueries;
  options.splitDkdv = choices.splitDkdv;
  options.keyBlock = choices.keyBlock;
  options.captureGradients = choices.captureGradients;
  options.deterministicCaptureGradients = choices.deterministicCaptureGradients;
  options.orderedDq = choices.orderedDq;
}

/// Runs `pm` over `module`, emits its scheduled kernels and reads the
/// plan of the program of `kind` off them.
Status lowerAndEmit(ModuleOp module, PassManager &pm, const std::string &what,
                    const std::string &arch, llvm::StringRef kind,
                    std::string *tgpuIR, ProgramSpec &spec) {
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    diagStream << d.getLocation() << ": " << d << "\n";
    return success();
  });
  if (failed(pm.run(module)))
    return Status::error("lowering '" + what + "' for the GPU failed:\n" +
                         diagnostics);
  if (tgpuIR) {
    llvm::raw_string_ostream os(*tgpuIR);
    module.print(os);
  }
  if (failed(buildLaunchPlan(module, kind, spec)))
    return Status::error("the launch plan of '" + what + "':\n" + diagnostics);
  std::string source;
  llvm::raw_string_ostream os(source);
  if (failed(emitCUDA(module, os)))
    return Status::error("emitting CUDA for '" + what + "' failed:\n" +
                         diagnostics);
  spec.source = std::move(source);
  spec.arch = arch;
  return Status();
}

} // namespace

ScheduleChoices scheduleChoices(const RunOptions &o) {
  ScheduleChoices choices;
  choices.blockM = o.blockMGiven ? o.blockM : 0;
  choices.blockN = o.blockNGiven ? o.blockN : 0;
  choices.overlapCopies = o.overlapCopies;
  choices.prefetchNextStep = o.prefetchNextStep;
  choices.fastMath = o.fastMath;
  choices.philoxLanePairs = o.philoxLanePairs;
  choices.warpgroupMma = o.warpgroupMma;
  choices.doubleBuffer = o.doubleBuffer;
  choices.pipelineProducts = o.pipelineProducts;
  choices.warpSpecialize = o.warpSpecialize;
  choices.keysByQueries = o.keysByQueries;
  choices.splitDkdv = o.splitDkdv;
  choices.keyBlock = o.keyBlock;
  choices.ringStages = o.ringStages;
  choices.maxCtasPerSM = o.maxCtasPerSM;
  choices.loadAhead = o.loadAhead;
  choices.ringVectors = o.ringVectors;
  choices.producerBits = o.producerBits;
  choices.producerBitsShare = o.producerBitsShare;
  choices.captureGradients = o.captureGradients;
  choices.deterministicCaptureGradients = o.deterministicCaptureGradients;
  choices.orderedDq = o.orderedDq;
  choices.longestFirst = o.longestFirst;
  choices.backwardLongestFirst = o.backwardLongestFirst;
  choices.waveChunks = o.waveChunks;
  choices.splitKv = o.splitKv;
  choices.decodeRows = o.decodeRows;
  choices.wideDecodeRows = o.wideDecodeRows;
  choices.wideDecodeKeys = o.wideDecodeKeys;
  choices.shortRows = o.shortRows;
  choices.shortKeys = o.shortKeys;
  choices.gqaPack = o.gqaPack;
  choices.combineByRows = o.combineByRows;
  choices.combineBySplits = o.combineBySplits;
  choices.visibleBelow = o.visibleBelow;
  choices.branchMaskedSteps = o.branchMaskedSteps;
  choices.staticMax = o.staticMax;
  choices.narrowBandTiles = o.narrowBandTiles;
  choices.branchMaskedBackwardSteps = o.branchMaskedBackwardSteps;
  choices.splitPositionDifferences = o.splitPositionDifferences;
  choices.reassociateLowRank = o.reassociateLowRank;
  choices.rowTermsAfterMax = o.rowTermsAfterMax;
  choices.hoistInvariantReads = o.hoistInvariantReads;
  choices.backwardModRewritesMinHeadDim = o.backwardModRewritesMinHeadDim;
  choices.scaleAfterMax = o.scaleAfterMax;
  choices.columnBounds = o.columnBounds;
  choices.oneSidedBoundsElements = o.oneSidedBoundsElements;
  choices.lazyRescale = o.lazyRescale;
  choices.skipUnitScales = o.skipUnitScales;
  choices.pingPong = o.pingPong;
  choices.persistent = o.persistent;
  choices.doubleTileBuffers = o.doubleTileBuffers;
  choices.persistentBackward = o.persistentBackward;
  choices.overlapProducts = o.overlapProducts;
  choices.combineBeforeWaits = o.combineBeforeWaits;
  choices.bulkReductions = o.bulkReductions;
  choices.coreOrder = o.coreOrder;
  choices.deferFlush = o.deferFlush;
  choices.producerReductions = o.producerReductions;
  choices.deferredTurns = o.deferredTurns;
  choices.tmaStores = o.tmaStores;
  choices.overlapLaunches = o.overlapLaunches;
  choices.overlapBackwardLaunches = o.overlapBackwardLaunches;
  choices.stageInQ = o.stageInQ;
  choices.asyncAccumulate = o.asyncAccumulate;
  choices.packLhsFirst = o.packLhsFirst;
  choices.splitMaskedBlocks = o.splitMaskedBlocks;
  choices.groupSteps = o.groupSteps;
  choices.orderBeforeWaits = o.orderBeforeWaits;
  return choices;
}

namespace {
/// The pass pipeline a compile of `arch` with `choices` runs: the forward's,
/// or with a `backwardSchedule` the backward's (compileForwardCUDA,
/// compileBackwardCUDA and cudaPipelineText all build it here).
void buildPipeline(OpPassManager &pm, const std::string &arch,
                   const ScheduleChoices &choices,
                   const std::string *backwardSchedule) {
  CUDAPipelineOptions options;
  setPipelineOptions(options, arch, choices);
  if (!backwardSchedule) {
    buildCUDAForwardPipeline(pm, options);
    return;
  }
  options.backwardSchedule = *backwardSchedule;
  buildCUDABackwardPipeline(pm, options);
}
} // namespace

std::string cudaPipelineText(const std::string &arch,
                             const ScheduleChoices &choices,
                             const std::string &backwardSchedule) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPassManager forward(ModuleOp::getOperationName());
  buildPipeline(forward, arch, choices, nullptr);
  forward.printAsTextualPipeline(os);
  os << "\n";
  OpPassManager backward(ModuleOp::getOperationName());
  buildPipeline(backward, arch, choices, &backwardSchedule);
  backward.printAsTextualPipeline(os);
  return text;
}

Status compileForwardCUDA(ModuleOp module, const std::string &arch,
                          ProgramSpec &spec, const ScheduleChoices &choices,
                          std::string *tgpuIR) {
  std::string variant;
  int64_t headDimQK = 0, headDimV = 0;
  if (Status s = checkVariant(module, variant, headDimQK, headDimV); !s.ok())
    return s;
  PassManager pm(module.getContext());
  buildPipeline(pm, arch, choices, nullptr);
  return lowerAndEmit(module, pm, variant, arch, "forward", tgpuIR, spec);
}

Status compileBackwardCUDA(ModuleOp module, const std::string &arch,
                           const std::string &schedule, ProgramSpec &spec,
                           const ScheduleChoices &choices,
                           std::string *tgpuIR) {
  std::string variant;
  int64_t headDimQK = 0, headDimV = 0;
  if (Status s = checkVariant(module, variant, headDimQK, headDimV); !s.ok())
    return s;
  PassManager pm(module.getContext());
  buildPipeline(pm, arch, choices, &schedule);
  if (Status s =
          lowerAndEmit(module, pm, variant, arch, "backward", tgpuIR, spec);
      !s.ok())
    return s;
  // The schedule the program got (auto and deterministic resolve per
  // variant): only the atomic one converts dQ from its f32 accumulator in a
  // last kernel; with ordered adds its dK/dV kernel keeps the mark.
  spec.schedule = "two-kernel";
  bool ordered = false;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (auto stage = f->getAttrOfType<StringAttr>(tile::attrs::kBackwardStage);
        stage && stage.getValue() == "convert")
      spec.schedule = "atomic";
    ordered |= f->hasAttr(tile::attrs::kOrderedAdds);
  }
  if (spec.schedule == "atomic" && ordered)
    spec.schedule = "atomic-ordered";
  return Status();
}

} // namespace kiln::driver
