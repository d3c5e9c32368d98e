//===- RunCommand.cpp - `kiln run`: orchestration -------------------------===//
//
// Parse and specialise the variant (Variant.cpp), prove its mask band, then
// hand it to a backend (CPURun.cpp, CUDARun.cpp, CUDABackwardRun.cpp), fill
// inputs (ProblemInputs.cpp) and compare with the float64 reference
// (ReferenceCheck.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Commands.h"

#include "compiler/Driver/CPURun.h"
#include "compiler/Driver/CUDABackwardRun.h"
#include "compiler/Driver/CUDARun.h"
#include "compiler/Driver/ProblemInputs.h"
#include "compiler/Driver/ReferenceCheck.h"
#include "dialects/Attn/Transforms/ChooseTiles.h"
#include "dialects/Attn/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"

using namespace mlir;

namespace kiln::driver {

VariantSpecialization specialization(const RunOptions &o) {
  VariantSpecialization s;
  s.headDim = o.headDim > 0 ? o.headDim : 0;
  s.headDimV = o.headDimV > 0 ? o.headDimV : 0;
  s.pageSize = o.pageSize;
  s.dropoutP = o.dropoutP;
  s.dropoutBits = o.dropoutBits;
  s.varlen = o.varlen;
  s.blockSparseQ = o.blockSparseQ;
  s.blockSparseKV = o.blockSparseKV;
  s.buildBlockMask = o.buildBlockMask;
  s.dtype = o.dtype;
  return s;
}

/// ", block-sparse QBxKB: P partial + F full of T blocks" for a
/// block-sparse run, else empty.
static std::string blockSparseNote(const Inputs &in) {
  if (!in.blockMask)
    return "";
  const BlockMaskLists &l = *in.blockMask;
  int64_t partial = 0, full = 0;
  for (BlockKind kind : l.kinds) {
    partial += kind == BlockKind::Partial;
    full += kind == BlockKind::Full;
  }
  return ", block-sparse " + std::to_string(l.rowsPerBlock) + "x" +
         std::to_string(l.keysPerBlock) + ": " + std::to_string(partial) +
         " partial + " + std::to_string(full) + " full of " +
         std::to_string(l.kinds.size()) + " blocks";
}

int runCommand(const RunOptions &o, llvm::raw_ostream &out,
               llvm::raw_ostream &err) {
  VariantSession session(err);
  if (int rc = session.load(o.input, o.variant, specialization(o), err))
    return rc;
  OwningOpRef<ModuleOp> &module = session.module;
  Problem p;
  if (int rc = makeProblem(o, session.spec, p, err))
    return rc;

  PassManager attnPM(&session.context);
  attnPM.addPass(attn::createAttnInferMaskBounds());
  if (failed(attnPM.run(*module)))
    return kBadInput;
  if (o.emit == EmitStage::Attn) {
    module->print(out);
    out << "\n";
    return 0;
  }

  // The reference evaluates the variant's own regions: keep a copy of the
  // spec before lowering consumes it.
  OwningOpRef<ModuleOp> specCopy = module->clone();
  attn::AttentionOp refSpec = *specCopy->getOps<attn::AttentionOp>().begin();
  std::string variantName = session.spec.getSymName().str();
  session.spec = nullptr; // lowering erases it; refSpec stays valid

  bool gpu = o.backend == "cuda" || o.emit == EmitStage::TGPU ||
             o.emit == EmitStage::CUDA;
  CPUPrograms cpu;
  CUDAPrograms cuda;
  int64_t blockM = o.blockM, blockN = o.blockN;
  if (gpu) {
    if (std::optional<int> rc =
            compileForCUDA(*module, *specCopy, o, cuda, out, err))
      return *rc;
    blockM = cuda.forward.blockM;
    blockN = cuda.forward.blockN;
  } else if (std::optional<int> rc = compileForCPU(*module, o, cpu, out, err)) {
    return *rc;
  } else if (auto blocks = refSpec.getSparseBlocks()) {
    // (compileForCPU fits its tiles to the mask's blocks the same way.)
    if (!o.blockMGiven)
      blockM = attn::fitTileToBlock(blockM, blocks->first);
    if (!o.blockNGiven)
      blockN = attn::fitTileToBlock(blockN, blocks->second);
  }

  Inputs inputs;
  std::vector<HostBuffer> captures;
  if (int rc = makeInputs(p, refSpec, o.seed, inputs, captures, err))
    return rc;
  Gradients gradients;
  double compileMs = 0, runMs = 0;
  std::string timingNote;
  if (!gpu) {
    compileMs = cpu.loweringMs + cpu.compileMs;
    if (int rc = runOnCPU(cpu, o, p, inputs, captures, gradients, runMs, err))
      return rc;
  } else {
    if (int rc = runOnCUDA(cuda.forward, p, inputs, captures, o, compileMs,
                           runMs, timingNote, err))
      return rc;
    if (o.backward)
      if (int rc = runBackwardOnCUDA(cuda.backward, p, inputs, captures, o,
                                     gradients, timingNote, err))
        return rc;
  }

  // Varlen: the packed results into the dense buffers the reference checks.
  if (inputs.packed) {
    unpackOutputs(p, *inputs.packed, inputs);
    if (o.backward)
      unpackGradients(p, *inputs.packed, gradients);
  }
  out << "kiln run: " << variantName << " on " << o.backend << ", B=" << p.batch
      << " H=" << p.heads << " Hkv=" << p.kvHeads << " Lq=" << p.seqQ
      << " Lk=" << p.seqKV << " D=" << p.dqk << "/" << p.dv << " "
      << (p.io == ElementKind::BF16 ? "bf16" : "fp16")
      << (p.varlen()
              ? ", varlen (" + std::to_string(p.batch) + " packed sequences)"
              : std::string())
      << blockSparseNote(inputs) << ", blocks " << blockM << "x" << blockN
      << (p.pad ? ", padded rows" : "") << "\n";
  out << llvm::format("  compile %.1f ms, run %.3f ms\n", compileMs, runMs);
  if (!timingNote.empty())
    out << timingNote;
  // The builder's lists against the driver's (the same mask, evaluated by
  // the float64 reference's interpreter).
  if (inputs.builtLists) {
    std::string first;
    int64_t rows = inputs.blockMask->kvNum.numElements() +
                   inputs.blockMask->qNum.numElements();
    int64_t differ =
        differingRows(*inputs.builtLists, *inputs.blockMask, first);
    out << "  built block mask: " << rows - differ << " of " << rows
        << " rows (by query and by key blocks) as expected"
        << (differ ? "; first: " + first : std::string()) << "\n";
    out << (differ ? "FAIL\n" : "PASS\n");
    return differ ? kMismatch : 0;
  }
  if (!o.check)
    return 0;
  int rc = checkAgainstReference(p, refSpec, inputs, captures, o.tolerance, out,
                                 err);
  if (rc != 0 || !o.backward)
    return rc;
  return checkBackward(p, refSpec, inputs, captures, gradients, o.tolerance,
                       out, err);
}

} // namespace kiln::driver
