// Limits and failure paths through the CLI: each ends with exit code 1 and one
// line "seqrt: error: <message>" naming the limit or the node, never a signal;
// an injected out-of-memory (SEQRT_TEST_FAIL_ALLOC=N) at any allocation of a
// run is such an error too.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/builder.h"
#include "importers/native/writer.h"
#include "importers/tensor/npy.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

constexpr int kCommandFailed = 1;

std::string model_path() { return sample_dir() + "/tiny_mlp.seqrt"; }
std::string tokens_input() { return "tokens=" + sample_dir() + "/tokens.npy"; }

void expect_one_line_error(const CommandResult& result,
                           const std::string& part) {
  SCOPED_TRACE(part);
  EXPECT_EQ(result.exit_code, kCommandFailed) << result.err;
  EXPECT_EQ(result.err.rfind("seqrt: error: ", 0), 0u) << result.err;
  ASSERT_FALSE(result.err.empty());
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  EXPECT_NE(result.err.find(part), std::string::npos) << result.err;
}

CommandResult run_tiny(std::vector<std::string> extra) {
  std::vector<std::string> args = {"run", model_path(), "-i", tokens_input()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_seqrt(args);
}

TEST(cli_limits, EachLimitFlagIsObeyedAndNamedInTheError) {
  ASSERT_EQ(run_tiny({}).exit_code, 0);
  expect_one_line_error(run_tiny({"--max-nodes", "1"}),
                        "above max_nodes (1 nodes); raise it with --max-nodes");
  expect_one_line_error(run_tiny({"--max-tensor-bytes", "16"}),
                        "above max_tensor_bytes (16 B); raise it with "
                        "--max-tensor-bytes");
  expect_one_line_error(run_tiny({"--max-tensor-elements", "4"}),
                        "raise it with --max-tensor-elements");
  expect_one_line_error(run_tiny({"--memory-budget", "1K"}),
                        "above memory_budget (1.0 KiB); raise it with "
                        "--memory-budget");
  EXPECT_EQ(run_tiny({"--memory-budget", "1G", "--max-nodes", "100000",
                      "--max-subgraph-depth", "20"})
                .exit_code,
            0);
  expect_one_line_error(run_tiny({"--memory-budget", "lots"}),
                        "--memory-budget: 'lots' is not a byte size");
  expect_one_line_error(run_tiny({"--max-subgraph-depth", "65"}),
                        "max_subgraph_depth may be at most 64");
}

TEST(cli_limits, InjectedOutOfMemoryIsAOneLineErrorAtEveryAllocation) {
  int failures = 0, successes = 0;
  for (int nth = 1; nth <= 24; ++nth) {
    CommandResult result = run_program(
        "/usr/bin/env",
        {"SEQRT_TEST_FAIL_ALLOC=" + std::to_string(nth), SEQRT_CLI_PATH, "run",
         model_path(), "-i", tokens_input(), "--backend", "cpu"});
    SCOPED_TRACE(nth);
    if (result.exit_code == 0) {
      ++successes;
      continue;
    }
    ++failures;
    expect_one_line_error(result, "");
    EXPECT_TRUE(result.err.find("allocate") != std::string::npos ||
                result.err.find("out of") != std::string::npos)
        << result.err;
  }
  EXPECT_GT(failures, 0);
  EXPECT_GT(successes, 0) << "every run failed: raise the sweep's bound";
}

TEST(cli_limits, ANodeTheBackendLacksIsNamed) {
  GraphBuilder b("f64_conv");
  ValueId x = b.input("x", DType::kF64, {1, 2, 4});
  ValueId w = b.constant(
      "w", Tensor::from_vector<double>({2, 1, 3}, {1, 2, 3, 4, 5, 6}));
  NodeOptions node;
  node.name = "conv";
  b.output(b.add("CausalConvWithState", {x, w}, {}, node), "y");
  Result<Graph> graph = std::move(b).build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  const std::string model = sample_dir() + "/f64_conv.seqrt";
  const std::string input = sample_dir() + "/x_f64.npy";
  ASSERT_TRUE(write_seqrt_file(*graph, model).is_ok());
  ASSERT_TRUE(write_npy_file(Tensor::from_vector<double>(
                                 {1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}),
                             input)
                  .is_ok());
  EXPECT_EQ(
      run_seqrt({"run", model, "-i", "x=" + input, "--backend", "reference"})
          .exit_code,
      0);
  expect_one_line_error(
      run_seqrt({"run", model, "-i", "x=" + input, "--backend", "cpu"}),
      "[CausalConvWithState] node 'conv'");
  // Backends this build lacks are one line too, listing those it has.
  for (const char* backend : {"cuda", "vulkan", "tpu"}) {
    CommandResult result =
        run_seqrt({"run", model, "-i", "x=" + input, "--backend", backend});
    if (result.exit_code == 0) continue;  // built and present here
    expect_one_line_error(result, "");
    EXPECT_NE(result.err.find(backend), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace seqrt::e2e
