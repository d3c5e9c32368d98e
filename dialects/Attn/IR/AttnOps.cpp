//===- AttnOps.cpp - attn operations: assembly and verification -----------===//

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Attn/IR/ModRegion.h"
#include "reference/Philox.h"

#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::attn;

#define GET_OP_CLASSES
#include "dialects/Attn/IR/AttnOps.cpp.inc"

double AttentionOp::getEffectiveScale() {
  if (auto scale = getScaleAttr())
    return scale.getValueAsDouble();
  return 1.0 / std::sqrt(static_cast<double>(getQkHeadDim()));
}

bool AttentionOp::hasDropout() {
  auto p = getDropoutPAttr();
  return p && p.getValueAsDouble() > 0.0;
}

unsigned AttentionOp::getDropoutWidth() {
  auto bits = getDropoutBitsAttr();
  return bits ? static_cast<unsigned>(bits.getInt()) : 16u;
}

uint32_t AttentionOp::getDropoutThreshold() {
  double p = hasDropout() ? getDropoutPAttr().getValueAsDouble() : 0.0;
  return ref::dropoutThreshold(p, getDropoutWidth());
}

double AttentionOp::getDropoutScale() {
  double p = hasDropout() ? getDropoutPAttr().getValueAsDouble() : 0.0;
  return ref::dropoutScale(p, getDropoutWidth());
}

SmallVector<CaptureAttr> AttentionOp::getCaptureDecls() {
  SmallVector<CaptureAttr> decls;
  if (auto captures = getCapturesAttr())
    for (Attribute attr : captures)
      decls.push_back(cast<CaptureAttr>(attr));
  return decls;
}

SmallVector<Type> AttentionOp::getCaptureTypes() {
  SmallVector<Type> types;
  for (CaptureAttr capture : getCaptureDecls())
    types.push_back(capture.getType());
  return types;
}

std::optional<std::pair<int64_t, int64_t>> AttentionOp::getSparseBlocks() {
  auto blocks = getBlockSparse();
  if (!blocks || blocks->size() != 2)
    return std::nullopt;
  return std::make_pair((*blocks)[0], (*blocks)[1]);
}

// Custom form:
//   attn.attention @name {attributes}
//     score_mod(%s: f32, %b: index, ...) { ... }
//     mask_mod(%b: index, ...) { ... }
ParseResult AttentionOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Region *scoreMod = result.addRegion();
  Region *maskMod = result.addRegion();
  for (auto [keyword, region] :
       {std::pair<StringRef, Region *>{"score_mod", scoreMod},
        std::pair<StringRef, Region *>{"mask_mod", maskMod}}) {
    if (failed(parser.parseOptionalKeyword(keyword)))
      continue;
    SmallVector<OpAsmParser::Argument> args;
    if (parser.parseArgumentList(args, OpAsmParser::Delimiter::Paren,
                                 /*allowType=*/true) ||
        parser.parseRegion(*region, args))
      return failure();
  }
  return success();
}

void AttentionOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p.printOptionalAttrDict((*this)->getAttrs(), {getSymNameAttrName()});
  for (auto [keyword, region] :
       {std::pair<StringRef, Region *>{"score_mod", &getScoreMod()},
        std::pair<StringRef, Region *>{"mask_mod", &getMaskMod()}}) {
    if (region->empty())
      continue;
    p.printNewline();
    p << "  " << keyword << '(';
    llvm::interleaveComma(region->getArguments(), p, [&](BlockArgument arg) {
      p.printRegionArgument(arg);
    });
    p << ") ";
    p.printRegion(*region, /*printEntryBlockArgs=*/false);
  }
}

LogicalResult AttentionOp::verify() {
  Type elt = getElementType();
  if (!elt.isBF16() && !elt.isF16())
    return emitOpError() << "element_type must be bf16 or f16, got " << elt;
  // The runtime's dimensions are below 2^31; larger head dims would also
  // overflow the tile choosers' shared-memory sums (64-bit products of
  // head dim, rows and bytes).
  constexpr int64_t kMaxDim = int64_t{1} << 31;
  if (getQkHeadDim() >= kMaxDim)
    return emitOpError() << "qk_head_dim must be below 2^31, got "
                         << getQkHeadDim();
  if (getVHeadDim() >= kMaxDim)
    return emitOpError() << "v_head_dim must be below 2^31, got "
                         << getVHeadDim();
  if (auto scale = getScaleAttr()) {
    double v = scale.getValueAsDouble();
    if (!(v > 0.0) || !std::isfinite(v))
      return emitOpError() << "scale must be a positive finite number, got "
                           << v;
    // The kernels multiply the scores by the scale, or by scale * log2(e),
    // as an f32 constant: one that rounds to 0, to a subnormal (flushed to
    // 0 under the GPU's fast math) or to infinity is not the scale asked for
    // and turns every output into NaN. (Compared in double: converting a
    // value beyond FLT_MAX to float is undefined.)
    constexpr double kLog2E = 1.4426950408889634;
    auto normalF32 = [](double x) {
      return x >= double(std::numeric_limits<float>::min()) &&
             x <= double(std::numeric_limits<float>::max());
    };
    if (!normalF32(v) || !normalF32(v * kLog2E))
      return emitOpError() << "scale " << v
                           << " is out of range: the kernels multiply scores "
                              "by scale * log2(e) as a normal f32 (about "
                              "1.2e-38 to 2.3e38)";
  }
  if (auto bits = getDropoutBitsAttr()) {
    // (Without dropout_p it is the width a run's dropout_p will take.)
    if (bits.getInt() != 16 && bits.getInt() != 8)
      return emitOpError() << "dropout_bits must be 16 or 8, got "
                           << bits.getInt();
  }
  if (auto p = getDropoutPAttr()) {
    double v = p.getValueAsDouble();
    // The kept fraction is a threshold of dropout_bits bits: p may not
    // round it to 0.
    unsigned bits = getDropoutWidth();
    if (!(v >= 0.0) ||
        !(std::round((1.0 - v) * static_cast<double>(1u << bits)) >= 1.0))
      return emitOpError() << "dropout_p must be in [0, 1 - 2^-" << (bits + 1)
                           << "]" << (bits == 8 ? " with dropout_bits = 8" : "")
                           << ", got " << v;
  }
  if (auto blocks = getBlockSparse()) {
    // A mask block holds whole tiles: rows and keys in multiples of the
    // smallest tile (16), as FlexAttention's BLOCK_SIZE.
    if (blocks->size() != 2 ||
        llvm::any_of(*blocks, [](int64_t n) { return n <= 0 || n % 16; }))
      return emitOpError() << "block_sparse must be two positive multiples of "
                              "16 (query rows, keys per mask block)";
    // No sequence is that long (the runtime's dimensions are below 2^31),
    // and the kernels' block arithmetic would overflow.
    if (llvm::any_of(*blocks,
                     [](int64_t n) { return n >= (int64_t{1} << 31); }))
      return emitOpError() << "block_sparse blocks must be below 2^31, got "
                           << (*blocks)[0] << " x " << (*blocks)[1];
    if (getVarlen() || getPageSize())
      return emitOpError()
             << "block_sparse takes a dense batch: its lists are per (batch, "
                "head, query block) of one sequence length (not with "
             << (getVarlen() ? "varlen" : "page_size") << ")";
  }
  llvm::StringSet<> names;
  for (CaptureAttr capture : getCaptureDecls()) {
    if (!names.insert(capture.getName().getValue()).second)
      return emitOpError() << "captures '" << capture.getName().getValue()
                           << "' twice";
    // A packed batch's sequences have lengths of their own, none of which
    // a capture's dimension could follow.
    if (getVarlen())
      for (Attribute dim : capture.getDims())
        if (auto name = dyn_cast<StringAttr>(dim);
            name && (name == "seq_q" || name == "seq_kv"))
          return emitOpError()
                 << "is varlen, but capture '" << capture.getName().getValue()
                 << "' declares dim '" << name.getValue()
                 << "': a packed batch has no common sequence length (use "
                    "batch, heads, kv_heads or a size)";
  }
  return success();
}

LogicalResult AttentionOp::verifyRegions() {
  SmallVector<Type> captureTypes = getCaptureTypes();
  if (hasScoreMod() && failed(verifyModRegion(*this, getScoreMod(),
                                              ModKind::Score, captureTypes)))
    return failure();
  if (hasMaskMod() &&
      failed(verifyModRegion(*this, getMaskMod(), ModKind::Mask, captureTypes)))
    return failure();
  return success();
}
