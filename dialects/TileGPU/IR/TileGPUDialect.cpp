//===- TileGPUDialect.cpp - tgpu dialect ----------------------------------===//

#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "dialects/TileGPU/IR/TileGPUAttrNames.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::tgpu;

#include "dialects/TileGPU/IR/TileGPUDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/TileGPU/IR/TileGPUAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/TileGPU/IR/TileGPUTypes.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/TileGPU/IR/TileGPUOps.cpp.inc"

void TileGPUDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/TileGPU/IR/TileGPUAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/TileGPU/IR/TileGPUTypes.cpp.inc"
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

int64_t kiln::tgpu::swizzleBytes(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !isSharedMemRef(memref))
    return 0;
  auto layout = dyn_cast<SwizzleLayoutAttr>(memref.getLayout());
  return layout ? layout.getBytes() : 0;
}

int64_t kiln::tgpu::widestSwizzle(int64_t rowBytes) {
  for (int64_t bytes : {128, 64, 32})
    if (rowBytes > 0 && rowBytes % bytes == 0)
      return bytes;
  return 0;
}

bool kiln::tgpu::hasWarpgroupRows(int64_t rows, MmaLayoutAttr layout) {
  int64_t warps = layout.getWarps(), groups = layout.getColGroups();
  return (warps / groups) % 4 == 0 && rows * groups == 16 * warps;
}

bool kiln::tgpu::hasWarpgroupColumns(int64_t cols, MmaLayoutAttr layout) {
  int64_t groups = layout.getColGroups(), n = cols / groups;
  return cols % groups == 0 && n % 16 == 0 && n >= 16 && n <= 256;
}

int64_t kiln::tgpu::warpBlockRows(RankedTensorType tile) {
  auto layout = cast<MmaLayoutAttr>(tile.getEncoding());
  return tile.getDimSize(0) * layout.getColGroups() / layout.getWarps();
}

int64_t kiln::tgpu::groupColumns(RankedTensorType tile) {
  return tile.getDimSize(1) /
         cast<MmaLayoutAttr>(tile.getEncoding()).getColGroups();
}

int64_t kiln::tgpu::entryRegisters(int64_t ctasPerSM, int64_t threads) {
  return std::min<int64_t>(255, 65536 / ctasPerSM / threads) / 8 * 8;
}

BlockArgument kiln::tgpu::appendTensorMap(FunctionOpInterface kernel,
                                          unsigned tensor,
                                          ArrayRef<int64_t> dims,
                                          ArrayRef<int64_t> box,
                                          int64_t swizzle, Location loc) {
  MLIRContext *ctx = kernel.getContext();
  Builder b(ctx);
  NamedAttrList info;
  info.append(attrs::kTensorMapTensor, b.getI64IntegerAttr(tensor));
  info.append(attrs::kTensorMapDims, b.getDenseI64ArrayAttr(dims));
  info.append(attrs::kTensorMapBox, b.getDenseI64ArrayAttr(box));
  info.append(attrs::kTensorMapSwizzle, b.getI64IntegerAttr(swizzle));
  unsigned position = kernel.getNumArguments();
  (void)kernel.insertArgument(position, TensorMapType::get(ctx),
                              b.getDictionaryAttr({b.getNamedAttr(
                                  attrs::kTensorMap, info.getDictionary(ctx))}),
                              loc);
  return kernel.getArgument(position);
}

LogicalResult
MmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t warps, int64_t colGroups) {
  if (warps < 1 || colGroups < 1 || warps % colGroups != 0)
    return emitError() << "#tgpu.mma splits " << warps
                       << " warps into column groups of whole warps, got "
                       << colGroups << " groups";
  return success();
}

LogicalResult
SwizzleLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          int64_t bytes) {
  if (bytes != 32 && bytes != 64 && bytes != 128)
    return emitError() << "swizzle bytes must be 32, 64 or 128, got " << bytes;
  return success();
}

AffineMap SwizzleLayoutAttr::getAffineMap() const {
  // The logical index space only; see the attribute's description.
  return AffineMap::getMultiDimIdentityMap(2, getContext());
}

bool SwizzleLayoutAttr::isIdentity() const { return false; }

LogicalResult SwizzleLayoutAttr::verifyLayout(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2 || ShapedType::isDynamic(shape[0]) ||
      ShapedType::isDynamic(shape[1]))
    return emitError() << "a #tgpu.swizzle buffer is a static 2-D tile";
  if (shape[0] % 8 != 0)
    return emitError() << "a #tgpu.swizzle buffer has a multiple of 8 rows "
                          "(one swizzle atom), got "
                       << shape[0];
  return success();
}

LogicalResult SwizzleLayoutAttr::getStridesAndOffset(
    ArrayRef<int64_t>, SmallVectorImpl<int64_t> &, int64_t &) const {
  return failure();
}

LogicalResult SharedAllocOp::verify() {
  if (!isSharedMemRef(getBuffer().getType()))
    return emitOpError() << "allocates in shared memory: the memref needs "
                            "memory space 3";
  int64_t offset = static_cast<int64_t>(getOffset());
  MemRefType type = getBuffer().getType();
  if (int64_t swizzle = swizzleBytes(type)) {
    int64_t rowBytes =
        type.getDimSize(1) * type.getElementTypeBitWidth() / 8;
    if (rowBytes % swizzle != 0)
      return emitOpError() << "a row of " << rowBytes
                           << " bytes does not split into " << swizzle
                           << "-byte swizzle columns";
    if (offset % 1024 != 0)
      return emitOpError() << "a swizzled buffer starts 1024-byte aligned "
                              "(the swizzle pattern repeats every 1024 "
                              "bytes), got offset "
                           << offset;
  }
  if (offset < 0 || offset % 16 != 0)
    return emitOpError() << "offset must be a non-negative multiple of 16 "
                            "bytes (cp.async and ldmatrix alignment), got "
                         << offset;
  if (Value overlaid = getOverlays()) {
    auto base = overlaid.getDefiningOp<SharedAllocOp>();
    if (!base || base.getOverlays())
      return emitOpError() << "overlays a buffer of its own (a "
                              "tgpu.shared_alloc without `overlays`)";
    if (static_cast<int64_t>(base.getOffset()) != offset)
      return emitOpError()
             << "starts where the buffer it overlays does (offset "
             << base.getOffset() << "), got offset " << offset;
  }
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

LogicalResult ScaleRowsOp::verify() {
  auto value = cast<RankedTensorType>(getValue().getType());
  auto factors = cast<RankedTensorType>(getFactors().getType());
  auto mma = dyn_cast_or_null<MmaLayoutAttr>(value.getEncoding());
  auto rows = dyn_cast_or_null<RowsLayoutAttr>(factors.getEncoding());
  if (!mma || mma.getColGroups() != 1 || value.getRank() != 2 ||
      !value.getElementType().isF32())
    return emitOpError() << "scales f32 #tgpu.mma register tiles whose warps "
                            "hold whole rows, got "
                         << value;
  if (!rows || factors.getRank() != 1 ||
      factors.getElementType() != value.getElementType() ||
      rows.getWarps() != mma.getWarps() ||
      factors.getDimSize(0) != value.getDimSize(0))
    return emitOpError() << "takes one factor per row in the matching "
                            "#tgpu.rows layout, got "
                         << factors << " for " << value;
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
  if (swizzleBytes(getRhs().getType()) || swizzleBytes(getLhs().getType()))
    return emitOpError() << "reads padded shared tiles with ldmatrix; "
                            "#tgpu.swizzle tiles are read by "
                            "tgpu.warpgroup_mma";
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

LogicalResult WarpgroupMmaOp::verify() {
  auto acc = cast<RankedTensorType>(getAcc().getType());
  if (getResult().getType() != acc)
    return emitOpError() << "result type must equal the accumulator type";
  if (getAsync())
    for (Operation *user : getResult().getUsers())
      if (!isa<WarpgroupWaitOp>(user))
        return emitOpError() << "an async product is read only through "
                                "tgpu.warpgroup_wait";
  auto layout = dyn_cast_or_null<MmaLayoutAttr>(acc.getEncoding());
  if (!layout || !acc.getElementType().isF32() || acc.getRank() != 2)
    return emitOpError() << "accumulates in 2-D f32 #tgpu.mma register tiles";
  int64_t warps = layout.getWarps(), groups = layout.getColGroups();
  if (!hasWarpgroupRows(acc.getDimSize(0), layout))
    return emitOpError() << "needs whole warpgroups with one m16 tile per "
                            "warp (64 rows per 4 warps of a column group); "
                            "the accumulator has "
                         << acc.getDimSize(0) << " rows over " << warps
                         << " warps in " << groups << " column groups";
  int64_t n = acc.getDimSize(1);
  if (!hasWarpgroupColumns(n, layout))
    return emitOpError() << "wgmma's N (a column group's columns) is a "
                            "multiple of 16 up to 256, got "
                         << n << " columns in " << groups << " groups";
  MemRefType rhs = getRhs().getType();
  if (!swizzleBytes(rhs))
    return emitOpError() << "reads rhs from a #tgpu.swizzle shared buffer";
  Type elt = rhs.getElementType();
  if (!elt.isBF16() && !elt.isF16())
    return emitOpError() << "multiplies bf16 or f16, got " << elt;
  // A column group's product starts inside rhs at column g * N / G: read
  // MN-major, that must be the start of a swizzle column.
  if (groups > 1 && !getTransposeRhs() &&
      (n / groups * rhs.getElementTypeBitWidth() / 8) % swizzleBytes(rhs) != 0)
    return emitOpError() << "a column group's " << n / groups
                         << " columns of an MN-major rhs must be whole "
                         << swizzleBytes(rhs) << "-byte swizzle columns";
  ArrayRef<int64_t> lhsShape;
  if (auto regs = dyn_cast<RankedTensorType>(getLhs().getType())) {
    auto lhsLayout = dyn_cast_or_null<MmaLayoutAttr>(regs.getEncoding());
    if (!lhsLayout || lhsLayout.getWarps() != warps)
      return emitOpError() << "a register lhs must be in the accumulator's "
                              "#tgpu.mma layout";
    if (groups != 1 || lhsLayout.getColGroups() != 1)
      return emitOpError() << "a register lhs holds whole rows per warp; "
                              "an accumulator in column groups reads its "
                              "lhs from shared memory";
    if (regs.getElementType() != elt)
      return emitOpError() << "lhs and rhs must have one element type";
    if (getTransposeLhs())
      return emitOpError() << "a transposed lhs is read from a #tgpu.swizzle "
                              "shared buffer; store the register tile with "
                              "tgpu.store_shared first";
    lhsShape = regs.getShape();
  } else if (swizzleBytes(getLhs().getType())) {
    auto lhs = cast<MemRefType>(getLhs().getType());
    if (lhs.getElementType() != elt)
      return emitOpError() << "lhs and rhs must have one element type";
    lhsShape = lhs.getShape();
  } else {
    return emitOpError() << "lhs must be a #tgpu.swizzle shared buffer or a "
                            "register tile";
  }
  if (lhsShape.size() != 2)
    return emitOpError() << "multiplies 2-D tiles";
  int64_t m = lhsShape[getTransposeLhs() ? 1 : 0];
  int64_t k = lhsShape[getTransposeLhs() ? 0 : 1];
  ArrayRef<int64_t> rhsShape = rhs.getShape();
  int64_t rhsK = rhsShape[getTransposeRhs() ? 1 : 0];
  int64_t rhsN = rhsShape[getTransposeRhs() ? 0 : 1];
  if (m != acc.getDimSize(0) || k != rhsK || rhsN != n)
    return emitOpError() << "shapes do not multiply: op(lhs) is " << m << "x"
                         << k << ", op(rhs) " << rhsK << "x" << rhsN
                         << ", accumulator " << acc.getDimSize(0) << "x" << n;
  if (rhsK % 16 != 0)
    return emitOpError() << "K must be a multiple of 16, got " << rhsK;
  return success();
}

void WarpgroupMmaOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getRhsMutable(),
                       SideEffects::DefaultResource::get());
  if (isa<MemRefType>(getLhs().getType()))
    effects.emplace_back(MemoryEffects::Read::get(), &getLhsMutable(),
                         SideEffects::DefaultResource::get());
  // An async product commits a wgmma group that later waits count, and
  // keeps reading its buffers until then.
  if (getAsync())
    effects.emplace_back(MemoryEffects::Write::get(),
                         SideEffects::DefaultResource::get());
}

LogicalResult WarpgroupWaitOp::verify() {
  auto product = getValue().getDefiningOp<WarpgroupMmaOp>();
  if (!product || !product.getAsync())
    return emitOpError() << "waits for the result of an async "
                            "tgpu.warpgroup_mma";
  if (getResult().getType() != getValue().getType())
    return emitOpError() << "result type must equal the operand type";
  if (static_cast<int64_t>(getPending()) < 0)
    return emitOpError() << "pending must not be negative";
  return success();
}

//===----------------------------------------------------------------------===//
// mbarriers, TMA and warp specialization
//===----------------------------------------------------------------------===//

/// The region of a tgpu.warp_specialize that `op` is in, if any.
static Region *roleRegion(Operation *op) {
  for (Region *r = op->getParentRegion(); r; r = r->getParentRegion())
    if (isa_and_nonnull<WarpSpecializeOp>(r->getParentOp()))
      return r;
  return nullptr;
}

static bool inProducer(Operation *op) {
  Region *r = roleRegion(op);
  return r && r == &cast<WarpSpecializeOp>(r->getParentOp()).getProducer();
}

/// Checks that `barriers` is shared and that a constant `index` lies in it.
static LogicalResult verifyBarrier(Operation *op, Value barriers,
                                   Value index) {
  auto type = cast<MemRefType>(barriers.getType());
  if (!isSharedMemRef(type) || !type.hasStaticShape())
    return op->emitOpError() << "mbarriers live in a static shared buffer: "
                                "the memref needs a static shape and memory "
                                "space 3";
  APInt value;
  if (matchPattern(index, m_ConstantInt(&value)) &&
      (value.isNegative() || value.getSExtValue() >= type.getDimSize(0)))
    return op->emitOpError() << "mbarrier " << value.getSExtValue()
                             << " is outside the " << type.getDimSize(0)
                             << " of the buffer";
  return success();
}

LogicalResult MbarrierInitOp::verify() {
  // The hardware counts pending arrivals in 20 bits.
  int64_t count = static_cast<int64_t>(getCount());
  if (count < 1 || count >= (int64_t{1} << 20))
    return emitOpError() << "an mbarrier counts 1 to 2^20 - 1 arrivals, got "
                         << count;
  if (roleRegion(*this))
    return emitOpError() << "initialises barriers before the warps split "
                            "(thread 0 of the CTA runs it)";
  return verifyBarrier(*this, getBarriers(), getIndex());
}

LogicalResult MbarrierArriveOp::verify() {
  if (Value frees = getFrees(); frees && !isSharedMemRef(frees.getType()))
    return emitOpError() << "frees a shared buffer (memory space 3), got "
                         << frees.getType();
  return verifyBarrier(*this, getBarriers(), getIndex());
}

LogicalResult MbarrierWaitOp::verify() {
  return verifyBarrier(*this, getBarriers(), getIndex());
}

LogicalResult TmaLoadOp::verify() {
  MemRefType dest = getDest().getType();
  int64_t swizzle = swizzleBytes(dest);
  if (!swizzle)
    return emitOpError() << "loads into a #tgpu.swizzle shared buffer (the "
                            "layout a swizzled TMA box writes), got "
                         << dest;
  if (dest.getDimSize(0) > 256)
    return emitOpError() << "a TMA box holds at most 256 rows, the buffer "
                         << dest.getDimSize(0);
  if (getCoords().size() != 4 && getCoords().size() != 3)
    return emitOpError() << "takes 4 coordinates (column, row, head, batch: "
                            "a [B, N, H, D] tensor innermost first) or 3 (a "
                            "packed [T, H, D] one), got "
                         << getCoords().size();
  if (!inProducer(*this))
    return emitOpError() << "is issued by the producer's one thread: it sits "
                            "in a tgpu.warp_specialize producer region";
  return verifyBarrier(*this, getBarriers(), getIndex());
}

LogicalResult TmaLoadPagesOp::verify() {
  MemRefType dest = getDest().getType();
  if (!swizzleBytes(dest))
    return emitOpError() << "loads into a #tgpu.swizzle shared buffer (the "
                            "layout a swizzled TMA box writes), got "
                         << dest;
  tile::DescType desc = getDesc().getType();
  int64_t rows = dest.getDimSize(0);
  int64_t box = std::min(desc.getPageSize(), rows);
  if (!desc.isPaged() || rows > 256 || box % 8 != 0 || rows % box != 0 ||
      desc.getPageSize() % box != 0)
    return emitOpError() << "loads whole 8-row swizzle atoms of whole pages "
                            "of a paged descriptor (min(page size, rows) a "
                            "multiple of 8 dividing both, rows at most 256), "
                            "got "
                         << desc << " into " << dest;
  if (!inProducer(*this))
    return emitOpError() << "is issued by the producer's one thread: it sits "
                            "in a tgpu.warp_specialize producer region";
  return verifyBarrier(*this, getBarriers(), getIndex());
}

/// The tgpu.num_warps of the kernel around `op`, or null.
static IntegerAttr enclosingNumWarps(Operation *op) {
  IntegerAttr warps;
  for (Operation *parent = op->getParentOp(); parent && !warps;
       parent = parent->getParentOp())
    warps = parent->getAttrOfType<IntegerAttr>(attrs::kNumWarps);
  return warps;
}

/// Whether `staging` is an unpadded, unswizzled shared buffer of `value`'s
/// shape and element type (the bulk reductions' staging).
static bool isPlainStaging(MemRefType staging, RankedTensorType value) {
  return isSharedMemRef(staging) && !swizzleBytes(staging) &&
         staging.getShape() == value.getShape() &&
         staging.getElementType() == value.getElementType() &&
         staging.getLayout().isIdentity();
}

/// A staged #tgpu.mma tile's warps against its kernel's: each warp of the
/// kernel writes what the layout gives it, and a layout of fewer warps than
/// run would leave the others writing past the buffer.
static LogicalResult verifyLayoutWarps(Operation *op, RankedTensorType type) {
  int64_t layoutWarps = cast<MmaLayoutAttr>(type.getEncoding()).getWarps();
  IntegerAttr warps = enclosingNumWarps(op);
  if (warps && warps.getInt() != layoutWarps)
    return op->emitOpError()
           << "the tile's layout spreads it over " << layoutWarps
           << " warps, the kernel runs " << warps.getInt();
  return success();
}

/// verifyLayoutWarps, and the tile no wider than its descriptor.
static LogicalResult verifyWarpsAndWidth(Operation *op, RankedTensorType type,
                                         kiln::tile::DescType desc) {
  if (failed(verifyLayoutWarps(op, type)))
    return failure();
  int64_t cols = desc.getShape()[1];
  if (!ShapedType::isDynamic(cols) && type.getDimSize(1) > cols)
    return op->emitOpError()
           << "the tile's " << type.getDimSize(1)
           << " columns are wider than the descriptor's " << cols;
  return success();
}

/// Checks shared by tgpu.core_reduce_add and tgpu.core_load: a 2-D f32
/// #tgpu.mma tile, as many warps as the kernel runs, at a row and a column
/// of a plain 2-D f32 descriptor at least as wide, whose constant offsets
/// are on core-block boundaries.
static LogicalResult verifyCoreOrderAccess(Operation *op, RankedTensorType type,
                                           kiln::tile::DescType desc,
                                           ValueRange offsets) {
  if (type.getRank() != 2 || !type.getElementType().isF32() ||
      !isa_and_nonnull<MmaLayoutAttr>(type.getEncoding()))
    return op->emitOpError() << "takes 2-D f32 #tgpu.mma tiles, got " << type;
  if (!desc.getElementType().isF32() || desc.getShape().size() != 2 ||
      offsets.size() != 2 || desc.isPaged() || desc.getGroup() != 1)
    return op->emitOpError()
           << "accesses a plain 2-D f32 descriptor at a row and a column, got "
           << desc << " with " << offsets.size() << " offsets";
  if (failed(verifyWarpsAndWidth(op, type, desc)))
    return failure();
  static constexpr int64_t kUnits[] = {16, 8};
  for (auto [offset, unit] : llvm::zip(offsets, kUnits)) {
    std::optional<int64_t> value = getConstantIntValue(offset);
    if (value && *value % unit != 0)
      return op->emitOpError()
             << "core blocks are 16 rows by 8 columns: the offset " << *value
             << " is not a multiple of " << unit;
  }
  return success();
}

/// The staging buffer of a core-order add: unswizzled shared memory of
/// the tile's shape and type (the tile in core order).
static LogicalResult verifyCoreStaging(Operation *op, MemRefType staging,
                                       RankedTensorType tile) {
  if (isPlainStaging(staging, tile))
    return success();
  return op->emitOpError() << "stages through an unswizzled shared buffer of "
                              "the tile's shape and type (the tile in core "
                              "order), got "
                           << staging << " for " << tile;
}

LogicalResult CoreReduceAddOp::verify() {
  auto value = cast<RankedTensorType>(getValue().getType());
  if (failed(verifyCoreOrderAccess(*this, value, getDesc().getType(),
                                   getOffsets())))
    return failure();
  return verifyCoreStaging(*this, getStaging().getType(), value);
}

LogicalResult CoreStageOp::verify() {
  auto value = cast<RankedTensorType>(getValue().getType());
  if (value.getRank() != 2 || !value.getElementType().isF32() ||
      !isa_and_nonnull<MmaLayoutAttr>(value.getEncoding()))
    return emitOpError() << "takes 2-D f32 #tgpu.mma tiles, got " << value;
  return verifyCoreStaging(*this, getStaging().getType(), value);
}

LogicalResult CoreFlushOp::verify() {
  auto tile = dyn_cast<RankedTensorType>(getTile());
  if (!tile)
    return emitOpError() << "names the staged tile's type, got " << getTile();
  if (failed(verifyCoreOrderAccess(*this, tile, getDesc().getType(),
                                   getOffsets())))
    return failure();
  return verifyCoreStaging(*this, getStaging().getType(), tile);
}

LogicalResult CoreAddStagedOp::verify() {
  MemRefType staging = getStaging().getType();
  if (!isSharedMemRef(staging) || swizzleBytes(staging) ||
      !staging.getLayout().isIdentity() || staging.getRank() != 2 ||
      !staging.getElementType().isF32() || staging.getDimSize(0) % 16 != 0 ||
      staging.getDimSize(1) % 8 != 0)
    return emitOpError() << "adds an unswizzled 2-D f32 shared tile of whole "
                            "16 x 8 core blocks, got "
                         << staging;
  kiln::tile::DescType desc = getDesc().getType();
  if (!desc.getElementType().isF32() || desc.getShape().size() != 2 ||
      getOffsets().size() != 2 || desc.isPaged() || desc.getGroup() != 1)
    return emitOpError()
           << "adds into a plain 2-D f32 descriptor at a row and a column, got "
           << desc << " with " << getOffsets().size() << " offsets";
  int64_t cols = desc.getShape()[1];
  if (!ShapedType::isDynamic(cols) && staging.getDimSize(1) > cols)
    return emitOpError() << "the tile's " << staging.getDimSize(1)
                         << " columns are wider than the descriptor's " << cols;
  static constexpr int64_t kUnits[] = {16, 8};
  for (auto [offset, unit] : llvm::zip(getOffsets(), kUnits)) {
    std::optional<int64_t> value = getConstantIntValue(offset);
    if (value && *value % unit != 0)
      return emitOpError()
             << "core blocks are 16 rows by 8 columns: the offset " << *value
             << " is not a multiple of " << unit;
  }
  if (!inProducer(*this))
    return emitOpError() << "is issued by a lane of the producer's warp: it "
                            "sits in a tgpu.warp_specialize producer region";
  return success();
}

LogicalResult BulkWaitReadOp::verify() {
  if (getPending() < 0 || getPending() > 7)
    return emitOpError() << "leaves 0 to 7 bulk groups pending (the "
                            "instruction's immediate), got "
                         << getPending();
  return success();
}

LogicalResult BulkLoadOp::verify() {
  MemRefType dest = getDest().getType();
  tile::DescType desc = getSource().getType();
  if (!isSharedMemRef(dest) || dest.getRank() != 1 ||
      (dest.getDimSize(0) * dest.getElementTypeBitWidth() / 8) % 16 != 0)
    return emitOpError() << "copies into a 1-D shared vector of whole 16-byte "
                            "chunks (a bulk copy's unit), got "
                         << dest;
  if (desc.getShape().size() != 1 || desc.isPaged() || desc.getGroup() != 1 ||
      desc.getElementType() != dest.getElementType())
    return emitOpError() << "copies from a plain 1-D descriptor of the "
                            "vector's element type, got "
                         << desc << " into " << dest;
  if (!inProducer(*this))
    return emitOpError() << "is issued by the producer's one thread: it sits "
                            "in a tgpu.warp_specialize producer region";
  return verifyBarrier(*this, getBarriers(), getIndex());
}

LogicalResult LoadSharedOp::verify() {
  MemRefType source = getSource().getType();
  auto result = cast<RankedTensorType>(getResult().getType());
  if (!isSharedMemRef(source) || source.getRank() != 1 ||
      !source.getElementType().isF32())
    return emitOpError() << "reads a 1-D f32 shared vector, got " << source;
  if (result.getShape() != source.getShape() ||
      result.getElementType() != source.getElementType() ||
      !isa_and_nonnull<RowsLayoutAttr, ColsLayoutAttr>(result.getEncoding()))
    return emitOpError() << "reads the vector whole into a #tgpu.rows or "
                            "#tgpu.cols tile of its shape, got "
                         << result << " from " << source;
  return success();
}

int64_t kiln::tgpu::keepBitsPatches(RankedTensorType tile) {
  auto mma = cast<MmaLayoutAttr>(tile.getEncoding());
  return tile.getNumElements() / (32 * mma.getWarps()) / 8;
}

int64_t kiln::tgpu::keepBitsSlotWords(RankedTensorType tile, int64_t patches) {
  auto mma = cast<MmaLayoutAttr>(tile.getEncoding());
  return 32 * mma.getWarps() * ((8 * patches + 31) / 32);
}

/// The words of a keep-bits slot for `tileType` (an i1 #tgpu.mma tile of
/// one column group in m16 x n16 patches) and `patches` (1 to the
/// patches a thread holds); or an error on `op`.
static FailureOr<int64_t> keepBitsWords(Operation *op, Type tileType,
                                        int64_t patches) {
  auto tile = dyn_cast<RankedTensorType>(tileType);
  auto mma = tile ? dyn_cast_or_null<MmaLayoutAttr>(tile.getEncoding())
                  : MmaLayoutAttr();
  if (!mma || tile.getRank() != 2 || !tile.getElementType().isInteger(1) ||
      mma.getColGroups() != 1 || tile.getDimSize(0) % (16 * mma.getWarps()) ||
      tile.getDimSize(1) % 16)
    return op->emitOpError()
           << "draws the keep bits of a 2-D i1 #tgpu.mma tile of one column "
              "group in m16 x n16 patches, got "
           << tileType;
  int64_t all = keepBitsPatches(tile);
  if (patches < 1 || patches > all)
    return op->emitOpError()
           << "draws 1 to " << all << " patches of 8 elements per thread, got "
           << patches;
  return keepBitsSlotWords(tile, patches);
}

/// A keep-bits slot: a 1-D i32 shared vector of `words` words.
static LogicalResult verifyKeepBitsSlot(Operation *op, MemRefType slot,
                                        int64_t words) {
  if (!isSharedMemRef(slot) || slot.getRank() != 1 ||
      !slot.getElementType().isInteger(32) || slot.getDimSize(0) != words)
    return op->emitOpError()
           << "needs a shared memref<" << words << "xi32> slot, got " << slot;
  return success();
}

/// A keep threshold of 16-bit uniforms.
static LogicalResult verifyThreshold(Operation *op, int64_t threshold) {
  if (threshold < 0 || threshold > (1 << 16))
    return op->emitOpError() << "keeps 16-bit uniforms below a threshold in "
                                "[0, 65536], got "
                             << threshold;
  return success();
}

LogicalResult NextTileOp::verify() {
  if (Value words = getWords()) {
    auto type = cast<MemRefType>(words.getType());
    if (!isSharedMemRef(type) || type.getShape() != ArrayRef<int64_t>{2} ||
        !type.getElementType().isInteger(32))
      return emitOpError() << "shares the tile through two shared i32 words, "
                              "got "
                           << type;
  }
  return success();
}

LogicalResult DrawKeepBitsOp::verify() {
  FailureOr<int64_t> words = keepBitsWords(*this, getTile(), getPatches());
  if (failed(words) || failed(verifyThreshold(*this, getThreshold())))
    return failure();
  return verifyKeepBitsSlot(*this, getDest().getType(), *words);
}

LogicalResult LoadKeepBitsOp::verify() {
  FailureOr<int64_t> words =
      keepBitsWords(*this, getResult().getType(), getPatches());
  if (failed(words) || failed(verifyThreshold(*this, getThreshold())))
    return failure();
  return verifyKeepBitsSlot(*this, getSource().getType(), *words);
}

LogicalResult CoreLoadOp::verify() {
  return verifyCoreOrderAccess(*this,
                               cast<RankedTensorType>(getResult().getType()),
                               getDesc().getType(), getOffsets());
}

LogicalResult BulkReduceAddOp::verify() {
  auto value = cast<RankedTensorType>(getValue().getType());
  MemRefType staging = getStaging().getType();
  tile::DescType desc = getDesc().getType();
  if (value.getRank() != 2 || !value.getElementType().isF32() ||
      !isa_and_nonnull<MmaLayoutAttr>(value.getEncoding()) ||
      (value.getDimSize(1) * 4) % 16 != 0)
    return emitOpError() << "adds 2-D f32 #tgpu.mma tiles whose rows are "
                            "whole 16-byte chunks, got "
                         << value;
  if (!isPlainStaging(staging, value))
    return emitOpError() << "stages through an unpadded, unswizzled shared "
                            "buffer of the tile's shape (rows read as one "
                            "contiguous run), got "
                         << staging << " for " << value;
  if (!desc.getElementType().isF32() || desc.getShape().size() != 2 ||
      getOffsets().size() != 2 || desc.isPaged() || desc.getGroup() != 1)
    return emitOpError() << "adds into a plain 2-D f32 descriptor at a row "
                            "and a column, got "
                         << desc << " with " << getOffsets().size()
                         << " offsets";
  if (cast<MmaLayoutAttr>(value.getEncoding()).getColGroups() != 1)
    return emitOpError() << "stages whole rows per warp; a tile in column "
                            "groups is added with tgpu.tma_reduce_add";
  return verifyWarpsAndWidth(*this, value, desc);
}

/// What the kernel says of a tensor-map argument: its dims, box, swizzle and
/// the array it describes (each null where the map is not a kernel argument
/// or the attribute lacks it).
struct KernelMapInfo {
  DenseI64ArrayAttr dims, box;
  IntegerAttr swizzle;
  MemRefType described;
  bool complete() const { return dims && box && swizzle; }
};
static KernelMapInfo kernelMapInfo(Value map) {
  KernelMapInfo result;
  auto arg = dyn_cast<BlockArgument>(map);
  auto kernel =
      arg ? dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp())
          : nullptr;
  if (!kernel || arg.getOwner() != &kernel.getFunctionBody().front())
    return result;
  auto info = kernel.getArgAttrOfType<DictionaryAttr>(arg.getArgNumber(),
                                                      attrs::kTensorMap);
  if (!info)
    return result;
  result.dims = info.getAs<DenseI64ArrayAttr>(attrs::kTensorMapDims);
  result.box = info.getAs<DenseI64ArrayAttr>(attrs::kTensorMapBox);
  result.swizzle = info.getAs<IntegerAttr>(attrs::kTensorMapSwizzle);
  auto tensor = info.getAs<IntegerAttr>(attrs::kTensorMapTensor);
  if (tensor && tensor.getInt() >= 0 &&
      tensor.getInt() < int64_t(kernel.getNumArguments()))
    result.described = dyn_cast<MemRefType>(
        kernel.getArgument(unsigned(tensor.getInt())).getType());
  return result;
}

/// The checks tgpu.tma_reduce_add and tgpu.tma_store share: a warp's block
/// of `value` (an #tgpu.mma tile) in whole m16 tiles of rows, staged through
/// a swizzled buffer of its shape and element type whose spans divide a
/// column group's row, the kernel's warps those of the layout, and 2 to 5
/// coordinates; `dimsWord` names the coordinates after column and row.
static LogicalResult verifyTmaOut(Operation *op, RankedTensorType value,
                                  MemRefType staging, size_t coords,
                                  StringRef dimsWord) {
  int64_t warpRows = warpBlockRows(value);
  int64_t groupBytes =
      groupColumns(value) * value.getElementTypeBitWidth() / 8;
  int64_t swizzle = swizzleBytes(staging);
  if (!swizzle || staging.getShape() != value.getShape() ||
      staging.getElementType() != value.getElementType() ||
      groupBytes % swizzle != 0)
    return op->emitOpError()
           << "stages through a swizzled shared buffer of the tile's shape "
              "and type whose swizzle spans divide a column group's rows (a "
              "box per span), got "
           << staging << " for " << value;
  if (warpRows % 16 != 0 || warpRows > 256)
    return op->emitOpError() << "a warp's " << warpRows
                             << " rows are not whole m16 tiles of a TMA box "
                                "(at most 256 rows)";
  if (failed(verifyLayoutWarps(op, value)))
    return failure();
  if (coords < 2 || coords > 5)
    return op->emitOpError()
           << "takes 2 to 5 coordinates (column, row, then the " << dimsWord
           << "), got " << coords;
  return success();
}

LogicalResult TmaReduceAddOp::verify() {
  auto value = cast<RankedTensorType>(getValue().getType());
  if (value.getRank() != 2 || !value.getElementType().isF32() ||
      !isa_and_nonnull<MmaLayoutAttr>(value.getEncoding()))
    return emitOpError() << "adds 2-D f32 #tgpu.mma tiles, got " << value;
  if (failed(verifyTmaOut(*this, value, getStaging().getType(),
                          getCoords().size(), "tensor's outer dimensions")))
    return failure();
  // Where the map is the kernel's argument, its box is a warp's block of a
  // swizzle span, in the staging's swizzle; the map walks its tensor's
  // dimensions last to first (the coordinates' order).
  KernelMapInfo map = kernelMapInfo(getMap());
  if (!map.complete())
    return success();
  int64_t rank = getCoords().size();
  int64_t swizzle = swizzleBytes(getStaging().getType());
  int64_t warpRows = warpBlockRows(value);
  SmallVector<int64_t> wantedBox(rank, 1), wantedDims;
  wantedBox[0] = swizzle / 4;
  wantedBox[1] = warpRows;
  for (int64_t d = rank - 1; d >= 0; --d)
    wantedDims.push_back(d);
  if (map.dims.asArrayRef() != ArrayRef(wantedDims) ||
      map.box.asArrayRef() != ArrayRef(wantedBox) ||
      map.swizzle.getInt() != swizzle)
    return emitOpError() << "adds through a map walking its " << rank
                         << " dimensions last to first whose box is a warp's "
                         << warpRows << " rows of " << swizzle / 4
                         << " columns, swizzled " << swizzle
                         << " bytes; the map has dims " << map.dims
                         << ", box " << map.box << ", swizzle "
                         << map.swizzle.getInt();
  if (map.described && (!map.described.getElementType().isF32() ||
                        map.described.getRank() != rank))
    return emitOpError() << "adds f32 through a map of a rank-" << rank
                         << " f32 array, but the map describes "
                         << map.described;
  return success();
}

LogicalResult TmaStoreOp::verify() {
  auto value = cast<RankedTensorType>(getValue().getType());
  Type element = value.getElementType();
  if (value.getRank() != 2 || !(element.isBF16() || element.isF16()) ||
      !isa_and_nonnull<MmaLayoutAttr>(value.getEncoding()))
    return emitOpError() << "stores 2-D bf16 or f16 #tgpu.mma tiles, got "
                         << value;
  if (failed(verifyTmaOut(*this, value, getStaging().getType(),
                          getCoords().size(), "map's other dimensions")))
    return failure();
  // Where the map is the kernel's argument: as many dimensions as
  // coordinates (any order: the view's columns, its rows, then the others),
  // its box a warp's block of a swizzle span in the staging's swizzle, over
  // an array of the tile's element type.
  KernelMapInfo map = kernelMapInfo(getMap());
  if (!map.complete())
    return success();
  int64_t rank = getCoords().size();
  int64_t swizzle = swizzleBytes(getStaging().getType());
  int64_t warpRows = warpBlockRows(value);
  SmallVector<int64_t> wantedBox(rank, 1);
  wantedBox[0] = swizzle / 2;
  wantedBox[1] = warpRows;
  if (int64_t(map.dims.size()) != rank ||
      map.box.asArrayRef() != ArrayRef(wantedBox) ||
      map.swizzle.getInt() != swizzle)
    return emitOpError() << "stores through a map of " << rank
                         << " dimensions whose box is a warp's " << warpRows
                         << " rows of " << swizzle / 2 << " columns, swizzled "
                         << swizzle << " bytes; the map has dims " << map.dims
                         << ", box " << map.box << ", swizzle "
                         << map.swizzle.getInt();
  if (map.described && (map.described.getElementType() != element ||
                        map.described.getRank() != rank))
    return emitOpError() << "stores " << element << " through a map of a rank-"
                         << rank << " array of it, but the map describes "
                         << map.described;
  return success();
}

LogicalResult WarpSpecializeOp::verify() {
  int64_t producers = static_cast<int64_t>(getProducerWarps());
  if (producers < 4 || producers % 4 != 0)
    return emitOpError() << "the producer is whole warpgroups (a multiple of "
                            "4 warps: setmaxnreg acts per warpgroup), got "
                         << producers;
  for (int64_t regs : {static_cast<int64_t>(getProducerRegisters()),
                       static_cast<int64_t>(getConsumerRegisters())})
    if (regs < 24 || regs > 256 || regs % 8 != 0)
      return emitOpError() << "setmaxnreg takes a multiple of 8 from 24 to "
                              "256 registers, got "
                           << regs;
  Operation *kernel = (*this)->getParentOp();
  auto warps =
      kernel ? kernel->getAttrOfType<IntegerAttr>(attrs::kNumWarps) : nullptr;
  if (!warps)
    return emitOpError() << "splits a scheduled kernel: it sits directly in "
                            "a function with "
                         << attrs::kNumWarps;
  int64_t consumers = warps.getInt();
  if (consumers % 4 != 0)
    return emitOpError() << "the consumers are whole warpgroups, but the "
                            "kernel has "
                         << consumers << " warps";
  auto launched = kernel->getAttrOfType<IntegerAttr>(attrs::kProducerWarps);
  if (!launched || launched.getInt() != producers)
    return emitOpError() << "needs its kernel to launch the " << producers
                         << " producer warps: " << attrs::kProducerWarps
                         << " = " << producers << " on the function";
  auto ctasAttr = kernel->getAttrOfType<IntegerAttr>(attrs::kCtasPerSM);
  int64_t ctas = ctasAttr ? ctasAttr.getInt() : 1;
  if (ctas < 1 || ctas > 32)
    return emitOpError() << attrs::kCtasPerSM << " must be in [1, 32], got "
                         << ctas;
  // The CTA's pool is what each thread gets at entry times its threads,
  // and setmaxnreg.inc waits until the pool holds the raise: two budgets
  // past it never return.
  int64_t threads = 32 * (producers + consumers);
  int64_t entry = entryRegisters(ctas, threads);
  int64_t registers = 32 * (producers * int64_t(getProducerRegisters()) +
                            consumers * int64_t(getConsumerRegisters()));
  if (registers > entry * threads)
    return emitOpError() << "the two budgets need " << registers
                         << " registers; a CTA has " << entry * threads << " ("
                         << entry << " for each of its " << threads
                         << " threads at entry, " << ctas
                         << " per multiprocessor of 65536)";
  // setmaxnreg.inc may not lower what the compiler allocated at entry.
  if (int64_t(getConsumerRegisters()) < entry)
    return emitOpError() << "the consumers' " << getConsumerRegisters()
                         << " registers are below the " << entry
                         << " the kernel may start with; setmaxnreg.inc "
                            "cannot lower them";
  return success();
}

LogicalResult BarrierOp::verify() {
  if (inProducer(*this))
    return emitOpError() << "would wait for warps that never reach it: the "
                            "producer region runs on one thread";
  return success();
}

LogicalResult WarpgroupTurnOp::verify() {
  StringRef kind = getKind();
  if (kind != "start" && kind != "wait" && kind != "pass" && kind != "end")
    return emitOpError() << "kind is start, wait, pass or end, got '" << kind
                         << "'";
  for (Operation *op = (*this)->getParentOp(); op; op = op->getParentOp())
    if (auto ws = dyn_cast<WarpSpecializeOp>(op);
        ws && ws.getConsumer().isAncestor((*this)->getParentRegion()))
      return success();
  return emitOpError() << "passes turns among consumer warpgroups: it sits "
                          "in a tgpu.warp_specialize consumer region";
}
