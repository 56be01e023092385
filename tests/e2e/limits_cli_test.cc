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

// shape -> ConstantOfShape "c0": a size computed from the input.
std::string constant_of_shape_model() {
  GraphBuilder b("cos");
  ValueId shape = b.input("shape", DType::kI64, Shape{1});
  NodeOptions node;
  node.name = "c0";
  b.output(b.add("ConstantOfShape", {shape}, {}, node), "c");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  const std::string model = sample_dir() + "/constant_of_shape.seqrt";
  EXPECT_TRUE(write_seqrt_file(*graph, model).is_ok());
  return model;
}

// v_final = Loop "loop0" of trip count m over v0 (2 floats), v += 1.
std::string loop_model() {
  GraphBuilder body("body");
  body.input("i", DType::kI64, Shape{});
  ValueId cond = body.input("cond_in", DType::kBool, Shape{});
  ValueId v = body.input("v", DType::kF32, Shape{2});
  ValueId one = body.constant("one", Tensor::scalar<float>(1));
  body.output(body.add("Identity", {cond}), "cond_out");
  body.output(body.add("Add", {v, one}), "v_next");
  Result<Graph> built_body = std::move(body).build();
  EXPECT_TRUE(built_body.is_ok()) << built_body.status().to_string();
  GraphBuilder b("loop");
  ValueId m = b.input("m", DType::kI64, Shape{});
  ValueId v0 = b.input("v0", DType::kF32, Shape{2});
  NodeOptions node;
  node.name = "loop0";
  b.output(
      b.add_node(
          "Loop", {m, kNoValue, v0},
          {{"body", std::make_shared<Graph>(std::move(built_body).value())}}, 1,
          node)[0],
      "v_final");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  const std::string model = sample_dir() + "/long_loop.seqrt";
  EXPECT_TRUE(write_seqrt_file(*graph, model).is_ok());
  return model;
}

// "NAME=PATH" of `tensor` written to sample/<file>.npy.
std::string npy_input(const std::string& name, const std::string& file,
                      const Tensor& tensor) {
  const std::string path = sample_dir() + "/" + file + ".npy";
  EXPECT_TRUE(write_npy_file(tensor, path).is_ok());
  return name + "=" + path;
}

TEST(cli_limits, ComputedShapesMeetTheLimitFlags) {
  const std::string model = constant_of_shape_model();
  const std::string huge = npy_input(
      "shape", "shape_huge", Tensor::from_vector<int64_t>({1}, {200'000'000}));
  for (const char* backend : {"reference", "cpu"}) {
    SCOPED_TRACE(backend);
    expect_one_line_error(
        run_seqrt({"run", model, "-i", huge, "--backend", backend,
                   "--max-tensor-bytes", "1M", "--max-tensor-elements", "1000",
                   "--memory-budget", "1M"}),
        "[ConstantOfShape] node 'c0': output 'c' of shape (200000000) needs "
        "200000000 elements, above max_tensor_elements (1000 elements); "
        "raise it with --max-tensor-elements");
    expect_one_line_error(
        run_seqrt({"run", model, "-i", huge, "--backend", backend,
                   "--memory-budget", "64M"}),
        "above memory_budget (64.0 MiB); raise it with --memory-budget");
  }
  const std::string small = npy_input(
      "shape", "shape_small", Tensor::from_vector<int64_t>({1}, {1000}));
  EXPECT_EQ(run_seqrt({"run", model, "-i", small, "--max-tensor-elements",
                       "1000", "--memory-budget", "1M"})
                .exit_code,
            0);
}

TEST(cli_limits, TimeoutAndLoopLimitStopALongLoop) {
  const std::string model = loop_model();
  const std::string m = npy_input(
      "m", "m_huge", Tensor::from_vector<int64_t>({}, {int64_t{1} << 62}));
  const std::string v0 =
      npy_input("v0", "v0", Tensor::from_vector<float>({2}, {0, 0}));
  expect_one_line_error(
      run_seqrt(
          {"run", model, "-i", m, "-i", v0, "--max-loop-iterations", "100"}),
      "[Loop] node 'loop0' (trip count 4611686018427387904) needs 101 "
      "iterations, above max_loop_iterations (100 iterations); raise it "
      "with --max-loop-iterations");
  expect_one_line_error(
      run_seqrt({"run", model, "-i", m, "-i", v0, "--max-loop-iterations",
                 "4611686018427387904", "--timeout", "1"}),
      "deadline of 1 s exceeded");
  expect_one_line_error(run_seqrt({"bench", model, "--input", m, "--input", v0,
                                   "--max-loop-iterations",
                                   "4611686018427387904", "--timeout", "0.5"}),
                        "deadline of 500 ms exceeded");
  expect_one_line_error(
      run_seqrt({"run", model, "-i", m, "-i", v0, "--timeout", "0"}),
      "--timeout: '0' is not a number of seconds > 0");
  const std::string few =
      npy_input("m", "m_few", Tensor::from_vector<int64_t>({}, {3}));
  EXPECT_EQ(run_seqrt({"run", model, "-i", few, "-i", v0, "--timeout", "30"})
                .exit_code,
            0);
  CommandResult help = run_seqrt({"generate", "--help"});
  EXPECT_NE(help.out.find("--timeout"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--max-loop-iterations"), std::string::npos);
}

}  // namespace
}  // namespace seqrt::e2e
