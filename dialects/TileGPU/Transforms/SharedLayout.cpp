//===- SharedLayout.cpp - placing a kernel's shared buffers ---------------===//

#include "dialects/TileGPU/Transforms/SharedLayout.h"

#include "dialects/TileGPU/IR/TileGPUAttrNames.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

namespace kiln::tgpu {

int64_t sharedBufferBytes(MemRefType type) {
  int64_t eltBytes = type.getElementTypeBitWidth() / 8;
  int64_t pitch = type.getDimSize(type.getRank() - 1);
  SmallVector<int64_t> strides;
  int64_t offset;
  if (type.getRank() == 2 && !swizzleBytes(type) &&
      succeeded(type.getStridesAndOffset(strides, offset)))
    pitch = strides[0];
  int64_t rows = type.getRank() == 2 ? type.getDimSize(0) : 1;
  return rows * pitch * eltBytes;
}

int64_t ctasFitting(int64_t bytes, int64_t limit) {
  return (limit + 1024) / (bytes + 1024);
}

LogicalResult layoutSharedBuffers(func::FuncOp kernel, int64_t limit,
                                  StringRef what) {
  int64_t next = 0;
  SmallVector<SharedAllocOp> overlays;
  kernel.walk([&](SharedAllocOp alloc) {
    if (alloc.getOverlays()) {
      overlays.push_back(alloc);
      return;
    }
    next = llvm::alignTo(next, swizzleBytes(alloc.getType()) ? 1024 : 128);
    alloc.setOffset(next);
    next += sharedBufferBytes(alloc.getType());
  });
  // An overlay starts where its buffer does; it may reach past the last.
  for (SharedAllocOp overlay : overlays) {
    uint64_t offset =
        overlay.getOverlays().getDefiningOp<SharedAllocOp>().getOffset();
    overlay.setOffset(offset);
    next = std::max<int64_t>(next, static_cast<int64_t>(offset) +
                                       sharedBufferBytes(overlay.getType()));
  }
  next = llvm::alignTo(next, 128);
  if (limit > 0 && next > limit)
    return kernel.emitError() << what << " needs " << next
                              << " bytes of shared memory but the target "
                                 "allows "
                              << limit;
  kernel->setAttr(attrs::kSharedBytes,
                  IntegerAttr::get(IntegerType::get(kernel.getContext(), 64),
                                   next));
  return success();
}

} // namespace kiln::tgpu
