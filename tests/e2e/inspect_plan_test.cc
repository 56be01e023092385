// `seqrt inspect FILE --plan [--bind NAME=SIZE ...]` on the tiny MLP sample:
// the plan's table of values and the peak arena next to the naive sum.
#include <cstdint>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

CommandResult inspect_plan(const std::string& batch, const std::string& seq) {
  return run_seqrt({"inspect", sample_dir() + "/tiny_mlp.seqrt", "--plan",
                    "--bind", "batch=" + batch, "--bind", "seq=" + seq});
}

// The peak and naive sum of the summary line; -1 when it is missing.
std::pair<int64_t, int64_t> arena_sizes(const std::string& out) {
  std::smatch match;
  static const std::regex kSummary(
      "peak arena: ([0-9]+) bytes; naive sum: ([0-9]+) bytes");
  if (!std::regex_search(out, match, kSummary)) return {-1, -1};
  return {std::stoll(match[1]), std::stoll(match[2])};
}

TEST(inspect_plan, PrintsKindsOffsetsAndThePeakNextToTheNaiveSum) {
  CommandResult result = inspect_plan("1", "8");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(result.err.empty()) << result.err;
  const std::string& out = result.out;
  ASSERT_NE(out.find("memory plan of the optimised graph"), std::string::npos)
      << out;
  // The token input is bound by the caller: io, no offset, 1 x 8 x i64.
  EXPECT_TRUE(std::regex_search(
      out, std::regex("\n  tokens +io +- +64  i64 \\(1,8\\)")))
      << out;
  // Weights are constants; transients sit in the arena at an offset.
  EXPECT_TRUE(std::regex_search(out, std::regex("\n  \\S+ +constant +- ")))
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("\n  \\S+ +arena +[0-9]+ ")))
      << out;
  auto [peak, naive] = arena_sizes(out);
  ASSERT_GT(peak, 0) << out;
  EXPECT_LT(peak, naive) << out;
  EXPECT_EQ(peak % 64, 0);
}

TEST(inspect_plan, ArenaGrowsWithTheBoundSequence) {
  CommandResult short_run = inspect_plan("1", "8");
  CommandResult long_run = inspect_plan("2", "64");
  ASSERT_EQ(short_run.exit_code, 0) << short_run.err;
  ASSERT_EQ(long_run.exit_code, 0) << long_run.err;
  EXPECT_GT(arena_sizes(long_run.out).first, arena_sizes(short_run.out).first);
}

TEST(inspect_plan, UnboundDimIsAnErrorNamingTheValue) {
  CommandResult result =
      run_seqrt({"inspect", sample_dir() + "/tiny_mlp.seqrt", "--plan"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("--bind NAME=SIZE"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("'tokens'"), std::string::npos) << result.err;
}

TEST(inspect_plan, MalformedBindingIsRefused) {
  CommandResult result = run_seqrt(
      {"inspect", sample_dir() + "/tiny_mlp.seqrt", "--plan", "--bind", "seq"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("expected NAME=SIZE"), std::string::npos)
      << result.err;
}

TEST(inspect_plan, BindWithoutPlanIsABadCommandLine) {
  CommandResult result = run_seqrt(
      {"inspect", sample_dir() + "/tiny_mlp.seqrt", "--bind", "seq=8"});
  EXPECT_EQ(result.exit_code, 2) << result.err;
}

}  // namespace
}  // namespace seqrt::e2e
