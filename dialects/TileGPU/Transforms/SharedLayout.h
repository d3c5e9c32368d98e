//===- SharedLayout.h - placing a kernel's shared buffers ---------*- C++ -*-===//

#ifndef KILN_DIALECTS_TILEGPU_TRANSFORMS_SHAREDLAYOUT_H
#define KILN_DIALECTS_TILEGPU_TRANSFORMS_SHAREDLAYOUT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln::tgpu {

/// The bytes a shared buffer occupies: its rows times its padded pitch, or
/// times its row for a swizzled buffer.
int64_t sharedBufferBytes(mlir::MemRefType type);

/// CTAs of `bytes` shared memory each that fit a multiprocessor whose one CTA
/// may use `limit` (each CTA reserves 1 KiB: the limit is 1 KiB under the
/// multiprocessor's).
int64_t ctasFitting(int64_t bytes, int64_t limit);

/// Places every tgpu.shared_alloc of `kernel` one after the other in walk
/// order (swizzled buffers 1024-byte aligned, the swizzle's period; others
/// 128), each overlay (`overlays %b`) at its buffer's offset, and sets
/// tgpu.shared_bytes (the end of the last buffer or overlay). Fails with a
/// diagnostic naming `what` when the total exceeds `limit` (0: unchecked).
mlir::LogicalResult layoutSharedBuffers(mlir::func::FuncOp kernel,
                                        int64_t limit, llvm::StringRef what);

} // namespace kiln::tgpu

#endif // KILN_DIALECTS_TILEGPU_TRANSFORMS_SHAREDLAYOUT_H
