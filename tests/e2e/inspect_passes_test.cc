// `seqrt inspect FILE --passes` on the tiny MLP sample: the graph before and
// after the default passes and one statistics line per pass; on a Scan
// whose body is a retention update, the note saying what it became.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "compiler/passes/pass.h"
#include "graph/builder.h"
#include "importers/native/writer.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

TEST(inspect_passes, PrintsBothGraphsAndEveryPass) {
  CommandResult result =
      run_seqrt({"inspect", sample_dir() + "/tiny_mlp.seqrt", "--passes"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(result.err.empty()) << result.err;
  const std::string& out = result.out;
  size_t before = out.find("graph before passes (");
  size_t passes = out.find("\npasses:\n");
  size_t after = out.find("graph after passes (");
  ASSERT_NE(before, std::string::npos) << out;
  ASSERT_NE(passes, std::string::npos) << out;
  ASSERT_NE(after, std::string::npos) << out;
  EXPECT_LT(before, passes);
  EXPECT_LT(passes, after);
  for (const Pass& pass : default_passes()) {
    EXPECT_NE(out.find("  " + pass.name + " ", passes), std::string::npos)
        << pass.name;
  }
  // The sample's LayerNormalization is printed in both graphs.
  EXPECT_NE(out.find("LayerNormalization", before), std::string::npos);
  EXPECT_NE(out.find("LayerNormalization", after), std::string::npos);
}

TEST(inspect_passes, WithoutTheFlagNothingIsOptimised) {
  CommandResult result =
      run_seqrt({"inspect", sample_dir() + "/tiny_mlp.seqrt"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.find("passes"), std::string::npos) << result.out;
}

// RetNet's recurrence as a plain Scan, written as bench/compare/
// scan_models.py writes it: H = 2 heads, d = 3, gamma captured.
std::string retention_scan_model() {
  const int64_t heads = 2, d = 3;
  auto axes = [](GraphBuilder& b, const std::string& name,
                 std::vector<int64_t> values) {
    int64_t n = static_cast<int64_t>(values.size());
    return b.constant(name, Tensor::from_vector<int64_t>({n}, values));
  };
  GraphBuilder body("retention_step");
  ValueId s_prev = body.input("S_prev", DType::kF32, Shape{heads, d, d});
  ValueId q = body.input("q_t", DType::kF32, Shape{heads, d});
  ValueId k = body.input("k_t", DType::kF32, Shape{heads, d});
  ValueId v = body.input("v_t", DType::kF32, Shape{heads, d});
  ValueId gamma = body.capture("gamma", DType::kF32, Shape{heads});
  ValueId axis1 = axes(body, "axis1", {1});
  ValueId decayed = body.add(
      "Mul",
      {body.add("Unsqueeze", {gamma, axes(body, "axes12", {1, 2})}), s_prev});
  ValueId k_v =
      body.add("Mul", {body.add("Unsqueeze", {k, axes(body, "axis2", {2})}),
                       body.add("Unsqueeze", {v, axis1})});
  ValueId s = body.add("Add", {decayed, k_v});
  body.output(s, "S");
  body.output(
      body.add(
          "Squeeze",
          {body.add("MatMul", {body.add("Unsqueeze", {q, axis1}), s}), axis1}),
      "o_t");
  Result<Graph> step = std::move(body).build();
  EXPECT_TRUE(step.is_ok()) << step.status().to_string();

  GraphBuilder b("scan_retention");
  std::vector<ValueId> inputs = {
      b.input("S0", DType::kF32, Shape{heads, d, d})};
  for (const char* name : {"q", "k", "v"}) {
    inputs.push_back(
        b.input(name, DType::kF32, Shape{Dim::symbol("seq"), heads, d}));
  }
  b.constant("gamma", Tensor::from_vector<float>({heads}, {0.5f, 0.75f}));
  NodeOptions node;
  node.name = "retention";
  std::vector<ValueId> outs =
      b.add_node("Scan", inputs,
                 {{"body", std::make_shared<Graph>(std::move(step).value())},
                  {"num_scan_inputs", int64_t{3}}},
                 2, node);
  b.output(outs[0], "S_last");
  b.output(outs[1], "o");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  const std::string path = sample_dir() + "/scan_retention.seqrt";
  EXPECT_TRUE(write_seqrt_file(*graph, path).is_ok());
  return path;
}

TEST(inspect_passes, SaysWhichScanWasLiftedIntoWhichOp) {
  CommandResult result =
      run_seqrt({"inspect", retention_scan_model(), "--passes"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string& out = result.out;
  size_t note = out.find(
      "\n      Scan 'retention' -> seqrt::Retention (H 2, state 3x3)\n");
  ASSERT_NE(note, std::string::npos) << out;
  EXPECT_LT(out.find("  lift_scan_recurrences "), note);
  size_t after = out.find("graph after passes (");
  ASSERT_NE(after, std::string::npos) << out;
  EXPECT_NE(out.find("seqrt::Retention(", after), std::string::npos) << out;
  EXPECT_EQ(out.find("Scan(", after), std::string::npos) << out;
}

}  // namespace
}  // namespace seqrt::e2e
