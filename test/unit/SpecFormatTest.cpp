//===- SpecFormatTest.cpp - the program spec format and plan checks -------===//
//
// Specs round-trip through JSON; a spec of another version, malformed JSON,
// and plans that cannot be launched (unknown symbols, missing captures,
// wrong ranks, bad workspace expressions) are refused with a message naming
// the field, before anything reaches a device.
//
//===----------------------------------------------------------------------===//

#include "kiln/SpecFormat.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {

ProgramSpec backwardLike() {
  auto sym = SizeExpr::named;
  auto c = SizeExpr::constant;
  ProgramSpec p;
  p.variant = "alibi";
  p.kind = "backward";
  p.arch = "sm_90a";
  p.source = "extern \"C\" __global__ void k() {}\n";
  p.headDimQK = p.headDimV = 64;
  p.blockM = p.blockN = 64;
  p.schedule = "atomic";
  p.tensors = {
      {"q", DType::BF16, {sym("batch"), sym("seq_q"), sym("heads"), c(64)}, 16},
      {"lse", DType::F32, {sym("batch"), sym("heads"), sym("seq_q")}, 0}};
  p.captures = {{"slopes", DType::F32, {"heads"}}};
  p.workspaces = {{"acc",
                   DType::F32,
                   {sym("batch"), sym("seq_q"), sym("heads"), c(64)},
                   true}};
  p.constraints = {{sym("heads"), sym("kv_heads")}};
  KernelLaunch k;
  k.name = "alibi_bwd_k";
  k.grid = {SizeExpr::apply(SizeExpr::Op::CeilDiv, {sym("seq_q"), c(64)}),
            SizeExpr::apply(SizeExpr::Op::Max, {sym("num_sms"), c(1)}),
            sym("batch")};
  k.numThreads = 256;
  k.sharedBytes = 49152;
  k.args = {{KernelArg::Kind::Tensor, "q", 0, 4},
            {KernelArg::Kind::Workspace, "acc", 0, 4},
            {KernelArg::Kind::Capture, "", 0, 1}};
  KernelArg scalar;
  scalar.kind = KernelArg::Kind::Scalar;
  scalar.value = SizeExpr::apply(SizeExpr::Op::Mul, {sym("seq_q"), c(2)});
  k.args.push_back(scalar);
  p.kernels = {k};
  return p;
}

TEST(SpecFormat, RoundTrips) {
  ProgramSpec original = backwardLike();
  ASSERT_TRUE(verifyPlan(original).ok()) << verifyPlan(original).message();
  std::string text = writeSpecJson(original);
  ProgramSpec read;
  Status s = readSpecJson(text, read);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(writeSpecJson(read), text);
  EXPECT_EQ(read.source, original.source);
  EXPECT_EQ(read.kernels[0].grid[0].str(), "ceildiv(seq_q, 64)");
  EXPECT_EQ(read.kernels[0].args[3].value.str(), "mul(seq_q, 2)");
  EXPECT_TRUE(read.workspaces[0].zeroFill);
  EXPECT_EQ(read.tensors[0].alignBytes, 16);
}

TEST(SpecFormat, RefusesOtherVersionsAndNonSpecs) {
  ProgramSpec spec;
  EXPECT_EQ(readSpecJson("{", spec).message(), "the spec is not valid JSON");
  // Kiln 0.1's unversioned forward spec.
  Status old = readSpecJson(
      R"({"variant": "plain", "kernel": "plain_fwd", "threads": 128})", spec);
  EXPECT_NE(old.message().find("not a Kiln program spec of a known version"),
            std::string::npos)
      << old.message();
  std::string text = writeSpecJson(backwardLike());
  std::string v4 = text;
  v4.replace(v4.find("\"version\": 3"), 12, "\"version\": 4");
  EXPECT_NE(readSpecJson(v4, spec).message().find(
                "format version 4; this runtime reads version 3"),
            std::string::npos);
  // Version 2 is version 3 without derived symbols and launch conditions.
  std::string v2 = text;
  v2.replace(v2.find("\"version\": 3"), 12, "\"version\": 2");
  EXPECT_TRUE(readSpecJson(v2, spec).ok());
}

/// A forward with split-KV's pieces: a derived symbol, a workspace sized by
/// it (0 when it is 1), a scalar argument and a kernel launched on a
/// condition.
ProgramSpec splitLike() {
  auto sym = SizeExpr::named;
  auto c = SizeExpr::constant;
  auto op = SizeExpr::apply;
  ProgramSpec p = backwardLike();
  p.kind = "forward";
  p.symbols = {{"kv_splits",
                op(SizeExpr::Op::Min,
                   {op(SizeExpr::Op::CeilDiv, {sym("num_sms"), sym("batch")}),
                    c(128)})}};
  p.workspaces[0].shape[0] =
      op(SizeExpr::Op::Mul,
         {sym("batch"), sym("kv_splits"),
          op(SizeExpr::Op::Min,
             {op(SizeExpr::Op::Sub, {sym("kv_splits"), c(1)}), c(1)})});
  KernelLaunch combine = p.kernels[0];
  combine.name = "combine";
  combine.when = op(SizeExpr::Op::Sub, {sym("kv_splits"), c(1)});
  p.kernels.push_back(combine);
  p.kernels[0].grid[2] = op(SizeExpr::Op::Mul, {sym("batch"), sym("kv_splits")});
  return p;
}

TEST(SpecFormat, DerivedSymbolsAndLaunchConditionsRoundTrip) {
  ProgramSpec original = splitLike();
  ASSERT_TRUE(verifyPlan(original).ok()) << verifyPlan(original).message();
  std::string text = writeSpecJson(original);
  EXPECT_NE(text.find(R"("symbols": {"kv_splits":["min",["ceildiv","num_sms","batch"],128]})"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("when":["sub","kv_splits",1])"), std::string::npos);
  // A kernel that always launches writes no "when"; a plan without derived
  // symbols no "symbols".
  EXPECT_EQ(text.find("\"when\""), text.rfind("\"when\""));
  EXPECT_EQ(writeSpecJson(backwardLike()).find("\"symbols\""),
            std::string::npos);
  ProgramSpec read;
  Status s = readSpecJson(text, read);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(writeSpecJson(read), text);
  ASSERT_EQ(read.symbols.size(), 1u);
  EXPECT_EQ(read.symbols[0].second.str(),
            "min(ceildiv(num_sms, batch), 128)");
  EXPECT_EQ(read.kernels[1].when.str(), "sub(kv_splits, 1)");
  EXPECT_EQ(read.kernels[0].when.str(), "1");
}

TEST(SpecFormat, OverlapsPriorRoundTripsAndDefaultsToFalse) {
  // A kernel that waits for the previous grids itself (tgpu-overlap-launches)
  // says so; others leave the field out and read back false.
  ProgramSpec original = splitLike();
  original.kernels[0].overlapsPrior = true;
  std::string text = writeSpecJson(original);
  EXPECT_NE(text.find(R"("overlaps_prior":true)"), std::string::npos) << text;
  ProgramSpec read;
  Status s = readSpecJson(text, read);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(read.kernels.size(), 2u);
  EXPECT_TRUE(read.kernels[0].overlapsPrior);
  EXPECT_FALSE(read.kernels[1].overlapsPrior);
  EXPECT_EQ(writeSpecJson(read), text);
  std::string wrong = text;
  wrong.replace(wrong.find(R"("overlaps_prior":true)"), 21,
                R"("overlaps_prior":1)");
  EXPECT_NE(readSpecJson(wrong, read)
                .message()
                .find("kernels[0].overlaps_prior must be true or false"),
            std::string::npos)
      << readSpecJson(wrong, read).message();
}

TEST(SpecFormat, RefusesMalformedDerivedSymbols) {
  ProgramSpec p = splitLike();
  p.symbols.push_back({"seq_q", SizeExpr::constant(2)});
  EXPECT_EQ(verifyPlan(p).message(),
            "program 'alibi' derives symbol 'seq_q' twice, without a name or "
            "with a problem symbol's name");
  p = splitLike();
  p.symbols.push_back({"more", SizeExpr::named("kv_splits")});
  EXPECT_EQ(verifyPlan(p).message(),
            "program 'alibi': symbol 'more' names 'kv_splits'; a size "
            "expression may name batch, heads, kv_heads, seq_q, seq_kv, "
            "pages, max_pages, total_q, total_kv, num_sms, ctas_per_sm.<one of "
            "its kernels>");
  // Tensors bind the problem's symbols: they cannot be sized by derived ones.
  p = splitLike();
  p.tensors[0].shape[0] = SizeExpr::named("kv_splits");
  EXPECT_EQ(verifyPlan(p).message(),
            "program 'alibi': tensor 'q' dimension 0 names 'kv_splits'; a "
            "size expression may name batch, heads, kv_heads, seq_q, seq_kv, "
            "pages, max_pages, total_q, total_kv, num_sms, ctas_per_sm.<one of "
            "its kernels>");
  p = splitLike();
  p.kernels[1].when = SizeExpr::named("splits");
  EXPECT_EQ(verifyPlan(p).message(),
            "program 'alibi': kernel 'combine' 'when' names 'splits'; a size "
            "expression may name batch, heads, kv_heads, seq_q, seq_kv, "
            "pages, max_pages, total_q, total_kv, num_sms, ctas_per_sm.<one of "
            "its kernels>, kv_splits");
  // The device's CTAs per multiprocessor of a kernel the plan has, and of
  // one it does not.
  p = splitLike();
  p.symbols[0].second = SizeExpr::apply(
      SizeExpr::Op::Mul,
      {SizeExpr::named("num_sms"), SizeExpr::named(ctasPerSmSymbol("combine"))});
  EXPECT_TRUE(verifyPlan(p).ok()) << verifyPlan(p).message();
  p.symbols[0].second = SizeExpr::named(ctasPerSmSymbol("fwd"));
  EXPECT_EQ(verifyPlan(p).message(),
            "program 'alibi': symbol 'kv_splits' names 'ctas_per_sm.fwd'; a "
            "size expression may name batch, heads, kv_heads, seq_q, seq_kv, "
            "pages, max_pages, total_q, total_kv, num_sms, ctas_per_sm.<one of "
            "its kernels>");
  std::string text = writeSpecJson(splitLike());
  std::string symbols =
      R"("symbols": {"kv_splits":["min",["ceildiv","num_sms","batch"],128]})";
  text.replace(text.find(symbols), symbols.size(),
               R"("symbols": ["kv_splits"])");
  ProgramSpec spec;
  EXPECT_EQ(readSpecJson(text, spec).message(),
            "malformed spec: the spec's \"symbols\" must be an object");
}

/// The message of reading `text` after replacing `from` with `to`.
std::string refusal(const std::string &from, const std::string &to) {
  std::string text = writeSpecJson(backwardLike());
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  ProgramSpec spec;
  return readSpecJson(text, spec).message();
}

TEST(SpecFormat, RefusesMalformedPlans) {
  EXPECT_EQ(refusal(R"(["ceildiv","seq_q",64])", R"(["ceildiv","seqlen",64])"),
            "program 'alibi': kernel 'alibi_bwd_k' grid x names 'seqlen'; a "
            "size expression may name batch, heads, kv_heads, seq_q, seq_kv, "
            "pages, max_pages, total_q, total_kv, num_sms, ctas_per_sm.<one of "
            "its kernels>");
  EXPECT_EQ(refusal(R"({"capture":0,"rank":1})", R"({"capture":1,"rank":1})"),
            "program 'alibi': kernel 'alibi_bwd_k' argument 2 names capture "
            "1; the program has 1");
  EXPECT_EQ(refusal(R"({"tensor":"q","rank":4})", R"({"tensor":"q","rank":3})"),
            "program 'alibi': kernel 'alibi_bwd_k' argument 0 passes tensor "
            "'q' at rank 3; it is declared with 4 dimensions");
  EXPECT_EQ(refusal(R"({"tensor":"q","rank":4})", R"({"tensor":"k","rank":4})"),
            "program 'alibi': kernel 'alibi_bwd_k' argument 0 names tensor "
            "'k', which the program does not declare");
  EXPECT_EQ(
      refusal(R"("shape":["batch","seq_q","heads",64],"zero_fill")",
              R"("shape":["batch",["div","seq_q",2],"heads",64],"zero_fill")"),
      "malformed spec: workspaces[0].shape[1] uses operator 'div'; "
      "expected add, sub, mul, ceildiv, max or min");
  EXPECT_EQ(refusal(R"(["ceildiv","seq_q",64])", R"(["ceildiv","seq_q"])"),
            "program 'alibi': kernel 'alibi_bwd_k' grid x: ceildiv takes 2 "
            "operands, got 1");
  EXPECT_EQ(refusal(R"("threads":256)", R"("threads":2048)"),
            "program 'alibi': kernel 'alibi_bwd_k' has 2048 threads; a block "
            "holds 1 to 1024");
  EXPECT_EQ(refusal(R"("dtype":"f32","dims")", R"("dtype":"f16","dims")"),
            "malformed spec: captures[0].dtype is 'f16'; expected bf16, fp16, "
            "f32, f64, i32 or i64");
  EXPECT_EQ(refusal(R"("kind": "backward")", R"("kind": "decode")"),
            "program 'alibi' has kind 'decode'; expected forward or backward");
  EXPECT_EQ(
      refusal(
          R"({"tensor":"q","rank":4})",
          R"({"tensor_map":"q","dims":[3,1,2,0],"box":[64,300],"swizzle":128})"),
      "program 'alibi': kernel 'alibi_bwd_k' argument 0: a box "
      "dimension is 300; TMA boxes hold 1 to 256");
  EXPECT_EQ(
      refusal(
          R"({"tensor":"q","rank":4})",
          R"({"tensor_map":"q","dims":[3,1,2,0],"box":[4,64],"swizzle":0})"),
      "program 'alibi': kernel 'alibi_bwd_k' argument 0: the box's "
      "innermost extent is 8 bytes; TMA needs a multiple of 16");
  EXPECT_EQ(
      refusal(
          R"({"tensor":"q","rank":4})",
          R"({"tensor_map":"q","dims":[3,1,2,0],"box":[128,64],"swizzle":128})"),
      "program 'alibi': kernel 'alibi_bwd_k' argument 0: the box's "
      "innermost extent is 256 bytes, wider than its 128-byte swizzle");
  EXPECT_EQ(
      refusal(
          R"({"tensor":"q","rank":4})",
          R"({"tensor_map":"q","dims":[1,3,2,0],"box":[64,64],"swizzle":0})"),
      "program 'alibi': kernel 'alibi_bwd_k' argument 0: the tensor "
      "map's dims must order all 4 dimensions of 'q', its last "
      "(contiguous) one first");
  EXPECT_EQ(refusal(R"("shape":["batch","seq_q","heads",64],"zero_fill")",
                    R"("shape":["batch",0,"heads",64],"zero_fill")"),
            "program 'alibi': workspace 'acc' dimension 1 is 0; sizes are at "
            "least 1");
  EXPECT_EQ(refusal(R"("dims":["heads"])", R"("dims":["num_sms"])"),
            "program 'alibi': capture 'slopes' declares dim 'num_sms'; a dim "
            "is batch, heads, kv_heads, seq_q, seq_kv or a size");
  // Expressions nest a few levels; a spec nesting deeper is refused, not
  // recursed into.
  std::string deep = "\"seq_q\"";
  for (int i = 0; i < 40; ++i)
    deep = "[\"add\"," + deep + ",1]";
  EXPECT_NE(refusal(R"(["ceildiv","seq_q",64])", deep)
                .find("nests deeper than 32 levels"),
            std::string::npos);
  // A well-formed tensor map reads back as one.
  ProgramSpec spec;
  std::string text = writeSpecJson(backwardLike());
  std::string whole = R"({"tensor":"q","rank":4})";
  text.replace(
      text.find(whole), whole.size(),
      R"({"tensor_map":"q","dims":[3,1,2,0],"box":[64,64],"swizzle":128})");
  Status read = readSpecJson(text, spec);
  ASSERT_TRUE(read.ok()) << read.message();
  EXPECT_EQ(spec.kernels[0].args[0].kind, KernelArg::Kind::TensorMap);
  EXPECT_EQ(spec.kernels[0].args[0].box, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(spec.kernels[0].args[0].mapDims,
            (std::vector<int64_t>{3, 1, 2, 0}));
  // So does a workspace's (the atomic backward adds its dQ shares into the
  // accumulator through one); a name that is neither is refused.
  EXPECT_EQ(refusal(whole, R"({"tensor_map":"acc","dims":[3,2,1,0],)"
                           R"("box":[32,16],"swizzle":128})"),
            "");
  EXPECT_EQ(refusal(whole, R"({"tensor_map":"dq","dims":[3,2,1,0],)"
                           R"("box":[32,16],"swizzle":128})"),
            "program 'alibi': kernel 'alibi_bwd_k' argument 0 maps tensor "
            "'dq', which the program declares neither as a tensor nor as a "
            "workspace");
}

TEST(SpecFormat, EvaluatesExpressions) {
  SizeExpr e = SizeExpr::apply(
      SizeExpr::Op::Add,
      {SizeExpr::apply(SizeExpr::Op::CeilDiv,
                       {SizeExpr::named("seq_q"), SizeExpr::constant(64)}),
       SizeExpr::constant(1)});
  int64_t v = 0;
  ASSERT_TRUE(evaluate(e, {{"seq_q", 129}}, v).ok());
  EXPECT_EQ(v, 4);
  EXPECT_EQ(evaluate(e, {}, v).message(), "'seq_q' has no value here");
  SizeExpr div0 = SizeExpr::apply(
      SizeExpr::Op::CeilDiv, {SizeExpr::constant(3), SizeExpr::named("batch")});
  EXPECT_EQ(evaluate(div0, {{"batch", 0}}, v).message(),
            "'ceildiv(3, batch)' divides by 0");
  SizeExpr big =
      SizeExpr::apply(SizeExpr::Op::Mul, {SizeExpr::constant(int64_t{1} << 40),
                                          SizeExpr::constant(1 << 30)});
  EXPECT_EQ(evaluate(big, {}, v).message(),
            "'mul(1099511627776, 1073741824)' overflows 64 bits");
  // sub and min: split-KV's "0 unless split" factor.
  SizeExpr zeroUnlessSplit = SizeExpr::apply(
      SizeExpr::Op::Min,
      {SizeExpr::apply(SizeExpr::Op::Sub,
                       {SizeExpr::named("s"), SizeExpr::constant(1)}),
       SizeExpr::constant(1)});
  ASSERT_TRUE(evaluate(zeroUnlessSplit, {{"s", 1}}, v).ok());
  EXPECT_EQ(v, 0);
  ASSERT_TRUE(evaluate(zeroUnlessSplit, {{"s", 9}}, v).ok());
  EXPECT_EQ(v, 1);
  SizeExpr under = SizeExpr::apply(
      SizeExpr::Op::Sub,
      {SizeExpr::constant(INT64_MIN), SizeExpr::constant(1)});
  EXPECT_EQ(evaluate(under, {}, v).message(),
            "'sub(-9223372036854775808, 1)' overflows 64 bits");
}

} // namespace
