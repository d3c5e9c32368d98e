//===- ProducerReductions.h - dQ shares added by the producer warp -*- C++
//-*-===//
//
// tgpu-bulk-reductions' `producer-reductions`: the consumers of a
// warp-specialized kernel only stage each step's share of a core-ordered
// accumulator, fence it and arrive on a barrier; the producer's warp,
// which issues the loads of the same loops, issues the bulk reductions.
// Two staging buffers let the consumers stage a step's share while the
// previous one is still being read.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_TILEGPU_TRANSFORMS_PRODUCERREDUCTIONS_H
#define KILN_DIALECTS_TILEGPU_TRANSFORMS_PRODUCERREDUCTIONS_H

#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::tgpu {

/// Moves the bulk reductions of `adds` (every tgpu.core_reduce_add of
/// `kernel`) to the producer: each add's place gets a wait for its staging
/// buffer (one of two, by turns), a tgpu.core_stage, a fence and an arrival;
/// the producer's loop over the same range gets, after each step's loads,
/// the previous step's wait, tgpu.core_add_staged and the release of the
/// buffer before, and its region the last step's after its loops. Returns
/// false, with `kernel` unchanged, where an add is not the one add of a loop
/// at the top of a tgpu.warp_specialize consumer region whose range a loop
/// of the producer region also runs (in the same order), its view (one made
/// before the loops, or one each step makes, by the same op in every loop:
/// GQA's view of the step's query head) and offsets cannot be computed in
/// the producer from its induction variable, or the second staging buffer
/// and the barriers would cost a CTA per multiprocessor within
/// `sharedLimit` bytes.
bool issueFromProducer(mlir::func::FuncOp kernel,
                       llvm::ArrayRef<CoreReduceAddOp> adds,
                       int64_t sharedLimit);

} // namespace kiln::tgpu

#endif // KILN_DIALECTS_TILEGPU_TRANSFORMS_PRODUCERREDUCTIONS_H
