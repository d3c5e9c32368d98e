//===- AttnToTile.cpp - attn.attention -> FlashAttention-2 tile program ---===//
//
// One program instance owns a BLOCK_M x D block of queries of one (batch,
// head) and streams over KV blocks, keeping the online-softmax state (row max
// m, row sum l, accumulator acc) in registers/SRAM — never an N x N buffer.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/AttnToTile/BandBounds.h"
#include "compiler/Conversion/AttnToTile/BlockLists.h"
#include "compiler/Conversion/AttnToTile/BlockMaskBuilder.h"
#include "compiler/Conversion/AttnToTile/Dropout.h"
#include "compiler/Conversion/AttnToTile/KernelSignature.h"
#include "compiler/Conversion/AttnToTile/ModVectorizer.h"
#include "compiler/Conversion/AttnToTile/ProgramBuilder.h"
#include "compiler/Conversion/AttnToTile/ScoreRange.h"
#include "compiler/Conversion/AttnToTile/VisibleBelow.h"
#include "compiler/Conversion/Passes.h"
#include "dialects/Attn/IR/AttnAttrNames.h"
#include "dialects/Tile/IR/TileAttrNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <limits>

namespace kiln {
#define GEN_PASS_DEF_CONVERTATTNTOTILE
#include "compiler/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Everything one KV-block step needs that does not change across steps.
struct ForwardContext {
  attn::AttentionOp spec;
  int64_t blockM, blockN, headDimQk, headDimV;
  Type elementType;
  Value q;       // BLOCK_M x D_qk tile of queries
  Value qIdx;    // BLOCK_M x BLOCK_N query positions
  Value modQIdx; // qIdx as the mods see it (clamped when they read captures)
  /// The mods see key positions clamped into the sequence (a capture read
  /// at a key position).
  bool clampKv = false;
  Value lenQ;    // Lq
  Value batch, head;
  Value kDesc, vDesc;
  Value lenK;       // Lk
  Value diagOffset; // Lk - Lq, for bottom-right causal bounds
  Value rowStart;   // the first query of the block
  Value seed, offset; // dropout's generator state (null without dropout)
  SmallVector<Value> captures;
  /// A bound (log2 units) of every score the score_mod returns, used as every
  /// row's maximum (`static-max`); none: the running row maximum.
  std::optional<double> staticMax;
};

struct SoftmaxState {
  Value m, l, acc;
};

/// What a KV step masks per element: nothing (a block the band or a block
/// mask proves visible, all keys below Lk), only keys past Lk (a block-sparse
/// full block, which may reach past the last key), or everything: keys past
/// Lk, the causal diagonal and the mask_mod.
enum class StepMask { None, Bounds, All };

/// One KV block of the online softmax, masked per `mask`; with `maskWhen`
/// (an i1), the mask is applied in a branch taken where it holds (a loop
/// whose last step alone is partial: one copy of the step to compile).
SoftmaxState emitKVStep(ProgramBuilder &pb, ForwardContext &ctx, Value kvStart,
                        SoftmaxState state, StepMask mask,
                        Value maskWhen = Value()) {
  bool masked = mask != StepMask::None;
  OpBuilder &b = pb.b;
  Location loc = pb.loc;
  SmallVector<int64_t> sShape{ctx.blockM, ctx.blockN};
  Type f32 = b.getF32Type();

  Value k = pb.load(ctx.kDesc, {ctx.blockN, ctx.headDimQk}, ctx.elementType,
                    {kvStart, pb.index(0)}, 0.0);
  Value s = tile::DotOp::create(b, loc, RankedTensorType::get(sShape, f32),
                                ctx.q, k, /*acc=*/Value(),
                                /*transpose_lhs=*/false,
                                /*transpose_rhs=*/true);
  // Dropout's bits depend on positions only: drawn right after the product
  // is issued, they can run under it (tgpu-overlap-products waits for S at
  // its first use).
  Value kept;
  if (ctx.seed)
    kept = dropoutKeep(pb, ctx.spec, sShape, ctx.seed, ctx.offset, ctx.batch,
                       ctx.head, ctx.rowStart, kvStart,
                       /*keysByQueries=*/false);

  // A mask in a branch makes its own key indices unless the mods need them
  // on every step.
  Value kvIdx, modKvIdx;
  if ((masked && !maskWhen) || ctx.spec.hasScoreMod() || ctx.spec.hasMaskMod())
    modKvIdx = kvIdx = pb.add(pb.iota(1, sShape), pb.splat(kvStart, sShape));
  // Mods also run on the padding rows and keys of edge blocks, whose results
  // are masked or never stored; a mod indexing a captured tensor must still
  // not read past it there, so it sees positions clamped to the last one.
  if (kvIdx && ctx.clampKv)
    modKvIdx =
        pb.minIndex(kvIdx, pb.splat(pb.sub(ctx.lenK, pb.index(1)), sShape));

  // The keep mask; in a branch, the indices it makes stay local to it.
  auto keepOf = [&](ProgramBuilder &mb) -> Value {
    Value idx = kvIdx, modIdx = modKvIdx;
    if (!idx)
      modIdx = idx = mb.add(mb.iota(1, sShape), mb.splat(kvStart, sShape));
    if (mask == StepMask::Bounds)
      return arith::CmpIOp::create(mb.b, mb.loc, arith::CmpIPredicate::slt, idx,
                                   mb.splat(ctx.lenK, sShape));
    return buildKeepMask(mb, ctx.spec, ctx.qIdx, idx, ctx.lenK, ctx.diagOffset,
                         ctx.batch, ctx.head, ctx.modQIdx, modIdx,
                         ctx.captures);
  };
  // The mask commutes with the scale (masked scores are -inf either way):
  // applied to the product itself, the branch leaves the scale next to the
  // row maxima (tile-scale-after-max), as in a loop of masked steps, where
  // the select comes first too. (Only without a score_mod: the mask would
  // otherwise come after the mod, which lowerAttention does not branch.)
  assert((!maskWhen || !ctx.spec.hasScoreMod()) &&
         "a masked step's branch with a score_mod");
  if (masked && maskWhen)
    s = maskScoresWhen(pb, maskWhen, s, keepOf);

  // Base-2 softmax: exp(x) = exp2(x * log2(e)). Without a score_mod the scale
  // and log2(e) fold into one multiply; a score_mod must see the natural
  // scaled score, so log2(e) is applied after it.
  double scale = ctx.spec.getEffectiveScale();
  if (ctx.spec.hasScoreMod()) {
    s = pb.mul(s, pb.splatF32(scale, sShape));
    SmallVector<Value> args{s, ctx.batch, ctx.head, ctx.modQIdx, modKvIdx};
    args.append(ctx.captures);
    s = inlineModOverTile(b, loc, ctx.spec.getScoreMod(), args, sShape);
    s = pb.mul(s, pb.splatF32(M_LOG2E, sShape));
  } else {
    s = pb.mul(s, pb.splatF32(scale * M_LOG2E, sShape));
  }

  if (masked && !maskWhen) {
    Value keep = keepOf(pb);
    double negInf = -std::numeric_limits<double>::infinity();
    s = arith::SelectOp::create(b, loc, keep, s, pb.splatF32(negInf, sShape));
  }

  int64_t rows = ctx.blockM;
  // With a static maximum the reference never moves: no row maximum, no
  // correction factor, no rescaling of the accumulator.
  Value mNew = state.m, mRef = state.m, alpha;
  if (!ctx.staticMax) {
    mNew = arith::MaximumFOp::create(b, loc, state.m,
                                     pb.reduce(tile::ReduceKind::max, s));
    // A row with every key masked so far has m = -inf; subtracting it would
    // be -inf - (-inf) = NaN, so such rows use 0 as the reference (every p is
    // 0).
    Value mIsNegInf = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ, mNew,
        pb.splatF32(-std::numeric_limits<double>::infinity(), {rows}));
    mRef = arith::SelectOp::create(b, loc, mIsNegInf, pb.splatF32(0.0, {rows}),
                                   mNew);
  }
  Value p = math::Exp2Op::create(b, loc,
                                 pb.sub(s, pb.rowBroadcast(mRef, ctx.blockN)));
  if (!ctx.staticMax)
    alpha = math::Exp2Op::create(b, loc, pb.sub(state.m, mRef));
  Value l = alpha ? pb.add(pb.mul(state.l, alpha),
                           pb.reduce(tile::ReduceKind::sum, p))
                  : pb.add(state.l, pb.reduce(tile::ReduceKind::sum, p));
  // Dropout zeroes the dropped weights after the softmax's sum (the row sum
  // normalises the undropped P); the kept ones' 1 / (1 - p) is applied once,
  // in the epilogue.
  if (kept)
    p = arith::SelectOp::create(b, loc, kept, p, pb.splatF32(0.0, sShape));

  // P is rounded to the input precision before P*V, as tensor cores need.
  Value pLow = arith::TruncFOp::create(
      b, loc, RankedTensorType::get(sShape, ctx.elementType), p);
  Value v = pb.load(ctx.vDesc, {ctx.blockN, ctx.headDimV}, ctx.elementType,
                    {kvStart, pb.index(0)}, 0.0);
  Value accScaled =
      alpha ? pb.mul(state.acc, pb.rowBroadcast(alpha, ctx.headDimV))
            : state.acc;
  Value acc = tile::DotOp::create(b, loc, state.acc.getType(), pLow, v,
                                  accScaled, /*transpose_lhs=*/false,
                                  /*transpose_rhs=*/false);
  return {mNew, l, acc};
}

/// The KV steps from `lower` to `upper`, masked or not; with `maskedFrom`,
/// masked in a branch from that key on (the steps before it unmasked).
SoftmaxState emitKVLoop(ProgramBuilder &pb, ForwardContext &ctx, Value lower,
                        Value upper, SoftmaxState init, bool masked,
                        StringRef role, Value maskedFrom = Value()) {
  auto loop = scf::ForOp::create(
      pb.b, pb.loc, lower, upper, pb.index(ctx.blockN),
      ValueRange{init.m, init.l, init.acc},
      [&](OpBuilder &nested, Location loc, Value j, ValueRange iterArgs) {
        ProgramBuilder inner{nested, loc};
        Value maskWhen;
        if (maskedFrom)
          maskWhen = arith::CmpIOp::create(
              nested, loc, arith::CmpIPredicate::sge, j, maskedFrom);
        SoftmaxState next =
            emitKVStep(inner, ctx, j, {iterArgs[0], iterArgs[1], iterArgs[2]},
                       masked ? StepMask::All : StepMask::None, maskWhen);
        scf::YieldOp::create(nested, loc, ValueRange{next.m, next.l, next.acc});
      });
  // Names the loop's role for readers of the IR and for later schedules.
  loop->setAttr(tile::attrs::kKvLoop, pb.b.getStringAttr(role));
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

/// One list of a block mask's row (block-sparse, BlockLists.h): the KV
/// steps of the listed key blocks, masked per `mask`.
SoftmaxState emitListedKVLoop(ProgramBuilder &pb, ForwardContext &ctx,
                              Value countArg, Value indicesArg, ValueRange row,
                              int64_t keysPerBlock, SoftmaxState init,
                              StepMask mask, StringRef role,
                              Value enabled = Value()) {
  Value keyBlocks = arith::CeilDivSIOp::create(pb.b, pb.loc, ctx.lenK,
                                               pb.index(keysPerBlock));
  scf::ForOp loop = buildListedLoop(
      pb, countArg, indicesArg, row, keysPerBlock, ctx.blockN, keyBlocks,
      ValueRange{init.m, init.l, init.acc}, enabled, tile::attrs::kKvLoop, role,
      [&](ProgramBuilder &inner, Value kvStart, ValueRange carried) {
        SoftmaxState next = emitKVStep(
            inner, ctx, kvStart, {carried[0], carried[1], carried[2]}, mask);
        return SmallVector<Value>{next.m, next.l, next.acc};
      });
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

/// The keys a program may visit: seq_kv, a packed batch's total, or a
/// paged cache's capacity (its sequences' lengths are per sequence).
Attribute kvExtent(Builder &b, attn::AttentionOp spec) {
  if (std::optional<int64_t> pageSize = spec.getPageSize())
    return tile::sizeOp(
        b, "mul",
        {tile::sizeSymbol(b, "max_pages"), tile::sizeConstant(b, *pageSize)});
  return tile::sizeSymbol(b, spec.getVarlen() ? "total_kv" : "seq_kv");
}

/// The special-function unit's operations per score (approximately, as
/// fast math lowers them): the softmax's exp2 and the score_mod's
/// transcendental ops; a division by a non-constant is a reciprocal.
int64_t sfuOpsPerScore(attn::AttentionOp spec) {
  int64_t n = 1;
  spec.getScoreMod().walk([&](Operation *op) {
    if (isa<math::TanhOp, math::ExpOp, math::Exp2Op, math::LogOp, math::Log2Op,
            math::SqrtOp, math::RsqrtOp, math::SinOp, math::CosOp, math::ErfOp>(
            op))
      ++n;
    else if (isa<math::PowFOp>(op))
      n += 2;
    else if (auto div = dyn_cast<arith::DivFOp>(op))
      n += !div.getRhs().getDefiningOp<arith::ConstantOp>();
  });
  return n;
}

/// Lowers `spec` to the forward program `<name><suffix>`, launched when
/// `when` holds (null: always). With `pack` > 1 (the GQA group), a program
/// owns a KV head and its rows are (query, head of the group) pairs, so
/// each K/V tile it loads serves every query head of the group.
LogicalResult lowerAttention(attn::AttentionOp spec, int64_t blockM,
                             int64_t blockN, bool split, bool visibleBelow,
                             bool branchMaskedSteps, bool staticMax,
                             int64_t staticMaxFlopPerSfu, StringRef suffix,
                             Attribute when, int64_t pack) {
  MLIRContext *mctx = spec.getContext();
  OpBuilder b(spec);
  Location loc = spec.getLoc();
  ProgramBuilder pb{b, loc};
  Type elt = spec.getElementType();
  int64_t dqk = spec.getQkHeadDim(), dv = spec.getVHeadDim();
  int64_t dyn = ShapedType::kDynamic;
  Type f32 = b.getF32Type();

  using Role = KernelArgDecl::Role;
  KernelDecl decl;
  decl.name = (spec.getSymName() + "_fwd" + suffix).str();
  decl.when = when;
  // A paged KV cache: K and V are pools of pages, each sequence's keys
  // found through its row of the block table, kv_lens[b] of them.
  std::optional<int64_t> pageSize = spec.getPageSize();
  int64_t keyRows = pageSize ? *pageSize : dyn;
  // Varlen: sequences packed along the rows of 3-D Q, K, V and output, and
  // LSE [H, T_q]; cu_seqlens_q / cu_seqlens_kv say where each starts.
  bool varlen = spec.getVarlen();
  Type i32 = b.getI32Type();
  // With a paged cache too (chunked prefill), only the queries are packed.
  auto varlenKeys = [&](StringRef name, int64_t cols) -> KernelArgDecl {
    if (pageSize)
      return {Role::Tensor, stridedMemRef(mctx, {dyn, keyRows, dyn, cols}, elt),
              name.str(), pagedKeyShape(b, *pageSize, cols)};
    return {Role::Tensor, stridedMemRef(mctx, {dyn, dyn, cols}, elt),
            name.str(), packedShape(b, "total_kv", "kv_heads", cols)};
  };
  if (varlen) {
    decl.args = {{Role::Tensor, stridedMemRef(mctx, {dyn, dyn, dqk}, elt), "q",
                  packedShape(b, "total_q", "heads", dqk)},
                 varlenKeys("k", dqk),
                 varlenKeys("v", dv),
                 {Role::Tensor, stridedMemRef(mctx, {dyn, dyn, dv}, elt), "out",
                  packedShape(b, "total_q", "heads", dv)},
                 {Role::Tensor, stridedMemRef(mctx, {dyn, dyn}, f32), "lse",
                  packedRowShape(b)},
                 {Role::Tensor, stridedMemRef(mctx, {dyn}, i32), "cu_seqlens_q",
                  seqOffsetsShape(b)}};
    if (!pageSize)
      decl.args.push_back({Role::Tensor, stridedMemRef(mctx, {dyn}, i32),
                           "cu_seqlens_kv", seqOffsetsShape(b)});
  } else {
    decl.args = {
        {Role::Tensor, stridedMemRef(mctx, {dyn, dyn, dyn, dqk}, elt), "q",
         queryShape(b, dqk)},
        {Role::Tensor, stridedMemRef(mctx, {dyn, keyRows, dyn, dqk}, elt), "k",
         pageSize ? pagedKeyShape(b, *pageSize, dqk) : keyShape(b, dqk)},
        {Role::Tensor, stridedMemRef(mctx, {dyn, keyRows, dyn, dv}, elt), "v",
         pageSize ? pagedKeyShape(b, *pageSize, dv) : keyShape(b, dv)},
        {Role::Tensor, stridedMemRef(mctx, {dyn, dyn, dyn, dv}, elt), "out",
         queryShape(b, dv)},
        {Role::Tensor, stridedMemRef(mctx, {dyn, dyn, dyn}, f32), "lse",
         rowShape(b)}};
  }
  // The paged cache's table and lengths follow.
  unsigned pagedArg = decl.args.size();
  if (pageSize) {
    decl.args.push_back({Role::Tensor, stridedMemRef(mctx, {dyn, dyn}, i32),
                         "block_table", blockTableShape(b)});
    decl.args.push_back({Role::Tensor,
                         stridedMemRef(mctx, {dyn}, i32),
                         "kv_lens",
                         {tile::sizeSymbol(b, "batch")}});
  }
  // Block-sparse: the lists of partial and of full KV blocks per (batch,
  // head, mask block of queries), FlexAttention's BlockMask.
  std::optional<std::pair<int64_t, int64_t>> sparse = spec.getSparseBlocks();
  unsigned sparseArg = decl.args.size();
  if (sparse) {
    if (sparse->first % blockM != 0 || sparse->second % blockN != 0)
      return spec.emitOpError()
             << "block_sparse blocks of " << sparse->first << " x "
             << sparse->second << " must be whole tiles of " << blockM << " x "
             << blockN << " (query rows x keys)";
    sparseArg = addBlockListArgs(b, decl.args, *sparse, /*byQueries=*/true);
  }
  int64_t rngArg = -1;
  if (spec.hasDropout()) {
    rngArg = decl.args.size();
    decl.args.push_back(dropoutRngArg(b));
  }
  unsigned firstCapture = decl.args.size();
  decl.withCaptures = true;
  decl.grid = varlen     ? raggedBlockGrid(b, "total_q", "heads", blockM)
              : pack > 1 ? packedQueryBlockGrid(b, blockM, pack)
                         : queryBlockGrid(b, blockM);
  decl.blockM = blockM;
  decl.blockN = blockN;
  func::FuncOp func = createKernel(b, spec, decl);
  func->setAttr(tile::attrs::kKvExtent, kvExtent(b, spec));
  Block *entry = &func.front();
  b.setInsertionPointToStart(entry);
  Value qArg = entry->getArgument(0), kArg = entry->getArgument(1),
        vArg = entry->getArgument(2), oArg = entry->getArgument(3),
        lseArg = entry->getArgument(4);

  ForwardContext ctx;
  ctx.spec = spec;
  ctx.blockM = blockM;
  ctx.blockN = blockN;
  ctx.headDimQk = dqk;
  ctx.headDimV = dv;
  ctx.elementType = elt;
  for (unsigned i = firstCapture; i < entry->getNumArguments(); ++i)
    ctx.captures.push_back(entry->getArgument(i));

  Value qBlock = tile::ProgramIdOp::create(b, loc, b.getIndexType(), 0);
  Value headId = tile::ProgramIdOp::create(b, loc, b.getIndexType(), 1);
  Value cuQ, cuKV;
  if (varlen) {
    // Axis 0 numbers every sequence's query blocks one after another.
    cuQ = entry->getArgument(5);
    if (!pageSize)
      cuKV = entry->getArgument(6);
    auto owned =
        tile::RaggedBlockOp::create(b, loc, b.getIndexType(), b.getIndexType(),
                                    cuQ, qBlock, b.getI64IntegerAttr(blockM));
    ctx.batch = owned.getSequence();
    qBlock = owned.getBlockInSequence();
  } else {
    ctx.batch = tile::ProgramIdOp::create(b, loc, b.getIndexType(), 2);
  }
  // Grouped-query attention: query heads h*G .. h*G+G-1 share KV head h.
  // Packed, the program's axis 1 is the KV head and its rows interleave
  // the group's query heads: row r is query r / G of head h*G + r % G.
  Value kvHead = headId, firstHead = headId;
  if (pack > 1)
    firstHead = pb.mul(headId, pb.index(pack));
  else if (spec.getGqaGroup() > 1)
    kvHead =
        arith::DivUIOp::create(b, loc, headId, pb.index(spec.getGqaGroup()));

  Value qDesc = varlen
                    ? pb.raggedView(qArg, cuQ, ctx.batch, firstHead, dqk, elt)
                    : pb.view(qArg, ctx.batch, firstHead, dqk, elt, pack);
  if (pageSize) {
    Value table = entry->getArgument(pagedArg),
          lengths = entry->getArgument(pagedArg + 1);
    ctx.kDesc = pb.pagedView(kArg, table, lengths, ctx.batch, kvHead, dqk, elt,
                             *pageSize);
    ctx.vDesc = pb.pagedView(vArg, table, lengths, ctx.batch, kvHead, dv, elt,
                             *pageSize);
  } else if (varlen) {
    ctx.kDesc = pb.raggedView(kArg, cuKV, ctx.batch, kvHead, dqk, elt);
    ctx.vDesc = pb.raggedView(vArg, cuKV, ctx.batch, kvHead, dv, elt);
  } else {
    ctx.kDesc = pb.view(kArg, ctx.batch, kvHead, dqk, elt);
    ctx.vDesc = pb.view(vArg, ctx.batch, kvHead, dv, elt);
  }
  Value oDesc = varlen ? pb.raggedView(oArg, cuQ, ctx.batch, firstHead, dv, elt)
                       : pb.view(oArg, ctx.batch, firstHead, dv, elt, pack);
  Value lseDesc = varlen ? pb.raggedRowView(lseArg, cuQ, ctx.batch, firstHead)
                         : pb.rowView(lseArg, ctx.batch, firstHead, pack);

  // Rows of the descriptors: Lq, or Lq * G packed.
  Value lenRows = tile::DimOp::create(b, loc, b.getIndexType(), qDesc, 0);
  Value lenQ = lenRows;
  if (pack > 1)
    lenQ = arith::DivUIOp::create(b, loc, lenRows, pb.index(pack));
  ctx.lenK = tile::DimOp::create(b, loc, b.getIndexType(), ctx.kDesc, 0);
  ctx.diagOffset = pb.sub(ctx.lenK, lenQ);

  Value rowStart = pb.mul(qBlock, pb.index(blockM));
  ctx.rowStart = rowStart;
  if (rngArg >= 0)
    std::tie(ctx.seed, ctx.offset) =
        loadDropoutRng(pb, entry->getArgument(rngArg));
  ctx.q = pb.load(qDesc, {blockM, dqk}, elt, {rowStart, pb.index(0)}, 0.0);
  SmallVector<int64_t> sShape{blockM, blockN};
  Value rows = pb.add(pb.iota(0, sShape), pb.splat(rowStart, sShape));
  ctx.head = headId;
  ctx.qIdx = rows;
  if (pack > 1) {
    Value group = pb.splat(pb.index(pack), sShape);
    ctx.qIdx = arith::DivUIOp::create(b, loc, rows, group);
    Value inGroup = arith::RemUIOp::create(b, loc, rows, group);
    ctx.head = pb.add(pb.splat(firstHead, sShape), inGroup);
  }
  ctx.lenQ = lenQ;
  ctx.modQIdx = ctx.qIdx;
  ctx.clampKv = modsIndexMemoryWith(spec, /*query=*/false);
  if (modsIndexMemoryWith(spec, /*query=*/true))
    ctx.modQIdx =
        pb.minIndex(ctx.qIdx, pb.splat(pb.sub(lenQ, pb.index(1)), sShape));

  // A score_mod bounded to an interval narrow enough that exp2(score - top)
  // of a row's largest score stays normal in P's element type (2^-96 in
  // bf16 and f32, whose exponents reach 2^-126, leaving room for V's
  // products; 2^-12 in fp16, normal down to 2^-14) takes the interval's top
  // as every row's maximum.
  if (staticMax && spec.hasScoreMod() &&
      (staticMaxFlopPerSfu <= 0 ||
       2 * (dqk + dv) >= sfuOpsPerScore(spec) * staticMaxFlopPerSfu))
    if (std::optional<Interval> range = scoreModRange(spec.getScoreMod())) {
      double lo = range->lo * M_LOG2E, hi = range->hi * M_LOG2E;
      if (hi - lo <= (elt.isF16() ? 12.0 : 96.0))
        ctx.staticMax = hi;
    }
  double negInf = -std::numeric_limits<double>::infinity();
  SoftmaxState state{pb.splatF32(ctx.staticMax.value_or(negInf), {blockM}),
                     pb.splatF32(0.0, {blockM}),
                     pb.splatF32(0.0, {blockM, dv})};

  // KV range of this Q block. The band's bounds are non-decreasing in q, so
  // the first query gives the lowest key any row needs and the last query the
  // highest; conversely, a key block is entirely visible when it lies above
  // the last query's lower bound and below the first query's upper bound.
  Value qFirst = rowStart;
  Value qLast = pb.sub(pb.minIndex(pb.add(rowStart, pb.index(blockM)), lenRows),
                       pb.index(1));
  if (pack > 1) {
    qFirst = arith::DivUIOp::create(b, loc, qFirst, pb.index(pack));
    qLast = arith::DivUIOp::create(b, loc, qLast, pb.index(pack));
  }
  Value zero = pb.index(0);
  auto band = spec.getKvBandAttr();
  ArrayAttr none = b.getArrayAttr({});
  ArrayAttr lowerBounds = band ? band.getLower() : none;
  ArrayAttr upperBounds = band ? band.getUpper() : none;
  Value kvStart = pb.floorTo(
      evalLower(pb, lowerBounds, qFirst, ctx.diagOffset, zero), blockN);
  Value kvEnd =
      evalUpperExclusive(pb, upperBounds, qLast, ctx.diagOffset, ctx.lenK);
  // A varlen grid has programs past their sequence's last block (or past
  // the last sequence): their key range is empty and they store nothing.
  if (varlen)
    kvEnd = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rowStart,
                              lenRows),
        kvEnd, kvStart);

  // Keys below a per-program bound of a mask_mod `kv < X || ...` (a verify
  // step's committed cache) are visible whatever the rest of the mask says.
  // Packed rows have their own heads, so X may then not read the head.
  std::optional<VisibleBelow> below;
  if (split && visibleBelow && spec.hasMaskMod() && !(band && band.getExact()))
    below = findVisibleBelow(spec.getMaskMod(), /*headUniform=*/pack == 1);
  // Dense blocks of one sequence each: the band alone sets their work
  // (varlen's axis 0 runs over every sequence, block lists and a visible
  // prefix over run-time data).
  // (The decode programs hold at most decode-rows query rows, one block or
  // two: no order of blocks to choose.)
  if (!varlen && !sparse && !below && !suffix.starts_with("_decode"))
    if (std::optional<StringRef> cost = blockCost(band))
      func->setAttr(tile::attrs::kBlockCost, b.getStringAttr(*cost));
  if (sparse) {
    // The lists replace the band's range: partial blocks fully masked,
    // full blocks only past Lk. A full block reaches past the last key only
    // when Lk is not a multiple of the blocks: then (a choice uniform over
    // the grid) the full steps mask keys past Lk, else nothing, as the
    // band's full steps (two loops, one of them empty).
    Value maskRow =
        arith::DivUIOp::create(b, loc, rowStart, pb.index(sparse->first));
    SmallVector<Value> row{ctx.batch, headId, maskRow};
    state =
        emitListedKVLoop(pb, ctx, entry->getArgument(sparseArg),
                         entry->getArgument(sparseArg + 1), row, sparse->second,
                         state, StepMask::All, "listed_partial");
    Value ragged = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::RemSIOp::create(b, loc, ctx.lenK, pb.index(sparse->second)),
        pb.index(0));
    Value whole = arith::XOrIOp::create(
        b, loc, ragged, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
    state =
        emitListedKVLoop(pb, ctx, entry->getArgument(sparseArg + 2),
                         entry->getArgument(sparseArg + 3), row, sparse->second,
                         state, StepMask::None, "listed_full", whole);
    state = emitListedKVLoop(pb, ctx, entry->getArgument(sparseArg + 2),
                             entry->getArgument(sparseArg + 3), row,
                             sparse->second, state, StepMask::Bounds,
                             "listed_full_bounded", ragged);
  } else if ((band && band.getExact() && split) || below) {
    Value fullLo = evalLower(pb, lowerBounds, qLast, ctx.diagOffset, zero);
    Value fullHi =
        evalUpperExclusive(pb, upperBounds, qFirst, ctx.diagOffset, ctx.lenK);
    // Inexact, the band still bounds every row's keys (the causal and
    // window attributes exactly), and below X the mask_mod holds.
    if (below)
      fullHi = pb.minIndex(
          fullHi, buildVisibleBelow(b, *below, spec.getMaskMod(), ctx.batch,
                                    headId, ctx.captures));
    // Without a lower bound every key from kvStart on is above it: the full
    // blocks start at kvStart and no leading partial loop is emitted (it
    // would never run: one copy of the step less to compile).
    auto [fullStart, fullEnd] =
        fullBlocks(pb, kvStart, kvEnd, lowerBounds.empty() ? Value() : fullLo,
                   fullHi, blockN);
    if (!lowerBounds.empty())
      state = emitKVLoop(pb, ctx, kvStart, fullStart, state, /*masked=*/true,
                         "leading_partial");
    // Without an upper bound but Lk, the trailing partial steps are at
    // most one: the key block holding Lk. With branch-masked-steps the
    // full loop runs it too, its mask in a branch on the product, instead
    // of a second copy of the whole step (compiled and register-allocated
    // for one step per tile). A causal or windowed band's diagonal steps,
    // several per tile, keep their own loop, and so does a score_mod's
    // partial step: its mask would sit after the mod, inside the chain of
    // per-element work (measured slower: docs/performance.md).
    if (branchMaskedSteps && upperBounds.empty() && !below &&
        !spec.hasScoreMod()) {
      state = emitKVLoop(pb, ctx, fullStart, kvEnd, state, /*masked=*/true,
                         "full_then_partial", /*maskedFrom=*/fullEnd);
    } else {
      state = emitKVLoop(pb, ctx, fullStart, fullEnd, state, /*masked=*/false,
                         "full");
      state = emitKVLoop(pb, ctx, fullEnd, kvEnd, state, /*masked=*/true,
                         "trailing_partial");
    }
  } else {
    state =
        emitKVLoop(pb, ctx, kvStart, kvEnd, state, /*masked=*/true, "masked");
  }

  // Epilogue. A row that saw no key has l = 0: its output is 0 and its LSE
  // -inf (never 0/0 = NaN).
  Value lIsZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        state.l, pb.splatF32(0.0, {blockM}));
  Value invL = arith::SelectOp::create(
      b, loc, lIsZero, pb.splatF32(0.0, {blockM}),
      arith::DivFOp::create(b, loc, pb.splatF32(1.0, {blockM}), state.l));
  if (ctx.seed)
    invL = pb.mul(invL, pb.splatF32(spec.getDropoutScale(), {blockM}));
  Value out = pb.mul(state.acc, pb.rowBroadcast(invL, dv));
  Value outLow = arith::TruncFOp::create(
      b, loc, RankedTensorType::get({blockM, dv}, elt), out);
  tile::StoreOp::create(b, loc, outLow, oDesc, ValueRange{rowStart, zero});

  // LSE in base 2 is m + log2(l); users get the natural log: times ln(2).
  Value lse2 = pb.add(state.m, math::Log2Op::create(b, loc, state.l));
  Value lse = pb.mul(lse2, pb.splatF32(M_LN2, {blockM}));
  lse = arith::SelectOp::create(b, loc, lIsZero, pb.splatF32(negInf, {blockM}),
                                lse);
  tile::StoreOp::create(b, loc, lse, lseDesc, ValueRange{rowStart});
  func::ReturnOp::create(b, loc);
  return success();
}

struct ConvertAttnToTile
    : public kiln::impl::ConvertAttnToTileBase<ConvertAttnToTile> {
  using Base::Base;
  void runOnOperation() override {
    if (blockM < 0 || blockN < 0) {
      getOperation().emitError("block-m and block-n must not be negative");
      return signalPassFailure();
    }
    SmallVector<attn::AttentionOp> specs;
    getOperation().walk([&](attn::AttentionOp op) { specs.push_back(op); });
    if (decodeRows < 0 || shortRows < 0 || shortKeys < 0 ||
        wideDecodeRows < 0 || wideDecodeKeys < 0) {
      getOperation().emitError("decode-rows, wide-decode-keys, "
                               "wide-decode-rows, short-rows and short-keys "
                               "must not be negative");
      return signalPassFailure();
    }
    for (attn::AttentionOp spec : specs) {
      // The program that builds a block-sparse variant's lists instead.
      if (spec->hasAttr(attn::attrs::kBuildBlockMask)) {
        if (failed(lowerBlockMaskBuilder(spec)))
          return signalPassFailure();
        spec.erase();
        continue;
      }
      auto [rows, keys] = chosenTiles(spec, blockM, blockN);
      // A problem of at most decodeRows query rows runs on the decode
      // program's shorter blocks; the plan picks per run.
      // (Not for varlen, whose sequences have lengths of their own.)
      // (Nor for block-sparse ones, whose tiles follow the mask's blocks.)
      bool decode = decodeRows > 0 && decodeRows < rows && !spec.getVarlen() &&
                    !spec.getBlockSparse();
      // A masked variant's problem of at most shortKeys keys runs on
      // shorter blocks (not the decode program's problems).
      bool shortBlocks = shortRows > 0 && shortKeys > 0 && shortRows < rows &&
                         (spec.hasMaskMod() ||
                          spec.getCausal() != attn::CausalAlignment::none) &&
                         !spec.getVarlen() && !spec.getBlockSparse();
      Builder b(spec);
      Attribute seqQ = tile::sizeSymbol(b, "seq_q");
      // (A paged cache's capacity: the longest its sequences may be.)
      Attribute seqKv = kvExtent(b, spec);
      Attribute prefillWhen, decodeWhen, shortWhen;
      if (decode) {
        prefillWhen =
            tile::sizeOp(b, "sub", {seqQ, tile::sizeConstant(b, decodeRows)});
        decodeWhen = tile::sizeOp(
            b, "sub", {tile::sizeConstant(b, decodeRows + 1), seqQ});
      }
      if (shortBlocks) {
        Attribute longKeys =
            tile::sizeOp(b, "sub", {seqKv, tile::sizeConstant(b, shortKeys)});
        Attribute shortKeysLeft = tile::sizeOp(
            b, "sub", {tile::sizeConstant(b, shortKeys + 1), seqKv});
        shortWhen = prefillWhen ? tile::sizeOp(b, "mul",
                                               {tile::sizeClamp01(b, prefillWhen),
                                                tile::sizeClamp01(b, shortKeysLeft)})
                                : shortKeysLeft;
        prefillWhen =
            prefillWhen
                ? tile::sizeOp(b, "mul",
                               {tile::sizeClamp01(b, prefillWhen), tile::sizeClamp01(b, longKeys)})
                : longKeys;
      }
      // The decode program packs a GQA group's query heads into its rows
      // where whole groups fit a block.
      int64_t group = spec.getGqaGroup();
      // (Dropout's bits are keyed by one head per program.)
      int64_t pack =
          gqaPack && group > 1 && decodeRows % group == 0 && !spec.hasDropout()
              ? group
              : 1;
      // A verify step's packed rows (seq_q * group) may fill several of the
      // decode program's blocks, each streaming the group's K and V again
      // (from L2) with one consumer warpgroup alone: those steps run on
      // wider blocks (two warpgroups over one copy of K and V), the
      // narrow blocks keep the steps whose packed rows they hold.
      Attribute wideWhen;
      // (No taller than the prefill's blocks, whose registers and shared
      // memory the chosen tiles were sized for.)
      if (decode && pack > 1 && wideDecodeRows > decodeRows &&
          wideDecodeRows <= rows && wideDecodeRows % pack == 0) {
        Attribute packed =
            tile::sizeOp(b, "mul", {seqQ, tile::sizeConstant(b, pack)});
        wideWhen = tile::sizeOp(
            b, "mul",
            {tile::sizeClamp01(b, decodeWhen),
             tile::sizeClamp01(b, tile::sizeOp(b, "sub",
                                               {packed, tile::sizeConstant(
                                                            b, decodeRows)}))});
        decodeWhen = tile::sizeOp(
            b, "sub", {tile::sizeConstant(b, decodeRows + 1), packed});
      }
      // (Fewer keys per step than the other programs where asked: the
      // wide program's step does twice the decode program's products per
      // byte of K and V.)
      int64_t wideKeys = wideDecodeKeys > 0 && wideDecodeKeys < keys &&
                                 wideDecodeKeys % 64 == 0
                             ? wideDecodeKeys
                             : keys;
      if (failed(lowerAttention(spec, rows, keys, splitMaskedBlocks,
                                visibleBelow, branchMaskedSteps, staticMax,
                                staticMaxFlopPerSfu, "", prefillWhen,
                                /*pack=*/1)) ||
          (shortBlocks &&
           failed(lowerAttention(spec, shortRows, keys, splitMaskedBlocks,
                                 visibleBelow, branchMaskedSteps, staticMax,
                                 staticMaxFlopPerSfu, "_short", shortWhen,
                                 /*pack=*/1))) ||
          (decode && failed(lowerAttention(
                         spec, decodeRows, keys, splitMaskedBlocks,
                         visibleBelow, branchMaskedSteps, staticMax,
                         staticMaxFlopPerSfu, "_decode", decodeWhen, pack))) ||
          (wideWhen &&
           failed(lowerAttention(spec, wideDecodeRows, wideKeys,
                                 splitMaskedBlocks,
                                 visibleBelow, branchMaskedSteps, staticMax,
                                 staticMaxFlopPerSfu, "_decode_wide", wideWhen,
                                 pack))))
        return signalPassFailure();
      spec.erase();
    }
  }
};

} // namespace
