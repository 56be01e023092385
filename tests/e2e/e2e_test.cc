// The tiny MLP sample through the CLI: inspect, run, convert; outputs are
// checked bit for bit against the reference backend run directly.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/reference/reference_backend.h"
#include "compiler/infer/infer_graph.h"
#include "compiler/passes/pass.h"
#include "graph/builder.h"
#include "importers/native/reader.h"
#include "importers/native/writer.h"
#include "importers/tensor/npy.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

std::string model_path() { return sample_dir() + "/tiny_mlp.seqrt"; }
std::string tokens_path() { return sample_dir() + "/tokens.npy"; }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The sample's logits computed in-process by the reference backend.
Tensor reference_logits(const std::string& model) {
  Result<Graph> graph = read_seqrt_file(model);
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_TRUE(infer_graph(*graph).is_ok());
  Result<Tensor> tokens = read_npy_file(tokens_path());
  EXPECT_TRUE(tokens.is_ok()) << tokens.status().message();
  Result<std::vector<Tensor>> outputs = run_reference_graph(*graph, {*tokens});
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().message();
  return outputs.is_ok() ? outputs->at(0) : Tensor();
}

// Runs `model` through `seqrt run --output-dir` and reads logits.npy back.
Tensor cli_logits(const std::string& model, const std::string& out_dir) {
  CommandResult run =
      run_seqrt({"run", model, "--input", "tokens=" + tokens_path(),
                 "--output-dir", out_dir});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.err.empty()) << run.err;
  EXPECT_TRUE(contains(run.out, "wrote " + out_dir + "/logits.npy")) << run.out;
  EXPECT_TRUE(contains(run.out, "time: load")) << run.out;
  Result<Tensor> logits = read_npy_file(out_dir + "/logits.npy");
  EXPECT_TRUE(logits.is_ok()) << logits.status().message();
  return logits.is_ok() ? *logits : Tensor();
}

TEST(e2e, SampleWritesAModelAndTokens) {
  Result<Tensor> tokens = read_npy_file(tokens_path());
  ASSERT_TRUE(tokens.is_ok()) << tokens.status().message();
  EXPECT_EQ(tokens->dtype(), DType::kI64);
  EXPECT_EQ(tokens->dims(), (std::vector<int64_t>{1, 8}));
  for (int64_t i = 0; i < tokens->num_elements(); ++i) {
    EXPECT_GE(tokens->element_i64(i), 0);
    EXPECT_LT(tokens->element_i64(i), 64);
  }
  Result<Graph> graph = read_seqrt_file(model_path());
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->name, "tiny_mlp");
}

TEST(e2e, InspectShowsTheModel) {
  CommandResult inspect = run_seqrt({"inspect", model_path()});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_TRUE(inspect.err.empty());
  const std::string& out = inspect.out;
  EXPECT_TRUE(contains(out, "graph: tiny_mlp")) << out;
  EXPECT_TRUE(contains(out, "inputs (1):\n  tokens: i64 (batch,seq)\n")) << out;
  EXPECT_TRUE(contains(out, "outputs (1):\n  logits: f32 (batch,seq,64)\n"))
      << out;
  EXPECT_TRUE(contains(out, "ops (18 nodes):\n  Add ")) << out;
  for (const char* op : {"MatMul", "LayerNormalization", "Gelu", "Gather"}) {
    EXPECT_TRUE(contains(out, op)) << op;
  }
  // 64*32 embedding; per block 2*32 norm + 32*128+128 + 128*32+32; final
  // norm 2*32; head 32*64+64.
  EXPECT_TRUE(contains(out, "parameters: 21056 in 17 constants, 84224 bytes"))
      << out;
  EXPECT_TRUE(contains(out, "state pairs (0)")) << out;
  EXPECT_TRUE(contains(out, "producer: samples/models/make_tiny_mlp")) << out;
  EXPECT_FALSE(contains(out, "graph tiny_mlp ("));

  CommandResult with_graph = run_seqrt({"inspect", model_path(), "--graph"});
  ASSERT_EQ(with_graph.exit_code, 0) << with_graph.err;
  EXPECT_TRUE(
      contains(with_graph.out, "graph tiny_mlp (tokens: i64(batch,seq))"))
      << with_graph.out;
}

TEST(e2e, RunWritesOutputsEqualToTheReferenceBackend) {
  Tensor expected = reference_logits(model_path());
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(expected.dims(), (std::vector<int64_t>{1, 8, 64}));
  Tensor logits = cli_logits(model_path(), sample_dir() + "/run_out");
  ASSERT_EQ(logits.dims(), expected.dims());
  // The CLI runs the optimised graph: a fused MatMul+bias rounds once where
  // the decomposed graph rounds twice, so allow an ulp or two.
  for (int64_t i = 0; i < logits.num_elements(); ++i) {
    const float want = expected.data_as<float>()[i];
    ASSERT_NEAR(logits.data_as<float>()[i], want, 1e-6 + 1e-6 * std::fabs(want))
        << "logit " << i;
  }
}

TEST(e2e, RunPrintsASummaryWithoutOutputDir) {
  CommandResult run = run_seqrt({"run", model_path(), "--input",
                                 "tokens=" + tokens_path(), "--repeat", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.err.empty());
  EXPECT_TRUE(contains(run.out, "logits: f32 (1,8,64)  min ")) << run.out;
  EXPECT_TRUE(contains(run.out, ", ...]")) << run.out;
  // The default backend, and the output names it.
  EXPECT_TRUE(contains(run.out, "(median of 3 on backend 'cpu')")) << run.out;
  EXPECT_TRUE(contains(run.out, "runs: mean ")) << run.out;
}

TEST(e2e, ConvertRoundTripRunsToIdenticalOutputs) {
  std::string converted = sample_dir() + "/converted.seqrt";
  CommandResult convert = run_seqrt({"convert", model_path(), converted});
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  EXPECT_TRUE(contains(convert.out, "wrote " + converted)) << convert.out;

  Result<Graph> original = read_seqrt_file(model_path());
  Result<Graph> copy = read_seqrt_file(converted);
  ASSERT_TRUE(original.is_ok() && copy.is_ok());
  EXPECT_TRUE(graphs_equal(*original, *copy));

  Tensor from_original = cli_logits(model_path(), sample_dir() + "/out_a");
  Tensor from_copy = cli_logits(converted, sample_dir() + "/out_b");
  ASSERT_FALSE(from_original.empty());
  EXPECT_TRUE(from_copy.same_as(from_original));
}

TEST(e2e, ConvertOptimizeStoresTheOptimisedGraphAndRunsTheSame) {
  std::string optimized = sample_dir() + "/optimized.seqrt";
  CommandResult convert =
      run_seqrt({"convert", model_path(), optimized, "--optimize"});
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  Result<Graph> original = read_seqrt_file(model_path());
  Result<Graph> stored = read_seqrt_file(optimized);
  ASSERT_TRUE(original.is_ok() && stored.is_ok());
  EXPECT_TRUE(is_optimized(*stored));
  EXPECT_LT(stored->nodes.size(), original->nodes.size())
      << "MatMul + bias became one fused node";

  CommandResult inspect = run_seqrt({"inspect", optimized});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_TRUE(contains(inspect.out, kOptimizedByKey)) << inspect.out;

  Tensor from_original = cli_logits(model_path(), sample_dir() + "/out_c");
  Tensor from_stored = cli_logits(optimized, sample_dir() + "/out_d");
  ASSERT_FALSE(from_original.empty());
  EXPECT_TRUE(from_stored.same_as(from_original));
}

// present = past + x with a state pair, and an output name that is not a
// valid file name.
std::string write_state_model() {
  GraphBuilder b("accumulator");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("batch"), 2});
  ValueId past = b.input("past", DType::kF32, {Dim::symbol("batch"), 2});
  ValueId present = b.add("Add", {past, x});
  b.output(present, "present/state:0");
  b.state_pair(past, present);
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  std::string path = sample_dir() + "/accumulator.seqrt";
  EXPECT_TRUE(write_seqrt_file(*graph, path).is_ok());
  return path;
}

TEST(e2e, RunFillsStateAndSanitizesOutputFileNames) {
  std::string model = write_state_model();
  CommandResult inspect = run_seqrt({"inspect", model});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_TRUE(contains(inspect.out,
                       "state pairs (1):\n  past -> present/state:0: f32 "
                       "(batch,2) (initial: zeros)\n"))
      << inspect.out;

  Tensor x = Tensor::from_vector<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  std::string x_path = sample_dir() + "/x.npy";
  ASSERT_TRUE(write_npy_file(x, x_path).is_ok());
  std::string out_dir = sample_dir() + "/state_out";
  CommandResult run = run_seqrt(
      {"run", model, "--input", "x=" + x_path, "--output-dir", out_dir});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Result<Tensor> present = read_npy_file(out_dir + "/present_state_0.npy");
  ASSERT_TRUE(present.is_ok()) << present.status().message();
  EXPECT_TRUE(present->same_as(x));  // zeros + x
}

}  // namespace
}  // namespace seqrt::e2e
