// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cpu-fwd-pipeline | FileCheck %s
// RUN: kiln-opt %examples/alibi.mlir -kiln-fwd-tile-pipeline | kiln-opt -kiln-cpu-lowering-pipeline | FileCheck %s --check-prefix=ALIBI

// attn all the way to the LLVM dialect: nothing of a higher dialect leaks.
// CHECK-NOT: attn.
// CHECK-NOT: {{ tile\.|{tile\.}}
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK-NOT: scf.
// CHECK-NOT: memref.
// CHECK-NOT: arith.
// CHECK-NOT: math.
// CHECK: llvm.func @causal_softcap_fwd(
// The softmax's exp2 and the softcap's tanh are LLVM intrinsics.
// CHECK-DAG: llvm.intr.exp2
// CHECK-DAG: llvm.intr.tanh
// CHECK: llvm.func @causal_softcap_fwd_grid
// CHECK: llvm.call @causal_softcap_fwd
// CHECK: llvm.func @_mlir_ciface_causal_softcap_fwd_grid
// CHECK-SAME: llvm.emit_c_interface

// ALIBI-NOT: {{ tile\.|{tile\.}}
// ALIBI-NOT: linalg.
// ALIBI: llvm.func @_mlir_ciface_alibi_fwd_grid
