//===- ScoreRangeTest.cpp - the intervals convert-attn-to-tile relies on --===//
//
// scoreModRange's bounds must hold for every value the score_mod yields in
// f32 (static-max takes the top as every row's maximum, and the width decides
// whether P stays normal), and must give up where f32 can leave them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/AttnToTile/ScoreRange.h"
#include "compiler/Driver/Variant.h"
#include "dialects/Attn/IR/AttnDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace kiln;

namespace {

/// The range of a score_mod whose body (after `%score`, the positions and a
/// capture `%w: memref<?xf32>`) is `body`, yielding `%r`.
std::optional<Interval> rangeOf(const std::string &body) {
  mlir::MLIRContext context{driver::kilnRegistry()};
  context.loadAllAvailableDialects();
  std::string text =
      "attn.attention @m {qk_head_dim = 64, v_head_dim = 64, element_type = "
      "bf16, captures = [#attn.capture<\"w\", memref<?xf32>, [\"heads\"]>]}\n"
      "  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index, "
      "%w: memref<?xf32>) {\n" +
      body + "\n    attn.yield %r : f32\n  }\n";
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  EXPECT_TRUE(module) << text;
  if (!module)
    return std::nullopt;
  auto op = *module->getOps<attn::AttentionOp>().begin();
  return scoreModRange(op.getScoreMod());
}

TEST(ScoreRange, SoftCapping) {
  auto r = rangeOf(R"(
    %cap = arith.constant 20.0 : f32
    %x = arith.divf %score, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32)");
  ASSERT_TRUE(r);
  // [-20, 20], widened by tanh.approx's error (2^-10 relative) and less.
  EXPECT_LE(r->hi, 20.03);
  EXPECT_GE(r->hi, 20.0 * (1 + 1.0 / 1024));
  EXPECT_DOUBLE_EQ(r->lo, -r->hi);
}

TEST(ScoreRange, ArithmeticAndSelect) {
  // 2 - |3 tanh(s)| in [-1, 2]; max(-tanh(s), -0.5) in [-0.5, 1].
  auto r = rangeOf(R"(
    %two = arith.constant 2.0 : f32
    %three = arith.constant 3.0 : f32
    %half = arith.constant -0.5 : f32
    %t = math.tanh %score : f32
    %t3 = arith.mulf %t, %three : f32
    %a = math.absf %t3 : f32
    %x = arith.subf %two, %a : f32
    %n = arith.negf %t : f32
    %y = arith.maximumf %n, %half : f32
    %c = arith.cmpf olt, %score, %two : f32
    %r = arith.select %c, %x, %y : f32)");
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->lo, -1.0, 0.01);
  EXPECT_LT(r->lo, -1.0);
  EXPECT_NEAR(r->hi, 2.0, 1e-5);
  EXPECT_GE(r->hi, 2.0);
}

TEST(ScoreRange, ExpOfBounded) {
  auto r = rangeOf(R"(
    %t = math.tanh %score : f32
    %r = math.exp %t : f32)");
  ASSERT_TRUE(r);
  EXPECT_LT(r->lo, std::exp(-1.0));
  EXPECT_GT(r->hi, std::exp(1.0));
  EXPECT_NEAR(r->hi, std::exp(1.0), 0.02);
}

TEST(ScoreRange, Unbounded) {
  // The score itself, a capture, positions, and a divisor that may be 0.
  EXPECT_FALSE(rangeOf("    %r = arith.addf %score, %score : f32"));
  EXPECT_FALSE(rangeOf(R"(
    %v = memref.load %w[%h] : memref<?xf32>
    %t = math.tanh %score : f32
    %r = arith.mulf %t, %v : f32)"));
  EXPECT_FALSE(rangeOf(R"(
    %qi = arith.index_cast %q : index to i32
    %qf = arith.sitofp %qi : i32 to f32
    %t = math.tanh %score : f32
    %r = arith.addf %t, %qf : f32)"));
  EXPECT_FALSE(rangeOf(R"(
    %t = math.tanh %score : f32
    %r = arith.divf %t, %t : f32)"));
}

TEST(ScoreRange, FloatNotReal) {
  // 4 tanh(s) + 1026 lies in [1022, 1030] over the reals, but f32 adds and
  // subtracts 2^34 in multiples of 2048: the values are 0 and 2048, which the
  // interval must hold.
  auto cancelled = rangeOf(R"(
    %four = arith.constant 4.0 : f32
    %off = arith.constant 1026.0 : f32
    %big = arith.constant 17179869184.0 : f32
    %t = math.tanh %score : f32
    %x0 = arith.mulf %t, %four : f32
    %x = arith.addf %x0, %off : f32
    %y = arith.addf %x, %big : f32
    %r = arith.subf %y, %big : f32)");
  ASSERT_TRUE(cancelled);
  EXPECT_LE(cancelled->lo, 0.0);
  EXPECT_GE(cancelled->hi, 2048.0);
  // Bounded over the reals, not in f32: an exp past f32's range scaled back
  // down, and the sine of an overflowed product (sin(inf) is NaN).
  EXPECT_FALSE(rangeOf(R"(
    %c = arith.constant 88.5 : f32
    %tiny = arith.constant 1.0e-38 : f32
    %t = math.tanh %score : f32
    %x = arith.addf %t, %c : f32
    %e = math.exp %x : f32
    %r = arith.mulf %e, %tiny : f32)"));
  EXPECT_FALSE(rangeOf(R"(
    %big = arith.constant 1.0e30 : f32
    %t = math.tanh %score : f32
    %x = arith.mulf %t, %big : f32
    %y = arith.mulf %x, %big : f32
    %r = math.sin %y : f32)"));
  // A small cancellation stays bounded, widened by its rounding.
  auto r = rangeOf(R"(
    %big = arith.constant 1024.0 : f32
    %t = math.tanh %score : f32
    %y = arith.addf %t, %big : f32
    %r = arith.subf %y, %big : f32)");
  ASSERT_TRUE(r);
  EXPECT_LT(r->lo, -1.0);
  EXPECT_GT(r->hi, 1.0 + 1024.0 * std::ldexp(1.0, -22));
}

} // namespace
