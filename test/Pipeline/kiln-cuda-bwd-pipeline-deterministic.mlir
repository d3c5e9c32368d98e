// RUN: kiln-opt %s -kiln-cuda-bwd-pipeline="backward-schedule=deterministic" | FileCheck %s
// RUN: kiln-opt %s -kiln-cuda-bwd-pipeline="backward-schedule=deterministic core-order=false" | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %s -kiln-cuda-bwd-pipeline="backward-schedule=deterministic producer-reductions=false" | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %s -kiln-cuda-bwd-pipeline="backward-schedule=deterministic bulk-reductions=false" | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %s -kiln-cuda-bwd-pipeline="backward-schedule=deterministic persistent-backward=true" | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %s -kiln-cuda-bwd-pipeline="backward-schedule=deterministic ring-stages=3" | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %s -kiln-cuda-bwd-pipeline="backward-schedule=deterministic block-m=128" | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %s -kiln-cuda-bwd-pipeline="backward-schedule=deterministic warp-specialize=false" | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %s -kiln-cuda-bwd-pipeline="backward-schedule=deterministic arch=sm_80" | FileCheck %s --check-prefix=TWO

attn.attention @causal {qk_head_dim = 128, v_head_dim = 128, element_type = bf16,
                        causal = #attn.causal<bottom_right>}

// backward-schedule=deterministic on sm_90a (D = 128): the atomic schedule
// whose producer adds each dQ share in its turn (tgpu-ordered-adds).
// CHECK-LABEL: func.func @causal_bwd_dkdv(
// CHECK: tgpu.warp_specialize
// CHECK: tgpu.turn_wait
// CHECK: tgpu.core_add_staged
// CHECK: tgpu.turn_signal {{.*}} deferred
// CHECK-LABEL: func.func @causal_bwd_dq_convert(

// Where an option takes the adds out of the form the pass orders (not the
// producer's staged reductions in core order of a non-persistent kernel at
// the measured tiles and rings, or no producer at all), two kernels instead
// of an error.
// TWO-LABEL: func.func @causal_bwd_dq(
// TWO-LABEL: func.func @causal_bwd_dkdv(
// TWO-NOT: tgpu.turn_
// TWO-NOT: _bwd_dq_convert
// At D = 64 (two kernels measured faster): two kernels too.
// RUN: kiln-opt %examples/causal.mlir -kiln-cuda-bwd-pipeline="backward-schedule=deterministic" | FileCheck %s --check-prefix=TWO
