//===- ScheduleSwitchTest.cpp - every schedule flag reaches a pass --------===//
//
// A `kiln run` flag that turns a schedule decision on or off passes through
// three hands: parseRunOptions (RunOptions), scheduleChoices
// (ScheduleChoices) and the pipeline builders (CUDAPipelineOptions, then a
// pass's option). A flag dropped by any of them would parse and do nothing,
// and an ablation run would measure the default twice. These tests build
// the forward and backward pipelines for every switch in the usage text and
// require the pipelines' text (every pass with its options) to change.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/CUDACompile.h"
#include "compiler/Driver/RunOptions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace kiln::driver;

namespace {

/// Every `--flag` that starts an entry of the usage text: two spaces in,
/// the flag, then its value or description (a continuation line is indented
/// further).
std::vector<std::string> usageFlags() {
  std::vector<std::string> flags;
  std::istringstream lines(runUsage());
  for (std::string line; std::getline(lines, line);) {
    if (line.compare(0, 4, "  --") != 0)
      continue;
    size_t end = line.find_first_of(" =", 2);
    flags.push_back(line.substr(2, end - 2));
  }
  return flags;
}

/// The pipelines `kiln run v.mlir --backend=cuda FLAGS...` would build.
std::string pipelines(const std::vector<std::string> &flags) {
  std::vector<std::string> args = {"v.mlir", "--backend=cuda"};
  args.insert(args.end(), flags.begin(), flags.end());
  ParsedRunOptions p = parseRunOptions(args);
  EXPECT_EQ(p.error, "") << args.back();
  return cudaPipelineText(p.options.arch.empty() ? "sm_90a" : p.options.arch,
                          scheduleChoices(p.options),
                          p.options.backwardSchedule);
}

/// Switches that choose what runs, not how it is scheduled (the driver,
/// the variant's programs or what they compute read them, not a pass of the
/// GPU pipelines), and the CPU pipeline's own.
const std::set<std::string> kNotSchedule = {
    "--help",
    "--check",
    "--backward",
    "--varlen",
    "--build-block-mask",
    "--reassociate-low-rank", // the CPU backend's
};

/// Switches that act only beside others: the flags that give them
/// something to change.
const std::map<std::string, std::vector<std::string>> kContext = {
    // tgpu-prefetch-next-step is the sm_80 forward's.
    {"--no-prefetch", {"--arch=sm_80"}},
    // Turns exist only where dQ's adds are ordered.
    {"--no-deferred-turns", {"--ordered-dq"}},
    // Switches that restate a default: after their opposite.
    {"--keys-by-queries", {"--no-keys-by-queries"}},
    {"--persistent", {"--no-persistent"}},
};

/// Value flags' context, as kContext's.
const std::map<std::string, std::vector<std::string>> kValueContext = {
    // The share implies --producer-bits, which changes the pipelines
    // whatever share is copied: compare with it.
    {"--producer-bits-share=3", {"--producer-bits"}},
};

} // namespace

TEST(ScheduleSwitches, UsageListsSwitches) {
  // The usage text is the list the next test walks: make sure it parses
  // into one.
  std::vector<std::string> flags = usageFlags();
  EXPECT_GT(flags.size(), 40u);
  EXPECT_NE(std::find(flags.begin(), flags.end(), "--no-fast-math"),
            flags.end());
}

TEST(ScheduleSwitches, EverySwitchChangesAPipeline) {
  int switches = 0;
  for (const std::string &flag : usageFlags()) {
    ParsedRunOptions alone = parseRunOptions({"v.mlir", flag});
    // Flags that take a value (ValueFlagsChangeAPipeline's), and those the
    // driver reads itself. Any other error is a switch that does not parse.
    if (alone.error == flag + " needs a value" || kNotSchedule.count(flag))
      continue;
    EXPECT_EQ(alone.error, "") << flag;
    ++switches;
    auto context = kContext.find(flag);
    std::vector<std::string> before = context == kContext.end()
                                          ? std::vector<std::string>{}
                                          : context->second;
    std::vector<std::string> with = before;
    with.push_back(flag);
    EXPECT_NE(pipelines(with), pipelines(before))
        << flag << " parses but changes neither pipeline";
  }
  EXPECT_GT(switches, 30);
}

TEST(ScheduleSwitches, ValueFlagsChangeAPipeline) {
  // The schedule's numeric choices, each at a value other than its
  // default.
  const std::vector<std::vector<std::string>> flags = {
      {"--block-m=64"},
      {"--block-n=64"},
      {"--decode-rows=128"},
      {"--wide-decode-rows=0"},
      {"--wide-decode-keys=64"},
      {"--short-rows=64"},
      {"--short-keys=1024"},
      {"--one-sided-bounds-elements=0"},
      {"--backward-mod-rewrites-min-head-dim=0"},
      {"--ring-stages=3"},
      {"--max-ctas-per-sm=1"},
      {"--key-block=64"},
      {"--producer-bits-share=3"},
      {"--bwd-schedule=two-kernel"},
      {"--arch=sm_80"},
  };
  for (const std::vector<std::string> &f : flags) {
    auto context = kValueContext.find(f.front());
    std::vector<std::string> before = context == kValueContext.end()
                                          ? std::vector<std::string>{}
                                          : context->second;
    std::vector<std::string> with = before;
    with.insert(with.end(), f.begin(), f.end());
    EXPECT_NE(pipelines(with), pipelines(before))
        << f.front() << " parses but changes neither pipeline";
  }
}
