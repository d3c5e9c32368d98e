//===- Variant.h - parse, select and specialise a variant -------*- C++ -*-===//
//
// One place decides which attn.attention of a text is compiled and how flags
// specialise it, for `kiln run`, `kiln compile` and kiln/Kiln.h alike.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_VARIANT_H
#define KILN_COMPILER_DRIVER_VARIANT_H

#include "dialects/Attn/IR/AttnDialect.h"
#include "kiln/Types.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln::driver {

/// What a caller may override in a variant; 0 and "" keep the variant's.
/// `headDim` sets qk_head_dim, and v_head_dim too when the variant's two
/// were equal and `headDimV` is not given; `headDimV` sets v_head_dim.
struct VariantSpecialization {
  int64_t headDim = 0, headDimV = 0;
  std::string dtype; ///< "", "bf16" or "fp16"
  /// K and V in a paged KV cache of this many keys per page (page_size).
  int64_t pageSize = 0;
  /// > 0: dropout_p (a variant without dropout gets it; one with, another p).
  double dropoutP = 0;
  /// > 0: dropout_bits (16 or 8: the width of the dropout's uniforms).
  int64_t dropoutBits = 0;
  /// A packed batch of sequences of different lengths (varlen).
  bool varlen = false;
  /// > 0: block_sparse = [blockSparseQ, blockSparseKV].
  int64_t blockSparseQ = 0, blockSparseKV = 0;
  /// The program that builds the block mask's lists instead of attention.
  bool buildBlockMask = false;
};

/// Keeps the attn.attention named `name` in `module` (or the only one when
/// `name` is empty), erases the others, applies `s` and verifies the module
/// (the verifier's diagnostics go to the context's handler).
Status selectAndSpecialize(mlir::ModuleOp module, const std::string &name,
                           const VariantSpecialization &s,
                           attn::AttentionOp &chosen);

/// Parses `text` in `context`, then selects and specialises as above. The
/// parser's and verifier's diagnostics (with their locations) are appended to
/// the error.
Status parseVariantText(mlir::MLIRContext &context, const std::string &text,
                        const std::string &name,
                        const VariantSpecialization &s,
                        mlir::OwningOpRef<mlir::ModuleOp> &module);

/// The dialects every Kiln tool parses.
mlir::DialectRegistry kilnRegistry();

/// A variant file parsed for one command, with the context it lives in and
/// the handler that prints diagnostics with their locations (members are
/// destroyed module first).
struct VariantSession {
  explicit VariantSession(llvm::raw_ostream &err);
  /// Parses `path` and selects / specialises as above; 0 or an exit code
  /// (kBadInput) after a message on `err`.
  int load(const std::string &path, const std::string &name,
           const VariantSpecialization &s, llvm::raw_ostream &err);

  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  attn::AttentionOp spec;
};

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_VARIANT_H
