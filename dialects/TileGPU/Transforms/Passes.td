//===- Passes.td - tgpu schedule passes --------------------*- tablegen -*-===//

#ifndef KILN_TILEGPU_PASSES
#define KILN_TILEGPU_PASSES

include "mlir/Pass/PassBase.td"

def TileGPUOverlapCopies : Pass<"tgpu-overlap-copies"> {
  let summary = "Issues a later staged copy together with an earlier one to overlap it with compute";
  let description = [{
    `convert-tile-to-tgpu` stages each operand with its own
    barrier / copy_async / async_wait / barrier, so every copy's latency is
    exposed. When two staged copies follow each other in a block (K then V
    in a KV step), this pass issues the second right after the first and
    waits for the first alone (`async_wait {pending = 1}`): V's load then
    runs under Q K^T and the softmax, as in FlashAttention-2.

    The second copy's leading barrier goes: every warp has passed the first
    copy's barrier, so none still reads the second buffer from an earlier
    step, and the pass checks that nothing between the two reads it. The
    copy's operands must be available at the new position.

    Before:
    ```mlir
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %kbuf ...
    tgpu.async_wait
    tgpu.barrier
    %s = tgpu.mma %qbuf, %kbuf, ...
    ...
    tgpu.barrier
    tgpu.copy_async %vd[%j, %c0], %vbuf ...
    tgpu.async_wait
    tgpu.barrier
    %o = tgpu.mma %p, %vbuf, ...
    ```
    After:
    ```mlir
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %kbuf ...
    tgpu.copy_async %vd[%j, %c0], %vbuf ...
    tgpu.async_wait {pending = 1 : i64}
    tgpu.barrier
    %s = tgpu.mma %qbuf, %kbuf, ...
    ...
    tgpu.async_wait
    tgpu.barrier
    %o = tgpu.mma %p, %vbuf, ...
    ```
  }];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect"];
}

#endif // KILN_TILEGPU_PASSES
