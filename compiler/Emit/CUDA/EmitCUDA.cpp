//===- EmitCUDA.cpp - print CUDA C++ from tgpu-level IR -------------------===//
//
// A direct printer: every SSA value becomes a C++ local named after its
// number, every op one statement (elementwise ops on register tiles a short
// unrolled loop over the thread's elements), scf.for a C++ loop whose carried
// values are variables assigned at the end of the body. Each statement is
// preceded by a comment naming the op and its source location, so the
// kernel can be read against the IR.
//
//===----------------------------------------------------------------------===//

#include "compiler/Emit/CUDA/EmitCUDA.h"
#include "compiler/Emit/EmitDialects.h"

#include "kiln/CompileUnits.h"

#include "dialects/Tile/IR/TileAttrNames.h"
#include "dialects/TileGPU/IR/TileGPUAttrNames.h"

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Tile/IR/TileDialect.h"
#include "dialects/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AsmState.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

/// The hardware barrier a producer warpgroup that draws keep bits shares
/// the next tile on (0 is __syncthreads's, 1 the consumers', 2 onward their
/// turns).
constexpr int kProducerBarrier = 15;

class CUDAPrinter {
public:
  CUDAPrinter(llvm::raw_ostream &os) : os(os) {}

  LogicalResult emitKernel(func::FuncOp func);

private:
  // ---- names and types --------------------------------------------------
  std::string name(Value v) {
    auto it = names.find(v);
    if (it != names.end())
      return it->second;
    std::string n = "v" + std::to_string(nextId++);
    names[v] = n;
    return n;
  }

  /// `memref`'s stride along `d`, as printed: the launch plan requires every
  /// tensor to be contiguous in its last dimension (the runtime checks it),
  /// and the runtime allocates workspaces contiguous, so a kernel argument's
  /// innermost stride is the literal 1, which folds the index arithmetic.
  std::string stride(Value memref, int64_t d) {
    if (auto arg = dyn_cast<BlockArgument>(memref))
      if (auto func =
              dyn_cast_or_null<func::FuncOp>(arg.getOwner()->getParentOp());
          func && arg.getOwner()->isEntryBlock() &&
          d + 1 == cast<MemRefType>(arg.getType()).getRank() &&
          (func.getArgAttr(arg.getArgNumber(), tile::attrs::kTensor) ||
           func.getArgAttr(arg.getArgNumber(), tile::attrs::kWorkspace)))
        return "1";
    return name(memref) + ".stride[" + std::to_string(d) + "]";
  }

  FailureOr<std::string> scalarType(Type t, Location loc) {
    if (t.isF32())
      return std::string("float");
    if (t.isF64())
      return std::string("double");
    if (t.isBF16())
      return std::string("kiln::bf16");
    if (t.isF16())
      return std::string("kiln::f16");
    if (t.isInteger(1))
      return std::string("bool");
    if (t.isIndex() || t.isInteger(32))
      return std::string("int");
    if (t.isInteger(64))
      return std::string("long long");
    if (t.isInteger(8))
      return std::string("signed char");
    if (t.isInteger(16))
      return std::string("short");
    emitError(loc) << "the CUDA emitter has no C++ type for " << t;
    return failure();
  }

  FailureOr<std::string> cppType(Type t, Location loc) {
    if (auto tensor = dyn_cast<RankedTensorType>(t)) {
      auto elt = scalarType(tensor.getElementType(), loc);
      if (failed(elt))
        return failure();
      if (auto mma =
              dyn_cast_or_null<tgpu::MmaLayoutAttr>(tensor.getEncoding())) {
        if (mma.getColGroups() != 1)
          return llvm::formatv("kiln::Frag<{0}, {1}, {2}, {3}, {4}>", *elt,
                               tensor.getDimSize(0), tensor.getDimSize(1),
                               mma.getWarps(), mma.getColGroups())
              .str();
        return llvm::formatv("kiln::Frag<{0}, {1}, {2}, {3}>", *elt,
                             tensor.getDimSize(0), tensor.getDimSize(1),
                             mma.getWarps())
            .str();
      }
      if (auto rows =
              dyn_cast_or_null<tgpu::RowsLayoutAttr>(tensor.getEncoding()))
        return llvm::formatv("kiln::RowFrag<{0}, {1}, {2}>", *elt,
                             tensor.getDimSize(0), rows.getWarps())
            .str();
      if (auto cols =
              dyn_cast_or_null<tgpu::ColsLayoutAttr>(tensor.getEncoding()))
        return llvm::formatv("kiln::ColFrag<{0}, {1}, {2}>", *elt,
                             tensor.getDimSize(0), cols.getWarps())
            .str();
      emitError(loc) << "register tile " << t
                     << " has no GPU layout; run convert-tile-to-tgpu first";
      return failure();
    }
    if (auto desc = dyn_cast<tile::DescType>(t)) {
      auto elt = scalarType(desc.getElementType(), loc);
      if (failed(elt))
        return failure();
      if (desc.isPaged())
        return "kiln::PagedDesc<" + *elt + ", " +
               std::to_string(desc.getPageSize()) + ">";
      if (desc.getGroup() > 1)
        return "kiln::Desc<" + *elt + ", " + std::to_string(desc.getGroup()) +
               ">";
      return "kiln::Desc<" + *elt + ">";
    }
    if (auto memref = dyn_cast<MemRefType>(t)) {
      auto elt = scalarType(memref.getElementType(), loc);
      if (failed(elt))
        return failure();
      if (int64_t swizzle = tgpu::swizzleBytes(memref))
        return llvm::formatv("kiln::SwizzledTile<{0}, {1}, {2}, {3}>", *elt,
                             memref.getDimSize(0), memref.getDimSize(1),
                             swizzle)
            .str();
      if (tgpu::isSharedMemRef(memref) && memref.getRank() == 1 &&
          memref.getElementType().isInteger(64))
        return std::string("unsigned long long *"); // mbarriers
      if (tgpu::isSharedMemRef(memref) && memref.getRank() == 1 &&
          memref.hasStaticShape())
        return llvm::formatv("kiln::SmemVector<{0}, {1}>", *elt,
                             memref.getDimSize(0))
            .str();
      if (tgpu::isSharedMemRef(memref)) {
        SmallVector<int64_t> strides;
        int64_t offset;
        if (memref.getRank() != 2 ||
            failed(memref.getStridesAndOffset(strides, offset)))
          return emitError(loc) << "shared buffers are 2-D strided memrefs",
                 failure();
        return llvm::formatv("kiln::SmemTile<{0}, {1}, {2}, {3}>", *elt,
                             memref.getDimSize(0), memref.getDimSize(1),
                             strides[0])
            .str();
      }
      return llvm::formatv("kiln::Tensor<{0}, {1}>", *elt,
                           std::max<int64_t>(memref.getRank(), 1))
          .str();
    }
    if (isa<tgpu::TensorMapType>(t))
      return std::string("kiln::TensorMap");
    return scalarType(t, loc);
  }

  /// The operand as it appears inside an elementwise loop over `e`.
  std::string element(Value v) {
    return isa<RankedTensorType>(v.getType()) ? name(v) + ".x[e]" : name(v);
  }

  // ---- printing helpers ---------------------------------------------------
  llvm::raw_ostream &line() {
    os.indent(indent);
    return os;
  }

  void comment(Operation *op) {
    std::string loc;
    llvm::raw_string_ostream ls(loc);
    op->getLoc().print(ls);
    line() << "// " << op->getName().getStringRef() << " " << loc << "\n";
  }

  static std::string floatLiteral(double v) {
    if (std::isnan(v))
      return "kiln::nan_f32()";
    if (std::isinf(v))
      return v > 0 ? "kiln::pos_inf()" : "kiln::neg_inf()";
    return llvm::formatv("{0:e9}f", v).str();
  }

  // ---- scalar expressions ---------------------------------------------------
  FailureOr<std::string> expression(Operation *op, ArrayRef<std::string> a);

  LogicalResult emitOp(Operation *op);
  /// `result = acc; fn(result, lhs, rhs);` for the product ops (with no
  /// `acc`, `result` starts uninitialised: the product ignores it).
  /// `lhs` is the operand as printed.
  LogicalResult emitProduct(Operation *op, const std::string &fn, Value acc,
                            const std::string &lhs, Value rhs,
                            Value predicate = Value());
  LogicalResult emitElementwise(Operation *op);
  LogicalResult emitFor(scf::ForOp loop);
  LogicalResult emitWhile(scf::WhileOp loop);
  /// Every op of `block` but its terminator, one level deeper.
  LogicalResult emitBlock(Block &block);
  LogicalResult emitWarpSpecialize(tgpu::WarpSpecializeOp ws);
  /// `barriers + index`: the mbarrier an op names.
  std::string barrier(Value barriers, Value index) {
    return name(barriers) + " + " + name(index);
  }

  llvm::raw_ostream &os;
  unsigned indent = 2;
  unsigned nextId = 0;
  int64_t numThreads = 0;
  /// Inside tgpu.warp_specialize's consumer region: barriers count the
  /// consumer threads (numThreads) alone.
  bool inConsumers = false;
  /// In a producer region whose turns are passed on later (kiln::TurnLater
  /// turn_later declared at its start).
  bool turnsLater = false;
  /// In a producer region the whole warpgroup runs (it draws keep bits,
  /// tgpu.draw_keep_bits): the other ops without results (copies, turns)
  /// stay with its first warp, as when that warp ran the region alone.
  bool producerWarpgroup = false;
  /// The producer warpgroup's threads (tgpu.warp_specialize).
  int64_t producerThreads = 0;
  /// The condition of the producer's first warp (its threads follow the
  /// consumers').
  std::string firstWarpCheck() const {
    return "if (threadIdx.x < " + std::to_string(numThreads + 32) + ")";
  }
  /// The kernel is tgpu.fast_math: tanh and exp on the approximations.
  bool fastMath = false;
  /// The kernel is tgpu.philox_lane_pairs: key-row Philox draws share their
  /// calls between lane pairs.
  bool philoxLanePairs = false;
  /// The LANE_PAIRS template argument of a Philox draw (dropout_uniforms,
  /// draw_keep_bits, load_keep_bits): given for key-row draws of a
  /// tgpu.philox_lane_pairs kernel, else left to its default.
  const char *lanePairs(bool keysByQueries) const {
    return keysByQueries && philoxLanePairs ? ", true" : "";
  }
  /// A Philox draw's operands as the device library takes them: seed,
  /// offset, batch, head, the tile's first query and first key.
  template <typename Op> std::string philoxOperands(Op op) {
    return name(op.getSeed()) + ", " + name(op.getOffset()) + ", " +
           name(op.getBatch()) + ", " + name(op.getHead()) + ", " +
           name(op.getQStart()) + ", " + name(op.getKvStart());
  }
  /// The kernel is tgpu.lhs_packed_per_step: wgmma packs a register A
  /// operand at each k16 step (the ablation).
  bool lhsPackedPerStep = false;
  /// The kernel is tgpu.ordered_waits: the work pinned before a wgmma wait
  /// is kept there in ptxas's schedule too, not only the front end's.
  bool orderedWaits = false;
  llvm::DenseMap<Value, std::string> names;
};

FailureOr<std::string> CUDAPrinter::expression(Operation *op,
                                               ArrayRef<std::string> a) {
  auto bin = [&](const char *sym) {
    return "(" + a[0] + " " + sym + " " + a[1] + ")";
  };
  auto call = [&](const char *fn) {
    std::string s = std::string(fn) + "(";
    for (size_t i = 0; i < a.size(); ++i)
      s += (i ? ", " : "") + a[i];
    return s + ")";
  };
  auto resultType = getElementTypeOrSelf(op->getResult(0).getType());
  auto cast = [&](Type to, const std::string &x) -> FailureOr<std::string> {
    auto t = scalarType(to, op->getLoc());
    if (failed(t))
      return failure();
    return "static_cast<" + *t + ">(" + x + ")";
  };
  return llvm::TypeSwitch<Operation *, FailureOr<std::string>>(op)
      .Case<arith::AddFOp, arith::AddIOp>([&](auto) { return bin("+"); })
      .Case<arith::SubFOp, arith::SubIOp>([&](auto) { return bin("-"); })
      .Case<arith::MulFOp, arith::MulIOp>([&](auto) { return bin("*"); })
      // Under fast math an f32 divide is a reciprocal and a multiply
      // (__fdividef, 2 ulp) instead of the IEEE sequence: softcap's s / cap.
      .Case<arith::DivFOp>([&](auto) {
        return fastMath && resultType.isF32() ? call("__fdividef") : bin("/");
      })
      .Case<arith::DivSIOp>([&](auto) { return bin("/"); })
      .Case<arith::RemSIOp>([&](auto) { return bin("%"); })
      .Case<arith::DivUIOp>([&](auto) {
        return "static_cast<int>(static_cast<unsigned>(" + a[0] +
               ") / static_cast<unsigned>(" + a[1] + "))";
      })
      .Case<arith::RemUIOp>([&](auto) {
        return "static_cast<int>(static_cast<unsigned>(" + a[0] +
               ") % static_cast<unsigned>(" + a[1] + "))";
      })
      .Case<arith::RemFOp>([&](auto) { return call("fmodf"); })
      .Case<arith::FloorDivSIOp>([&](auto) { return call("kiln::floordiv"); })
      .Case<arith::CeilDivSIOp>([&](auto) { return call("kiln::ceildiv"); })
      .Case<arith::MaxSIOp>([&](auto) { return call("kiln::imax"); })
      .Case<arith::MinSIOp>([&](auto) { return call("kiln::imin"); })
      // maximumf/minimumf propagate NaN; maxnumf/minnumf ignore it (fmaxf).
      .Case<arith::MaximumFOp>([&](auto) { return call("kiln::maximumf"); })
      .Case<arith::MinimumFOp>([&](auto) { return call("kiln::minimumf"); })
      .Case<arith::MaxNumFOp>([&](auto) { return call("fmaxf"); })
      .Case<arith::MinNumFOp>([&](auto) { return call("fminf"); })
      .Case<arith::NegFOp>([&](auto) { return "(-" + a[0] + ")"; })
      .Case<arith::AndIOp>([&](auto) { return bin("&"); })
      .Case<arith::OrIOp>([&](auto) { return bin("|"); })
      .Case<arith::XOrIOp>([&](auto) { return bin("^"); })
      .Case<arith::ShLIOp>([&](auto) { return bin("<<"); })
      .Case<arith::ShRSIOp>([&](auto) { return bin(">>"); })
      .Case<arith::ShRUIOp>([&](auto) {
        return "static_cast<int>(static_cast<unsigned>(" + a[0] + ") >> " +
               a[1] + ")";
      })
      .Case<arith::CmpIOp>([&](arith::CmpIOp c) -> FailureOr<std::string> {
        using P = arith::CmpIPredicate;
        auto u = [&](const char *sym) {
          return "(static_cast<unsigned>(" + a[0] + ") " + sym +
                 " static_cast<unsigned>(" + a[1] + "))";
        };
        switch (c.getPredicate()) {
        case P::eq:
          return bin("==");
        case P::ne:
          return bin("!=");
        case P::slt:
          return bin("<");
        case P::sle:
          return bin("<=");
        case P::sgt:
          return bin(">");
        case P::sge:
          return bin(">=");
        case P::ult:
          return u("<");
        case P::ule:
          return u("<=");
        case P::ugt:
          return u(">");
        case P::uge:
          return u(">=");
        }
        return failure();
      })
      .Case<arith::CmpFOp>([&](arith::CmpFOp c) -> FailureOr<std::string> {
        using P = arith::CmpFPredicate;
        // NaN is the only value unequal to itself (no math header needed).
        std::string unord =
            "(" + a[0] + " != " + a[0] + " || " + a[1] + " != " + a[1] + ")";
        switch (c.getPredicate()) {
        case P::AlwaysFalse:
          return std::string("false");
        case P::AlwaysTrue:
          return std::string("true");
        case P::OEQ:
          return bin("==");
        case P::OGT:
          return bin(">");
        case P::OGE:
          return bin(">=");
        case P::OLT:
          return bin("<");
        case P::OLE:
          return bin("<=");
        case P::ONE:
          return "(!" + unord + " && " + bin("!=") + ")";
        case P::ORD:
          return "(!" + unord + ")";
        case P::UNO:
          return unord;
        case P::UEQ:
          return "(" + unord + " || " + bin("==") + ")";
        case P::UGT:
          return "(!" + bin("<=") + ")";
        case P::UGE:
          return "(!" + bin("<") + ")";
        case P::ULT:
          return "(!" + bin(">=") + ")";
        case P::ULE:
          return "(!" + bin(">") + ")";
        case P::UNE:
          return "(!" + bin("==") + ")";
        }
        return failure();
      })
      .Case<arith::SelectOp>(
          [&](arith::SelectOp select) -> FailureOr<std::string> {
            // One of two shared buffers (a ring's stages): the buffer at a
            // chosen offset of the dynamic shared memory, whose address space
            // the compiler then keeps; a choice between two pointers can reach
            // the uses as a generic one (a staging buffer's stores were
            // generic).
            auto first =
                select.getTrueValue().getDefiningOp<tgpu::SharedAllocOp>();
            auto second =
                select.getFalseValue().getDefiningOp<tgpu::SharedAllocOp>();
            if (first && second) {
              auto type = cppType(select.getType(), op->getLoc());
              auto elt =
                  scalarType(first.getType().getElementType(), op->getLoc());
              if (failed(type) || failed(elt))
                return failure();
              std::string at = "kiln_smem + (" + a[0] + " ? " +
                               std::to_string(first.getOffset()) + " : " +
                               std::to_string(second.getOffset()) + ")";
              if (StringRef(*type).ends_with("*"))
                return "reinterpret_cast<" + *type + ">(" + at + ")";
              return *type + "{reinterpret_cast<" + *elt + " *>(" + at + ")}";
            }
            return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
          })
      .Case<arith::ExtFOp>([&](arith::ExtFOp) -> FailureOr<std::string> {
        if (resultType.isF32())
          return call("kiln::to_float");
        return cast(resultType, call("kiln::to_float"));
      })
      .Case<arith::TruncFOp>([&](auto) -> FailureOr<std::string> {
        if (resultType.isBF16())
          return call("kiln::to_bf16");
        if (resultType.isF16())
          return call("kiln::to_f16");
        return cast(resultType, a[0]);
      })
      .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp,
            arith::SIToFPOp, arith::FPToSIOp>(
          [&](Operation *o) -> FailureOr<std::string> {
            // A signed i1 is 0 or -1 (true), not C++'s 0 or 1.
            if (getElementTypeOrSelf(o->getOperand(0).getType()).isInteger(1) &&
                !isa<arith::TruncIOp>(o))
              return cast(resultType, "(" + a[0] + " ? -1 : 0)");
            return cast(resultType, a[0]);
          })
      .Case<arith::ExtUIOp, arith::UIToFPOp>([&](Operation *o) {
        unsigned width = getElementTypeOrSelf(o->getOperand(0).getType())
                             .getIntOrFloatBitWidth();
        std::string u = width == 1 ? "static_cast<unsigned>(" + a[0] + ")"
                        : width <= 32
                            ? "static_cast<unsigned>(" + a[0] + ")"
                            : "static_cast<unsigned long long>(" + a[0] + ")";
        return cast(resultType, u);
      })
      .Case<math::ExpOp>(
          [&](auto) { return call(fastMath ? "kiln::exp_fast" : "expf"); })
      .Case<math::Exp2Op>([&](auto) { return call("kiln::exp2_fast"); })
      .Case<math::LogOp>([&](auto) { return call("logf"); })
      .Case<math::Log2Op>([&](auto) { return call("log2f"); })
      .Case<math::TanhOp>(
          [&](auto) { return call(fastMath ? "kiln::tanh_fast" : "tanhf"); })
      .Case<math::SqrtOp>([&](auto) { return call("sqrtf"); })
      .Case<math::RsqrtOp>([&](auto) { return call("rsqrtf"); })
      .Case<math::AbsFOp>([&](auto) { return call("fabsf"); })
      .Case<math::AbsIOp>([&](auto) { return call("abs"); })
      .Case<math::SinOp>([&](auto) { return call("sinf"); })
      .Case<math::CosOp>([&](auto) { return call("cosf"); })
      .Case<math::ErfOp>([&](auto) { return call("erff"); })
      .Case<math::PowFOp>([&](auto) { return call("powf"); })
      .Case<math::FloorOp>([&](auto) { return call("floorf"); })
      .Case<math::CeilOp>([&](auto) { return call("ceilf"); })
      .Default([&](Operation *o) -> FailureOr<std::string> {
        o->emitError() << "the CUDA emitter cannot print this op";
        return failure();
      });
}

LogicalResult CUDAPrinter::emitElementwise(Operation *op) {
  Value result = op->getResult(0);
  auto type = cppType(result.getType(), op->getLoc());
  if (failed(type))
    return failure();
  SmallVector<std::string> operands;
  for (Value v : op->getOperands())
    operands.push_back(element(v));
  auto expr = expression(op, operands);
  if (failed(expr))
    return failure();
  if (!isa<RankedTensorType>(result.getType())) {
    line() << "const " << *type << " " << name(result) << " = " << *expr
           << ";\n";
    return success();
  }
  line() << *type << " " << name(result) << ";\n";
  line() << "#pragma unroll\n";
  line() << "for (int e = 0; e < " << *type << "::kSize; ++e) " << name(result)
         << ".x[e] = " << *expr << ";\n";
  return success();
}

LogicalResult CUDAPrinter::emitFor(scf::ForOp loop) {
  // Carried values live in variables named after the loop's results; the
  // body reads them through the region arguments (same names).
  for (auto [result, init, arg] : llvm::zip(
           loop.getResults(), loop.getInitArgs(), loop.getRegionIterArgs())) {
    auto type = cppType(result.getType(), loop.getLoc());
    if (failed(type))
      return failure();
    line() << *type << " " << name(result) << " = " << name(init) << ";\n";
    names[arg] = name(result);
  }
  std::string iv = name(loop.getInductionVar());
  if (auto role = loop->getAttrOfType<StringAttr>(tile::attrs::kKvLoop))
    line() << "// KV loop: " << role.getValue() << "\n";
  line() << "for (int " << iv << " = " << name(loop.getLowerBound()) << "; "
         << iv << " < " << name(loop.getUpperBound()) << "; " << iv
         << " += " << name(loop.getStep()) << ") {\n";
  Block &body = *loop.getBody();
  if (failed(emitBlock(body)))
    return failure();
  indent += 2;
  auto yield = cast<scf::YieldOp>(body.getTerminator());
  // If a yielded value is another carried variable, assigning in order could
  // read an already updated one: go through temporaries then.
  bool needsTemps = llvm::any_of(yield.getOperands(), [&](Value v) {
    return llvm::is_contained(loop.getRegionIterArgs(), v);
  });
  for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
    if (needsTemps)
      line() << "auto carried" << i << " = " << name(v) << ";\n";
    else if (name(v) != name(loop.getResult(i)))
      line() << name(loop.getResult(i)) << " = " << name(v) << ";\n";
  }
  if (needsTemps)
    for (size_t i = 0; i < yield.getNumOperands(); ++i)
      line() << name(loop.getResult(i)) << " = carried" << i << ";\n";
  indent -= 2;
  line() << "}\n";
  return success();
}

LogicalResult CUDAPrinter::emitWhile(scf::WhileOp loop) {
  // The carried values live in variables named after the "before" region's
  // arguments; the results are assigned when the condition fails, and the
  // "after" region reads the condition's values under their own names.
  Block &before = loop.getBefore().front(), &after = loop.getAfter().front();
  for (auto [arg, init] : llvm::zip(before.getArguments(), loop.getInits())) {
    auto type = cppType(arg.getType(), loop.getLoc());
    if (failed(type))
      return failure();
    line() << *type << " " << name(arg) << " = " << name(init) << ";\n";
  }
  for (Value result : loop.getResults()) {
    auto type = cppType(result.getType(), loop.getLoc());
    if (failed(type))
      return failure();
    line() << *type << " " << name(result) << ";\n";
  }
  line() << "while (true) {\n";
  if (failed(emitBlock(before)))
    return failure();
  auto condition = cast<scf::ConditionOp>(before.getTerminator());
  indent += 2;
  line() << "if (!" << name(condition.getCondition()) << ") {\n";
  for (auto [result, v] : llvm::zip(loop.getResults(), condition.getArgs()))
    line() << "  " << name(result) << " = " << name(v) << ";\n";
  line() << "  break;\n";
  line() << "}\n";
  indent -= 2;
  for (auto [arg, v] : llvm::zip(after.getArguments(), condition.getArgs()))
    names[arg] = name(v);
  if (failed(emitBlock(after)))
    return failure();
  indent += 2;
  // Through temporaries: a yielded value may be another carried variable.
  auto yield = cast<scf::YieldOp>(after.getTerminator());
  for (auto [i, v] : llvm::enumerate(yield.getOperands()))
    line() << "auto carried" << i << " = " << name(v) << ";\n";
  for (auto [i, arg] : llvm::enumerate(before.getArguments()))
    line() << name(arg) << " = carried" << i << ";\n";
  indent -= 2;
  line() << "}\n";
  return success();
}

/// Whether `v` is a tile.splat of the constant 0.
static bool isZeroSplat(Value v) {
  auto splat = v.getDefiningOp<tile::SplatOp>();
  if (!splat)
    return false;
  auto constant = splat.getValue().getDefiningOp<arith::ConstantOp>();
  auto value = constant ? dyn_cast<FloatAttr>(constant.getValue()) : nullptr;
  return value && value.getValue().isZero();
}

LogicalResult CUDAPrinter::emitProduct(Operation *op, const std::string &fn,
                                       Value acc, const std::string &lhs,
                                       Value rhs, Value predicate) {
  Value result = op->getResult(0);
  auto type = cppType(result.getType(), op->getLoc());
  if (failed(type))
    return failure();
  if (acc)
    line() << *type << " " << name(result) << " = " << name(acc) << ";\n";
  else
    line() << *type << " " << name(result) << ";\n";
  line() << fn << "(" << name(result) << ", " << lhs << ", " << name(rhs);
  if (predicate)
    os << ", " << name(predicate);
  os << ");\n";
  return success();
}

LogicalResult CUDAPrinter::emitOp(Operation *op) {
  if (isa<func::ReturnOp>(op)) {
    line() << "return;\n";
    return success();
  }
  comment(op);
  Location loc = op->getLoc();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](scf::ForOp loop) { return emitFor(loop); })
      .Case([&](scf::WhileOp loop) { return emitWhile(loop); })
      .Case([&](scf::IfOp branch) -> LogicalResult {
        // Results live in variables declared before the branch, which each
        // branch's yield assigns.
        for (Value result : branch.getResults()) {
          auto type = cppType(result.getType(), loc);
          if (failed(type))
            return failure();
          line() << *type << " " << name(result) << ";\n";
        }
        auto assign = [&](Block *block) {
          auto yield = cast<scf::YieldOp>(block->getTerminator());
          indent += 2;
          for (auto [result, v] :
               llvm::zip(branch.getResults(), yield.getOperands()))
            line() << name(result) << " = " << name(v) << ";\n";
          indent -= 2;
        };
        line() << "if (" << name(branch.getCondition()) << ") {\n";
        if (failed(emitBlock(*branch.thenBlock())))
          return failure();
        assign(branch.thenBlock());
        if (Block *otherwise = branch.elseBlock()) {
          line() << "} else {\n";
          if (failed(emitBlock(*otherwise)))
            return failure();
          assign(otherwise);
        }
        line() << "}\n";
        return success();
      })
      .Case([&](arith::ConstantOp c) -> LogicalResult {
        auto type = cppType(c.getType(), loc);
        if (failed(type))
          return failure();
        std::string value;
        if (auto f = dyn_cast<FloatAttr>(c.getValue()))
          // 16-bit floats have no literals: round the f32 one.
          value = c.getType().isBF16()  ? "kiln::to_bf16(" +
                                             floatLiteral(f.getValueAsDouble()) +
                                             ")"
                  : c.getType().isF16() ? "kiln::to_f16(" +
                                              floatLiteral(f.getValueAsDouble()) +
                                              ")"
                                        : floatLiteral(f.getValueAsDouble());
        else if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
          value = c.getType().isInteger(1)
                      ? (i.getValue().isZero() ? "false" : "true")
                      : std::to_string(i.getValue().getSExtValue());
        else
          return c.emitError() << "the CUDA emitter prints scalar constants "
                                  "only";
        line() << "const " << *type << " " << name(c) << " = " << value
               << ";\n";
        return success();
      })
      .Case([&](tile::ProgramIdOp p) {
        static const char *axes[] = {"x", "y", "z"};
        line() << "const int " << name(p) << " = blockIdx." << axes[p.getAxis()]
               << ";\n";
        return success();
      })
      .Case([&](tile::ViewOp v) -> LogicalResult {
        auto type = cppType(v.getType(), loc);
        if (failed(type))
          return failure();
        std::string base = name(v.getBase());
        if (v.isPaged()) {
          // The pool at the head; the sequence's table row and length.
          std::string seq =
              "static_cast<long long>(" + name(v.getIndices()[0]) + ")";
          std::string table = name(v.getPageTable());
          std::string lens = name(v.getLengths());
          line() << "const " << *type << " " << name(v) << " = {" << base
                 << ".ptr + static_cast<long long>(" << name(v.getIndices()[1])
                 << ") * " << base << ".stride[2], " << table << ".ptr + "
                 << seq << " * " << table
                 << ".stride[0], kiln::imin(kiln::imax(" << lens << ".ptr["
                 << seq << " * " << stride(v.getLengths(), 0)
                 << "], 0), static_cast<int>(" << table << ".size[1]) * "
                 << v.getType().getPageSize() << "), static_cast<int>(" << base
                 << ".size[3]), " << base << ".stride[1], "
                 << stride(v.getBase(), 3) << ", " << base << ".stride[0], "
                 << stride(v.getPageTable(), 1) << ", static_cast<int>(" << base
                 << ".size[0])};\n";
          return success();
        }
        std::string ptr = base + ".ptr";
        auto keep = v.getKeep();
        int64_t rank = cast<MemRefType>(v.getBase().getType()).getRank();
        auto index = v.getIndices().begin();
        for (int64_t d = 0; d < rank; ++d)
          if (!llvm::is_contained(keep, d))
            ptr += " + static_cast<long long>(" + name(*index++) + ") * " +
                   stride(v.getBase(), d);
        std::string rows = base + ".size[" + std::to_string(keep[0]) + "]";
        if (v.isRagged()) {
          // One sequence of a packed batch: its first row and row count.
          std::string start = name(v) + "_start", count = name(v) + "_rows";
          line() << "long long " << start << ", " << count << ";\n";
          line() << "kiln::ragged_rows(" << name(v.getOffsets())
                 << ", static_cast<long long>(" << name(v.getSequence())
                 << "), " << rows << ", " << start << ", " << count << ");\n";
          ptr += " + " + start + " * " + stride(v.getBase(), keep[0]);
          rows = count;
        }
        // Packed (GQA rows): G rows per position of the kept dimension, the
        // packed dimension's stride between them.
        std::string groupStride = "0";
        if (std::optional<int64_t> packed = v.getPacked()) {
          rows += " * " + std::to_string(v.getType().getGroup());
          groupStride = stride(v.getBase(), *packed);
        }
        std::string rowStride = stride(v.getBase(), keep[0]);
        std::string cols = "1", colStride = "0";
        if (keep.size() == 2) {
          cols = base + ".size[" + std::to_string(keep[1]) + "]";
          colStride = stride(v.getBase(), keep[1]);
        }
        line() << "const " << *type << " " << name(v) << " = {" << ptr
               << ", static_cast<int>(" << rows << "), static_cast<int>("
               << cols << "), " << rowStride << ", " << colStride << ", "
               << groupStride << "};\n";
        return success();
      })
      .Case([&](tile::RaggedBlockOp r) {
        line() << "int " << name(r.getSequence()) << ", "
               << name(r.getBlockInSequence()) << ";\n";
        line() << "kiln::ragged_block<" << r.getBlock() << ">("
               << name(r.getOffsets()) << ", static_cast<int>("
               << name(r.getIndex()) << "), " << name(r.getSequence()) << ", "
               << name(r.getBlockInSequence()) << ");\n";
        return success();
      })
      .Case([&](tile::FirstRowOp f) -> LogicalResult {
        auto view = f.getDesc().getDefiningOp<tile::ViewOp>();
        line() << "const long long " << name(f) << " = "
               << (view && view.isRagged() ? name(view) + "_start" : "0")
               << ";\n";
        return success();
      })
      .Case([&](memref::DimOp d) -> LogicalResult {
        auto index = d.getConstantIndex();
        if (!index)
          return d.emitError() << "the CUDA emitter prints memref.dim of a "
                                  "constant dimension";
        line() << "const int " << name(d) << " = static_cast<int>("
               << name(d.getSource()) << ".size[" << *index << "]);\n";
        return success();
      })
      .Case([&](tile::DimOp d) {
        line() << "const int " << name(d) << " = " << name(d.getDesc())
               << (d.getDim() == 0 ? ".rows" : ".cols") << ";\n";
        return success();
      })
      .Case([&](tile::SplatOp s) -> LogicalResult {
        auto type = cppType(s.getType(), loc);
        if (failed(type))
          return failure();
        line() << *type << " " << name(s) << ";\n";
        line() << "#pragma unroll\n";
        line() << "for (int e = 0; e < " << *type << "::kSize; ++e) " << name(s)
               << ".x[e] = " << name(s.getValue()) << ";\n";
        return success();
      })
      .Case([&](tile::IotaOp i) -> LogicalResult {
        auto type = cppType(i.getType(), loc);
        if (failed(type))
          return failure();
        // A 1-D tile counts its rows, or its columns in a column layout.
        auto tensor = cast<RankedTensorType>(i.getType());
        bool rows =
            tensor.getRank() == 1
                ? !isa_and_nonnull<tgpu::ColsLayoutAttr>(tensor.getEncoding())
                : i.getDim() == 0;
        line() << *type << " " << name(i) << ";\n";
        line() << "#pragma unroll\n";
        line() << "for (int e = 0; e < " << *type << "::kSize; ++e) " << name(i)
               << ".x[e] = " << *type << (rows ? "::row(e);\n" : "::col(e);\n");
        return success();
      })
      .Case([&](tile::PhiloxOp r) -> LogicalResult {
        auto type = cppType(r.getType(), loc);
        if (failed(type))
          return failure();
        line() << *type << " " << name(r) << ";\n";
        // 8-bit uniforms: lane pairs share every call (the LANE_PAIRS
        // argument is moot there).
        line() << "kiln::dropout_uniforms<"
               << (r.getKeysByQueries() ? "true" : "false")
               << (r.getBits() == 8 ? ", false, 8"
                                    : lanePairs(r.getKeysByQueries()))
               << ">(" << name(r) << ", " << philoxOperands(r) << ");\n";
        return success();
      })
      .Case([&](tile::ReduceOp r) -> LogicalResult {
        if (r.getDim() != 1)
          return r.emitError() << "the GPU schedule reduces rows (dim 1)";
        line() << "const auto " << name(r) << " = kiln::reduce_rows<"
               << (r.getKind() == tile::ReduceKind::max ? "true" : "false")
               << ">(" << name(r.getSource()) << ");\n";
        return success();
      })
      .Case([&](tile::ReduceAllOp r) -> LogicalResult {
        auto source = dyn_cast<RankedTensorType>(r.getSource().getType());
        auto rows =
            source
                ? dyn_cast_or_null<tgpu::RowsLayoutAttr>(source.getEncoding())
                : tgpu::RowsLayoutAttr();
        if (!rows || !r.getType().isF32())
          return r.emitError()
                 << "the GPU schedule reduces a #tgpu.rows tile of f32";
        line() << "const float " << name(r) << " = kiln::reduce_all<"
               << (r.getKind() == tile::ReduceKind::max ? "true" : "false")
               << ", " << source.getDimSize(0) << ", " << rows.getWarps()
               << ">(" << name(r.getSource()) << ");\n";
        return success();
      })
      .Case([&](memref::StoreOp s) -> LogicalResult {
        // A scalar every thread holds (a block mask's list entry): the
        // threads store the same value.
        std::string dst = name(s.getMemRef());
        std::string offset = "0";
        for (auto [d, idx] : llvm::enumerate(s.getIndices()))
          offset += " + static_cast<long long>(" + name(idx) + ") * " +
                    stride(s.getMemRef(), d);
        line() << dst << ".ptr[" << offset << "] = " << name(s.getValue())
               << ";\n";
        return success();
      })
      .Case([&](tile::BroadcastOp b) -> LogicalResult {
        // Along the rows from a #tgpu.rows tile (dim 1), down the columns
        // from a #tgpu.cols one (dim 0).
        auto type = cppType(b.getType(), loc);
        if (failed(type))
          return failure();
        line() << "const " << *type << " " << name(b) << " = kiln::broadcast_"
               << (b.getDim() == 1 ? "rows" : "cols") << "<" << *type << ">("
               << name(b.getSource()) << ");\n";
        return success();
      })
      .Case([&](tile::GatherOp g) -> LogicalResult {
        auto type = cppType(g.getType(), loc);
        if (failed(type))
          return failure();
        std::string src = name(g.getSource());
        std::string offset;
        for (auto [d, idx] : llvm::enumerate(g.getIndices()))
          offset += (d ? " + " : "") + std::string("static_cast<long long>(") +
                    name(idx) + ".x[e]) * " + stride(g.getSource(), d);
        line() << *type << " " << name(g) << ";\n";
        line() << "#pragma unroll\n";
        line() << "for (int e = 0; e < " << *type << "::kSize; ++e) " << name(g)
               << ".x[e] = " << src << ".ptr[" << offset << "];\n";
        return success();
      })
      .Case([&](memref::LoadOp l) -> LogicalResult {
        auto type = cppType(l.getType(), loc);
        if (failed(type))
          return failure();
        std::string src = name(l.getMemRef());
        std::string offset = "0";
        for (auto [d, idx] : llvm::enumerate(l.getIndices()))
          offset += " + static_cast<long long>(" + name(idx) + ") * " +
                    stride(l.getMemRef(), d);
        line() << "const " << *type << " " << name(l) << " = " << src << ".ptr["
               << offset << "];\n";
        return success();
      })
      .Case([&](tile::LoadOp l) -> LogicalResult {
        // A register load (row statistics, the preprocess's O and dO):
        // elements outside the descriptor read the fill value.
        auto type = cppType(l.getType(), loc);
        if (failed(type))
          return failure();
        auto fill = dyn_cast<FloatAttr>(l.getFill());
        if (!fill)
          return l.emitError() << "the CUDA emitter loads float tiles only";
        line() << *type << " " << name(l) << ";\n";
        line() << "kiln::load(" << name(l) << ", " << name(l.getDesc());
        for (Value o : l.getOffsets())
          os << ", " << name(o);
        os << ", " << floatLiteral(fill.getValueAsDouble());
        if (Value mask = l.getMask())
          os << ", " << name(mask);
        os << ");\n";
        return success();
      })
      .Case([&](tile::AtomicAddOp a) -> LogicalResult {
        if (cast<RankedTensorType>(a.getValue().getType()).getRank() != 2)
          return a.emitError() << "the GPU schedule adds 2-D tiles atomically";
        line() << "kiln::atomic_add(" << name(a.getDesc());
        for (Value o : a.getOffsets())
          os << ", " << name(o);
        os << ", " << name(a.getValue()) << ");\n";
        return success();
      })
      .Case<tgpu::BulkReduceAddOp, tgpu::CoreReduceAddOp>([&](auto a) {
        line() << (isa<tgpu::CoreReduceAddOp>(a.getOperation())
                       ? "kiln::core_reduce_add("
                       : "kiln::bulk_reduce_add(")
               << name(a.getDesc());
        for (Value o : a.getOffsets())
          os << ", " << name(o);
        os << ", " << name(a.getStaging()) << ", " << name(a.getValue())
           << ");\n";
        return success();
      })
      .Case([&](tgpu::CoreStageOp a) -> LogicalResult {
        line() << "kiln::core_stage(" << name(a.getStaging()) << ", "
               << name(a.getValue()) << ");\n";
        return success();
      })
      .Case([&](tgpu::CoreFlushOp a) -> LogicalResult {
        auto type = cppType(a.getTile(), loc);
        if (failed(type))
          return failure();
        line();
        if (Value pending = a.getPending())
          os << "if (" << name(pending) << ") ";
        os << "kiln::core_flush<" << *type << ">(" << name(a.getDesc());
        for (Value o : a.getOffsets())
          os << ", " << name(o);
        os << ", " << name(a.getStaging()) << ");\n";
        return success();
      })
      .Case([&](tgpu::CoreAddStagedOp a) -> LogicalResult {
        // The producer's warp runs it; one lane issues the reductions and
        // owns their bulk group.
        line() << "if (kiln::lane_id() == 0) kiln::core_add_staged("
               << name(a.getDesc());
        for (Value o : a.getOffsets())
          os << ", " << name(o);
        os << ", " << name(a.getStaging()) << ");\n";
        return success();
      })
      .Case([&](tgpu::BulkWaitReadOp w) {
        line() << "kiln::bulk_wait_read<" << w.getPending() << ">();\n";
        return success();
      })
      .Case([&](tgpu::CoreLoadOp l) -> LogicalResult {
        auto type = cppType(l.getType(), loc);
        if (failed(type))
          return failure();
        line() << *type << " " << name(l) << ";\n";
        line() << "kiln::core_load(" << name(l) << ", " << name(l.getDesc());
        for (Value o : l.getOffsets())
          os << ", " << name(o);
        os << ", " << floatLiteral(l.getFill().convertToDouble()) << ");\n";
        return success();
      })
      .Case<tgpu::TmaStoreOp, tgpu::TmaReduceAddOp>([&](auto a) {
        line() << (isa<tgpu::TmaStoreOp>(a.getOperation())
                       ? "kiln::tma_store("
                       : "kiln::tma_reduce_add(")
               << name(a.getMap()) << ", " << name(a.getStaging()) << ", "
               << name(a.getValue());
        for (Value c : a.getCoords())
          os << ", " << name(c);
        os << ");\n";
        return success();
      })
      .Case([&](tgpu::BulkWaitOp) {
        line() << "kiln::bulk_wait();\n";
        return success();
      })
      .Case([&](tgpu::TurnWaitOp t) {
        line() << "kiln::turn_wait(" << (turnsLater ? "turn_later, " : "")
               << name(t.getTurns()) << ", " << name(t.getIndex()) << ", "
               << name(t.getTurn()) << ");\n";
        return success();
      })
      .Case([&](tgpu::TurnSignalOp t) -> LogicalResult {
        if (t.getDeferred() != turnsLater)
          return t.emitOpError()
                 << "a deferred turn needs every turn op of its region "
                    "deferred, in a warp-specialized producer";
        line() << (turnsLater ? "kiln::turn_signal_later(turn_later, "
                              : "kiln::turn_signal(")
               << name(t.getTurns()) << ", " << name(t.getIndex()) << ");\n";
        return success();
      })
      .Case([&](tile::ScatterAddOp a) -> LogicalResult {
        auto type = cppType(a.getValues().getType(), loc);
        if (failed(type))
          return failure();
        if (!cast<RankedTensorType>(a.getValues().getType())
                 .getElementType()
                 .isF32())
          return a.emitError() << "the GPU schedule scatter-adds f32 values";
        std::string dest = name(a.getDest());
        // f32 reductions, or (fixed_point) the three integer ones of the
        // entry's parts, the memref's last dimension.
        std::string sink =
            a.getFixedPoint()
                ? "kiln::FixedPointSink{" + dest + ".ptr, " + dest +
                      ".stride[" + std::to_string(a.getIndices().size()) + "]}"
                : "kiln::FloatSink{" + dest + ".ptr}";
        // Splatted indices (a uniform read): one address for the tile.
        bool uniform = llvm::all_of(a.getIndices(), [](Value index) {
          return isa_and_nonnull<tile::SplatOp>(index.getDefiningOp());
        });
        if (uniform) {
          line() << "kiln::scatter_add_uniform(" << sink << ", 0LL";
          for (auto [d, index] : llvm::enumerate(a.getIndices()))
            os << " + static_cast<long long>("
               << name(index.getDefiningOp<tile::SplatOp>().getValue())
               << ") * " << dest << ".stride[" << d << "]";
          os << ", " << name(a.getValues()) << ");\n";
          return success();
        }
        line() << "kiln::scatter_add(" << sink << ", " << name(a.getValues())
               << ", [&](int e) { return 0LL";
        for (auto [d, index] : llvm::enumerate(a.getIndices()))
          os << " + static_cast<long long>(" << name(index) << ".x[e]) * "
             << dest << ".stride[" << d << "]";
        os << "; });\n";
        return success();
      })
      .Case([&](tgpu::StoreSharedOp st) {
        line() << "kiln::store_shared(" << name(st.getDest()) << ", "
               << name(st.getValue()) << ");\n";
        return success();
      })
      .Case([&](tile::StoreOp s) {
        line() << "kiln::store(" << name(s.getDesc());
        for (Value o : s.getOffsets())
          os << ", " << name(o);
        os << ", " << name(s.getValue());
        if (Value mask = s.getMask())
          os << ", " << name(mask);
        os << ");\n";
        return success();
      })
      .Case([&](tgpu::SharedAllocOp a) -> LogicalResult {
        auto type = cppType(a.getType(), loc);
        if (failed(type))
          return failure();
        if (StringRef(*type).ends_with("*")) {
          line() << *type << "const " << name(a) << " = reinterpret_cast<"
                 << *type << ">(kiln_smem + " << a.getOffset() << ");\n";
          return success();
        }
        auto elt = scalarType(a.getType().getElementType(), loc);
        line() << "const " << *type << " " << name(a) << "{reinterpret_cast<"
               << *elt << " *>(kiln_smem + " << a.getOffset() << ")};\n";
        return success();
      })
      .Case([&](memref::SubViewOp v) -> LogicalResult {
        // A window of a shared buffer: the same pitch, a later start.
        auto type = cppType(v.getType(), loc);
        if (failed(type))
          return failure();
        SmallVector<int64_t> strides;
        int64_t offset = 0, baseOffset = 0;
        if (failed(v.getType().getStridesAndOffset(strides, offset)) ||
            failed(v.getSource().getType().getStridesAndOffset(strides,
                                                               baseOffset)) ||
            ShapedType::isDynamic(offset) || ShapedType::isDynamic(baseOffset))
          return v.emitError() << "the CUDA emitter prints static windows of "
                                  "shared buffers only";
        line() << "const " << *type << " " << name(v) << "{"
               << name(v.getSource()) << ".ptr + " << (offset - baseOffset)
               << "};\n";
        return success();
      })
      .Case([&](tgpu::CopyAsyncOp c) {
        line() << "kiln::copy_async<" << numThreads << ">(" << name(c.getDest())
               << ", " << name(c.getSource());
        for (Value o : c.getOffsets())
          os << ", " << name(o);
        os << ");\n";
        return success();
      })
      .Case([&](tgpu::AsyncWaitOp w) {
        line() << "kiln::cp_async_wait<" << w.getPending() << ">();\n";
        return success();
      })
      .Case([&](tgpu::BarrierOp) {
        if (inConsumers)
          line() << "kiln::named_barrier<1, " << numThreads << ">();\n";
        else
          line() << "__syncthreads();\n";
        return success();
      })
      .Case([&](tgpu::MbarrierInitOp i) {
        line() << "if (threadIdx.x == 0) kiln::mbarrier_init("
               << barrier(i.getBarriers(), i.getIndex()) << ", " << i.getCount()
               << ");\n";
        return success();
      })
      .Case([&](tgpu::MbarrierArriveOp a) {
        line() << "kiln::mbarrier_arrive("
               << barrier(a.getBarriers(), a.getIndex()) << ");\n";
        return success();
      })
      .Case([&](tgpu::NextTileOp n) -> LogicalResult {
        // (A producer warpgroup drawing keep bits: its first thread draws
        // the tile, the others read it after a barrier of the warpgroup.)
        if (producerWarpgroup) {
          if (!n.getWords())
            return n.emitError() << "a producer warpgroup shares its next "
                                    "tile through words (shares)";
          line() << "const int " << name(n) << " = kiln::next_tile_warpgroup<"
                 << kProducerBarrier << ", " << producerThreads << ">("
                 << name(n.getCounter()) << ".ptr, " << name(n.getCtas())
                 << ", " << name(n.getTotal())
                 << ", threadIdx.x == " << numThreads << ", tile_round, "
                 << name(n.getWords()) << ".ptr);\n";
          return success();
        }
        line() << "const int " << name(n) << " = kiln::next_tile("
               << name(n.getCounter()) << ".ptr, " << name(n.getCtas()) << ", "
               << name(n.getTotal()) << ");\n";
        return success();
      })
      .Case([&](tgpu::PublishTileOp p) {
        line() << "kiln::publish_tile(" << barrier(p.getSlots(), p.getSlot())
               << ", " << name(p.getX()) << ", " << name(p.getY()) << ", "
               << name(p.getZ());
        if (Value arrive = p.getArrive())
          os << ", " << barrier(p.getSlots(), arrive);
        os << ");\n";
        return success();
      })
      .Case([&](tgpu::ReadTileOp r) {
        line() << "const int " << name(r) << " = kiln::read_tile("
               << barrier(r.getSlots(), r.getSlot()) << " + " << r.getAxis()
               << ");\n";
        return success();
      })
      .Case([&](tgpu::MbarrierWaitOp w) {
        line() << "kiln::mbarrier_wait("
               << barrier(w.getBarriers(), w.getIndex()) << ", "
               << name(w.getParity()) << ");\n";
        return success();
      })
      .Case([&](tgpu::TmaLoadOp t) {
        line() << "if (kiln::lane_id() == 0) kiln::tma_load_tile("
               << name(t.getDest()) << ", " << name(t.getMap()) << ", "
               << barrier(t.getBarriers(), t.getIndex());
        for (Value c : t.getCoords())
          os << ", " << name(c);
        os << ");\n";
        return success();
      })
      .Case([&](tgpu::BulkLoadOp t) {
        line() << "if (kiln::lane_id() == 0) kiln::bulk_load_vector("
               << name(t.getDest()) << ", " << name(t.getSource()) << ", "
               << name(t.getOffset()) << ", "
               << barrier(t.getBarriers(), t.getIndex()) << ");\n";
        return success();
      })
      .Case([&](tgpu::DrawKeepBitsOp d) -> LogicalResult {
        auto type = cppType(d.getTile(), loc);
        if (failed(type))
          return failure();
        if (!producerWarpgroup)
          return d.emitError() << "the producer warpgroup draws keep bits";
        line() << "kiln::draw_keep_bits<"
               << (d.getKeysByQueries() ? "true" : "false") << ", "
               << producerThreads << ", " << *type << ", " << d.getPatches()
               << lanePairs(d.getKeysByQueries()) << ">(" << name(d.getDest())
               << ", " << philoxOperands(d) << ", " << d.getThreshold()
               << "u, threadIdx.x - " << numThreads << ");\n";
        return success();
      })
      .Case([&](tgpu::LoadKeepBitsOp l) -> LogicalResult {
        auto type = cppType(l.getType(), loc);
        if (failed(type))
          return failure();
        line() << *type << " " << name(l) << ";\n";
        line() << "kiln::load_keep_bits<"
               << (l.getKeysByQueries() ? "true" : "false") << ", "
               << l.getPatches() << lanePairs(l.getKeysByQueries()) << ">("
               << name(l) << ", " << name(l.getSource()) << ", "
               << philoxOperands(l) << ", " << l.getThreshold() << "u);\n";
        return success();
      })
      .Case([&](tgpu::LoadSharedOp l) -> LogicalResult {
        auto type = cppType(l.getType(), loc);
        if (failed(type))
          return failure();
        line() << *type << " " << name(l) << ";\n";
        line() << "kiln::load_shared(" << name(l) << ", " << name(l.getSource())
               << ", " << name(l.getCount()) << ", "
               << floatLiteral(l.getFill().convertToDouble()) << ");\n";
        return success();
      })
      .Case([&](tgpu::TmaLoadPagesOp t) {
        line() << "kiln::tma_load_paged_tile(" << name(t.getDest()) << ", "
               << name(t.getMap()) << ", "
               << barrier(t.getBarriers(), t.getIndex()) << ", "
               << name(t.getDesc()) << ", " << name(t.getCol()) << ", "
               << name(t.getRow()) << ", " << name(t.getHead()) << ");\n";
        return success();
      })
      .Case([&](tgpu::ScaleRowsOp s) -> LogicalResult {
        auto type = cppType(s.getType(), loc);
        if (failed(type))
          return failure();
        line() << "const " << *type << " " << name(s) << " = kiln::scale_rows("
               << name(s.getValue()) << ", " << name(s.getFactors()) << ");\n";
        return success();
      })
      .Case([&](tgpu::ZeroRowsPastOp z) {
        line() << "kiln::zero_rows_from<" << numThreads << ">("
               << name(z.getDest()) << ", " << name(z.getDesc()) << ".rows - "
               << name(z.getRow()) << ");\n";
        return success();
      })
      .Case([&](tgpu::WarpSpecializeOp ws) { return emitWarpSpecialize(ws); })
      .Case([&](tgpu::WarpgroupTurnOp t) {
        // Named barriers 2.. (0 is __syncthreads, 1 the consumers').
        line() << "kiln::turn_" << t.getKind() << "<2, " << numThreads / 128
               << ">();\n";
        return success();
      })
      .Case([&](tgpu::MmaOp m) -> LogicalResult {
        // mma.sync's m16 tiles are whole rows of a warp.
        auto acc = cast<RankedTensorType>(m.getAcc().getType());
        if (cast<tgpu::MmaLayoutAttr>(acc.getEncoding()).getColGroups() != 1)
          return m.emitError()
                 << "mma.sync cannot compute " << acc
                 << ": its rows split over the warps in column groups, "
                    "which only wgmma (sm_90a, tgpu-warpgroup-mma) computes";
        std::string flags = std::string(m.getTransposeLhs() ? "true" : "false") +
                            ", " + (m.getTransposeRhs() ? "true" : "false");
        return emitProduct(m, "kiln::mma<" + flags + ">", m.getAcc(),
                           name(m.getLhs()), m.getRhs());
      })
      .Case([&](tgpu::WarpgroupMmaOp m) {
        // A product into zeros ignores its accumulator registers (wgmma's
        // scale-d), so the zero tile need not be copied in or kept live.
        bool zero = isZeroSplat(m.getAcc()) && !m.getPredicate();
        std::string fn = m.getAsync() ? "kiln::wgmma_async<" : "kiln::wgmma<";
        fn += m.getTransposeRhs() ? "true" : "false";
        fn += zero ? ", true>" : ">";
        // A transposed lhs is read MN-major, through its own descriptor; a
        // register lhs is packed before the products unless the kernel
        // packs it per step.
        std::string lhs = name(m.getLhs());
        if (m.getTransposeLhs())
          lhs = "kiln::transposed(" + lhs + ")";
        else if (lhsPackedPerStep &&
                 isa<RankedTensorType>(m.getLhs().getType()))
          lhs = "kiln::packed_per_step(" + lhs + ")";
        return emitProduct(m, fn, zero ? Value() : m.getAcc(), lhs, m.getRhs(),
                           m.getPredicate());
      })
      .Case([&](tgpu::WarpgroupWaitOp w) -> LogicalResult {
        auto type = cppType(w.getType(), loc);
        if (failed(type))
          return failure();
        // Register tiles computed while the products ran, and read after
        // the wait, are pinned before it: the compiler may not sink that
        // work below the wait, which would undo the overlap.
        Operation *issue = w.getValue().getDefiningOp();
        if (issue && issue->getBlock() == w->getBlock())
          for (Operation *op = issue->getNextNode(); op && op != w;
               op = op->getNextNode())
            for (Value r : op->getResults())
              if (isa<RankedTensorType>(r.getType()) &&
                  !isa<tgpu::WarpgroupMmaOp>(op) &&
                  llvm::any_of(r.getUsers(), [&](Operation *user) {
                    Operation *top =
                        w->getBlock()->findAncestorOpInBlock(*user);
                    return top && w->isBeforeInBlock(top);
                  }))
                line() << (orderedWaits ? "kiln::settle_tile("
                                        : "kiln::pin_tile(")
                       << name(r) << ");\n";
        line() << "kiln::wgmma_wait<" << w.getPending() << ">("
               << name(w.getValue()) << ");\n";
        // A register A operand is read until the product completes: a use
        // after the wait keeps its registers from being reused earlier
        // (which would make the compiler wait for the product right there).
        if (auto product = dyn_cast_or_null<tgpu::WarpgroupMmaOp>(issue))
          if (isa<RankedTensorType>(product.getLhs().getType()))
            line() << "kiln::pin_tile(" << name(product.getLhs()) << ");\n";
        line() << *type << " " << name(w) << " = " << name(w.getValue())
               << ";\n";
        return success();
      })
      .Case([&](tgpu::FenceAsyncSharedOp) {
        line() << "kiln::fence_async_shared();\n";
        return success();
      })
      .Case([&](tgpu::LaunchDependentsOp) {
        line() << "kiln::launch_dependents();\n";
        return success();
      })
      .Case([&](tgpu::WaitPriorGridsOp) {
        line() << "kiln::wait_prior_grids();\n";
        return success();
      })
      .Default([&](Operation *o) -> LogicalResult {
        if (o->getNumResults() == 1 &&
            isa<arith::ArithDialect, math::MathDialect>(o->getDialect()))
          return emitElementwise(o);
        return o->emitError() << "the CUDA emitter cannot print this op";
      });
}

LogicalResult CUDAPrinter::emitWarpSpecialize(tgpu::WarpSpecializeOp ws) {
  // One if/else on the warpgroup's role, each branch starting with its
  // setmaxnreg: the form in which the compiler honours the budgets.
  line() << "if (threadIdx.x >= " << numThreads << ") {\n";
  indent += 2;
  line() << "kiln::setmaxnreg_dec<" << ws.getProducerRegisters() << ">();\n";
  // The producer's first warp runs its region; one lane issues each dense
  // copy, a paged copy's boxes are spread over the lanes. Where it draws
  // keep bits the whole warpgroup runs it, the other ops still on the
  // first warp (emitBlock).
  producerWarpgroup = false;
  producerThreads = 32 * int64_t(ws.getProducerWarps());
  ws.getProducer().walk(
      [&](tgpu::DrawKeepBitsOp) { producerWarpgroup = true; });
  line() << "if (threadIdx.x < "
         << numThreads + (producerWarpgroup ? producerThreads : 32) << ") {\n";
  // Turns passed on later (tgpu.turn_signal deferred): the warp's note of
  // the last one, passed on at the end.
  turnsLater = false;
  ws.getProducer().walk(
      [&](tgpu::TurnSignalOp t) { turnsLater |= t.getDeferred(); });
  if (turnsLater)
    line() << "  kiln::TurnLater turn_later;\n";
  if (producerWarpgroup)
    line() << "  int tile_round = 0;\n";
  if (failed(emitBlock(ws.getProducer().front())))
    return failure();
  if (turnsLater)
    line() << "  " << (producerWarpgroup ? firstWarpCheck() + " " : "")
           << "kiln::turn_flush(turn_later);\n";
  turnsLater = false;
  producerWarpgroup = false;
  line() << "}\n";
  line() << "return;\n";
  indent -= 2;
  line() << "}\n";
  line() << "kiln::setmaxnreg_inc<" << ws.getConsumerRegisters() << ">();\n";
  // The consumers' code continues the kernel's body at its own depth.
  inConsumers = true;
  indent -= 2;
  LogicalResult result = emitBlock(ws.getConsumer().front());
  indent += 2;
  inConsumers = false;
  return result;
}

LogicalResult CUDAPrinter::emitBlock(Block &block) {
  indent += 2;
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    // (Waits too: a warp that skipped a phase of a barrier whose next
    // phase does not need it could wait for a later one forever.)
    bool firstWarp =
        producerWarpgroup && isa<tgpu::TileGPUDialect>(op.getDialect()) &&
        op.getNumResults() == 0 && !isa<tgpu::DrawKeepBitsOp>(&op) &&
        !op.hasAttr(tgpu::attrs::kWarpgroup);
    if (firstWarp) {
      line() << firstWarpCheck() << " {\n";
      indent += 2;
    }
    if (failed(emitOp(&op)))
      return failure();
    if (firstWarp) {
      indent -= 2;
      line() << "}\n";
    }
  }
  indent -= 2;
  return success();
}

LogicalResult CUDAPrinter::emitKernel(func::FuncOp func) {
  auto warps = func->getAttrOfType<IntegerAttr>(tgpu::attrs::kNumWarps);
  auto shared = func->getAttrOfType<IntegerAttr>(tgpu::attrs::kSharedBytes);
  auto blockM = func->getAttrOfType<IntegerAttr>(tile::attrs::kBlockM);
  if (!warps || !shared || !blockM)
    return func.emitError() << "only scheduled kernels (convert-tile-to-tgpu) "
                               "can be emitted";
  numThreads = warps.getInt() * 32;
  auto producers = func->getAttrOfType<IntegerAttr>(tgpu::attrs::kProducerWarps);
  int64_t launchThreads =
      numThreads + (producers ? producers.getInt() * 32 : 0);
  fastMath = func->hasAttr(tgpu::attrs::kFastMath);
  philoxLanePairs = func->hasAttr(tgpu::attrs::kPhiloxLanePairs);
  lhsPackedPerStep = func->hasAttr(tgpu::attrs::kLhsPackedPerStep);
  orderedWaits = func->hasAttr(tgpu::attrs::kOrderedWaits);

  // The dK/dV kernel's CTA (or the dK and dV kernels' CTAs) owns a block
  // of keys; every other one a block of query rows.
  auto stage = func->getAttrOfType<StringAttr>(tile::attrs::kBackwardStage);
  auto blockN = func->getAttrOfType<IntegerAttr>(tile::attrs::kBlockN);
  bool perKeyBlock =
      stage && llvm::is_contained({"dkdv", "dk", "dv"}, stage.getValue()) &&
      blockN;
  // The runtime compiles each kernel's section on its own (CompileUnits.h).
  os << kKernelSectionMarker << func.getName() << "\n";
  bool persistent = func->hasAttr(tgpu::attrs::kPersistent);
  os << "// Kernel " << func.getName() << ": " << warps.getInt() << " warps, "
     << shared.getInt() << " bytes of shared memory, "
     << (persistent ? "" : "one ")
     << (perKeyBlock ? blockN.getInt() : blockM.getInt())
     << (perKeyBlock ? "-key block" : "-row query block")
     << (persistent ? "s drawn in turn by as many CTAs as the device holds.\n"
                    : " per CTA.\n");
  if (producers)
    os << "// Warp-specialized: " << producers.getInt()
       << " producer warps after them.\n";
  // With a producer, the CTAs per multiprocessor (one, or tgpu.ctas_per_sm)
  // cap the registers at entry, which setmaxnreg then moves between the
  // roles.
  auto ctas = func->getAttrOfType<IntegerAttr>(tgpu::attrs::kCtasPerSM);
  os << "extern \"C\" __global__ void __launch_bounds__(" << launchThreads;
  if (producers)
    os << ", " << (ctas ? ctas.getInt() : 1);
  os << ")\n"
     << func.getName() << "(";
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto type = cppType(arg.getType(), func.getLoc());
    if (failed(type))
      return failure();
    // A tensor map is read in place from the parameter space.
    os << (i ? ",\n    " : "")
       << (isa<tgpu::TensorMapType>(arg.getType()) ? "const __grid_constant__ "
                                                    : "")
       << *type << " " << name(arg);
  }
  os << ") {\n";
  // 1024: the period of the widest swizzle (#tgpu.swizzle buffers).
  line() << "extern __shared__ __align__(1024) unsigned char kiln_smem[];\n";
  for (Operation &op : func.front())
    if (failed(emitOp(&op)))
      return failure();
  os << "}\n\n";
  return success();
}

} // namespace

LogicalResult emitCUDA(ModuleOp module, llvm::raw_ostream &os) {
  os << "// Generated by Kiln from MLIR; do not edit.\n"
     << "#include \"kiln/kiln.cuh\"\n\n";
  bool any = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func->hasAttr(tgpu::attrs::kNumWarps))
      continue;
    any = true;
    CUDAPrinter printer(os);
    if (failed(printer.emitKernel(func)))
      return failure();
  }
  if (!any)
    return module.emitError()
           << "no scheduled kernel to emit (run kiln-cuda-fwd-pipeline)";
  return success();
}

void registerEmitCUDATranslation() {
  TranslateFromMLIRRegistration registration(
      "emit-cuda", "Print scheduled tile kernels as CUDA C++",
      [](Operation *op, llvm::raw_ostream &os) {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a module"), failure();
        return emitCUDA(module, os);
      },
      registerEmitDialects);
}

} // namespace kiln
