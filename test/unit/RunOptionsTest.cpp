//===- RunOptionsTest.cpp - tests of the `kiln run` command line ----------===//
//
// parseRunOptions promises that flags take `--flag value` or `--flag=value`
// and that every malformed flag yields an error naming the flag. These tests
// hold it to that, and check the defaults the driver relies on.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/RunOptions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace kiln::driver;

namespace {

ParsedRunOptions parse(std::vector<std::string> args) {
  return parseRunOptions(args);
}

/// Parses `args`, which must succeed.
RunOptions parseOk(std::vector<std::string> args) {
  ParsedRunOptions p = parseRunOptions(args);
  EXPECT_EQ(p.error, "");
  EXPECT_FALSE(p.help);
  return p.options;
}

std::string join(const std::vector<std::string> &args) {
  std::string s;
  for (const std::string &a : args)
    s += (s.empty() ? "" : " ") + a;
  return s;
}

} // namespace

TEST(RunOptions, DefaultsWithOnlyAnInput) {
  ParsedRunOptions p = parse({"variant.mlir"});
  EXPECT_EQ(p.error, "");
  EXPECT_FALSE(p.help);
  const RunOptions &o = p.options;
  EXPECT_EQ(o.input, "variant.mlir");
  EXPECT_EQ(o.variant, "");
  EXPECT_EQ(o.backend, "cpu");
  EXPECT_EQ(o.emit, EmitStage::None);
  EXPECT_EQ(o.batch, 1);
  EXPECT_EQ(o.heads, 1);
  EXPECT_EQ(o.seqQ, 128);
  EXPECT_EQ(o.seqKV, -1);    // -1: follow seqQ
  EXPECT_EQ(o.headDim, -1);  // -1: the variant's
  EXPECT_EQ(o.headDimV, -1); // -1: the variant's
  EXPECT_EQ(o.dtype, "");
  EXPECT_EQ(o.pad, 0);
  EXPECT_FALSE(o.check);
  EXPECT_EQ(o.seed, 0u);
  EXPECT_DOUBLE_EQ(o.tolerance, 1e-2);
  EXPECT_EQ(o.blockM, 64);
  EXPECT_EQ(o.blockN, 64);
  EXPECT_TRUE(o.splitMaskedBlocks);
  EXPECT_TRUE(o.splitKv);
  EXPECT_EQ(o.kvSplits, 0); // 0: the plan's choice
  EXPECT_EQ(o.decodeRows, 64);
  EXPECT_EQ(o.wideDecodeRows, 128);
  EXPECT_TRUE(kvSplitsOverride(o).empty());
}

TEST(RunOptions, SplitKvFlags) {
  RunOptions o = parseOk(
      {"v.mlir", "--no-split-kv", "--kv-splits", "7", "--decode-rows=0"});
  EXPECT_FALSE(o.splitKv);
  EXPECT_EQ(o.kvSplits, 7);
  EXPECT_EQ(o.decodeRows, 0);
  EXPECT_EQ(kvSplitsOverride(o), (kiln::SymbolValues{{"kv_splits", 7}}));
  EXPECT_EQ(parse({"v.mlir", "--kv-splits", "0"}).error,
            "--kv-splits must be an integer >= 1, got '0'");
  EXPECT_EQ(parse({"v.mlir", "--decode-rows", "-1"}).error,
            "--decode-rows must be an integer >= 0, got '-1'");
  EXPECT_EQ(parseOk({"v.mlir", "--wide-decode-rows", "0"}).wideDecodeRows, 0);
  EXPECT_EQ(parse({"v.mlir", "--wide-decode-rows", "-2"}).error,
            "--wide-decode-rows must be an integer >= 0, got '-2'");
  EXPECT_EQ(parse({"v.mlir", "--no-split-kv=1"}).error,
            "--no-split-kv takes no value, got '1'");
}

TEST(RunOptions, NonceIsAnIdentifierPart) {
  EXPECT_EQ(parseOk({"v.mlir", "--nonce", "a1_B"}).nonce, "a1_B");
  EXPECT_EQ(parse({"v.mlir", "--nonce", "a-b"}).error,
            "--nonce must be letters, digits and '_', got 'a-b'");
  EXPECT_EQ(parse({"v.mlir", "--nonce="}).error,
            "--nonce must be letters, digits and '_', got ''");
}

TEST(RunOptions, EveryValueFlagInTheSpaceSeparatedForm) {
  RunOptions o = parseOk(
      {"v.mlir", "--backend",  "cpu", "--variant",    "alibi", "--batch",
       "2",      "--heads",    "8",   "--seqlen",     "256",   "--seqlen-kv",
       "512",    "--head-dim", "128", "--head-dim-v", "64",    "--dtype",
       "bf16",   "--pad",      "3",   "--seed",       "42",    "--tolerance",
       "0.05",   "--block-m",  "32",  "--block-n",    "16"});
  EXPECT_EQ(o.input, "v.mlir");
  EXPECT_EQ(o.backend, "cpu");
  EXPECT_EQ(o.variant, "alibi");
  EXPECT_EQ(o.batch, 2);
  EXPECT_EQ(o.heads, 8);
  EXPECT_EQ(o.seqQ, 256);
  EXPECT_EQ(o.seqKV, 512);
  EXPECT_EQ(o.headDim, 128);
  EXPECT_EQ(o.headDimV, 64);
  EXPECT_EQ(o.dtype, "bf16");
  EXPECT_EQ(o.pad, 3);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_DOUBLE_EQ(o.tolerance, 0.05);
  EXPECT_EQ(o.blockM, 32);
  EXPECT_EQ(o.blockN, 16);
}

TEST(RunOptions, EveryValueFlagInTheEqualsForm) {
  RunOptions o =
      parseOk({"--backend=cpu", "--variant=alibi", "--batch=2", "--heads=8",
               "--seqlen=256", "--seqlen-kv=512", "--head-dim=128",
               "--head-dim-v=64", "--dtype=fp16", "--pad=3", "--seed=42",
               "--tolerance=0.05", "--block-m=32", "--block-n=16", "v.mlir"});
  EXPECT_EQ(o.input, "v.mlir"); // the input may come after the flags
  EXPECT_EQ(o.variant, "alibi");
  EXPECT_EQ(o.batch, 2);
  EXPECT_EQ(o.heads, 8);
  EXPECT_EQ(o.seqQ, 256);
  EXPECT_EQ(o.seqKV, 512);
  EXPECT_EQ(o.headDim, 128);
  EXPECT_EQ(o.headDimV, 64);
  EXPECT_EQ(o.dtype, "fp16");
  EXPECT_EQ(o.pad, 3);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_DOUBLE_EQ(o.tolerance, 0.05);
  EXPECT_EQ(o.blockM, 32);
  EXPECT_EQ(o.blockN, 16);
}

TEST(RunOptions, EqualsFormKeepsEverythingAfterTheFirstEquals) {
  // The value is split at the first '=' only, so a variant name may hold '='.
  RunOptions o = parseOk({"v.mlir", "--variant=a=b"});
  EXPECT_EQ(o.variant, "a=b");
}

TEST(RunOptions, EmitSelectsTheStage) {
  EXPECT_EQ(parseOk({"v.mlir", "-emit=attn"}).emit, EmitStage::Attn);
  EXPECT_EQ(parseOk({"v.mlir", "-emit=tile"}).emit, EmitStage::Tile);
  EXPECT_EQ(parseOk({"v.mlir", "-emit=llvm"}).emit, EmitStage::LLVM);
  EXPECT_EQ(parseOk({"v.mlir", "-emit=tgpu"}).emit, EmitStage::TGPU);
  EXPECT_EQ(parseOk({"v.mlir", "-emit=cuda"}).emit, EmitStage::CUDA);
  // The other spellings of a flag work for -emit too.
  EXPECT_EQ(parseOk({"v.mlir", "--emit=tile"}).emit, EmitStage::Tile);
  EXPECT_EQ(parseOk({"v.mlir", "-emit", "llvm"}).emit, EmitStage::LLVM);
}

TEST(RunOptions, BooleanFlags) {
  RunOptions o = parseOk({"v.mlir", "--check", "--no-split"});
  EXPECT_TRUE(o.check);
  EXPECT_FALSE(o.splitMaskedBlocks);
  EXPECT_TRUE(o.groupSteps);
  EXPECT_FALSE(parseOk({"v.mlir", "--no-group-steps"}).groupSteps);
}

TEST(RunOptions, HelpSetsHelpAndNeedsNoInput) {
  for (const char *flag : {"--help", "-h", "-help"}) {
    SCOPED_TRACE(flag);
    ParsedRunOptions p = parse({flag});
    EXPECT_TRUE(p.help);
    EXPECT_EQ(p.error, ""); // no "missing input" when asking for help
  }
  EXPECT_TRUE(parse({"v.mlir", "--batch", "2", "--help"}).help);
  EXPECT_FALSE(parse({"v.mlir"}).help);
}

TEST(RunOptions, ZeroPadIsAcceptedAsItsMinimum) {
  // --pad counts extra elements, so 0 is valid while the sizes start at 1.
  EXPECT_EQ(parseOk({"v.mlir", "--pad", "0"}).pad, 0);
  EXPECT_EQ(parseOk({"v.mlir", "--batch", "1"}).batch, 1);
}

TEST(RunOptions, LaterFlagsOverrideEarlierOnes) {
  EXPECT_EQ(parseOk({"v.mlir", "--batch", "2", "--batch=5"}).batch, 5);
}

TEST(RunOptions, EveryMalformedFlagIsAnErrorNamingIt) {
  struct Case {
    std::vector<std::string> args;
    std::string mention; ///< what the error must contain
  } cases[] = {
      {{"v.mlir", "--batch", "0"}, "--batch"},
      {{"v.mlir", "--batch", "abc"}, "--batch"},
      {{"v.mlir", "--batch", "2x"}, "--batch"},
      {{"v.mlir", "--batch="}, "--batch"},
      {{"v.mlir", "--batch", "99999999999999999999"}, "--batch"}, // overflow
      {{"v.mlir", "--heads", "0"}, "--heads"},
      {{"v.mlir", "--seqlen", "-3"}, "--seqlen"},
      {{"v.mlir", "--seqlen=-3"}, "--seqlen"},
      {{"v.mlir", "--seqlen-kv", "0"}, "--seqlen-kv"},
      {{"v.mlir", "--head-dim", "0"}, "--head-dim"},
      {{"v.mlir", "--head-dim-v", "-1"}, "--head-dim-v"},
      {{"v.mlir", "--pad", "-1"}, "--pad"},
      {{"v.mlir", "--block-m", "0"}, "--block-m"},
      {{"v.mlir", "--block-n", "1.5"}, "--block-n"},
      {{"v.mlir", "--seed", "-1"}, "--seed"},
      {{"v.mlir", "--seed", "x"}, "--seed"},
      {{"v.mlir", "--dtype", "fp32"}, "--dtype"},
      {{"v.mlir", "--backend", "tpu"}, "--backend"},
      {{"v.mlir", "--tolerance", "0"}, "--tolerance"},
      {{"v.mlir", "--tolerance", "-0.1"}, "--tolerance"},
      {{"v.mlir", "--tolerance", "nan"}, "--tolerance"},
      {{"v.mlir", "--tolerance", "tiny"}, "--tolerance"},
      {{"v.mlir", "-emit=asm"}, "emit"},
      {{"v.mlir", "--frobnicate"}, "--frobnicate"},
      {{"v.mlir", "-x"}, "-x"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(join(c.args));
    ParsedRunOptions p = parse(c.args);
    ASSERT_NE(p.error, "");
    EXPECT_NE(p.error.find(c.mention), std::string::npos) << p.error;
  }
}

TEST(RunOptions, RejectedValuesQuoteTheBadValue) {
  // Naming the flag is not enough to fix a typo; the value is shown too.
  std::string error = parse({"v.mlir", "--dtype", "fp32"}).error;
  EXPECT_NE(error.find("fp32"), std::string::npos) << error;
  error = parse({"v.mlir", "--batch", "abc"}).error;
  EXPECT_NE(error.find("abc"), std::string::npos) << error;
}

TEST(RunOptions, MissingValueAtTheEndIsAnErrorNamingTheFlag) {
  for (const char *flag : {"--seqlen", "--dtype", "--tolerance", "--seed",
                           "--variant", "--backend", "-emit"}) {
    SCOPED_TRACE(flag);
    ParsedRunOptions p = parse({"v.mlir", flag});
    ASSERT_NE(p.error, "");
    std::string name = std::string(flag).substr(flag[1] == '-' ? 2 : 1);
    EXPECT_NE(p.error.find(name), std::string::npos) << p.error;
  }
}

TEST(RunOptions, MissingInputIsAnError) {
  ParsedRunOptions p = parse({"--batch", "2"});
  ASSERT_NE(p.error, "");
  EXPECT_NE(p.error.find("input"), std::string::npos) << p.error;
  EXPECT_NE(parse({}).error, "");
}

TEST(RunOptions, TwoPositionalInputsAreAnError) {
  ParsedRunOptions p = parse({"a.mlir", "b.mlir"});
  ASSERT_NE(p.error, "");
  // The message names the extra argument so the user can find it.
  EXPECT_NE(p.error.find("b.mlir"), std::string::npos) << p.error;
}

TEST(RunOptions, FirstErrorIsTheOneReported) {
  // Two bad flags: the message is about the first, not a mix of both.
  ParsedRunOptions p = parse({"v.mlir", "--batch", "0", "--dtype", "fp32"});
  EXPECT_NE(p.error.find("--batch"), std::string::npos) << p.error;
  EXPECT_EQ(p.error.find("--dtype"), std::string::npos) << p.error;
}

TEST(RunOptions, ValueFlagConsumesTheNextArgumentEvenIfItLooksLikeAFlag) {
  // `--batch --heads 2`: --heads is taken as --batch's value and rejected,
  // rather than --batch silently keeping its default.
  ParsedRunOptions p = parse({"v.mlir", "--batch", "--heads", "2"});
  EXPECT_NE(p.error.find("--batch"), std::string::npos) << p.error;
}

TEST(RunOptions, BooleanFlagsRejectAValue) {
  // The header promises that every malformed flag yields an error naming it.
  // --check takes no value; `--check=false` must not silently turn checking
  // *on*, nor `--no-split=false` turn the split off.
  ParsedRunOptions p = parse({"v.mlir", "--check=false"});
  EXPECT_NE(p.error.find("check"), std::string::npos)
      << "error: '" << p.error << "', check = " << p.options.check;
  p = parse({"v.mlir", "--no-split=false"});
  EXPECT_NE(p.error.find("no-split"), std::string::npos)
      << "error: '" << p.error
      << "', splitMaskedBlocks = " << p.options.splitMaskedBlocks;
}

TEST(RunOptions, UsageMentionsEveryFlag) {
  std::string usage = runUsage();
  for (const char *flag :
       {"--backend", "--variant",   "--batch",    "--heads",
        "--seqlen",  "--seqlen-kv", "--head-dim", "--head-dim-v",
        "--dtype",   "--pad",       "--check",    "--tolerance",
        "--seed",    "--block-m",   "--block-n",  "--no-split",
        "--repeats", "--arch",      "--backward", "--bwd-schedule",
        "-emit"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

TEST(RunOptions, GpuFlags) {
  RunOptions o = parseOk({"v.mlir", "--backend", "cuda", "--arch", "sm_80",
                          "--repeats", "20", "-o", "k.cubin"});
  EXPECT_EQ(o.backend, "cuda");
  EXPECT_EQ(o.arch, "sm_80");
  EXPECT_EQ(o.repeats, 20);
  EXPECT_EQ(o.output, "k.cubin");
  // Only the two targets the device library is written for.
  ParsedRunOptions bad = parse({"v.mlir", "--arch", "sm_75"});
  EXPECT_NE(bad.error.find("--arch must be sm_80 or sm_90a"), std::string::npos)
      << bad.error;
  EXPECT_TRUE(parseOk({"v.mlir"}).fastMath);
  EXPECT_FALSE(parseOk({"v.mlir", "--no-fast-math"}).fastMath);
  EXPECT_NE(parse({"v.mlir", "--no-fast-math=1"}).error, "");
  bad = parse({"v.mlir", "--repeats", "-1"});
  EXPECT_NE(bad.error.find("--repeats"), std::string::npos) << bad.error;
}

TEST(RunOptions, BackwardFlags) {
  RunOptions o = parseOk({"v.mlir", "--backward", "--bwd-schedule", "atomic"});
  EXPECT_TRUE(o.backward);
  EXPECT_EQ(o.backwardSchedule, "atomic");
  EXPECT_EQ(parseOk({"v.mlir"}).backwardSchedule, "auto");
  EXPECT_EQ(
      parseOk({"v.mlir", "--bwd-schedule", "two-kernel"}).backwardSchedule,
      "two-kernel");
  EXPECT_EQ(
      parseOk({"v.mlir", "--bwd-schedule", "deterministic"}).backwardSchedule,
      "deterministic");
  ParsedRunOptions bad = parse({"v.mlir", "--bwd-schedule", "fast"});
  EXPECT_NE(bad.error.find("--bwd-schedule must be auto, two-kernel, atomic or "
                           "deterministic"),
            std::string::npos)
      << bad.error;
  // --no-deferred-turns: the ordered adds' ablation.
  EXPECT_TRUE(parseOk({"v.mlir"}).deferredTurns);
  EXPECT_FALSE(parseOk({"v.mlir", "--no-deferred-turns"}).deferredTurns);
  EXPECT_NE(parse({"v.mlir", "--backward=yes"}).error, "");
  // The backward's schedule ablations: on by default, one flag off each.
  EXPECT_TRUE(parseOk({"v.mlir"}).combineBeforeWaits);
  EXPECT_FALSE(
      parseOk({"v.mlir", "--no-combine-before-waits"}).combineBeforeWaits);
  EXPECT_NE(parse({"v.mlir", "--no-combine-before-waits=1"}).error, "");
  EXPECT_NE(std::string(runUsage()).find("--no-combine-before-waits"),
            std::string::npos);
}
