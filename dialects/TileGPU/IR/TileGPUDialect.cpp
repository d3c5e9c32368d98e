//===- TileGPUDialect.cpp - tgpu dialect ----------------------------------===//

#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::tgpu;

#include "dialects/TileGPU/IR/TileGPUDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/TileGPU/IR/TileGPUAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/TileGPU/IR/TileGPUOps.cpp.inc"

void TileGPUDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/TileGPU/IR/TileGPUAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/TileGPU/IR/TileGPUOps.cpp.inc"
      >();
}

bool kiln::tgpu::isSharedMemRef(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return false;
  auto space = dyn_cast_or_null<IntegerAttr>(memref.getMemorySpace());
  return space && space.getInt() == kSharedMemorySpace;
}

LogicalResult SharedAllocOp::verify() {
  if (!isSharedMemRef(getBuffer().getType()))
    return emitOpError() << "allocates in shared memory: the memref needs "
                            "memory space 3";
  int64_t offset = static_cast<int64_t>(getOffset());
  if (offset < 0 || offset % 16 != 0)
    return emitOpError() << "offset must be a non-negative multiple of 16 "
                            "bytes (cp.async and ldmatrix alignment), got "
                         << offset;
  return success();
}

LogicalResult StoreSharedOp::verify() {
  auto value = cast<RankedTensorType>(getValue().getType());
  MemRefType dest = getDest().getType();
  if (!isSharedMemRef(dest))
    return emitOpError() << "writes to shared memory (memory space 3)";
  if (!isa_and_nonnull<MmaLayoutAttr>(value.getEncoding()))
    return emitOpError() << "stores #tgpu.mma register tiles";
  if (value.getShape() != dest.getShape() ||
      value.getElementType() != dest.getElementType())
    return emitOpError() << "the buffer must have the tile's shape and "
                            "element type, got "
                         << value << " into " << dest;
  return success();
}

LogicalResult MmaOp::verify() {
  auto acc = cast<RankedTensorType>(getAcc().getType());
  if (getResult().getType() != acc)
    return emitOpError() << "result type must equal the accumulator type";
  if (!isa_and_nonnull<MmaLayoutAttr>(acc.getEncoding()) ||
      !acc.getElementType().isF32())
    return emitOpError() << "accumulates in f32 #tgpu.mma register tiles";
  if (!isSharedMemRef(getRhs().getType()))
    return emitOpError() << "reads rhs from shared memory";
  Type lhs = getLhs().getType();
  ArrayRef<int64_t> lhsShape;
  if (auto regs = dyn_cast<RankedTensorType>(lhs)) {
    if (!isa_and_nonnull<MmaLayoutAttr>(regs.getEncoding()))
      return emitOpError() << "a register lhs must be in #tgpu.mma layout";
    if (getTransposeLhs())
      return emitOpError() << "a transposed lhs is read from shared memory "
                              "(ldmatrix.trans); store the register tile "
                              "with tgpu.store_shared first";
    lhsShape = regs.getShape();
  } else if (isSharedMemRef(lhs)) {
    lhsShape = cast<MemRefType>(lhs).getShape();
  } else {
    return emitOpError() << "lhs must be a shared buffer or a register tile";
  }
  ArrayRef<int64_t> rhsShape = getRhs().getType().getShape();
  if (lhsShape.size() != 2 || rhsShape.size() != 2 || acc.getRank() != 2)
    return emitOpError() << "multiplies 2-D tiles";
  int64_t m = lhsShape[getTransposeLhs() ? 1 : 0];
  int64_t k = lhsShape[getTransposeLhs() ? 0 : 1];
  int64_t rhsK = rhsShape[getTransposeRhs() ? 1 : 0];
  int64_t n = rhsShape[getTransposeRhs() ? 0 : 1];
  if (k != rhsK || acc.getDimSize(0) != m || acc.getDimSize(1) != n)
    return emitOpError() << "shapes do not multiply: op(lhs) is " << m << "x"
                         << k << ", op(rhs) " << rhsK << "x" << n
                         << ", accumulator " << acc.getDimSize(0) << "x"
                         << acc.getDimSize(1);
  return success();
}
