// `seqrt bench` on the tiny MLP sample: latency percentiles, throughput,
// memory and the per-op profile of the timed runs.
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "runtime/backend_registry.h"
#include "tests/device_skip.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

bool has(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex(pattern));
}

CommandResult bench(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"bench",    sample_dir() + "/tiny_mlp.seqrt",
                                   "--warmup", "2",
                                   "--runs",   "3"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_seqrt(args);
}

TEST(bench_command, ReportsLatencyThroughputMemoryAndTheProfile) {
  for (const char* backend : {"cpu", "reference"}) {
    CommandResult result = bench({"--backend", backend, "--bind", "batch=2",
                                  "--bind", "seq=8", "--profile"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string& out = result.out;
    EXPECT_TRUE(has(out, "tokens: i64 \\(2,8\\), generated")) << out;
    EXPECT_TRUE(has(out,
                    "latency over 3 runs \\(ms\\): min [0-9.]+  mean "
                    "[0-9.]+  p50 [0-9.]+  p90 [0-9.]+  p99 [0-9.]+  "
                    "max [0-9.]+"))
        << out;
    EXPECT_TRUE(has(out, "runs/s, [0-9.]+ tokens/s \\(16 tokens per run\\)"))
        << out;
    EXPECT_TRUE(has(out, "peak RSS: [0-9.]+ MiB")) << out;
    EXPECT_TRUE(has(out, "memory plan \\{batch=2, seq=8\\}: peak arena"))
        << out;
    // One Gather node: its calls are the 3 timed runs, not the warm-up.
    EXPECT_TRUE(has(out, "\n  Gather +1 +3 +[0-9.]+ +[0-9.]+%")) << out;
    EXPECT_TRUE(has(out, "slowest nodes:\n")) << out;
  }
}

// A backend that times no node says so instead of "kernels 0.0 %".
TEST(bench_command, ProfileOnABackendWithoutAProfilerSaysSo) {
  SEQRT_CREATE_BACKEND_OR_SKIP(vulkan, "vulkan");
  CommandResult result = bench({"--backend", "vulkan", "--bind", "batch=1",
                                "--bind", "seq=8", "--profile"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(has(result.out,
                  "profile: none; backend 'vulkan' has no "
                  "per-node profiler"))
      << result.out;
  EXPECT_FALSE(has(result.out, "kernels [0-9.]+%")) << result.out;
}

TEST(bench_command, InputsFromFilesNeedNoBindings) {
  CommandResult result =
      bench({"--input", "tokens=" + sample_dir() + "/tokens.npy"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(has(result.out, "tokens: i64 \\(1,8\\), from file"))
      << result.out;
  EXPECT_FALSE(has(result.out, "profile:"));
}

TEST(bench_command, AnUnboundDimOrABadCountIsAOneLineError) {
  CommandResult unbound = bench({"--bind", "batch=1"});
  EXPECT_EQ(unbound.exit_code, 1);
  EXPECT_TRUE(has(unbound.err,
                  "^seqrt: error: input 'tokens' axis 1 is 'seq': give its "
                  "size with --bind seq=SIZE"))
      << unbound.err;
  CommandResult no_runs =
      run_seqrt({"bench", sample_dir() + "/tiny_mlp.seqrt", "--runs", "0",
                 "--bind", "batch=1", "--bind", "seq=1"});
  EXPECT_EQ(no_runs.exit_code, 1);
  EXPECT_TRUE(has(no_runs.err, "--runs must be in \\[1, ")) << no_runs.err;
}

}  // namespace
}  // namespace seqrt::e2e
