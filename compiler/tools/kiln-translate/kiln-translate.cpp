//===- kiln-translate.cpp - MLIR -> CUDA C++ ------------------------------===//
//
//   kiln-opt v.mlir -kiln-cuda-fwd-pipeline | kiln-translate --emit-cuda
//   kiln-opt v.mlir -kiln-cuda-fwd-pipeline | kiln-translate --emit-launch-plan
//
//===----------------------------------------------------------------------===//

#include "compiler/Emit/CUDA/EmitCUDA.h"
#include "compiler/Emit/LaunchPlan/LaunchPlan.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  kiln::registerEmitCUDATranslation();
  kiln::registerEmitLaunchPlanTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Kiln translation driver\n"));
}
