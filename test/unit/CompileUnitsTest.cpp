//===- CompileUnitsTest.cpp - a program's kernels compiled one by one -----===//
//
// splitCompileUnits cuts an emitted source at its kernel markers (or keeps a
// source without any whole) and refuses sources that disagree with their
// launch plan; compileUnits compiles the units on several threads with NVRTC
// (no GPU needed) and names the kernel that failed.
//
//===----------------------------------------------------------------------===//

#include "kiln/CompileUnits.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace kiln;

namespace {

ProgramSpec specWith(std::vector<std::string> kernels, std::string source) {
  ProgramSpec spec;
  spec.variant = "v";
  spec.kind = "forward";
  spec.arch = "sm_80";
  spec.source = std::move(source);
  for (std::string &name : kernels) {
    KernelLaunch k;
    k.name = std::move(name);
    spec.kernels.push_back(std::move(k));
  }
  return spec;
}

std::string kernel(const std::string &name, const std::string &body) {
  return std::string(kKernelSectionMarker) + name +
         "\nextern \"C\" __global__ void " + name + "(float *x) { " + body +
         " }\n";
}

const char *kPreamble = "// preamble\n#define KILN_TEST_ONE 1.0f\n";

TEST(CompileUnits, OneUnitPerKernelWithThePreamble) {
  ProgramSpec spec =
      specWith({"a", "b"}, kPreamble + kernel("b", "x[0] = KILN_TEST_ONE;") +
                               kernel("a", "x[1] = 2.0f;"));
  std::vector<CompileUnit> units;
  ASSERT_TRUE(splitCompileUnits(spec, units).ok());
  ASSERT_EQ(units.size(), 2u);
  // In the source's order, each naming its kernel's index in the plan.
  EXPECT_EQ(units[0].name, "b");
  EXPECT_EQ(units[0].kernels, std::vector<size_t>{1});
  EXPECT_EQ(units[1].name, "a");
  EXPECT_EQ(units[1].kernels, std::vector<size_t>{0});
  EXPECT_EQ(units[0].source, kPreamble + kernel("b", "x[0] = KILN_TEST_ONE;"));
  EXPECT_EQ(units[1].source, kPreamble + kernel("a", "x[1] = 2.0f;"));
}

TEST(CompileUnits, ASourceWithoutMarkersIsOneUnit) {
  ProgramSpec spec = specWith({"a", "b"}, "extern \"C\" __global__ void a() {}\n"
                                          "extern \"C\" __global__ void b() {}\n");
  std::vector<CompileUnit> units;
  ASSERT_TRUE(splitCompileUnits(spec, units).ok());
  ASSERT_EQ(units.size(), 1u);
  EXPECT_EQ(units[0].name, "v_forward");
  EXPECT_EQ(units[0].kernels, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(units[0].source, spec.source);
}

TEST(CompileUnits, RefusesSourcesThatDisagreeWithThePlan) {
  std::vector<CompileUnit> units;
  Status missing = splitCompileUnits(
      specWith({"a", "b"}, kPreamble + kernel("a", "")), units);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("no section for kernel 'b'"),
            std::string::npos)
      << missing.message();
  Status twice = splitCompileUnits(
      specWith({"a"}, kPreamble + kernel("a", "") + kernel("a", "")), units);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.message().find("two sections for kernel 'a'"),
            std::string::npos)
      << twice.message();
  Status unknown = splitCompileUnits(
      specWith({"a"}, kPreamble + kernel("a", "") + kernel("c", "")), units);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("section for kernel 'c'"), std::string::npos)
      << unknown.message();
}

// Three workers (KILN_NVRTC_THREADS=3) run; that they overlap is measured
// by bench/bench_compile.py, not asserted here (timing on a shared CI host).
TEST(CompileUnits, CompilesEveryUnitOnThreadsAndNamesTheOneThatFails) {
  ProgramSpec spec = specWith(
      {"a", "b", "c"}, kPreamble + kernel("a", "x[0] = KILN_TEST_ONE;") +
                           kernel("b", "x[1] = 2.0f;") +
                           kernel("c", "x[2] = 3.0f;"));
  std::vector<CompileUnit> units;
  ASSERT_TRUE(splitCompileUnits(spec, units).ok());
  std::vector<CompiledUnit> compiled;
  setenv("KILN_NVRTC_THREADS", "3", 1);
  Status s = compileUnits(units, "sm_80", /*useCache=*/false, compiled);
  unsetenv("KILN_NVRTC_THREADS");
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(compiled.size(), 3u);
  for (const CompiledUnit &unit : compiled) {
    EXPECT_FALSE(unit.cubin.empty());
    EXPECT_FALSE(unit.cacheHit);
    EXPECT_GT(unit.ms, 0.0);
  }

  units[1].source += "this is not CUDA;\n";
  Status bad = compileUnits(units, "sm_80", /*useCache=*/false, compiled);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("kernel 'b'"), std::string::npos)
      << bad.message();
}

} // namespace
