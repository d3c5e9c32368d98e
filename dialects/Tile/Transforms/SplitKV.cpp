//===- SplitKV.cpp - FlashDecoding's split KV range and combine kernel ----===//
//
// A decode step has one query row (or a few) per (batch, head): the forward
// grid then holds batch x heads programs, far fewer than a GPU runs at once,
// and each streams its whole KV range alone. Splitting that range across
// `kv_splits` programs and merging their partial (o, lse) afterwards fills
// the GPU. The split count is a run-time choice (the plan's derived symbol
// `kv_splits`), so one compiled program serves prefill (no split: the
// original stores) and decoding.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tile/Transforms/Passes.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <cmath>
#include <limits>

namespace kiln::tile {
#define GEN_PASS_DEF_TILESPLITKV
#include "dialects/Tile/Transforms/Passes.h.inc"
} // namespace kiln::tile

using namespace mlir;
using namespace kiln;

namespace {

constexpr llvm::StringLiteral kSplits = "kv_splits";

/// What the pass needs of a forward kernel.
struct ForwardKernel {
  func::FuncOp func;
  BlockArgument out, lse;
  SmallVector<scf::ForOp> kvLoops;  // in order, in the entry block
  SmallVector<tile::StoreOp> stores; // of out and lse, in the entry block
  int64_t blockM = 0, blockN = 0;
  /// Added by the split: the partial results and kv_splits.
  BlockArgument oPartial, lsePartial, splits;
};

BlockArgument tensorArgument(func::FuncOp f, StringRef name) {
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (auto tensor = f.getArgAttrOfType<StringAttr>(i, tile::attrs::kTensor);
        tensor && tensor.getValue() == name)
      return f.getArgument(i);
  return nullptr;
}

/// Whether `v` is available before `op` in `block`.
bool definedBefore(Value v, Operation *op) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == op->getBlock();
  Operation *def = v.getDefiningOp();
  return def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

LogicalResult analyze(func::FuncOp f, ForwardKernel &k) {
  k.func = f;
  k.out = tensorArgument(f, "out");
  k.lse = tensorArgument(f, "lse");
  auto grid = f->getAttrOfType<ArrayAttr>(tile::attrs::kGrid);
  auto blockM = f->getAttrOfType<IntegerAttr>(tile::attrs::kBlockM);
  auto blockN = f->getAttrOfType<IntegerAttr>(tile::attrs::kBlockN);
  auto batchAxis =
      grid && grid.size() == 3 ? dyn_cast<StringAttr>(grid[2]) : nullptr;
  if (!k.out || !k.lse || !blockM || !blockN || !batchAxis ||
      batchAxis.getValue() != "batch" ||
      !f->getAttrOfType<StringAttr>(tile::attrs::kVariant))
    return f.emitError() << "tile-split-kv: forward kernel '" << f.getName()
                         << "' needs '" << tile::attrs::kVariant
                         << "', tensors 'out' and 'lse', '"
                         << tile::attrs::kBlockM << "', '"
                         << tile::attrs::kBlockN
                         << "' and a grid whose z axis is \"batch\"";
  k.blockM = blockM.getInt();
  k.blockN = blockN.getInt();
  Block &entry = f.front();
  for (Operation &op : entry)
    if (auto loop = dyn_cast<scf::ForOp>(op);
        loop && loop->hasAttr(tile::attrs::kKvLoop))
      k.kvLoops.push_back(loop);
  WalkResult walk = f.walk([&](tile::StoreOp store) {
    auto view = store.getDesc().getDefiningOp<tile::ViewOp>();
    if (!view || (view.getBase() != k.out && view.getBase() != k.lse))
      return WalkResult::advance();
    if (store->getBlock() != &entry) {
      store.emitError() << "tile-split-kv: the store of an output must be in "
                           "the kernel's entry block";
      return WalkResult::interrupt();
    }
    k.stores.push_back(store);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (k.kvLoops.empty() || k.stores.empty())
    return f.emitError() << "tile-split-kv: forward kernel '" << f.getName()
                         << "' has no KV loop ('" << tile::attrs::kKvLoop
                         << "') or stores no output";
  // The split's range is computed before the first loop from the first
  // loop's lower and the last loop's upper bound.
  scf::ForOp first = k.kvLoops.front(), last = k.kvLoops.back();
  if (!definedBefore(last.getUpperBound(), first))
    return last.emitError() << "tile-split-kv: the last KV loop's upper bound "
                               "must be computed before the first KV loop";
  return success();
}

/// Size-expression attributes.
struct Sizes {
  Builder &b;
  Attribute sym(StringRef name) { return tile::sizeSymbol(b, name); }
  Attribute cst(int64_t v) { return tile::sizeConstant(b, v); }
  Attribute op(StringRef name, ArrayRef<Attribute> operands) {
    return tile::sizeOp(b, name, operands);
  }
};

/// Index arithmetic.
struct Index {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value ceilDiv(Value x, Value y) {
    return arith::CeilDivSIOp::create(b, loc, x, y);
  }
};

/// The combine kernel's arguments as indices, and its program ids.
struct CombineEntry {
  Value oPartial, lsePartial, out, lse, numSplits, x, head, batch;
  static CombineEntry build(OpBuilder &b, Location loc, Block *entry) {
    Type index = b.getIndexType();
    CombineEntry e;
    e.oPartial = entry->getArgument(0);
    e.lsePartial = entry->getArgument(1);
    e.out = entry->getArgument(2);
    e.lse = entry->getArgument(3);
    e.numSplits =
        arith::IndexCastOp::create(b, loc, index, entry->getArgument(4));
    e.x = tile::ProgramIdOp::create(b, loc, index, 0);
    e.head = tile::ProgramIdOp::create(b, loc, index, 1);
    e.batch = tile::ProgramIdOp::create(b, loc, index, 2);
    return e;
  }
};

struct TileSplitKV : public tile::impl::TileSplitKVBase<TileSplitKV> {
  using Base::Base;

  void runOnOperation() override {
    if (maxSplits < 1 || minBlocks < 1 || combineRows < 1 || ctasPerSM < 0 ||
        combineSplits < 0 || combineRowsSteps < 0) {
      getOperation().emitError("tile-split-kv: max-splits, min-blocks and "
                               "combine-rows must be positive, ctas-per-sm, "
                               "combine-splits and combine-rows-steps not "
                               "negative");
      return signalPassFailure();
    }
    // A variant may have several forward kernels (a prefill, a short, a
    // decode and a wide decode program, one launched per run): they share
    // kv_splits and the combine kernels.
    llvm::MapVector<StringAttr, SmallVector<ForwardKernel>> byVariant;
    // A packed (varlen) batch's programs own blocks of its sequences
    // (tile.ragged_block): splitting their keys is not done.
    // Nor are a block-sparse program's, whose loops run over lists, nor a
    // block mask's builder, which has no attention output.
    auto varlen = [](func::FuncOp f) {
      if (f->hasAttr(tile::attrs::kBuildsBlockMask))
        return true;
      return f
          .walk([](Operation *op) {
            auto role = op->getAttrOfType<StringAttr>(tile::attrs::kKvLoop);
            return isa<tile::RaggedBlockOp>(op) ||
                           (role && role.getValue().starts_with("listed"))
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          })
          .wasInterrupted();
    };
    for (auto f : getOperation().getOps<func::FuncOp>())
      if (f->hasAttr(tile::attrs::kKernel) &&
          !f->hasAttr(tile::attrs::kBackwardStage) &&
          !f->hasAttr(tile::attrs::kSymbols) && !varlen(f)) {
        ForwardKernel k;
        if (failed(analyze(f, k)))
          return signalPassFailure();
        byVariant[f->getAttrOfType<StringAttr>(tile::attrs::kVariant)]
            .push_back(k);
      }
    for (auto &[variant, kernels] : byVariant) {
      OpBuilder b(&getContext());
      Sizes s{b};
      // The heuristic counts the programs of the kernel that runs: each
      // kernel's own count, weighted by its launch condition (a variant's
      // kernels run one per problem: the prefill, short, decode and wide
      // decode programs' conditions exclude each other).
      auto heuristic = [&](ForwardKernel &k) {
        return splitsHeuristic(
            s, k.func->getAttrOfType<ArrayAttr>(tile::attrs::kGrid), k.blockN,
            k.func.getName(), k.func->getAttr(tile::attrs::kKvExtent));
      };
      Attribute splits;
      if (kernels.size() == 1) {
        splits = heuristic(kernels.front());
      } else {
        SmallVector<Attribute> terms;
        for (ForwardKernel &k : kernels) {
          Attribute when = k.func->getAttr(tile::attrs::kWhen);
          if (!when) {
            k.func.emitError("tile-split-kv: forward kernel '")
                << k.func.getName()
                << "' shares its variant with other forward kernels but has "
                   "no 'tile.when' saying when it runs";
            return signalPassFailure();
          }
          terms.push_back(
              s.op("mul", {tile::sizeClamp01(b, when), heuristic(k)}));
        }
        // (At least 1 where no condition holds, which the plan's kernels
        // never leave open.)
        splits = s.op("max", {s.op("add", terms), s.cst(1)});
      }
      for (ForwardKernel &k : kernels)
        if (failed(split(k, splits)))
          return signalPassFailure();
      b.setInsertionPointAfter(kernels.back().func);
      if (failed(buildCombine(b, kernels.front())))
        return signalPassFailure();
    }
  }

  /// The programs of `kernel` the device holds at once: num_sms times its
  /// occupancy (`ctas_per_sm.<kernel>`, the runtime's), or `ctasPerSM` when
  /// set.
  Attribute slotsOf(Sizes &s, StringRef kernel) {
    Attribute perSM =
        ctasPerSM > 0 ? s.cst(ctasPerSM) : tile::sizeCtasPerSm(s.b, kernel);
    return s.op("mul", {s.sym("num_sms"), perSM});
  }

  /// kv_splits for a problem run by `kernel`: as many programs as the
  /// multiprocessors hold at once (slotsOf), rounded down (floor(slots /
  /// programs), so the split grid ends on whole waves rather than a short
  /// last one), each over at least `minBlocks` KV blocks, at most
  /// `maxSplits`, at least 1. 1 when the unsplit grid fills a wave already.
  Attribute splitsHeuristic(Sizes &s, ArrayAttr grid, int64_t blockN,
                            StringRef kernel, Attribute kvExtent) {
    Attribute programs = s.op("mul", {grid[0], grid[1], grid[2]});
    Attribute slots = slotsOf(s, kernel);
    Attribute fill = tile::sizeFloorDiv(s.b, slots, programs);
    // The key range (tile.kv_extent): seq_kv, or a paged cache's capacity.
    Attribute length = s.op("ceildiv", {kvExtent ? kvExtent : s.sym("seq_kv"),
                                        s.cst(minBlocks * blockN)});
    return s.op("max",
                {s.op("min", {fill, length, s.cst(maxSplits)}), s.cst(1)});
  }

  LogicalResult split(ForwardKernel &k, Attribute heuristic) {
    func::FuncOp f = k.func;
    MLIRContext *ctx = f.getContext();
    OpBuilder b(ctx);
    Sizes s{b};
    Location loc = f.getLoc();
    Block &entry = f.front();
    Type f32 = b.getF32Type();
    Type i64 = b.getI64Type();

    // The plan: kv_splits derived at run time, z = batch * kv_splits, and
    // the partial results sized 0 unless the run splits.
    Attribute splits = s.sym(kSplits);
    f->setAttr(tile::attrs::kSymbols,
               b.getDictionaryAttr(b.getNamedAttr(kSplits, heuristic)));
    auto grid = f->getAttrOfType<ArrayAttr>(tile::attrs::kGrid);
    f->setAttr(tile::attrs::kGrid,
               b.getArrayAttr({grid[0], grid[1],
                               s.op("mul", {s.sym("batch"), splits})}));
    Attribute partials =
        s.op("mul", {s.sym("batch"), splits,
                     s.op("min", {s.op("sub", {splits, s.cst(1)}), s.cst(1)})});
    auto outType = cast<MemRefType>(k.out.getType());
    auto lseType = cast<MemRefType>(k.lse.getType());
    int64_t headDimV = outType.getDimSize(3);
    SmallVector<Attribute> oShape{partials, s.sym("seq_q"), s.sym("heads"),
                                  s.cst(headDimV)};
    SmallVector<Attribute> lseShape{partials, s.sym("heads"), s.sym("seq_q")};
    auto workspace = [&](StringRef name, ArrayRef<Attribute> shape) {
      return b.getDictionaryAttr(
          {b.getNamedAttr(tile::attrs::kWorkspace, b.getStringAttr(name)),
           b.getNamedAttr(tile::attrs::kShape, b.getArrayAttr(shape))});
    };
    DictionaryAttr oAttrs = workspace("o_partial", oShape);
    DictionaryAttr lseAttrs = workspace("lse_partial", lseShape);
    DictionaryAttr splitsAttrs = b.getDictionaryAttr(
        b.getNamedAttr(tile::attrs::kScalar, splits));
    Type oPartialType = outType.clone(f32);
    unsigned n = f.getNumArguments();
    if (failed(f.insertArgument(n, oPartialType, oAttrs, loc)) ||
        failed(f.insertArgument(n + 1, lseType, lseAttrs, loc)) ||
        failed(f.insertArgument(n + 2, i64, splitsAttrs, loc)))
      return f.emitError() << "tile-split-kv: cannot add arguments";
    BlockArgument oPartial = f.getArgument(n), lsePartial = f.getArgument(n + 1),
                  splitsArg = f.getArgument(n + 2);
    k.oPartial = oPartial;
    k.lsePartial = lsePartial;
    k.splits = splitsArg;

    // z = batch * kv_splits + split.
    b.setInsertionPointToStart(&entry);
    Index ix{b, loc};
    Value numSplits =
        arith::IndexCastOp::create(b, loc, b.getIndexType(), splitsArg);
    Value z = tile::ProgramIdOp::create(b, loc, b.getIndexType(), 2);
    Value batch = arith::DivUIOp::create(b, loc, z, numSplits);
    Value splitIndex = arith::RemUIOp::create(b, loc, z, numSplits);
    SmallVector<tile::ProgramIdOp> batchIds;
    f.walk([&](tile::ProgramIdOp p) {
      if (p.getAxis() == 2 && p.getResult() != z)
        batchIds.push_back(p);
    });
    for (tile::ProgramIdOp p : batchIds) {
      p.replaceAllUsesWith(batch);
      p.erase();
    }

    // The split's blocks: chunks of ceil(blocks / kv_splits) from the first
    // loop's lower bound (a multiple of BLOCK_N, as every loop's is), so
    // each loop keeps its block grid.
    scf::ForOp first = k.kvLoops.front(), last = k.kvLoops.back();
    b.setInsertionPoint(first);
    Value lo0 = first.getLowerBound(), hi0 = last.getUpperBound();
    Value blockN = ix.c(k.blockN);
    Value blocks = ix.ceilDiv(ix.max(ix.sub(hi0, lo0), ix.c(0)), blockN);
    Value chunk = ix.mul(ix.ceilDiv(blocks, numSplits), blockN);
    Value lo = ix.add(lo0, ix.mul(splitIndex, chunk));
    Value hi = ix.min(ix.add(lo, chunk), hi0);
    for (scf::ForOp loop : k.kvLoops) {
      b.setInsertionPoint(loop);
      loop.setLowerBound(ix.max(loop.getLowerBound(), lo));
      loop.setUpperBound(ix.min(loop.getUpperBound(), hi));
    }

    // The outputs: as before when the run does not split; otherwise the
    // unrounded output and the LSE of this split.
    tile::StoreOp lastStore = k.stores.back();
    b.setInsertionPointAfter(lastStore);
    Value unsplit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          numSplits, ix.c(1));
    auto branch = scf::IfOp::create(b, loc, unsplit, /*withElseRegion=*/true);
    for (tile::StoreOp store : k.stores)
      store->moveBefore(branch.thenBlock()->getTerminator());
    b.setInsertionPoint(branch.elseBlock()->getTerminator());
    for (tile::StoreOp store : k.stores) {
      auto view = store.getDesc().getDefiningOp<tile::ViewOp>();
      bool isOut = view.getBase() == k.out;
      if (view.getIndices().empty() || view.getIndices()[0] != batch)
        return view.emitError() << "tile-split-kv: the view of an output must "
                                   "index the batch first";
      SmallVector<Value> indices(view.getIndices());
      indices[0] = z;
      // The partials have the outputs' layout, so a packed view (GQA rows)
      // packs them the same way and the combine kernel reads them plainly.
      Value partialView = tile::ViewOp::create(
          b, view.getLoc(),
          tile::DescType::get(ctx, view.getType().getShape(), f32,
                              view.getType().getGroup()),
          isOut ? oPartial : lsePartial, indices, view.getKeepAttr(),
          view.getPackedAttr());
      Value value = store.getValue();
      if (auto rounded = value.getDefiningOp<arith::TruncFOp>())
        value = rounded.getIn();
      if (cast<RankedTensorType>(value.getType()).getElementType() != f32)
        return store.emitError() << "tile-split-kv: an output's value must be "
                                    "f32, or rounded from f32 (arith.truncf)";
      tile::StoreOp::create(b, store.getLoc(), value, partialView,
                            store.getOffsets());
    }

    return success();
  }

  /// `<variant>_fwd_combine`: the online merge of the splits' (o, lse), in
  /// base 2 as the forward's softmax. Its body reads the partials down the
  /// splits (combineBySplits) or as blocks of query rows (combineByRows,
  /// alone with `combine-splits=0`). With both forms, the by-rows one is a
  /// second kernel, `<variant>_fwd_combine_rows`, and each run launches the
  /// form its cost rule picks.
  LogicalResult buildCombine(OpBuilder &b, const ForwardKernel &k) {
    std::string name =
        k.func->getAttrOfType<StringAttr>(tile::attrs::kVariant).str() +
        "_fwd_combine";
    Sizes s{b};
    Attribute split = s.op("sub", {s.sym(kSplits), s.cst(1)});
    if (combineSplits == 0) {
      buildCombineKernel(b, k, name, /*bySplits=*/false, split);
      return success();
    }
    // The by-rows form's threads each hold Dv / 2 f32 of the accumulator and
    // as many of a split's block: past Dv = 128 that no longer fits the
    // registers (at 256 the kernel spilled 504 bytes per thread), so the
    // by-splits form runs alone.
    int64_t dv = cast<MemRefType>(k.out.getType()).getDimSize(3);
    if (combineRowsSteps <= 0 || dv > 128) {
      buildCombineKernel(b, k, name, /*bySplits=*/true, split);
      return success();
    }
    std::string rowsName = name + "_rows";
    // Each form's waves: its programs over the slots the device holds.
    auto waves = [&](Attribute programs, StringRef kernel) {
      return s.op("ceildiv", {programs, slotsOf(s, kernel)});
    };
    Attribute heads = s.sym("heads"), batch = s.sym("batch");
    Attribute splitsCost =
        s.op("mul", {s.cst(combineRowsSteps),
                     waves(s.op("mul", {s.sym("seq_q"), heads, batch}), name),
                     s.op("ceildiv", {s.sym(kSplits), s.cst(combineSplits)})});
    Attribute rowsCost =
        s.op("mul",
             {s.sym(kSplits),
              waves(s.op("mul",
                         {s.op("ceildiv", {s.sym("seq_q"), s.cst(combineRows)}),
                          heads, batch}),
                    rowsName)});
    // By rows when rowsCost <= splitsCost, by splits otherwise; neither
    // unsplit.
    Attribute split01 = tile::sizeClamp01(b, split);
    Attribute byRows = s.op(
        "mul",
        {split01,
         tile::sizeClamp01(
             b, s.op("sub", {s.op("add", {splitsCost, s.cst(1)}), rowsCost}))});
    Attribute bySplits = s.op(
        "mul",
        {split01, tile::sizeClamp01(b, s.op("sub", {rowsCost, splitsCost}))});
    buildCombineKernel(b, k, name, /*bySplits=*/true, bySplits);
    buildCombineKernel(b, k, rowsName, /*bySplits=*/false, byRows);
    return success();
  }

  /// One combine kernel `name` of either form, launched when `when` > 0,
  /// after the insertion point (which it moves past itself).
  void buildCombineKernel(OpBuilder &b, const ForwardKernel &k, StringRef name,
                          bool bySplits, Attribute when) {
    func::FuncOp f = k.func;
    auto argAttrs = [&](BlockArgument a) {
      return f.getArgAttrDict(a.getArgNumber());
    };
    Location loc = f.getLoc();
    Sizes s{b};
    auto outType = cast<MemRefType>(k.out.getType());
    int64_t dv = outType.getDimSize(3);
    SmallVector<Type> types{k.oPartial.getType(), k.lsePartial.getType(),
                            outType, k.lse.getType(), b.getI64Type()};
    auto combine =
        func::FuncOp::create(b, loc, name, b.getFunctionType(types, {}));
    for (StringRef attr :
         {tile::attrs::kKernel, tile::attrs::kVariant, tile::attrs::kGqaGroup,
          tile::attrs::kSymbols, tile::attrs::kBlockN})
      if (Attribute a = f->getAttr(attr))
        combine->setAttr(attr, a);
    // By splits, a program's tiles have the head dim's rows; by rows,
    // combine-rows query rows.
    combine->setAttr(tile::attrs::kBlockM,
                     b.getI64IntegerAttr(bySplits ? dv : combineRows));
    Attribute queries =
        bySplits ? s.sym("seq_q")
                 : s.op("ceildiv", {s.sym("seq_q"), s.cst(combineRows)});
    combine->setAttr(tile::attrs::kGrid,
                     b.getArrayAttr({queries, s.sym("heads"), s.sym("batch")}));
    combine->setAttr(tile::attrs::kWhen, when);
    combine.setArgAttrs(0, argAttrs(k.oPartial));
    combine.setArgAttrs(1, argAttrs(k.lsePartial));
    combine.setArgAttrs(2, argAttrs(k.out));
    combine.setArgAttrs(3, argAttrs(k.lse));
    combine.setArgAttrs(4, argAttrs(k.splits));
    OpBuilder::InsertionGuard guard(b);
    Block *entry = combine.addEntryBlock();
    b.setInsertionPointToStart(entry);
    if (bySplits)
      combineBySplits(b, loc, entry, outType.getElementType(), dv);
    else
      combineByRows(b, loc, entry, outType.getElementType(), dv);
    func::ReturnOp::create(b, loc);
  }

  /// One program per (query, head, batch), its tiles `[Dv, combine-splits]`:
  /// the partial outputs read transposed (a view keeping [Dv, splits]), so
  /// that the merge's max and sums are row reductions and every thread
  /// holds useful elements even for a single query row. Steps over the
  /// splits in blocks of combine-splits.
  void combineBySplits(OpBuilder &b, Location loc, Block *entry, Type elt,
                       int64_t dv) {
    MLIRContext *ctx = b.getContext();
    Index ix{b, loc};
    Type f32 = b.getF32Type(), index = b.getIndexType();
    int64_t cols = combineSplits;
    // Plain variables, not structured bindings: the lambdas below capture
    // them (C++17).
    CombineEntry e = CombineEntry::build(b, loc, entry);
    Value oPartial = e.oPartial, lsePartial = e.lsePartial, out = e.out,
          lse = e.lse, numSplits = e.numSplits, query = e.x, head = e.head,
          batch = e.batch;
    Value first = ix.mul(batch, numSplits);
    Value zero = ix.c(0);
    auto tensor = [&](ArrayRef<int64_t> shape, Type e) {
      return RankedTensorType::get(shape, e);
    };
    auto splat = [&](Value v, ArrayRef<int64_t> shape) -> Value {
      return tile::SplatOp::create(b, loc, tensor(shape, v.getType()), v);
    };
    auto splatF = [&](double v, ArrayRef<int64_t> shape) -> Value {
      return splat(arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)),
                   shape);
    };
    auto acrossSplits = [&](Value v) -> Value {
      return tile::BroadcastOp::create(b, loc, tensor({dv, cols}, f32), v,
                                       /*dim=*/1);
    };
    double negInf = -std::numeric_limits<double>::infinity();
    // [Dv, batch * kv_splits] of this (query, head), and the splits' LSE.
    Value oView = tile::ViewOp::create(
        b, loc, tile::DescType::get(ctx, {dv, ShapedType::kDynamic}, f32),
        oPartial, ValueRange{query, head}, b.getDenseI64ArrayAttr({3, 0}));
    Value lseView = tile::ViewOp::create(
        b, loc, tile::DescType::get(ctx, {ShapedType::kDynamic}, f32),
        lsePartial, ValueRange{head, query}, b.getDenseI64ArrayAttr({0}));
    Value init[] = {splatF(negInf, {dv}), splatF(0.0, {dv}),
                    splatF(0.0, {dv})};
    auto loop = scf::ForOp::create(
        b, loc, zero, numSplits, ix.c(cols), ValueRange(init),
        [&](OpBuilder &nb, Location l, Value split, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(nb.getInsertionBlock());
          // Columns past this batch's splits belong to the next batch (or
          // lie outside): not read, and weight 0.
          Value position = arith::AddIOp::create(
              b, l,
              tile::IotaOp::create(b, l, tensor({dv, cols}, index),
                                   /*dim=*/1),
              splat(split, {dv, cols}));
          Value valid =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, position,
                                    splat(numSplits, {dv, cols}));
          Value column = ix.add(first, split);
          Value o = tile::LoadOp::create(
              b, l, tensor({dv, cols}, f32), oView, ValueRange{zero, column},
              valid, b.getF32FloatAttr(0.0));
          Value lseRow = tile::LoadOp::create(b, l, tensor({cols}, f32),
                                              lseView, ValueRange{column},
                                              b.getF32FloatAttr(negInf));
          Value x = arith::MulFOp::create(
              b, l,
              tile::BroadcastOp::create(b, l, tensor({dv, cols}, f32), lseRow,
                                        /*dim=*/0),
              splatF(M_LOG2E, {dv, cols}));
          x = arith::SelectOp::create(b, l, valid, x,
                                      splatF(negInf, {dv, cols}));
          Value m = carried[0], sum = carried[1], acc = carried[2];
          Value mNew = arith::MaximumFOp::create(
              b, l, m,
              tile::ReduceOp::create(b, l, tensor({dv}, f32),
                                     tile::ReduceKind::max, x, /*dim=*/1));
          // No split of this row saw a key yet: 0 as the reference keeps
          // -inf - -inf out.
          Value none = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                             mNew, splatF(negInf, {dv}));
          Value mRef =
              arith::SelectOp::create(b, l, none, splatF(0.0, {dv}), mNew);
          Value alpha =
              math::Exp2Op::create(b, l, arith::SubFOp::create(b, l, m, mRef));
          Value weight = math::Exp2Op::create(
              b, l, arith::SubFOp::create(b, l, x, acrossSplits(mRef)));
          // Unread columns hold 0 with weight 0.
          Value weighted = arith::MulFOp::create(b, l, o, weight);
          auto rowSum = [&](Value v) -> Value {
            return tile::ReduceOp::create(b, l, tensor({dv}, f32),
                                          tile::ReduceKind::sum, v, /*dim=*/1);
          };
          Value sumNew = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, sum, alpha), rowSum(weight));
          Value accNew = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, acc, alpha), rowSum(weighted));
          scf::YieldOp::create(b, l, ValueRange{mNew, sumNew, accNew});
        });
    Value m = loop.getResult(0), sum = loop.getResult(1),
          acc = loop.getResult(2);
    // A row no split saw a key of: output 0, LSE -inf (as unsplit).
    Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum,
                                        splatF(0.0, {dv}));
    Value inv = arith::SelectOp::create(
        b, loc, empty, splatF(0.0, {dv}),
        arith::DivFOp::create(b, loc, splatF(1.0, {dv}), sum));
    Value o = arith::TruncFOp::create(b, loc, tensor({dv}, elt),
                                      arith::MulFOp::create(b, loc, acc, inv));
    Value outView = tile::ViewOp::create(
        b, loc, tile::DescType::get(ctx, {dv}, elt), out,
        ValueRange{batch, query, head}, b.getDenseI64ArrayAttr({3}));
    tile::StoreOp::create(b, loc, o, outView, ValueRange{zero});
    // Every row holds the LSE; the first one writes it.
    Value lse2 =
        arith::AddFOp::create(b, loc, m, math::Log2Op::create(b, loc, sum));
    Value lseNat = arith::SelectOp::create(
        b, loc, empty, splatF(negInf, {dv}),
        arith::MulFOp::create(b, loc, lse2, splatF(M_LN2, {dv})));
    Value lseOut = tile::ViewOp::create(
        b, loc, tile::DescType::get(ctx, {ShapedType::kDynamic}, f32), lse,
        ValueRange{batch, head}, b.getDenseI64ArrayAttr({2}));
    Value firstRow = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        tile::IotaOp::create(b, loc, tensor({dv}, index), /*dim=*/0),
        splat(zero, {dv}));
    tile::StoreOp::create(b, loc, lseNat, lseOut, ValueRange{query}, firstRow);
  }

  /// One program per (block of combine-rows queries, head, batch), its
  /// tiles `[rows, Dv]`: each split's partial output block in turn.
  void combineByRows(OpBuilder &b, Location loc, Block *entry, Type elt,
                     int64_t dv) {
    MLIRContext *ctx = b.getContext();
    Index ix{b, loc};
    Type f32 = b.getF32Type();
    int64_t rows = combineRows;
    CombineEntry e = CombineEntry::build(b, loc, entry);
    Value oPartial = e.oPartial, lsePartial = e.lsePartial, out = e.out,
          lse = e.lse, numSplits = e.numSplits, qBlock = e.x, head = e.head,
          batch = e.batch;
    Value qStart = ix.mul(qBlock, ix.c(rows));
    Value zero = ix.c(0);
    auto matrixDesc = [&](Type e) {
      return tile::DescType::get(ctx, {ShapedType::kDynamic, dv}, e);
    };
    auto rowDesc = tile::DescType::get(ctx, {ShapedType::kDynamic}, f32);
    auto keepMatrix = b.getDenseI64ArrayAttr({1, 3});
    auto keepRow = b.getDenseI64ArrayAttr({2});
    auto splat = [&](double v, ArrayRef<int64_t> shape) -> Value {
      Value c = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
      return tile::SplatOp::create(b, loc, RankedTensorType::get(shape, f32),
                                   c);
    };
    auto broadcast = [&](Value v) -> Value {
      return tile::BroadcastOp::create(
          b, loc, RankedTensorType::get({rows, dv}, f32), v, /*dim=*/1);
    };
    double negInf = -std::numeric_limits<double>::infinity();
    Value init[] = {splat(negInf, {rows}), splat(0.0, {rows}),
                    splat(0.0, {rows, dv})};
    auto loop = scf::ForOp::create(
        b, loc, zero, numSplits, ix.c(1), ValueRange(init),
        [&](OpBuilder &nb, Location l, Value split, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(nb.getInsertionBlock());
          Value row = ix.add(ix.mul(batch, numSplits), split);
          Value oView = tile::ViewOp::create(b, l, matrixDesc(f32), oPartial,
                                             ValueRange{row, head}, keepMatrix);
          Value lseView = tile::ViewOp::create(b, l, rowDesc, lsePartial,
                                               ValueRange{row, head}, keepRow);
          Value o = tile::LoadOp::create(
              b, l, RankedTensorType::get({rows, dv}, f32), oView,
              ValueRange{qStart, zero}, b.getF32FloatAttr(0.0));
          Value x = tile::LoadOp::create(b, l, RankedTensorType::get({rows}, f32),
                                         lseView, ValueRange{qStart},
                                         b.getF32FloatAttr(negInf));
          x = arith::MulFOp::create(b, l, x, splat(M_LOG2E, {rows}));
          Value m = carried[0], sum = carried[1], acc = carried[2];
          Value mNew = arith::MaximumFOp::create(b, l, m, x);
          // No split of these rows saw a key yet: 0 as the reference keeps
          // -inf - -inf out.
          Value none = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OEQ, mNew, splat(negInf, {rows}));
          Value mRef =
              arith::SelectOp::create(b, l, none, splat(0.0, {rows}), mNew);
          Value alpha = math::Exp2Op::create(
              b, l, arith::SubFOp::create(b, l, m, mRef));
          Value weight = math::Exp2Op::create(
              b, l, arith::SubFOp::create(b, l, x, mRef));
          Value sumNew = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, sum, alpha), weight);
          Value accNew = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, acc, broadcast(alpha)),
              arith::MulFOp::create(b, l, o, broadcast(weight)));
          scf::YieldOp::create(b, l, ValueRange{mNew, sumNew, accNew});
        });
    Value m = loop.getResult(0), sum = loop.getResult(1),
          acc = loop.getResult(2);
    // Rows no split saw a key of: output 0, LSE -inf (as unsplit).
    Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum,
                                        splat(0.0, {rows}));
    Value inv = arith::SelectOp::create(
        b, loc, empty, splat(0.0, {rows}),
        arith::DivFOp::create(b, loc, splat(1.0, {rows}), sum));
    Value o = arith::MulFOp::create(b, loc, acc, broadcast(inv));
    Value oLow = arith::TruncFOp::create(
        b, loc, RankedTensorType::get({rows, dv}, elt), o);
    Value oView = tile::ViewOp::create(b, loc, matrixDesc(elt), out,
                                       ValueRange{batch, head}, keepMatrix);
    tile::StoreOp::create(b, loc, oLow, oView, ValueRange{qStart, zero});
    Value lse2 =
        arith::AddFOp::create(b, loc, m, math::Log2Op::create(b, loc, sum));
    Value lseNat = arith::MulFOp::create(b, loc, lse2, splat(M_LN2, {rows}));
    lseNat = arith::SelectOp::create(b, loc, empty, splat(negInf, {rows}),
                                     lseNat);
    Value lseView = tile::ViewOp::create(b, loc, rowDesc, lse,
                                         ValueRange{batch, head}, keepRow);
    tile::StoreOp::create(b, loc, lseNat, lseView, ValueRange{qStart});
  }
};

} // namespace
