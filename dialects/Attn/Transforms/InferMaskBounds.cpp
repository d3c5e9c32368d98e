//===- InferMaskBounds.cpp - closed-form KV ranges for affine masks -------===//
//
// FlashAttention skips KV blocks a causal query block cannot see and drops the
// per-element mask on blocks it sees entirely; this pass derives the same
// facts for any mask_mod that is a conjunction of affine comparisons
// (causal, sliding window, prefix, chunked bands), so the lowering can do the
// same for user-written masks.
//
//===----------------------------------------------------------------------===//

#include "dialects/Attn/Transforms/Passes.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <optional>

namespace kiln::attn {
#define GEN_PASS_DEF_ATTNINFERMASKBOUNDS
#include "dialects/Attn/Transforms/Passes.h.inc"
} // namespace kiln::attn

using namespace mlir;
using namespace kiln::attn;

namespace {

/// a*q + b*kv + c over the mask_mod's query and key index arguments. The
/// arithmetic is checked: a form whose coefficients overflow 64 bits is not
/// one the analysis can use.
struct Linear {
  int64_t q = 0, kv = 0, c = 0;
  std::optional<Linear> operator+(const Linear &o) const {
    auto q2 = llvm::checkedAdd(q, o.q), kv2 = llvm::checkedAdd(kv, o.kv),
         c2 = llvm::checkedAdd(c, o.c);
    if (!q2 || !kv2 || !c2)
      return std::nullopt;
    return Linear{*q2, *kv2, *c2};
  }
  std::optional<Linear> operator-(const Linear &o) const {
    auto q2 = llvm::checkedSub(q, o.q), kv2 = llvm::checkedSub(kv, o.kv),
         c2 = llvm::checkedSub(c, o.c);
    if (!q2 || !kv2 || !c2)
      return std::nullopt;
    return Linear{*q2, *kv2, *c2};
  }
  std::optional<Linear> scaled(int64_t k) const {
    auto q2 = llvm::checkedMul(q, k), kv2 = llvm::checkedMul(kv, k),
         c2 = llvm::checkedMul(c, k);
    if (!q2 || !kv2 || !c2)
      return std::nullopt;
    return Linear{*q2, *kv2, *c2};
  }
  bool isConstant() const { return q == 0 && kv == 0; }

  /// Whether the form's value stays in range for every position, so that
  /// the mask_mod's wrapping integer arithmetic computes it exactly. 64-bit
  /// values (index, i64) hold positions below 2^31 (the runtime's limit on
  /// dimensions) and stay within 2^62, leaving the lowering room to add
  /// block sizes to a bound; 32-bit ones, by the design's assumption that
  /// they hold any position, positions below 2^30, within their own range.
  bool fitsIn(unsigned width) const {
    int64_t maxPos =
        width >= 64 ? (int64_t{1} << 31) - 1 : (int64_t{1} << 30) - 1;
    int64_t limit = width >= 64 ? int64_t{1} << 62 : int64_t{1} << 31;
    std::optional<int64_t> lo = c, hi = c;
    for (int64_t coeff : {q, kv}) {
      auto term = llvm::checkedMul(coeff, maxPos);
      if (!term || !lo || !hi)
        return false;
      lo = llvm::checkedAdd(*lo, std::min<int64_t>(*term, 0));
      hi = llvm::checkedAdd(*hi, std::max<int64_t>(*term, 0));
    }
    return lo && hi && *lo >= -limit && *hi < limit;
  }
};

class MaskAnalysis {
public:
  /// `block` is the mask_mod's entry block, or null when there is none.
  explicit MaskAnalysis(Block *block) {
    if (block) {
      qArg = block->getArgument(2);
      kvArg = block->getArgument(3);
    }
  }

  /// The value as a linear form, or nullopt for anything non-affine or
  /// anything that could wrap in the value's type (the reference, like the
  /// kernel's per-element mask, wraps where the closed form would not).
  std::optional<Linear> linear(Value v) {
    std::optional<Linear> form = linearUnchecked(v);
    if (!form)
      return std::nullopt;
    unsigned width =
        v.getType().isIndex() ? 64 : v.getType().getIntOrFloatBitWidth();
    if (!form->fitsIn(width))
      return std::nullopt;
    return form;
  }

  std::optional<Linear> linearUnchecked(Value v) {
    if (v == qArg)
      return Linear{1, 0, 0};
    if (v == kvArg)
      return Linear{0, 1, 0};
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    // Narrow integers wrap (an i8 q - kv is not q - kv): only index and
    // integers of 32 bits or more, which hold any sequence position, count
    // as affine.
    Type type = v.getType();
    if (!type.isIndex() &&
        !(type.isSignlessInteger() && type.getIntOrFloatBitWidth() >= 32))
      return std::nullopt;
    if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
      if (auto attr = dyn_cast<IntegerAttr>(cst.getValue()))
        return Linear{0, 0, attr.getInt()};
      return std::nullopt;
    }
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(def))
      return linear(def->getOperand(0));
    if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def)) {
      auto lhs = linear(def->getOperand(0));
      auto rhs = linear(def->getOperand(1));
      if (!lhs || !rhs)
        return std::nullopt;
      if (isa<arith::AddIOp>(def))
        return *lhs + *rhs;
      if (isa<arith::SubIOp>(def))
        return *lhs - *rhs;
      if (lhs->isConstant())
        return rhs->scaled(lhs->c);
      if (rhs->isConstant())
        return lhs->scaled(rhs->c);
    }
    return std::nullopt;
  }

  /// Adds the bounds implied by `cond`, read as a conjunction.
  void addConjunction(Value cond) {
    Operation *def = cond.getDefiningOp();
    if (auto andOp = dyn_cast_or_null<arith::AndIOp>(def)) {
      addConjunction(andOp.getLhs());
      addConjunction(andOp.getRhs());
      return;
    }
    if (auto cst = dyn_cast_or_null<arith::ConstantOp>(def)) {
      if (auto attr = dyn_cast<IntegerAttr>(cst.getValue())) {
        if (attr.getValue().isZero())
          addNonNegative({0, 0, -1}); // keeps nothing
        return;
      }
    }
    auto cmp = dyn_cast_or_null<arith::CmpIOp>(def);
    if (!cmp) {
      exact = false;
      return;
    }
    auto lhs = linear(cmp.getLhs());
    auto rhs = linear(cmp.getRhs());
    if (!lhs || !rhs) {
      exact = false;
      return;
    }
    // Both sides lie within 2^62 (Linear::fitsIn): these cannot overflow.
    Linear e = *(*lhs - *rhs), negated = *e.scaled(-1);
    Linear one{0, 0, 1};
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::sge:
      return addNonNegative(e);
    case arith::CmpIPredicate::sgt:
      return addNonNegative(*(e - one));
    case arith::CmpIPredicate::sle:
      return addNonNegative(negated);
    case arith::CmpIPredicate::slt:
      return addNonNegative(*(negated - one));
    case arith::CmpIPredicate::eq:
      addNonNegative(e);
      return addNonNegative(negated);
    default:
      // Unsigned comparisons of differences wrap (q - kv with kv > q is
      // huge), so they are not the affine conditions they look like.
      exact = false;
      return;
    }
  }

  /// Records f >= 0 as a bound on kv, when it is one of the forms we can use.
  void addNonNegative(Linear f) {
    // The lowering adds block sizes and positions to a bound's offset, and
    // on the GPU in 32-bit ints (index there): an offset beyond 2^30 would
    // overflow that arithmetic. No sequence reaches it, so the mask keeps
    // its per-element test.
    if (f.c > (int64_t{1} << 30) || f.c < -(int64_t{1} << 30)) {
      exact = false;
      return;
    }
    if (f.kv == 0 && f.q == 0) {
      if (f.c < 0) // never true: an empty band
        upper.push_back({0, -1, false});
      return;
    }
    if (f.kv == 1 && (-f.q == 0 || -f.q == 1)) {
      lower.push_back({-f.q, -f.c, false}); // kv >= -a*q - c
      return;
    }
    if (f.kv == -1 && (f.q == 0 || f.q == 1)) {
      upper.push_back({f.q, f.c, false}); // kv <= a*q + c
      return;
    }
    exact = false;
  }

  struct Bound {
    int64_t qCoeff, offset;
    bool diag;
  };
  SmallVector<Bound> lower, upper;
  bool exact = true;

private:
  Value qArg, kvArg;
};

struct AttnInferMaskBounds
    : public kiln::attn::impl::AttnInferMaskBoundsBase<AttnInferMaskBounds> {
  void runOnOperation() override {
    getOperation().walk([](AttentionOp op) {
      MLIRContext *ctx = op.getContext();
      MaskAnalysis analysis(op.hasMaskMod() ? &op.getMaskMod().front()
                                            : nullptr);
      if (op.hasMaskMod()) {
        auto yield = cast<YieldOp>(op.getMaskMod().front().getTerminator());
        analysis.addConjunction(yield.getValues().front());
      }
      switch (op.getCausal()) {
      case CausalAlignment::none:
        break;
      case CausalAlignment::top_left:
        analysis.upper.push_back({1, 0, false});
        break;
      case CausalAlignment::bottom_right:
        analysis.upper.push_back({1, 0, true});
        break;
      }
      auto toAttrs = [&](ArrayRef<MaskAnalysis::Bound> bounds) {
        SmallVector<Attribute> attrs;
        for (const MaskAnalysis::Bound &b : bounds)
          attrs.push_back(KVBoundAttr::get(ctx, b.qCoeff, b.offset, b.diag));
        return ArrayAttr::get(ctx, attrs);
      };
      op.setKvBandAttr(BandAttr::get(ctx, toAttrs(analysis.lower),
                                     toAttrs(analysis.upper), analysis.exact));
    });
  }
};

} // namespace
