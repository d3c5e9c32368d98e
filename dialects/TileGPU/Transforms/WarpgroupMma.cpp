//===- WarpgroupMma.cpp - tgpu.mma -> tgpu.warpgroup_mma (sm_90a) ---------===//
//
// The sm_80 schedule multiplies with mma.sync, each warp loading its
// operands from padded shared tiles with ldmatrix: on Hopper that path runs
// at well under half the tensor cores' rate, and B is read once per warp.
// wgmma reads both shared operands itself, through descriptors over
// swizzled tiles, once per warpgroup. This pass picks the products that can
// go there and the buffers that must change layout for them.
//
//===----------------------------------------------------------------------===//

#include "dialects/TileGPU/Transforms/Passes.h"
#include "dialects/TileGPU/Transforms/SharedLayout.h"

#include "dialects/TileGPU/IR/TileGPUAttrNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

#include <numeric>

namespace kiln::tgpu {
#define GEN_PASS_DEF_TILEGPUWARPGROUPMMA
#include "dialects/TileGPU/Transforms/Passes.h.inc"
} // namespace kiln::tgpu

using namespace mlir;
using namespace kiln::tgpu;

namespace {

/// A shared buffer that a swizzled layout can hold: 8-row atoms, whole
/// swizzle columns, 16-bit elements.
bool swizzleable(MemRefType type) {
  if (type.getRank() != 2 || !type.hasStaticShape())
    return false;
  Type elt = type.getElementType();
  if (!elt.isBF16() && !elt.isF16())
    return false;
  return type.getDimSize(0) % 8 == 0 &&
         widestSwizzle(type.getDimSize(1) * 2) != 0;
}

/// Whether wgmma can compute `mma` once its shared operands are swizzled.
/// A transposed lhs (the backward's Pᵀ and dSᵀ) is a shared buffer that
/// wgmma reads MN-major.
bool eligible(MmaOp mma) {
  auto acc = cast<RankedTensorType>(mma.getAcc().getType());
  auto layout = dyn_cast_or_null<MmaLayoutAttr>(acc.getEncoding());
  if (!layout)
    return false;
  if (!hasWarpgroupRows(acc.getDimSize(0), layout) ||
      !hasWarpgroupColumns(acc.getDimSize(1), layout))
    return false;
  auto rhsAlloc = mma.getRhs().getDefiningOp<SharedAllocOp>();
  if (!rhsAlloc || !swizzleable(rhsAlloc.getType()))
    return false;
  Type elt = rhsAlloc.getType().getElementType();
  int64_t k = rhsAlloc.getType().getDimSize(mma.getTransposeRhs() ? 1 : 0);
  if (k % 16 != 0)
    return false;
  Value lhs = mma.getLhs();
  if (auto regs = dyn_cast<RankedTensorType>(lhs.getType()))
    return layout.getColGroups() == 1 && regs.getElementType() == elt &&
           regs.getEncoding() == layout;
  auto lhsAlloc = lhs.getDefiningOp<SharedAllocOp>();
  return lhsAlloc && swizzleable(lhsAlloc.getType()) &&
         lhsAlloc.getType().getElementType() == elt;
}

struct TileGPUWarpgroupMma
    : public kiln::tgpu::impl::TileGPUWarpgroupMmaBase<TileGPUWarpgroupMma> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<func::FuncOp> kernels;
    getOperation()->walk([&](func::FuncOp f) {
      auto arch = f->getAttrOfType<StringAttr>(attrs::kArch);
      if (arch && arch.getValue() == "sm_90a")
        kernels.push_back(f);
    });
    for (func::FuncOp kernel : kernels)
      if (failed(runOnKernel(kernel)))
        return signalPassFailure();
  }

  LogicalResult runOnKernel(func::FuncOp kernel) {
    // Products wgmma can take, then drop those that read a buffer which
    // something else reads with ldmatrix (until nothing changes: dropping a
    // product keeps its buffers padded, which may drop others).
    llvm::SetVector<MmaOp> products;
    kernel.walk([&](MmaOp mma) {
      if (eligible(mma))
        products.insert(mma);
    });
    auto buffersOf = [](MmaOp mma) {
      SmallVector<SharedAllocOp, 2> buffers;
      if (auto lhs = mma.getLhs().getDefiningOp<SharedAllocOp>())
        buffers.push_back(lhs);
      buffers.push_back(mma.getRhs().getDefiningOp<SharedAllocOp>());
      return buffers;
    };
    auto convertible = [&](SharedAllocOp alloc) {
      for (OpOperand &use : alloc->getUses()) {
        Operation *user = use.getOwner();
        if (auto copy = dyn_cast<CopyAsyncOp>(user);
            copy && use.get() == copy.getDest())
          continue;
        // Threads write swizzled tiles at their swizzled offsets.
        if (isa<StoreSharedOp>(user))
          continue;
        if (auto mma = dyn_cast<MmaOp>(user); mma && products.contains(mma))
          continue;
        return false;
      }
      return true;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (MmaOp mma : SmallVector<MmaOp>(products.begin(), products.end()))
        if (!llvm::all_of(buffersOf(mma), convertible)) {
          products.remove(mma);
          changed = true;
        }
    }
    if (products.empty())
      return success();
    if (!packLhsFirst)
      kernel->setAttr(attrs::kLhsPackedPerStep,
                      UnitAttr::get(kernel.getContext()));
    if (orderBeforeWaits)
      kernel->setAttr(attrs::kOrderedWaits, UnitAttr::get(kernel.getContext()));

    // Swizzle the buffers, then rewrite the products.
    MLIRContext *ctx = kernel.getContext();
    llvm::SetVector<SharedAllocOp> swizzled;
    for (MmaOp mma : products)
      for (SharedAllocOp alloc : buffersOf(mma))
        swizzled.insert(alloc);
    // A product in column groups reads its MN-major rhs from column
    // g * N / G on: the swizzle columns must not be wider than a group's.
    llvm::DenseMap<Operation *, int64_t> groupBytes;
    for (MmaOp mma : products) {
      auto acc = cast<RankedTensorType>(mma.getAcc().getType());
      int64_t groups = cast<MmaLayoutAttr>(acc.getEncoding()).getColGroups();
      if (groups == 1 || mma.getTransposeRhs())
        continue;
      auto rhs = mma.getRhs().getDefiningOp<SharedAllocOp>();
      int64_t bytes = acc.getDimSize(1) / groups *
                      rhs.getType().getElementTypeBitWidth() / 8;
      auto [it, inserted] = groupBytes.try_emplace(rhs, bytes);
      if (!inserted)
        it->second = std::gcd(it->second, bytes);
    }
    for (SharedAllocOp alloc : swizzled) {
      MemRefType type = alloc.getType();
      int64_t rowBytes = type.getDimSize(1) * type.getElementTypeBitWidth() / 8;
      if (auto it = groupBytes.find(alloc); it != groupBytes.end())
        rowBytes = std::gcd(rowBytes, it->second);
      int64_t bytes = widestSwizzle(rowBytes);
      alloc.getBuffer().setType(
          MemRefType::get(type.getShape(), type.getElementType(),
                          SwizzleLayoutAttr::get(ctx, bytes),
                          type.getMemorySpace()));
    }
    OpBuilder builder(ctx);
    for (MmaOp mma : products) {
      builder.setInsertionPoint(mma);
      auto product = WarpgroupMmaOp::create(
          builder, mma.getLoc(), mma.getType(), mma.getLhs(), mma.getRhs(),
          mma.getAcc(), /*predicate=*/Value(), mma.getTransposeRhs(),
          /*async=*/false, mma.getTransposeLhs());
      mma.replaceAllUsesWith(product.getResult());
      mma.erase();
    }

    // Offsets again: the swizzled buffers lost their padding and need the
    // swizzle's 1024-byte period as alignment.
    if (failed(layoutSharedBuffers(kernel, sharedMemoryBytes,
                                   "the wgmma schedule")))
      return failure();

    // cp.async and st.shared write through the generic proxy, wgmma reads
    // through the async one: each writer fences before the barrier that
    // publishes its writes.
    kernel.walk([&](AsyncWaitOp wait) {
      builder.setInsertionPointAfter(wait);
      FenceAsyncSharedOp::create(builder, wait.getLoc());
    });
    kernel.walk([&](StoreSharedOp store) {
      auto dest = store.getDest().getDefiningOp<SharedAllocOp>();
      if (!dest || !swizzled.contains(dest))
        return;
      builder.setInsertionPointAfter(store);
      FenceAsyncSharedOp::create(builder, store.getLoc());
    });
    return success();
  }
};

} // namespace
