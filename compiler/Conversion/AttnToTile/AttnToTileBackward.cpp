//===- AttnToTileBackward.cpp - attn.attention -> backward tile programs --===//
//
// The gradients of O = softmax(S) V with S = score_mod(scale · Q Kᵀ):
//   dV = Pᵀ dO,   dP = dO Vᵀ,   dS = P ∘ (dP − D) with D = rowsum(dO ∘ O),
//   dQ = scale · (dS ∘ m') K,   dK = scale · (dS ∘ m')ᵀ Q,
// where m' is the score_mod's derivative. P is recomputed block by block
// from the saved log-sum-exp, so nothing N x N is stored.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/AttnToTile/BandBounds.h"
#include "compiler/Conversion/AttnToTile/BlockLists.h"
#include "compiler/Conversion/AttnToTile/Dropout.h"
#include "compiler/Conversion/AttnToTile/KernelSignature.h"
#include "compiler/Conversion/AttnToTile/ModVectorizer.h"
#include "compiler/Conversion/AttnToTile/ProgramBuilder.h"
#include "compiler/Conversion/Passes.h"
#include "dialects/Attn/IR/AttnAttrNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln {
#define GEN_PASS_DEF_CONVERTATTNTOTILEBACKWARD
#include "compiler/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// One backward kernel being built: its function and the usual views.
struct Kernel {
  func::FuncOp func;
  Block *entry;
};

Kernel makeKernel(OpBuilder &b, attn::AttentionOp spec, StringRef suffix,
                  SmallVector<KernelArgDecl> args, StringRef stage,
                  SmallVector<Attribute, 3> grid, int64_t blockM,
                  int64_t blockN, bool withCaptures) {
  KernelDecl decl;
  decl.name = (spec.getSymName() + suffix).str();
  decl.args = std::move(args);
  decl.withCaptures = withCaptures;
  decl.grid = std::move(grid);
  decl.blockM = blockM;
  decl.blockN = blockN;
  decl.backwardStage = stage.str();
  func::FuncOp func = createKernel(b, spec, decl);
  return {func, &func.front()};
}

/// The grid position of a program: (row or key block, head, batch).
struct ProgramIds {
  Value block, head, batch;
};

ProgramIds programIds(OpBuilder &b, Location loc) {
  Value ids[3];
  for (int64_t axis = 0; axis < 3; ++axis)
    ids[axis] = tile::ProgramIdOp::create(b, loc, b.getIndexType(), axis);
  return {ids[0], ids[1], ids[2]};
}

/// Rounds an f32 tile to the operand type of the tensor-core products (the
/// forward rounds P the same way before P V).
Value toOperand(ProgramBuilder &pb, Value t, Type elt) {
  auto type = cast<RankedTensorType>(t.getType());
  return arith::TruncFOp::create(
      pb.b, pb.loc, RankedTensorType::get(type.getShape(), elt), t);
}

Value toF32(ProgramBuilder &pb, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  if (type.getElementType().isF32())
    return t;
  return arith::ExtFOp::create(
      pb.b, pb.loc, RankedTensorType::get(type.getShape(), pb.b.getF32Type()),
      t);
}

Value dot(ProgramBuilder &pb, ArrayRef<int64_t> shape, Value lhs, Value rhs,
          Value acc, bool transposeLhs, bool transposeRhs) {
  return tile::DotOp::create(pb.b, pb.loc,
                             RankedTensorType::get(shape, pb.b.getF32Type()),
                             lhs, rhs, acc, transposeLhs, transposeRhs);
}

/// The base-2 LSE of a block of rows as P's reference: +inf where the row saw
/// no key (LSE = -inf) or lies past Lq (read as +inf), so P = exp2(s - ref)
/// is 0 there instead of exp2(-inf - -inf) = NaN. The preprocess computes it
/// once per query (the "lse_log2" workspace); the kernels that recompute P
/// load it as it is.
Value lseReference(ProgramBuilder &pb, Value lseDesc, Value rowStart,
                   int64_t rows) {
  Value lse = pb.load(lseDesc, {rows}, pb.b.getF32Type(), {rowStart}, kInf);
  Value lse2 = pb.mul(lse, pb.splatF32(M_LOG2E, {rows}));
  Value empty = arith::CmpFOp::create(pb.b, pb.loc, arith::CmpFPredicate::OEQ,
                                      lse2, pb.splatF32(-kInf, {rows}));
  return arith::SelectOp::create(pb.b, pb.loc, empty, pb.splatF32(kInf, {rows}),
                                 lse2);
}

/// Inputs of one (Q block, KV block) pair of the backward.
struct BlockInputs {
  Value q, k, v, dO; // tiles in the input element type
  Value lseRef, d;   // per-query base-2 LSE reference and D
  Value qIdx, kvIdx; // positions, in the block's orientation
  Value qStart, kvStart; // the block's first query and key
  Value seed, offset;    // dropout's generator state (null without dropout)
  /// Gradients of the float captures the score_mod reads: the capture
  /// index and the gradient tensor, where this block adds its share.
  SmallVector<std::pair<unsigned, Value>> captureGrads;
  Value batch, head, lenQ, lenK;
  SmallVector<Value> captures;
  /// Keys by queries (Sᵀ = K Qᵀ): the dK/dV kernel's orientation, in which
  /// Pᵀ and dSᵀ come out as the rows of dV's and dK's products (a register
  /// lhs, no transposed operand); the per-query values are broadcast down
  /// the columns. Otherwise queries by keys, as the forward.
  bool keysByQueries = false;
  /// A block-sparse full block: only keys past Lk are masked (the
  /// mask_mod is not evaluated).
  bool boundsOnly = false;
  /// A block inside the band and inside both lengths (a full step of the
  /// split loops): no mask at all. Rows past Lq (the last query block's)
  /// add nothing: their LSE is read as +inf, so P and dS are 0 there.
  bool unmasked = false;
  /// Where set (an i1), the mask is applied in a branch taken where it
  /// holds: a loop whose partial steps are at most its last (no score_mod).
  Value maskWhen;
};

/// P and dS (already multiplied by the score_mod's derivative) of a block,
/// as Pᵀ and dSᵀ when `in.keysByQueries`. With dropout the first is P with
/// its dropped weights zeroed, still to be scaled by 1 / (1 - p) (dV's
/// epilogue does).
FailureOr<std::pair<Value, Value>> recompute(ProgramBuilder &pb,
                                             attn::AttentionOp spec,
                                             const BlockInputs &in, int64_t m,
                                             int64_t n) {
  bool t = in.keysByQueries;
  SmallVector<int64_t> shape =
      t ? SmallVector<int64_t>{n, m} : SmallVector<int64_t>{m, n};
  // Per-query values across the block: along the rows of S, down the
  // columns of Sᵀ.
  auto perQuery = [&](Value v) {
    return t ? pb.colBroadcast(v, n) : pb.rowBroadcast(v, n);
  };
  Value s = t ? dot(pb, shape, in.k, in.q, Value(), false, true)
              : dot(pb, shape, in.q, in.k, Value(), false, true);
  // Dropout's bits depend on positions only: drawn under S's product.
  Value kept;
  if (in.seed)
    kept = dropoutKeep(pb, spec, shape, in.seed, in.offset, in.batch, in.head,
                       in.qStart, in.kvStart, t);
  s = pb.mul(s, pb.splatF32(spec.getEffectiveScale(), shape));
  Value modDerivative;
  // Mods that read captures at positions see them clamped into the arrays.
  Value modQ = in.qIdx, modKv = in.kvIdx;
  if (modsIndexMemoryWith(spec, /*query=*/true)) {
    Value lastQ = pb.splat(pb.sub(in.lenQ, pb.index(1)), shape);
    modQ = pb.minIndex(in.qIdx, lastQ);
  }
  if (modsIndexMemoryWith(spec, /*query=*/false)) {
    Value lastKv = pb.splat(pb.sub(in.lenK, pb.index(1)), shape);
    modKv = pb.minIndex(in.kvIdx, lastKv);
  }
  SmallVector<CaptureTangent> captureTangents;
  if (spec.hasScoreMod()) {
    SmallVector<Value> args{s, in.batch, in.head, modQ, modKv};
    args.append(in.captures);
    auto modded = inlineScoreModWithGradients(
        pb.b, pb.loc, spec.getScoreMod(), args, shape,
        /*captureTangents=*/!in.captureGrads.empty());
    if (failed(modded))
      return failure();
    s = modded->value;
    modDerivative = modded->scoreTangent;
    captureTangents = std::move(modded->captures);
  }
  s = pb.mul(s, pb.splatF32(M_LOG2E, shape));
  Value keep;
  if (in.boundsOnly)
    keep = arith::CmpIOp::create(pb.b, pb.loc, arith::CmpIPredicate::slt,
                                 in.kvIdx, pb.splat(in.lenK, shape));
  else if (!in.unmasked && !in.maskWhen)
    keep = buildKeepMask(pb, spec, in.qIdx, in.kvIdx, in.lenK,
                         pb.sub(in.lenK, in.lenQ), in.batch, in.head, modQ,
                         modKv, in.captures);
  if (keep)
    s = arith::SelectOp::create(pb.b, pb.loc, keep, s,
                                pb.splatF32(-kInf, shape));
  if (!in.boundsOnly && !in.unmasked && in.maskWhen)
    s = maskScoresWhen(pb, in.maskWhen, s, [&](ProgramBuilder &tp) {
      return buildKeepMask(tp, spec, in.qIdx, in.kvIdx, in.lenK,
                           tp.sub(in.lenK, in.lenQ), in.batch, in.head, modQ,
                           modKv, in.captures);
    });
  Value lse = perQuery(in.lseRef);
  Value p = math::Exp2Op::create(pb.b, pb.loc, pb.sub(s, lse));
  // dP = dO V^T (dPᵀ = V dOᵀ) on the input-type tiles, accumulated in f32.
  Value dp = t ? dot(pb, shape, in.v, in.dO, Value(), false, true)
               : dot(pb, shape, in.dO, in.v, Value(), false, true);
  // Dropout (O = (P ∘ Z) V with Z the scaled mask): dV = (P ∘ Z)ᵀ dO and
  // dP = Z ∘ dO Vᵀ; D = rowsum(dO ∘ O) = rowsum(P ∘ dP) holds as before.
  Value pOut = p;
  if (kept) {
    Value zero = pb.splatF32(0.0, shape);
    pOut = arith::SelectOp::create(pb.b, pb.loc, kept, p, zero);
    dp = arith::SelectOp::create(
        pb.b, pb.loc, kept,
        pb.mul(dp, pb.splatF32(spec.getDropoutScale(), shape)), zero);
  }
  Value d = perQuery(in.d);
  Value ds = pb.mul(p, pb.sub(dp, d));
  // Gradients of captured tensors: dL/d(capture value) = sum over the
  // elements that read it of dS (the gradient of the modded score) times
  // d(score_mod)/d(value); masked elements add nothing.
  Value zeros = pb.splatF32(0.0, shape);
  for (const CaptureTangent &c : captureTangents) {
    auto grad = llvm::find_if(
        in.captureGrads, [&](const auto &g) { return g.first == c.capture; });
    if (grad == in.captureGrads.end())
      continue;
    Value share = pb.mul(ds, c.tangent);
    if (keep)
      share = arith::SelectOp::create(pb.b, pb.loc, keep, share, zeros);
    SmallVector<Value> indices;
    for (Value index : c.indices)
      indices.push_back(isa<RankedTensorType>(index.getType())
                            ? index
                            : pb.splat(index, shape));
    auto scatter =
        tile::ScatterAddOp::create(pb.b, pb.loc, share, grad->second, indices);
    // An i64 accumulator: the deterministic option's fixed-point sums.
    scatter.setFixedPoint(cast<MemRefType>(grad->second.getType())
                              .getElementType()
                              .isInteger(64));
  }
  if (modDerivative)
    ds = pb.mul(ds, modDerivative);
  // A masked entry contributes nothing, whatever the mod's derivative there.
  if (keep)
    ds = arith::SelectOp::create(pb.b, pb.loc, keep, ds,
                                 pb.splatF32(0.0, shape));
  return std::make_pair(pOut, ds);
}

MemRefType global(MLIRContext *ctx, int64_t rank, int64_t last, Type elt) {
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  if (last > 0)
    shape.back() = last;
  return stridedMemRef(ctx, shape, elt);
}

/// The float captures the score_mod reads, in capture order: those that
/// get gradients.
SmallVector<unsigned> differentiableCaptures(attn::AttentionOp spec) {
  SmallVector<unsigned> out;
  if (!spec.hasScoreMod())
    return out;
  Block &block = spec.getScoreMod().front();
  for (unsigned c = 0; c < spec.getCaptureTypes().size(); ++c) {
    BlockArgument arg = block.getArgument(5 + c);
    bool read = llvm::any_of(arg.getUsers(), [](Operation *user) {
      auto load = dyn_cast<memref::LoadOp>(user);
      return load && isa<FloatType>(load.getType());
    });
    if (read)
      out.push_back(c);
  }
  return out;
}

/// Where the backward's tensors live: dense [B, L, H, D] (per-row values
/// [B, H, L]), or a packed varlen batch [T, H, D] ([H, T]) whose sequences
/// cu_seqlens_q / cu_seqlens_kv delimit. Every kernel of a varlen backward
/// takes the two offsets after its other arguments (before the captures),
/// and numbers its sequences' blocks along grid axis 0 (tile.ragged_block).
struct Layout {
  bool varlen;
  MLIRContext *ctx;

  MemRefType matrix(int64_t cols, Type elt) const {
    return global(ctx, varlen ? 3 : 4, cols, elt);
  }
  MemRefType perRow() const {
    return global(ctx, varlen ? 2 : 3, -1, Float32Type::get(ctx));
  }
  SmallVector<Attribute> queryShape(Builder &b, int64_t cols) const {
    return varlen ? packedShape(b, "total_q", "heads", cols)
                  : kiln::queryShape(b, cols);
  }
  /// The atomic schedule's f32 dQ accumulator: dense, head-major so that
  /// a query block's rows are one contiguous run (a bulk reduction each);
  /// packed (varlen), as the queries.
  SmallVector<Attribute> accumShape(Builder &b, int64_t cols) const {
    return varlen ? packedShape(b, "total_q", "heads", cols)
                  : kiln::headMajorQueryShape(b, cols);
  }
  SmallVector<Attribute> keyShape(Builder &b, int64_t cols) const {
    return varlen ? packedShape(b, "total_kv", "kv_heads", cols)
                  : kiln::keyShape(b, cols);
  }
  SmallVector<Attribute> rowShape(Builder &b) const {
    return varlen ? packedRowShape(b) : kiln::rowShape(b);
  }
  /// The preprocess's per-query workspaces (D, the base-2 LSE), read a
  /// block of `block` queries at a time: dense, each head's row padded to
  /// whole blocks, which the preprocess's blocks write (P = 0 and dS = 0
  /// there), so that a block never reads past its row and a row starts at
  /// a multiple of 16 bytes (a bulk copy's alignment, tgpu-warp-specialize);
  /// packed (varlen), as the queries.
  SmallVector<Attribute> blockRowShape(Builder &b, int64_t block) const {
    if (varlen)
      return packedRowShape(b);
    Attribute rows = tile::sizeSymbol(b, "seq_q");
    Attribute blockSize = tile::sizeConstant(b, block);
    return {tile::sizeSymbol(b, "batch"), tile::sizeSymbol(b, "heads"),
            tile::sizeOp(b, "mul",
                         {tile::sizeOp(b, "ceildiv", {rows, blockSize}),
                          blockSize})};
  }
  SmallVector<Attribute, 3> queryGrid(Builder &b, int64_t block) const {
    return varlen ? raggedBlockGrid(b, "total_q", "heads", block)
                  : queryBlockGrid(b, block);
  }
  SmallVector<Attribute, 3> keyGrid(Builder &b, int64_t block) const {
    return varlen ? raggedBlockGrid(b, "total_kv", "kv_heads", block)
                  : keyBlockGrid(b, block);
  }
  /// Appends cu_seqlens_q and cu_seqlens_kv (varlen); their position.
  unsigned addOffsets(SmallVectorImpl<KernelArgDecl> &args) const {
    unsigned at = args.size();
    if (varlen) {
      Builder b(ctx);
      MemRefType i32 = global(ctx, 1, -1, b.getI32Type());
      args.push_back({KernelArgDecl::Role::Tensor, i32, "cu_seqlens_q",
                      seqOffsetsShape(b)});
      args.push_back({KernelArgDecl::Role::Tensor, i32, "cu_seqlens_kv",
                      seqOffsetsShape(b)});
    }
    return at;
  }
};

/// A backward program's position and the views of its sequence.
struct Program {
  const Layout &layout;
  Value block, head, batch;
  Value cuQ, cuKV; ///< varlen: the sequences' offsets

  /// Axis 0 a block of `block` rows of queries (or, `keys`, of keys), 1 a
  /// head, 2 the batch; varlen, axis 0 numbers every sequence's blocks
  /// (tile.ragged_block) and names the sequence too.
  static Program at(const Layout &layout, OpBuilder &b, Location loc,
                    Block *entry, unsigned offsetsArg, bool keys,
                    int64_t block) {
    ProgramIds ids = programIds(b, loc);
    Program p{layout, ids.block, ids.head, ids.batch, Value(), Value()};
    if (!layout.varlen)
      return p;
    p.cuQ = entry->getArgument(offsetsArg);
    p.cuKV = entry->getArgument(offsetsArg + 1);
    auto owned = tile::RaggedBlockOp::create(
        b, loc, b.getIndexType(), b.getIndexType(), keys ? p.cuKV : p.cuQ,
        ids.block, b.getI64IntegerAttr(block));
    p.batch = owned.getSequence();
    p.block = owned.getBlockInSequence();
    return p;
  }
  /// The [L, cols] matrix of head `h` of a query-side (or key-side) array.
  Value query(ProgramBuilder &pb, Value arg, Value h, int64_t cols,
              Type elt) const {
    return layout.varlen ? pb.raggedView(arg, cuQ, batch, h, cols, elt)
                         : pb.view(arg, batch, h, cols, elt);
  }
  Value key(ProgramBuilder &pb, Value arg, Value h, int64_t cols,
            Type elt) const {
    return layout.varlen ? pb.raggedView(arg, cuKV, batch, h, cols, elt)
                         : pb.view(arg, batch, h, cols, elt);
  }
  /// Head `h`'s [L, cols] matrix of the dQ accumulator (accumShape).
  Value accum(ProgramBuilder &pb, Value arg, Value h, int64_t cols) const {
    Type f32 = pb.b.getF32Type();
    return layout.varlen ? pb.raggedView(arg, cuQ, batch, h, cols, f32)
                         : pb.headMajorView(arg, batch, h, cols, f32);
  }
  /// Head `h`'s per-query values (LSE, D).
  Value rows(ProgramBuilder &pb, Value arg, Value h) const {
    return layout.varlen ? pb.raggedRowView(arg, cuQ, batch, h)
                         : pb.rowView(arg, batch, h);
  }
};

/// The kernel that turns a deterministic capture gradient's fixed-point
/// sums (`fixed`, [dims..., 3] i64: tile.scatter_add's parts) into `grad`
/// (f32, the capture's shape, zeroed by the caller): one program per 4096
/// entries in row-major order, each entry its parts' value, NaN where an
/// addend was out of range. Each entry is added to once, so the result does
/// not depend on the order either.
void buildFixedPointGradient(OpBuilder &b, attn::AttentionOp spec,
                             KernelArgDecl fixed, KernelArgDecl grad) {
  Location loc = spec.getLoc();
  constexpr int64_t kRows = 64, kCols = 64;
  SmallVector<Attribute> dims(grad.shape);
  Attribute entries = dims.empty() ? tile::sizeConstant(b, 1) : dims.front();
  for (Attribute d : ArrayRef(dims).drop_front())
    entries = tile::sizeOp(b, "mul", {entries, d});
  SmallVector<Attribute, 3> grid{
      tile::sizeOp(b, "ceildiv",
                   {entries, tile::sizeConstant(b, kRows * kCols)}),
      tile::sizeConstant(b, 1), tile::sizeConstant(b, 1)};
  std::string suffix = "_bwd_" + grad.name; // e.g. "_bwd_grad_slopes"
  Kernel k = makeKernel(b, spec, suffix, {fixed, grad}, "capture_grad", grid,
                        kRows, kCols, false);
  // A capture with no entries has nothing to convert (and no grid).
  k.func->setAttr(tile::attrs::kWhen, entries);
  OpBuilder kb = OpBuilder::atBlockBegin(k.entry);
  ProgramBuilder pb{kb, loc};
  Value fixedSums = k.entry->getArgument(0), out = k.entry->getArgument(1);
  auto outType = cast<MemRefType>(out.getType());
  SmallVector<int64_t> shape{kRows, kCols};
  // Entry e = program * 4096 + row * 64 + col, and its position in the
  // capture's dimensions (the last varies fastest). One op per statement:
  // C++ leaves the order of argument evaluation open.
  Value program = tile::ProgramIdOp::create(kb, loc, kb.getIndexType(), 0);
  Value rows = pb.iota(0, shape);
  Value cols = pb.iota(1, shape);
  Value rowStride = pb.splat(pb.index(kCols), shape);
  Value first = pb.mul(program, pb.index(kRows * kCols));
  Value entry = pb.mul(rows, rowStride);
  entry = pb.add(entry, cols);
  entry = pb.add(entry, pb.splat(first, shape));
  Value total = pb.index(1);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < outType.getRank(); ++d) {
    sizes.push_back(memref::DimOp::create(kb, loc, out, d));
    total = pb.mul(total, sizes.back());
  }
  Value totalTile = pb.splat(total, shape);
  Value inside = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::slt,
                                       entry, totalTile);
  // Past the end: the last entry, adding zero.
  Value last = pb.sub(total, pb.index(1));
  Value rest = pb.minIndex(entry, pb.splat(last, shape));
  SmallVector<Value> at(outType.getRank());
  for (int64_t d = outType.getRank() - 1; d >= 0; --d) {
    Value size = pb.splat(sizes[d], shape);
    at[d] = d == 0 ? rest : Value(arith::RemUIOp::create(kb, loc, rest, size));
    if (d > 0)
      rest = arith::DivUIOp::create(kb, loc, rest, size);
  }
  auto part = [&](int64_t p) -> Value {
    SmallVector<Value> indices(at);
    indices.push_back(pb.splat(pb.index(p), shape));
    return tile::GatherOp::create(kb, loc,
                                  RankedTensorType::get(shape, kb.getI64Type()),
                                  fixedSums, indices);
  };
  Value high = part(0);
  Value low = part(1);
  Value outOfRange = part(2);
  auto tileOf = [&](Type t) { return RankedTensorType::get(shape, t); };
  auto scaled = [&](Value v, double scale) -> Value {
    Value wide = arith::SIToFPOp::create(kb, loc, tileOf(kb.getF64Type()), v);
    Value factor =
        arith::ConstantOp::create(kb, loc, kb.getF64FloatAttr(scale));
    return arith::MulFOp::create(kb, loc, wide, pb.splat(factor, shape));
  };
  Value highPart = scaled(high, 0x1p-16);
  Value lowPart = scaled(low, 0x1p-40);
  Value sum = arith::AddFOp::create(kb, loc, highPart, lowPart);
  Value value = arith::TruncFOp::create(kb, loc, tileOf(kb.getF32Type()), sum);
  Value zero64 = arith::ConstantOp::create(kb, loc, kb.getI64IntegerAttr(0));
  Value flagged = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ne,
                                        outOfRange, pb.splat(zero64, shape));
  Value nan = pb.splatF32(std::numeric_limits<double>::quiet_NaN(), shape);
  value = arith::SelectOp::create(kb, loc, flagged, nan, value);
  Value zero = pb.splatF32(0.0, shape);
  value = arith::SelectOp::create(kb, loc, inside, value, zero);
  tile::ScatterAddOp::create(kb, loc, value, out, at);
  func::ReturnOp::create(kb, loc);
  b.setInsertionPointAfter(k.func);
}

LogicalResult lowerBackward(attn::AttentionOp spec, int64_t bm, int64_t bn,
                            int64_t bk, bool atomic, bool keysByQueries,
                            bool splitDkdv, bool captureGradients,
                            bool deterministicCaptureGradients,
                            bool splitMaskedBlocks, bool groupSteps,
                            bool orderedDq, bool branchMaskedSteps) {
  // A paged KV cache is an inference layout: gradients flow to dense K, V.
  if (spec.getPageSize())
    return spec.emitOpError()
           << "has a paged KV cache (page_size); the backward takes dense K "
              "and V";
  // Block-sparse: the tiles lie in one mask block each.
  std::optional<std::pair<int64_t, int64_t>> sparse = spec.getSparseBlocks();
  // Ordered dQ adds (atomic schedule): key block j adds its share of a Q
  // block after blocks 0 .. j-1 added theirs, which needs every Q block's
  // contributors to be a prefix of the key blocks: a band without a lower
  // bound, dense (no block lists, one sequence per batch entry).
  bool ordered = atomic && orderedDq;
  auto orderBand = spec.getKvBandAttr();
  if (ordered) {
    const char *why = orderBand && !orderBand.getLower().empty()
                          ? "a band with a lower bound (a window)"
                      : sparse           ? "block-sparse lists"
                      : spec.getVarlen() ? "a varlen batch"
                                         : nullptr;
    if (why)
      return spec.emitOpError()
             << "ordered dQ adds need each query block's key blocks to be a "
                "prefix of the keys; this variant has "
             << why << " (use the two-kernel schedule for determinism)";
  }
  // The order the adds take: the one in which the key blocks get to a Q
  // block anyway, so that none waits in a steady state. Under a band's
  // upper bound (causal) key block j + 1 starts bk / bm Q blocks after key
  // block j, so visiting Q blocks first to last it reaches each block
  // first: the turns go from the last key block Q block i sees, J(i), down
  // (turn J(i) - j), and the key blocks are numbered from the last
  // program id down, so that the ones a key block waits for are handed out
  // before it. Without one (plain), every key block starts at the same Q
  // block: they visit their Q blocks last to first, in key-block order
  // (turn j; key block j waits for j - 1, handed out before it).
  bool turnsDown = ordered && orderBand && !orderBand.getUpper().empty();
  bool lastToFirst = ordered && !turnsDown;
  if (sparse && (sparse->first % bm != 0 || sparse->second % bn != 0 ||
                 sparse->second % bk != 0))
    return spec.emitOpError()
           << "block_sparse blocks of " << sparse->first << " x "
           << sparse->second << " must be whole tiles of the backward's " << bm
           << " query rows and " << bn << " (dQ) and " << bk << " (dK/dV) keys";
  MLIRContext *ctx = spec.getContext();
  OpBuilder b(spec);
  b.setInsertionPointAfter(spec);
  Location loc = spec.getLoc();
  Type elt = spec.getElementType(), f32 = b.getF32Type();
  int64_t dqk = spec.getQkHeadDim(), dv = spec.getVHeadDim();
  int64_t group = spec.getGqaGroup();
  Layout layout{spec.getVarlen(), ctx};
  MemRefType tQK = layout.matrix(dqk, elt), tV = layout.matrix(dv, elt);
  MemRefType rows = layout.perRow();
  MemRefType gQK = layout.matrix(dqk, f32);
  using Role = KernelArgDecl::Role;
  // q, k, v, dout, the base-2 LSE, D: what the dQ and dK/dV kernels both
  // start with.
  auto commonArgs = [&]() -> SmallVector<KernelArgDecl> {
    return {{Role::Tensor, tQK, "q", layout.queryShape(b, dqk)},
            {Role::Tensor, tQK, "k", layout.keyShape(b, dqk)},
            {Role::Tensor, tV, "v", layout.keyShape(b, dv)},
            {Role::Tensor, tV, "dout", layout.queryShape(b, dv)},
            {Role::Workspace, rows, "lse_log2", layout.blockRowShape(b, bm)},
            {Role::Workspace, rows, "delta", layout.blockRowShape(b, bm)}};
  };
  // Kernels that recompute P read the dropout's generator state after
  // their outputs (before the captures).
  bool dropout = spec.hasDropout();
  // Gradients of the float captures the score_mod reads ("grad_<name>", f32,
  // the capture's shape), added to by the kernel that visits every (q, kv)
  // pair once with dS at hand: dQ's, or (atomic) the dK kernel.
  SmallVector<unsigned> gradCaptures;
  if (captureGradients)
    gradCaptures = differentiableCaptures(spec);
  SmallVector<attn::CaptureAttr> captureDecls = spec.getCaptureDecls();
  // Deterministic: the kernel adds into "grad_<name>_fixed", a zeroed i64
  // workspace of the capture's shape and one more dimension of 3 (the
  // fixed-point parts of tile.scatter_add), whose sums do not depend on
  // the order of the adds; a last kernel per capture converts it.
  auto fixedGradArg = [&](attn::CaptureAttr decl) {
    SmallVector<Attribute> shape = llvm::to_vector(decl.getDims().getValue());
    shape.push_back(tile::sizeConstant(b, 3));
    KernelArgDecl arg{
        Role::Workspace,
        global(ctx, decl.getType().getRank() + 1, 3, b.getI64Type()),
        ("grad_" + decl.getName().getValue() + "_fixed").str(), shape};
    arg.zeroFill = true;
    return arg;
  };
  auto gradArg = [&](attn::CaptureAttr decl) {
    return KernelArgDecl{Role::Tensor,
                         global(ctx, decl.getType().getRank(), -1, f32),
                         ("grad_" + decl.getName().getValue()).str(),
                         llvm::to_vector(decl.getDims().getValue())};
  };
  auto addGradArgs = [&](SmallVector<KernelArgDecl> &args) {
    SmallVector<std::pair<unsigned, unsigned>> positions; // capture, arg
    for (unsigned c : gradCaptures) {
      positions.push_back({c, unsigned(args.size())});
      args.push_back(deterministicCaptureGradients
                         ? fixedGradArg(captureDecls[c])
                         : gradArg(captureDecls[c]));
    }
    return positions;
  };

  // --- D = rowsum(dO ∘ O), the base-2 LSE -------------------------------
  {
    SmallVector<KernelArgDecl> args{
        {Role::Tensor, tV, "out", layout.queryShape(b, dv)},
        {Role::Tensor, tV, "dout", layout.queryShape(b, dv)},
        {Role::Workspace, rows, "delta", layout.blockRowShape(b, bm)},
        {Role::Tensor, rows, "lse", layout.rowShape(b)},
        {Role::Workspace, rows, "lse_log2", layout.blockRowShape(b, bm)}};
    if (atomic) // dQ, zeroed here for the atomic accumulation
      args.push_back(
          {Role::Workspace, gQK, "dq_accum", layout.accumShape(b, dqk)});
    unsigned offsetsArg = layout.addOffsets(args);
    Kernel k = makeKernel(b, spec, "_bwd_preprocess", args, "preprocess",
                          layout.queryGrid(b, bm), bm, bn, false);
    OpBuilder kb = OpBuilder::atBlockBegin(k.entry);
    ProgramBuilder pb{kb, loc};
    Program prog = Program::at(layout, kb, loc, k.entry, offsetsArg, false, bm);
    Value qb = prog.block, h = prog.head;
    Value q0 = pb.mul(qb, pb.index(bm));
    Value o = pb.load(prog.query(pb, k.entry->getArgument(0), h, dv, elt),
                      {bm, dv}, elt, {q0, pb.index(0)}, 0.0);
    Value dO = pb.load(prog.query(pb, k.entry->getArgument(1), h, dv, elt),
                       {bm, dv}, elt, {q0, pb.index(0)}, 0.0);
    // Operands built one statement at a time: C++ leaves the order of
    // argument evaluation open, and the IR should not depend on it.
    Value o32 = toF32(pb, o);
    Value dO32 = toF32(pb, dO);
    Value d = pb.reduce(tile::ReduceKind::sum, pb.mul(o32, dO32));
    tile::StoreOp::create(kb, loc, d, prog.rows(pb, k.entry->getArgument(2), h),
                          ValueRange{q0});
    // Once per query here instead of once per step in the kernels below.
    Value lseRef =
        lseReference(pb, prog.rows(pb, k.entry->getArgument(3), h), q0, bm);
    tile::StoreOp::create(kb, loc, lseRef,
                          prog.rows(pb, k.entry->getArgument(4), h),
                          ValueRange{q0});
    if (atomic)
      tile::StoreOp::create(
          kb, loc, pb.splatF32(0.0, {bm, dqk}),
          prog.accum(pb, k.entry->getArgument(5), h, dqk),
          ValueRange{q0, pb.index(0)});
    func::ReturnOp::create(kb, loc);
    b.setInsertionPointAfter(k.func);
  }

  // --- dQ: one Q block, all KV blocks ----------------------------------
  if (!atomic) {
    SmallVector<KernelArgDecl> args = commonArgs();
    args.push_back({Role::Tensor, tQK, "dq", layout.queryShape(b, dqk)});
    int64_t rngArg = -1;
    if (dropout) {
      rngArg = args.size();
      args.push_back(dropoutRngArg(b));
    }
    auto gradArgs = addGradArgs(args);
    unsigned listsArg =
        sparse ? addBlockListArgs(b, args, *sparse, /*byQueries=*/true) : 0;
    unsigned offsetsArg = layout.addOffsets(args);
    Kernel k = makeKernel(b, spec, "_bwd_dq", args, "dq",
                          layout.queryGrid(b, bm), bm, bn, true);
    OpBuilder kb = OpBuilder::atBlockBegin(k.entry);
    ProgramBuilder pb{kb, loc};
    Block *e = k.entry;
    Program prog = Program::at(layout, kb, loc, e, offsetsArg, false, bm);
    Value qb = prog.block, h = prog.head, bt = prog.batch;
    Value hkv = group > 1
                    ? Value(arith::DivUIOp::create(kb, loc, h, pb.index(group)))
                    : h;
    Value qd = prog.query(pb, e->getArgument(0), h, dqk, elt);
    Value kd = prog.key(pb, e->getArgument(1), hkv, dqk, elt);
    Value vd = prog.key(pb, e->getArgument(2), hkv, dv, elt);
    Value dOd = prog.query(pb, e->getArgument(3), h, dv, elt);
    Value lenQ = tile::DimOp::create(kb, loc, kb.getIndexType(), qd, 0);
    Value lenK = tile::DimOp::create(kb, loc, kb.getIndexType(), kd, 0);
    Value q0 = pb.mul(qb, pb.index(bm));
    BlockInputs in;
    in.q = pb.load(qd, {bm, dqk}, elt, {q0, pb.index(0)}, 0.0);
    in.dO = pb.load(dOd, {bm, dv}, elt, {q0, pb.index(0)}, 0.0);
    in.lseRef = pb.load(prog.rows(pb, e->getArgument(4), h), {bm}, f32, {q0},
                        kInf);
    in.d = pb.load(prog.rows(pb, e->getArgument(5), h), {bm}, f32, {q0}, 0.0);
    in.batch = bt;
    in.head = h;
    in.lenQ = lenQ;
    in.lenK = lenK;
    in.qStart = q0;
    if (rngArg >= 0)
      std::tie(in.seed, in.offset) = loadDropoutRng(pb, e->getArgument(rngArg));
    for (auto [capture, arg] : gradArgs)
      in.captureGrads.push_back({capture, e->getArgument(arg)});
    for (unsigned i = args.size(); i < e->getNumArguments(); ++i)
      in.captures.push_back(e->getArgument(i));
    SmallVector<int64_t> sShape{bm, bn};
    Value rowIota = pb.iota(0, sShape);
    in.qIdx = pb.add(rowIota, pb.splat(q0, sShape));
    Value init = pb.splatF32(0.0, {bm, dqk});
    // Only the KV blocks the mask band of these rows reaches, as in the
    // forward (the band's bounds are non-decreasing in q: the first row
    // has the lowest key, the last row the highest).
    auto band = spec.getKvBandAttr();
    Value diag = pb.sub(lenK, lenQ);
    Value qLast =
        pb.sub(pb.minIndex(pb.add(q0, pb.index(bm)), lenQ), pb.index(1));
    Value kvStart = pb.index(0), kvEnd = lenK;
    if (band) {
      kvStart =
          pb.floorTo(evalLower(pb, band.getLower(), q0, diag, pb.index(0)), bn);
      kvEnd = keysEndOfQueries(pb, band, q0, bm, lenQ, lenK);
    }
    // Varlen: a program past its sequence's queries visits no keys.
    if (layout.varlen)
      kvEnd = arith::SelectOp::create(
          kb, loc,
          arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::slt, q0, lenQ),
          kvEnd, kvStart);
    bool failedMod = false;
    // One KV block's share of dQ.
    auto dqStep = [&](ProgramBuilder &ib, Value j, Value acc, bool boundsOnly,
                      bool unmasked = false) -> Value {
      BlockInputs step = in;
      step.unmasked = unmasked;
      step.k = ib.load(kd, {bn, dqk}, elt, {j, ib.index(0)}, 0.0);
      step.v = ib.load(vd, {bn, dv}, elt, {j, ib.index(0)}, 0.0);
      Value colIota = ib.iota(1, sShape);
      step.kvIdx = ib.add(colIota, ib.splat(j, sShape));
      step.kvStart = j;
      step.boundsOnly = boundsOnly;
      auto pds = recompute(ib, spec, step, bm, bn);
      if (failed(pds)) {
        failedMod = true;
        return acc;
      }
      // dS is rounded to the input type for the tensor cores, as
      // FlashAttention-2 does; the sum over KV blocks stays f32.
      Value ds = toOperand(ib, pds->second, elt);
      return dot(ib, {bm, dqk}, ds, step.k, acc, false, false);
    };
    Value dqSum;
    if (sparse) {
      // The forward's lists: partial blocks masked, full ones past Lk.
      Value keyBlocks =
          arith::CeilDivSIOp::create(kb, loc, lenK, pb.index(sparse->second));
      SmallVector<Value> row{
          bt, h, arith::DivUIOp::create(kb, loc, q0, pb.index(sparse->first))};
      dqSum = buildPartialAndFullLoops(
          pb, e->getArguments().slice(listsArg, 4), row, sparse->second, bn,
          keyBlocks, ValueRange{init}, tile::attrs::kKvLoop,
          [&](ProgramBuilder &ib, Value j, ValueRange carried, bool full) {
            return SmallVector<Value>{dqStep(ib, j, carried[0], full)};
          })[0];
    } else {
      auto kvLoop = [&](Value from, Value to, Value acc, bool unmasked,
                        StringRef role) -> Value {
        auto loop = scf::ForOp::create(
            kb, loc, from, to, pb.index(bn), ValueRange{acc},
            [&](OpBuilder &lb, Location l, Value j, ValueRange iter) {
              ProgramBuilder ib{lb, l};
              scf::YieldOp::create(lb, l,
                                   dqStep(ib, j, iter[0], false, unmasked));
            });
        loop->setAttr(tile::attrs::kKvLoop, kb.getStringAttr(role));
        return loop.getResult(0);
      };
      if (band && band.getExact() && splitMaskedBlocks) {
        // As the forward: the KV blocks inside every row's band and inside
        // Lk need no mask (the first row has the lowest upper bound, the
        // last row the highest lower bound); only the blocks before and
        // after them are masked.
        Value fullLo = evalLower(pb, band.getLower(), qLast, diag, pb.index(0));
        Value fullHi = evalUpperExclusive(pb, band.getUpper(), q0, diag, lenK);
        bool lower = !band.getLower().empty();
        auto [fullStart, fullEnd] = fullBlocks(
            pb, kvStart, kvEnd, lower ? fullLo : Value(), fullHi, bn);
        Value acc = init;
        if (lower)
          acc = kvLoop(kvStart, fullStart, acc, false, "leading_partial");
        acc = kvLoop(fullStart, fullEnd, acc, true, "full");
        dqSum = kvLoop(fullEnd, kvEnd, acc, false, "trailing_partial");
      } else {
        dqSum = kvLoop(kvStart, kvEnd, init, false, "masked");
      }
    }
    if (failedMod)
      return failure();
    Value dq = pb.mul(dqSum, pb.splatF32(spec.getEffectiveScale(), {bm, dqk}));
    tile::StoreOp::create(kb, loc, toOperand(pb, dq, elt),
                          prog.query(pb, e->getArgument(6), h, dqk, elt),
                          ValueRange{q0, pb.index(0)});
    func::ReturnOp::create(kb, loc);
    b.setInsertionPointAfter(k.func);
  }

  // --- dK, dV: one KV block, every query head of its group, all Q blocks --
  // One kernel, or (split) a dK kernel and a dV kernel that each recompute
  // S: one product more, but each holds one accumulator (at D = 256 the two
  // fill a GPU thread's registers).
  auto keyKernel = [&](StringRef suffix, StringRef stage, bool withDk,
                       bool withDv) -> LogicalResult {
    SmallVector<KernelArgDecl> args = commonArgs();
    if (withDk)
      args.push_back({Role::Tensor, tQK, "dk", layout.keyShape(b, dqk)});
    if (withDv)
      args.push_back({Role::Tensor, tV, "dv", layout.keyShape(b, dv)});
    // The f32 dQ accumulator, added to atomically (where dS is computed).
    int64_t dqAccArg = -1;
    if (atomic && withDk) {
      dqAccArg = int64_t(args.size());
      args.push_back(
          {Role::Workspace, gQK, "dq_accum", layout.accumShape(b, dqk)});
    }
    // Ordered adds: a zeroed counter per (batch, head, Q block) of the key
    // blocks that have added their share (tgpu-ordered-adds waits on it).
    if (ordered && withDk) {
      KernelArgDecl turns{Role::Workspace,
                          global(ctx, 3, -1, b.getI32Type()),
                          "dq_turns",
                          {tile::sizeSymbol(b, "batch"),
                           tile::sizeSymbol(b, "heads"),
                           tile::sizeOp(b, "ceildiv",
                                        {tile::sizeSymbol(b, "seq_q"),
                                         tile::sizeConstant(b, bm)})}};
      turns.zeroFill = true;
      args.push_back(turns);
    }
    int64_t rngArg = -1;
    if (dropout) {
      rngArg = args.size();
      args.push_back(dropoutRngArg(b));
    }
    SmallVector<std::pair<unsigned, unsigned>> gradArgs;
    if (atomic && withDk)
      gradArgs = addGradArgs(args);
    unsigned listsArg =
        sparse ? addBlockListArgs(b, args, *sparse, /*byQueries=*/false) : 0;
    unsigned offsetsArg = layout.addOffsets(args);
    Kernel k = makeKernel(b, spec, suffix, args, stage, layout.keyGrid(b, bk),
                          bm, bk, true);
    // Dense key blocks of one sequence each: the band sets their work, for
    // tgpu-longest-first (varlen's axis 0 runs over every sequence, block
    // lists over run-time data). Not with a score_mod: the renumbered
    // program ids are values ptxas must keep (blockIdx it rereads), and
    // softcap's D = 128 dK/dV kernel, which spills already, then spilled
    // into its full loop (41 local loads a step against none) and ran 3-8%
    // slower on an H200; causal's and GQA causal's kept no local memory and
    // gained up to 7% and 16% (docs/performance.md).
    if (!layout.varlen && !sparse && !spec.hasScoreMod())
      if (std::optional<StringRef> cost = keyBlockCost(spec.getKvBandAttr()))
        k.func->setAttr(tile::attrs::kBlockCost, b.getStringAttr(*cost));
    // Keys by queries, every register tile's rows are this block's keys.
    if (keysByQueries)
      k.func->setAttr(tile::attrs::kTileRows, b.getI64IntegerAttr(bk));
    if (ordered && withDk) {
      SmallVector<NamedAttribute> order{
          b.getNamedAttr("accumulator", b.getStringAttr("dq_accum")),
          b.getNamedAttr("turns", b.getStringAttr("dq_turns")),
          b.getNamedAttr("rows", b.getI64IntegerAttr(bm))};
      // In arrival order the next key block gets to a Q block bk / bm
      // steps after this one: the turn may be passed on a step late.
      if (turnsDown)
        order.push_back(b.getNamedAttr("deferred_signal", b.getUnitAttr()));
      k.func->setAttr(tile::attrs::kOrderedAdds, b.getDictionaryAttr(order));
    }
    unsigned firstCapture = args.size();
    OpBuilder kb = OpBuilder::atBlockBegin(k.entry);
    ProgramBuilder pb{kb, loc};
    Block *e = k.entry;
    Program prog = Program::at(layout, kb, loc, e, offsetsArg, true, bk);
    Value kvb = prog.block, hkv = prog.head, bt = prog.batch;
    Value kd = prog.key(pb, e->getArgument(1), hkv, dqk, elt);
    Value vd = prog.key(pb, e->getArgument(2), hkv, dv, elt);
    Value lenK = tile::DimOp::create(kb, loc, kb.getIndexType(), kd, 0);
    if (turnsDown && withDk)
      kvb =
          pb.sub(pb.sub(arith::CeilDivSIOp::create(kb, loc, lenK, pb.index(bk)),
                        pb.index(1)),
                 kvb);
    Value kv0 = pb.mul(kvb, pb.index(bk));
    Value kTile = pb.load(kd, {bk, dqk}, elt, {kv0, pb.index(0)}, 0.0);
    Value vTile = pb.load(vd, {bk, dv}, elt, {kv0, pb.index(0)}, 0.0);
    // Keys by queries: this block's keys are the rows (else the columns).
    SmallVector<int64_t> sShape = keysByQueries ? SmallVector<int64_t>{bk, bm}
                                                : SmallVector<int64_t>{bm, bk};
    Value kvIota = pb.iota(keysByQueries ? 0 : 1, sShape);
    Value kvIdx = pb.add(kvIota, pb.splat(kv0, sShape));
    SmallVector<Value> captures;
    for (unsigned i = firstCapture; i < e->getNumArguments(); ++i)
      captures.push_back(e->getArgument(i));
    Value seed, offset;
    if (rngArg >= 0)
      std::tie(seed, offset) = loadDropoutRng(pb, e->getArgument(rngArg));
    Value dkInit = pb.splatF32(0.0, {bk, dqk});
    Value dvInit = pb.splatF32(0.0, {bk, dv});
    bool failedMod = false;
    // One query head's views: Q and dO, LSE and D (and the queries' count).
    struct HeadViews {
      Value h, qd, dO, lse, d, lenQ;
    };
    auto viewsOf = [&](ProgramBuilder &p, Value h) {
      HeadViews hv{h,
                   prog.query(p, e->getArgument(0), h, dqk, elt),
                   prog.query(p, e->getArgument(3), h, dv, elt),
                   prog.rows(p, e->getArgument(4), h),
                   prog.rows(p, e->getArgument(5), h),
                   {}};
      hv.lenQ = tile::DimOp::create(p.b, p.loc, p.b.getIndexType(), hv.qd, 0);
      return hv;
    };
    // One Q block's share of dK and dV (and of dQ, atomic).
    auto qStep = [&](ProgramBuilder &ip, const HeadViews &hv, Value i,
                     ValueRange inner, bool boundsOnly, bool unmasked = false,
                     Value maskWhen = Value()) -> SmallVector<Value> {
      OpBuilder &qb = ip.b;
      Location l2 = ip.loc;
      BlockInputs in;
      in.q = ip.load(hv.qd, {bm, dqk}, elt, {i, ip.index(0)}, 0.0);
      in.dO = ip.load(hv.dO, {bm, dv}, elt, {i, ip.index(0)}, 0.0);
      in.k = kTile;
      in.v = vTile;
      in.lseRef = ip.load(hv.lse, {bm}, ip.b.getF32Type(), {i}, kInf);
      in.d = ip.load(hv.d, {bm}, ip.b.getF32Type(), {i}, 0.0);
      Value qIota = ip.iota(keysByQueries ? 1 : 0, sShape);
      in.qIdx = ip.add(qIota, ip.splat(i, sShape));
      in.kvIdx = kvIdx;
      in.qStart = i;
      in.kvStart = kv0;
      in.seed = seed;
      in.offset = offset;
      for (auto [capture, arg] : gradArgs)
        in.captureGrads.push_back({capture, e->getArgument(arg)});
      in.keysByQueries = keysByQueries;
      in.boundsOnly = boundsOnly;
      in.unmasked = unmasked;
      in.maskWhen = maskWhen;
      in.batch = bt;
      in.head = hv.h;
      in.lenQ = hv.lenQ;
      in.lenK = lenK;
      in.captures = captures;
      auto pds = recompute(ip, spec, in, bm, bk);
      Value dk = inner[0], dvAcc = inner[1];
      if (failed(pds)) {
        failedMod = true;
        return {dk, dvAcc};
      }
      // P and dS (or Pᵀ and dSᵀ) enter the tensor cores in the input
      // type (FlashAttention-2's rounding); the sums stay f32. Queries
      // by keys, dV and dK need them transposed.
      bool transpose = !keysByQueries;
      Value p = withDv ? toOperand(ip, pds->first, elt) : Value();
      Value ds = withDk ? toOperand(ip, pds->second, elt) : Value();
      if (withDv)
        dvAcc = dot(ip, {bk, dv}, p, in.dO, dvAcc, transpose, false);
      // This KV block's share of dQ for these query rows (atomic),
      // unscaled: the convert kernel scales the sum once instead of
      // every share. Its product comes before dK's and its add after:
      // on wgmma, dK's product (issued async, tgpu-overlap-products)
      // then runs while the share is added, and the dS stored for
      // dSᵀ K is read before dK holds its registers in flight. (A GPU
      // schedule may split it into column chunks to keep registers
      // free, each at the add: convert-tile-to-tgpu's
      // atomic-product-columns.)
      Value dqPart;
      if (dqAccArg >= 0)
        dqPart = dot(ip, {bm, dqk}, ds, kTile, Value(), keysByQueries, false);
      if (withDk)
        dk = dot(ip, {bk, dqk}, ds, in.q, dk, transpose, false);
      if (dqPart) {
        Value dqDesc = prog.accum(ip, e->getArgument(dqAccArg), hv.h, dqk);
        // Ordered: this key block's place among those adding to the Q
        // block (see turnsDown above).
        Value turn;
        if (turnsDown) {
          Value keysEnd = keysEndOfQueries(ip, orderBand, i, bm, hv.lenQ, lenK);
          Value lastBlock =
              ip.sub(arith::CeilDivSIOp::create(qb, l2, keysEnd, ip.index(bk)),
                     ip.index(1));
          turn = ip.sub(lastBlock, kvb);
        } else if (ordered) {
          turn = kvb;
        }
        tile::AtomicAddOp::create(qb, l2, dqPart, dqDesc,
                                  ValueRange{i, ip.index(0)}, turn);
      }
      return {dk, dvAcc};
    };
    // The Q blocks whose band reaches this KV block (lenQ queries), split
    // where the band is exact into the blocks that need no mask and the
    // partial ones before and after them.
    struct QRange {
      Value from, to;
      bool unmasked;
      StringRef role;
      /// Masked in a branch from this query on (null: per `unmasked`).
      Value maskedFrom = Value();
    };
    // A step of range `r` at query `i`: its mask's branch condition.
    auto maskWhenAt = [&](ProgramBuilder &ip, const QRange &r,
                          Value i) -> Value {
      if (!r.maskedFrom)
        return Value();
      return arith::CmpIOp::create(ip.b, ip.loc, arith::CmpIPredicate::sge, i,
                                   r.maskedFrom);
    };
    auto qRanges = [&](ProgramBuilder &hp, Value lenQ) {
      OpBuilder &hb = hp.b;
      Location l = hp.loc;
      Value kvLast =
          hp.sub(hp.minIndex(hp.add(kv0, hp.index(bk)), lenK), hp.index(1));
      std::pair<Value, Value> range = queriesReachingKeys(
          hp, spec.getKvBandAttr(), kv0, kvLast, hp.sub(lenK, lenQ), lenQ);
      Value qFirst = range.first, qEnd = range.second;
      Value qStart = hp.floorTo(qFirst, bm);
      // No query at all: an empty loop (not the block below qFirst);
      // varlen, also a program past its sequence's keys.
      Value none =
          arith::CmpIOp::create(hb, l, arith::CmpIPredicate::sge, qFirst, qEnd);
      if (layout.varlen)
        none = arith::OrIOp::create(
            hb, l, none,
            arith::CmpIOp::create(hb, l, arith::CmpIPredicate::sge, kv0, lenK));
      qEnd = arith::SelectOp::create(hb, l, none, qStart, qEnd);
      SmallVector<QRange> ranges;
      auto band = spec.getKvBandAttr();
      if (!band || !band.getExact() || !splitMaskedBlocks) {
        ranges.push_back({qStart, qEnd, false, "masked"});
        return ranges;
      }
      // The Q blocks whose rows all see every key of this block (and lie
      // inside Lq) need no mask; a block reaching past Lk has none.
      std::pair<Value, Value> all =
          queriesSeeingAllKeys(hp, band, kv0, kvLast, hp.sub(lenK, lenQ), lenQ);
      Value inside = arith::CmpIOp::create(hb, l, arith::CmpIPredicate::sle,
                                           hp.add(kv0, hp.index(bk)), lenK);
      Value allEnd =
          arith::SelectOp::create(hb, l, inside, all.second, hp.index(0));
      // Without an upper bound every query from qStart on sees the block's
      // last key: no leading partial loop.
      bool upper = !band.getUpper().empty();
      auto [fullStart, fullEnd] =
          fullBlocks(hp, qStart, qEnd, upper ? all.first : Value(),
                     hp.minIndex(allEnd, lenQ), bm);
      // Without band bounds, only the last Q block (past Lq) or a key
      // block reaching past Lk is partial: with branch-masked-steps the
      // full loop runs those steps too, masked in a branch, as the
      // forward's (a score_mod's keep their loop).
      if (branchMaskedSteps && !upper && band.getLower().empty() &&
          !spec.hasScoreMod()) {
        ranges.push_back(
            {fullStart, qEnd, false, "full_then_partial", fullEnd});
        return ranges;
      }
      if (upper)
        ranges.push_back({qStart, fullStart, false, "leading_partial"});
      ranges.push_back({fullStart, fullEnd, true, "full"});
      ranges.push_back({fullEnd, qEnd, false, "trailing_partial"});
      return ranges;
    };
    // Ordered adds without an upper bound: each key block visits its Q
    // blocks last to first (see lastToFirst above).
    // (The split dV kernel adds nothing: its own order.)
    bool reverseQ = lastToFirst && withDk;
    auto inOrder = [&](SmallVector<QRange> ranges) {
      if (reverseQ)
        std::reverse(ranges.begin(), ranges.end());
      return ranges;
    };
    // The range's first row plus its last block's: row i of the loop's
    // step at i mirrors to lastPlusFirst - i.
    auto lastPlusFirst = [&](ProgramBuilder &hp, const QRange &r) {
      Value blocks = arith::CeilDivSIOp::create(
          hp.b, hp.loc, hp.maxIndex(hp.sub(r.to, r.from), hp.index(0)),
          hp.index(bm));
      Value last = hp.add(
          r.from, hp.mul(hp.maxIndex(hp.sub(blocks, hp.index(1)), hp.index(0)),
                         hp.index(bm)));
      return hp.add(last, r.from);
    };
    SmallVector<Value> sums;
    // (A varlen batch keeps the loop over heads: its views are ragged, which
    // the producer does not take per step, and the grouped loops would each
    // stage Q and dO in buffers of their own.)
    if (sparse || group == 1 || !groupSteps || layout.varlen) {
      // One head (or block lists per head): its Q blocks' loops.
      auto heads = scf::ForOp::create(
          kb, loc, pb.index(0), pb.index(group), pb.index(1),
          ValueRange{dkInit, dvInit},
          [&](OpBuilder &hb, Location l, Value g, ValueRange outer) {
            ProgramBuilder hp{hb, l};
            Value first = hp.mul(hkv, hp.index(group));
            HeadViews hv = viewsOf(hp, hp.add(first, g));
            if (sparse) {
              // The transposed lists: the Q blocks that list this KV block,
              // partial ones masked, full ones only past Lk.
              Value queryBlocks = arith::CeilDivSIOp::create(
                  hb, l, hv.lenQ, hp.index(sparse->first));
              SmallVector<Value> row{
                  bt, hv.h,
                  arith::DivUIOp::create(hb, l, kv0, hp.index(sparse->second))};
              SmallVector<Value> acc = buildPartialAndFullLoops(
                  hp, e->getArguments().slice(listsArg, 4), row, sparse->first,
                  bm, queryBlocks, outer, tile::attrs::kQLoop,
                  [&](ProgramBuilder &ip, Value i, ValueRange carried,
                      bool full) { return qStep(ip, hv, i, carried, full); });
              scf::YieldOp::create(hb, l, acc);
              return;
            }
            SmallVector<Value> acc(outer);
            for (const QRange &r : inOrder(qRanges(hp, hv.lenQ))) {
              Value mirror = reverseQ ? lastPlusFirst(hp, r) : Value();
              auto qs = scf::ForOp::create(
                  hb, l, r.from, r.to, hp.index(bm), acc,
                  [&](OpBuilder &qb, Location l2, Value i, ValueRange inner) {
                    ProgramBuilder ip{qb, l2};
                    if (mirror)
                      i = ip.sub(mirror, i);
                    scf::YieldOp::create(qb, l2,
                                         qStep(ip, hv, i, inner, false,
                                               r.unmasked,
                                               maskWhenAt(ip, r, i)));
                  });
              qs->setAttr(tile::attrs::kQLoop, hb.getStringAttr(r.role));
              acc.assign(qs.getResults().begin(), qs.getResults().end());
            }
            scf::YieldOp::create(hb, l, acc);
          });
      sums.assign(heads.getResults().begin(), heads.getResults().end());
    } else {
      // GQA: the query heads hkv*G .. hkv*G+G-1 all read this KV head, so
      // their contributions are summed here (no atomics). Each range's Q
      // blocks of every head in one loop (head-major; the ranges are the
      // same for every head of a batch): the copies of Q and dO then sit in
      // loops at the kernel's top level, which tgpu-warp-specialize feeds
      // from a producer warpgroup (nested in a loop over the heads they
      // kept cp.async by every warp).
      Value first = pb.mul(hkv, pb.index(group));
      // Every head of a batch has the same queries.
      Value lenQ = tile::DimOp::create(
          kb, loc, kb.getIndexType(),
          prog.query(pb, e->getArgument(0), first, dqk, elt), 0);
      sums = {dkInit, dvInit};
      for (const QRange &r : inOrder(qRanges(pb, lenQ))) {
        // Q blocks per head; an empty range (to <= from) gives no steps, so
        // the step's division by it never runs with 0.
        Value perHead = arith::CeilDivSIOp::create(
            kb, loc, pb.maxIndex(pb.sub(r.to, r.from), pb.index(0)),
            pb.index(bm));
        Value steps = pb.mul(perHead, pb.index(group));
        auto qs = scf::ForOp::create(
            kb, loc, pb.index(0), steps, pb.index(1), sums,
            [&](OpBuilder &qb, Location l2, Value j, ValueRange inner) {
              ProgramBuilder ip{qb, l2};
              Value g = arith::DivUIOp::create(qb, l2, j, perHead);
              Value block = arith::RemUIOp::create(qb, l2, j, perHead);
              if (reverseQ)
                block = ip.sub(ip.sub(perHead, ip.index(1)), block);
              Value i = ip.add(r.from, ip.mul(block, ip.index(bm)));
              HeadViews hv = viewsOf(ip, ip.add(first, g));
              scf::YieldOp::create(qb, l2,
                                   qStep(ip, hv, i, inner, false, r.unmasked,
                                         maskWhenAt(ip, r, i)));
            });
        qs->setAttr(tile::attrs::kQLoop, kb.getStringAttr(r.role));
        sums.assign(qs.getResults().begin(), qs.getResults().end());
      }
    }
    if (failedMod)
      return failure();
    unsigned out = 6; // dk, then dv
    if (withDk) {
      Value dk =
          pb.mul(sums[0], pb.splatF32(spec.getEffectiveScale(), {bk, dqk}));
      tile::StoreOp::create(kb, loc, toOperand(pb, dk, elt),
                            prog.key(pb, e->getArgument(out++), hkv, dqk, elt),
                            ValueRange{kv0, pb.index(0)});
    }
    if (withDv) {
      Value dvSum = sums[1];
      if (dropout) // the kept weights' 1 / (1 - p), once
        dvSum = pb.mul(dvSum, pb.splatF32(spec.getDropoutScale(), {bk, dv}));
      tile::StoreOp::create(kb, loc, toOperand(pb, dvSum, elt),
                            prog.key(pb, e->getArgument(out), hkv, dv, elt),
                            ValueRange{kv0, pb.index(0)});
    }
    func::ReturnOp::create(kb, loc);
    b.setInsertionPointAfter(k.func);
    return success();
  };
  if (splitDkdv) {
    if (failed(keyKernel("_bwd_dk", "dk", true, false)) ||
        failed(keyKernel("_bwd_dv", "dv", false, true)))
      return failure();
  } else if (failed(keyKernel("_bwd_dkdv", "dkdv", true, true))) {
    return failure();
  }

  // --- atomic schedule: the f32 dQ accumulator -> dq in the input type ----
  if (atomic) {
    SmallVector<KernelArgDecl> args{
        {Role::Workspace, gQK, "dq_accum", layout.accumShape(b, dqk)},
        {Role::Tensor, tQK, "dq", layout.queryShape(b, dqk)}};
    unsigned offsetsArg = layout.addOffsets(args);
    Kernel k = makeKernel(b, spec, "_bwd_dq_convert", args, "convert",
                          layout.queryGrid(b, bm), bm, bn, false);
    OpBuilder kb = OpBuilder::atBlockBegin(k.entry);
    ProgramBuilder pb{kb, loc};
    Program prog = Program::at(layout, kb, loc, k.entry, offsetsArg, false, bm);
    Value qb = prog.block, h = prog.head;
    Value q0 = pb.mul(qb, pb.index(bm));
    Value acc = pb.load(prog.accum(pb, k.entry->getArgument(0), h, dqk),
                        {bm, dqk}, f32, {q0, pb.index(0)}, 0.0);
    // The shares were added unscaled (dS K per KV block).
    acc = pb.mul(acc, pb.splatF32(spec.getEffectiveScale(), {bm, dqk}));
    tile::StoreOp::create(kb, loc, toOperand(pb, acc, elt),
                          prog.query(pb, k.entry->getArgument(1), h, dqk, elt),
                          ValueRange{q0, pb.index(0)});
    func::ReturnOp::create(kb, loc);
    b.setInsertionPointAfter(k.func);
  }

  // --- deterministic capture gradients: fixed point -> f32 ---------------
  if (deterministicCaptureGradients)
    for (unsigned c : gradCaptures)
      buildFixedPointGradient(b, spec, fixedGradArg(captureDecls[c]),
                              gradArg(captureDecls[c]));
  return success();
}

struct ConvertAttnToTileBackward
    : public kiln::impl::ConvertAttnToTileBackwardBase<
          ConvertAttnToTileBackward> {
  using Base::Base;
  void runOnOperation() override {
    if (blockM < 0 || blockN < 0 || keyBlock < 0) {
      getOperation().emitError(
          "block-m, block-n and key-block must not be negative");
      return signalPassFailure();
    }
    SmallVector<attn::AttentionOp> specs;
    getOperation().walk([&](attn::AttentionOp op) { specs.push_back(op); });
    if (schedule != "two-kernel" && schedule != "atomic" &&
        schedule != "auto" && schedule != "deterministic") {
      getOperation().emitError() << "schedule must be two-kernel, atomic, "
                                    "auto or deterministic, got '"
                                 << schedule << "'";
      return signalPassFailure();
    }
    for (attn::AttentionOp spec : specs) {
      if (spec->hasAttr(attn::attrs::kBuildBlockMask)) {
        spec.emitOpError() << "builds a block mask's lists (a program with "
                              "no backward)";
        return signalPassFailure();
      }
      std::pair<int64_t, int64_t> tiles = chosenTiles(spec, blockM, blockN);
      // dK and dV in two kernels where the head dims call for it.
      bool split = splitDkdvAbove >= 0 &&
                   int64_t(spec.getQkHeadDim() + spec.getVHeadDim()) >
                       splitDkdvAbove;
      // auto: the atomic schedule where attn-choose-tiles found it the
      // faster one for these head dims, unless the capture gradients are
      // to be the same in every run (then dQ should be too), or the variant
      // is one where it did not measure faster (docs/performance.md): GQA
      // below D = 64 (not measured; at D = 64, since the dK/dV kernels'
      // key blocks go out longest first in wave chunks, forward + backward
      // 0.91x the two-kernel schedule's time at N = 16k, 0.93 at 8k,
      // 0.95-0.99 at 4k, 1.03 at 2k on H200s; at D = 128 0.80-0.92x the
      // 64-key two-kernel schedule, whose dK/dV kernel spills there,
      // 0.90-0.97x the 128-key one) or without the producer it was
      // measured with, a varlen
      // batch (the packed dQ shares go by red.global: 0.76x), and a band
      // with a lower bound (a sliding window: each key block meets a few
      // query blocks, 0.82x); and only in the form measured: keys by
      // queries, one dK/dV kernel, at the chosen keys (with an ablation
      // flag that changes these, two kernels).
      auto atomicKeys =
          spec->getAttrOfType<IntegerAttr>(attn::attrs::kAtomicKeyBlock);
      auto band = spec.getKvBandAttr();
      bool window = band && !band.getLower().empty();
      // A producer warpgroup feeds the kernels (GQA's dK/dV kernel only
      // with its group's steps in top-level loops).
      bool fed = producer && (spec.getGqaGroup() == 1 ||
                              (groupSteps && !spec.getSparseBlocks()));
      bool measuredSlower =
          (spec.getGqaGroup() > 1 &&
           (std::max(spec.getQkHeadDim(), spec.getVHeadDim()) < 64 || !fed)) ||
          spec.getVarlen() || window;
      bool measuredForm =
          atomicKeys && atomicKeys.getInt() > 0 && keysByQueries && !split &&
          (keyBlock == 0 || int64_t(keyBlock) == atomicKeys.getInt());
      bool autoAtomic =
          measuredForm && !deterministicCaptureGradients && !measuredSlower;
      // deterministic: the atomic schedule with ordered dQ adds where it
      // measured no slower than two kernels (docs/performance.md): at head
      // dims of 128 and more, dense, its adds the producer's. Over the
      // default's forward + backward on an H200: causal 1.04-1.12x (turns
      // in arrival order, passed on a step late) against two kernels'
      // 1.09-1.25x, softcap 1.09-1.13x against 1.17-1.21x (two kernels
      // compute the mod twice), plain 1.15-1.17x against 1.13-1.18x. At
      // D = 64 (causal 1.24-1.29x, plain 1.45-1.51x, against 1.01-1.07x)
      // two kernels are faster.
      bool orderedFaster =
          autoAtomic && fed && spec.getGqaGroup() == 1 &&
          !spec.getSparseBlocks() &&
          std::max(spec.getQkHeadDim(), spec.getVHeadDim()) >= 128;
      bool atomic = schedule == "atomic" ||
                    (schedule == "auto" && autoAtomic) ||
                    (schedule == "deterministic" && orderedFaster);
      bool ordered = orderedDq || (schedule == "deterministic" && atomic);
      // Keys per dK/dV program: block-n, or key-block for one dK/dV
      // kernel (the split dK and dV kernels keep block-n), or the atomic
      // schedule's chosen keys where auto picked it, or the two-kernel
      // schedule's where attn-choose-tiles marked them, in the form
      // measured (keys by queries, fed by the producer; not a window,
      // measured slower, nor a varlen batch, not measured).
      int64_t keys = keyBlock > 0 && !split ? int64_t(keyBlock) : tiles.second;
      if (schedule != "atomic" && atomic && keyBlock == 0 && !split)
        keys = atomicKeys.getInt();
      auto twoKernelKeys =
          spec->getAttrOfType<IntegerAttr>(attn::attrs::kTwoKernelKeyBlock);
      if (!atomic && twoKernelKeys && twoKernelKeys.getInt() > 0 &&
          keyBlock == 0 && !split && keysByQueries && fed && !window &&
          !spec.getVarlen())
        keys = twoKernelKeys.getInt();
      // (A block-sparse variant's dK/dV tile lies in one mask block: a
      // key-block that does not divide it falls back to block-n.)
      if (auto blocks = spec.getSparseBlocks(); blocks && blocks->second % keys)
        keys = tiles.second;
      // Query rows per step (and per program of the other kernels): the
      // atomic schedule's where attn-choose-tiles marked them, taken as its
      // keys are (auto picked the schedule, at its keys), in the form
      // measured (no block-m given, dQ's adds unordered).
      auto atomicQueries =
          spec->getAttrOfType<IntegerAttr>(attn::attrs::kAtomicQueryBlock);
      if (atomicQueries && atomicQueries.getInt() > 0 && blockM == 0 &&
          schedule != "atomic" && atomic && !ordered && keyBlock == 0 &&
          !split && keys == atomicKeys.getInt())
        tiles.first = atomicQueries.getInt();
      if (failed(lowerBackward(
              spec, tiles.first, tiles.second, keys, atomic, keysByQueries,
              split, captureGradients || deterministicCaptureGradients,
              deterministicCaptureGradients, splitMaskedBlocks, groupSteps,
              ordered, branchMaskedSteps)))
        return signalPassFailure();
    }
  }
};

} // namespace
