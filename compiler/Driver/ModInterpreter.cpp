//===- ModInterpreter.cpp - float64 evaluation of mod regions -------------===//

#include "compiler/Driver/ModInterpreter.h"

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Attn/IR/ModRegion.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace kiln::driver {

/// Sign-extends the low `width` bits: integer ops wrap like the kernel's.
static int64_t wrap(int64_t v, unsigned width) {
  if (width >= 64)
    return v;
  if (width == 1)
    return v & 1;
  uint64_t mask = (uint64_t{1} << width) - 1;
  uint64_t low = static_cast<uint64_t>(v) & mask;
  uint64_t sign = uint64_t{1} << (width - 1);
  return static_cast<int64_t>((low ^ sign) - sign);
}

static unsigned widthOf(Type t) {
  return t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
}

static uint64_t asUnsigned(int64_t v, unsigned width) {
  if (width >= 64)
    return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t{1} << width) - 1);
}

static bool cmpF(arith::CmpFPredicate p, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::AlwaysFalse:
    return false;
  case P::OEQ:
    return !unordered && a == b;
  case P::OGT:
    return !unordered && a > b;
  case P::OGE:
    return !unordered && a >= b;
  case P::OLT:
    return !unordered && a < b;
  case P::OLE:
    return !unordered && a <= b;
  case P::ONE:
    return !unordered && a != b;
  case P::ORD:
    return !unordered;
  case P::UEQ:
    return unordered || a == b;
  case P::UGT:
    return unordered || a > b;
  case P::UGE:
    return unordered || a >= b;
  case P::ULT:
    return unordered || a < b;
  case P::ULE:
    return unordered || a <= b;
  case P::UNE:
    return unordered || a != b;
  case P::UNO:
    return unordered;
  case P::AlwaysTrue:
    return true;
  }
  return false;
}

static bool cmpI(arith::CmpIPredicate p, int64_t a, int64_t b, unsigned w) {
  using P = arith::CmpIPredicate;
  uint64_t ua = asUnsigned(a, w), ub = asUnsigned(b, w);
  switch (p) {
  case P::eq:
    return a == b;
  case P::ne:
    return a != b;
  case P::slt:
    return a < b;
  case P::sle:
    return a <= b;
  case P::sgt:
    return a > b;
  case P::sge:
    return a >= b;
  case P::ult:
    return ua < ub;
  case P::ule:
    return ua <= ub;
  case P::ugt:
    return ua > ub;
  case P::uge:
    return ua >= ub;
  }
  return false;
}

/// Signed division's edge cases, defined as attn-guard-division defines
/// them for the kernels: by 0 a quotient and remainder of 0, by -1 the
/// wrapping negation and 0 (INT_MIN / -1 overflows: C++ leaves it
/// undefined, x86 traps).
static int64_t negateWrapping(int64_t a) {
  return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
}
static int64_t divSigned(int64_t a, int64_t b) {
  return b == 0 ? 0 : b == -1 ? negateWrapping(a) : a / b;
}
static int64_t remSigned(int64_t a, int64_t b) {
  return b == 0 || b == -1 ? 0 : a % b;
}

static int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0 || b == -1)
    return divSigned(a, b);
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t ceilDiv(int64_t a, int64_t b) {
  if (b == 0 || b == -1)
    return divSigned(a, b);
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

/// Turns each op of a mod region into a step over numbered value slots.
class ModCompiler {
public:
  ModCompiler(ModInterpreter &interp) : interp(interp) {}

  unsigned slot(Value v) {
    auto [it, inserted] = slots.try_emplace(v, slots.size());
    return it->second;
  }

  LogicalResult compile(Region &region, std::string &error) {
    Block &block = region.front();
    for (BlockArgument arg : block.getArguments())
      slot(arg);
    for (Operation &op : block.without_terminator())
      if (failed(compileOp(op))) {
        llvm::raw_string_ostream os(error);
        os << "the reference interpreter does not support '"
           << op.getName().getStringRef() << "'";
        return failure();
      }
    auto yield = cast<attn::YieldOp>(block.getTerminator());
    interp.resultSlot = slot(yield.getValues().front());
    interp.numSlots = slots.size();
    return success();
  }

private:
  using Slots = std::vector<ModValue>;

  template <typename Fn> void floatBinary(Operation &op, Fn fn) {
    unsigned a = slot(op.getOperand(0)), b = slot(op.getOperand(1)),
             r = slot(op.getResult(0));
    interp.steps.push_back([=](Slots &s) { s[r].f = fn(s[a].f, s[b].f); });
  }
  template <typename Fn> void floatUnary(Operation &op, Fn fn) {
    unsigned a = slot(op.getOperand(0)), r = slot(op.getResult(0));
    interp.steps.push_back([=](Slots &s) { s[r].f = fn(s[a].f); });
  }
  template <typename Fn> void intBinary(Operation &op, Fn fn) {
    unsigned a = slot(op.getOperand(0)), b = slot(op.getOperand(1)),
             r = slot(op.getResult(0));
    unsigned w = widthOf(op.getResult(0).getType());
    interp.steps.push_back(
        [=](Slots &s) { s[r].i = wrap(fn(s[a].i, s[b].i, w), w); });
  }

  LogicalResult compileOp(Operation &op) {
    using std::fabs;
    bool handled = true;
    llvm::TypeSwitch<Operation *>(&op)
        .Case([&](arith::ConstantOp c) {
          ModValue v;
          if (auto f = dyn_cast<FloatAttr>(c.getValue()))
            v.f = f.getValueAsDouble();
          else if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
            v.i = i.getType().isInteger(1) ? i.getValue().getZExtValue()
                                           : i.getValue().getSExtValue();
          else
            handled = false;
          unsigned r = slot(c.getResult());
          interp.steps.push_back([=](Slots &s) { s[r] = v; });
        })
        .Case([&](arith::AddFOp) {
          floatBinary(op, [](double a, double b) { return a + b; });
        })
        .Case([&](arith::SubFOp) {
          floatBinary(op, [](double a, double b) { return a - b; });
        })
        .Case([&](arith::MulFOp) {
          floatBinary(op, [](double a, double b) { return a * b; });
        })
        .Case([&](arith::DivFOp) {
          floatBinary(op, [](double a, double b) { return a / b; });
        })
        .Case([&](arith::RemFOp) {
          floatBinary(op, [](double a, double b) { return std::fmod(a, b); });
        })
        .Case([&](arith::MaximumFOp) {
          floatBinary(op, [](double a, double b) {
            return std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b);
          });
        })
        .Case([&](arith::MinimumFOp) {
          floatBinary(op, [](double a, double b) {
            return std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b);
          });
        })
        .Case([&](arith::MaxNumFOp) {
          floatBinary(op, [](double a, double b) { return std::fmax(a, b); });
        })
        .Case([&](arith::MinNumFOp) {
          floatBinary(op, [](double a, double b) { return std::fmin(a, b); });
        })
        .Case(
            [&](arith::NegFOp) { floatUnary(op, [](double a) { return -a; }); })
        .Case([&](math::ExpOp) {
          floatUnary(op, [](double a) { return std::exp(a); });
        })
        .Case([&](math::Exp2Op) {
          floatUnary(op, [](double a) { return std::exp2(a); });
        })
        .Case([&](math::LogOp) {
          floatUnary(op, [](double a) { return std::log(a); });
        })
        .Case([&](math::Log2Op) {
          floatUnary(op, [](double a) { return std::log2(a); });
        })
        .Case([&](math::TanhOp) {
          floatUnary(op, [](double a) { return std::tanh(a); });
        })
        .Case([&](math::SqrtOp) {
          floatUnary(op, [](double a) { return std::sqrt(a); });
        })
        .Case([&](math::RsqrtOp) {
          floatUnary(op, [](double a) { return 1.0 / std::sqrt(a); });
        })
        .Case([&](math::AbsFOp) {
          floatUnary(op, [](double a) { return std::fabs(a); });
        })
        .Case([&](math::SinOp) {
          floatUnary(op, [](double a) { return std::sin(a); });
        })
        .Case([&](math::CosOp) {
          floatUnary(op, [](double a) { return std::cos(a); });
        })
        .Case([&](math::ErfOp) {
          floatUnary(op, [](double a) { return std::erf(a); });
        })
        .Case([&](math::FloorOp) {
          floatUnary(op, [](double a) { return std::floor(a); });
        })
        .Case([&](math::CeilOp) {
          floatUnary(op, [](double a) { return std::ceil(a); });
        })
        .Case([&](math::PowFOp) {
          floatBinary(op, [](double a, double b) { return std::pow(a, b); });
        })
        // Precision casts are exact in float64: the reference is the ideal.
        .Case<arith::ExtFOp, arith::TruncFOp>(
            [&](Operation *o) { floatUnary(*o, [](double a) { return a; }); })
        .Case([&](arith::CmpFOp c) {
          unsigned a = slot(c.getLhs()), b = slot(c.getRhs()),
                   r = slot(c.getResult());
          auto p = c.getPredicate();
          interp.steps.push_back(
              [=](Slots &s) { s[r].i = cmpF(p, s[a].f, s[b].f); });
        })
        .Case([&](arith::CmpIOp c) {
          unsigned a = slot(c.getLhs()), b = slot(c.getRhs()),
                   r = slot(c.getResult());
          auto p = c.getPredicate();
          unsigned w = widthOf(c.getLhs().getType());
          interp.steps.push_back(
              [=](Slots &s) { s[r].i = cmpI(p, s[a].i, s[b].i, w); });
        })
        .Case([&](arith::SelectOp sel) {
          unsigned c = slot(sel.getCondition()), t = slot(sel.getTrueValue()),
                   f = slot(sel.getFalseValue()), r = slot(sel.getResult());
          interp.steps.push_back(
              [=](Slots &s) { s[r] = s[c].i ? s[t] : s[f]; });
        })
        .Case([&](arith::AddIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned) { return a + b; });
        })
        .Case([&](arith::SubIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned) { return a - b; });
        })
        .Case([&](arith::MulIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned) { return a * b; });
        })
        .Case([&](arith::DivSIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned) {
            return divSigned(a, b);
          });
        })
        .Case([&](arith::RemSIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned) {
            return remSigned(a, b);
          });
        })
        .Case([&](arith::DivUIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned w) -> int64_t {
            uint64_t d = asUnsigned(b, w);
            return d ? static_cast<int64_t>(asUnsigned(a, w) / d) : 0;
          });
        })
        .Case([&](arith::RemUIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned w) -> int64_t {
            uint64_t d = asUnsigned(b, w);
            return d ? static_cast<int64_t>(asUnsigned(a, w) % d) : 0;
          });
        })
        .Case([&](arith::FloorDivSIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned) {
            return floorDiv(a, b);
          });
        })
        .Case([&](arith::CeilDivSIOp) {
          intBinary(
              op, [](int64_t a, int64_t b, unsigned) { return ceilDiv(a, b); });
        })
        .Case([&](arith::AndIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned) { return a & b; });
        })
        .Case([&](arith::OrIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned) { return a | b; });
        })
        .Case([&](arith::XOrIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned) { return a ^ b; });
        })
        .Case([&](arith::MaxSIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned) {
            return std::max(a, b);
          });
        })
        .Case([&](arith::MinSIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned) {
            return std::min(a, b);
          });
        })
        .Case([&](arith::ShLIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned w) -> int64_t {
            return b >= w ? 0
                          : static_cast<int64_t>(static_cast<uint64_t>(a) << b);
          });
        })
        .Case([&](arith::ShRSIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned w) -> int64_t {
            return b >= w ? (a < 0 ? -1 : 0) : a >> b;
          });
        })
        .Case([&](arith::ShRUIOp) {
          intBinary(op, [](int64_t a, int64_t b, unsigned w) -> int64_t {
            return b >= w ? 0 : static_cast<int64_t>(asUnsigned(a, w) >> b);
          });
        })
        .Case([&](math::AbsIOp) {
          unsigned a = slot(op.getOperand(0)), r = slot(op.getResult(0));
          interp.steps.push_back(
              [=](Slots &s) { s[r].i = std::llabs(s[a].i); });
        })
        .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(
            [&](Operation *o) {
              unsigned a = slot(o->getOperand(0)), r = slot(o->getResult(0));
              unsigned w = widthOf(o->getResult(0).getType());
              bool fromI1 = o->getOperand(0).getType().isInteger(1);
              interp.steps.push_back([=](Slots &s) {
                // i1 is stored as 0/1; signed, true is -1.
                s[r].i = wrap(fromI1 ? -s[a].i : s[a].i, w);
              });
            })
        .Case([&](arith::ExtUIOp e) {
          unsigned a = slot(e.getIn()), r = slot(e.getResult());
          unsigned w = widthOf(e.getIn().getType());
          interp.steps.push_back([=](Slots &s) {
            s[r].i = static_cast<int64_t>(asUnsigned(s[a].i, w));
          });
        })
        .Case([&](arith::SIToFPOp c) {
          unsigned a = slot(c.getIn()), r = slot(c.getResult());
          bool fromI1 = c.getIn().getType().isInteger(1);
          interp.steps.push_back([=](Slots &s) {
            s[r].f = static_cast<double>(fromI1 ? -s[a].i : s[a].i);
          });
        })
        .Case([&](arith::UIToFPOp c) {
          unsigned a = slot(c.getIn()), r = slot(c.getResult());
          unsigned w = widthOf(c.getIn().getType());
          interp.steps.push_back([=](Slots &s) {
            s[r].f = static_cast<double>(asUnsigned(s[a].i, w));
          });
        })
        .Case([&](arith::FPToSIOp c) {
          unsigned a = slot(c.getIn()), r = slot(c.getResult());
          unsigned w = widthOf(c.getResult().getType());
          interp.steps.push_back([=](Slots &s) {
            s[r].i = wrap(static_cast<int64_t>(std::trunc(s[a].f)), w);
          });
        })
        .Case([&](memref::LoadOp load) {
          auto arg = cast<BlockArgument>(load.getMemRef());
          unsigned captureIndex = arg.getArgNumber() - interp.numLeading;
          SmallVector<unsigned> indexSlots;
          for (Value i : load.getIndices())
            indexSlots.push_back(slot(i));
          unsigned r = slot(load.getResult());
          bool isFloat = isa<FloatType>(load.getType());
          ModInterpreter *self = &interp;
          interp.steps.push_back([=](Slots &s) {
            const HostBuffer *buffer = self->captures[captureIndex];
            int64_t index[8] = {0};
            int64_t linear = 0;
            for (size_t d = 0; d < indexSlots.size(); ++d) {
              index[d] = s[indexSlots[d]].i;
              // Out-of-range reads are a bug in the variant; clamp so the
              // reference stays memory safe (the kernel's read is UB too).
              index[d] = std::min(std::max<int64_t>(index[d], 0),
                                  buffer->sizes[d] - 1);
              linear = linear * buffer->sizes[d] + index[d];
            }
            double v = buffer->get(linear);
            if (isFloat)
              s[r].f = v;
            else
              s[r].i = static_cast<int64_t>(v);
          });
        })
        .Default([&](Operation *) { handled = false; });
    return success(handled);
  }

  ModInterpreter &interp;
  llvm::DenseMap<Value, unsigned> slots;
};

std::unique_ptr<ModInterpreter>
ModInterpreter::create(Region &region, std::vector<const HostBuffer *> captures,
                       std::string &error) {
  auto interp = std::unique_ptr<ModInterpreter>(new ModInterpreter());
  interp->captures = std::move(captures);
  Block &block = region.front();
  interp->numLeading = block.getNumArguments() - interp->captures.size();
  ModCompiler compiler(*interp);
  if (failed(compiler.compile(region, error)))
    return nullptr;
  return interp;
}

ModValue ModInterpreter::run(llvm::ArrayRef<ModValue> leadingArgs) const {
  // Each thread evaluates in its own slots, so the reference can run rows
  // in parallel.
  thread_local std::vector<ModValue> local;
  local.assign(numSlots, ModValue{});
  for (size_t i = 0; i < leadingArgs.size(); ++i)
    local[i] = leadingArgs[i];
  for (const Step &step : steps)
    step(local);
  return local[resultSlot];
}

} // namespace kiln::driver
