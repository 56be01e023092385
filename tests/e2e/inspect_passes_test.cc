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
// scan_models.py writes it: H = 2 heads, d = 3, gamma captured. With
// `as_loop`, the same as a Loop of a run-time trip count M whose body
// reads q_t, k_t, v_t with Gather(·, iteration).
std::string retention_scan_model(bool as_loop = false) {
  const int64_t heads = 2, d = 3;
  auto axes = [](GraphBuilder& b, const std::string& name,
                 std::vector<int64_t> values) {
    int64_t n = static_cast<int64_t>(values.size());
    return b.constant(name, Tensor::from_vector<int64_t>({n}, values));
  };
  GraphBuilder body("retention_step");
  ValueId iteration = kNoValue, cond = kNoValue;
  if (as_loop) {
    iteration = body.input("i", DType::kI64, Shape{});
    cond = body.input("cond_in", DType::kBool, Shape{});
  }
  ValueId s_prev = body.input("S_prev", DType::kF32, Shape{heads, d, d});
  auto step_input = [&](const std::string& name) {
    if (!as_loop) {
      return body.input(name + "_t", DType::kF32, Shape{heads, d});
    }
    ValueId all =
        body.capture(name, DType::kF32, Shape{Dim::symbol("seq"), heads, d});
    return body.add("Gather", {all, iteration});
  };
  ValueId q = step_input("q");
  ValueId k = step_input("k");
  ValueId v = step_input("v");
  ValueId gamma = body.capture("gamma", DType::kF32, Shape{heads});
  ValueId axis1 = axes(body, "axis1", {1});
  ValueId decayed = body.add(
      "Mul",
      {body.add("Unsqueeze", {gamma, axes(body, "axes12", {1, 2})}), s_prev});
  ValueId k_v =
      body.add("Mul", {body.add("Unsqueeze", {k, axes(body, "axis2", {2})}),
                       body.add("Unsqueeze", {v, axis1})});
  ValueId s = body.add("Add", {decayed, k_v});
  if (as_loop) body.output(cond);
  body.output(s, "S");
  body.output(
      body.add(
          "Squeeze",
          {body.add("MatMul", {body.add("Unsqueeze", {q, axis1}), s}), axis1}),
      "o_t");
  Result<Graph> step = std::move(body).build();
  EXPECT_TRUE(step.is_ok()) << step.status().to_string();

  GraphBuilder b(as_loop ? "loop_retention" : "scan_retention");
  std::vector<ValueId> inputs;
  if (as_loop) {
    inputs = {b.input("M", DType::kI64, Shape{}), kNoValue};
  }
  inputs.push_back(b.input("S0", DType::kF32, Shape{heads, d, d}));
  for (const char* name : {"q", "k", "v"}) {
    ValueId x = b.input(name, DType::kF32, Shape{Dim::symbol("seq"), heads, d});
    if (!as_loop) inputs.push_back(x);
  }
  b.constant("gamma", Tensor::from_vector<float>({heads}, {0.5f, 0.75f}));
  NodeOptions node;
  node.name = "retention";
  AttrMap attrs = {{"body", std::make_shared<Graph>(std::move(step).value())}};
  if (!as_loop) attrs["num_scan_inputs"] = int64_t{3};
  std::vector<ValueId> outs =
      b.add_node(as_loop ? "Loop" : "Scan", inputs, attrs, 2, node);
  b.output(outs[0], "S_last");
  b.output(outs[1], "o");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  const std::string path = sample_dir() + (as_loop ? "/loop_retention.seqrt"
                                                   : "/scan_retention.seqrt");
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

// The same recurrence as a Loop: loop_to_scan makes it a Scan (its inputs
// cut to the run-time trip count), which lift_scan_recurrences lifts.
TEST(inspect_passes, SaysWhichLoopBecameAScan) {
  CommandResult result =
      run_seqrt({"inspect", retention_scan_model(true), "--passes"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string& out = result.out;
  size_t converted = out.find(
      "\n      Loop 'retention' -> Scan (1 state, 3 scan inputs, 3 cut to the "
      "trip count)\n");
  ASSERT_NE(converted, std::string::npos) << out;
  EXPECT_LT(out.find("  loop_to_scan "), converted);
  size_t lifted = out.find(
      "\n      Scan 'retention' -> seqrt::Retention (H 2, state 3x3)\n");
  ASSERT_NE(lifted, std::string::npos) << out;
  EXPECT_LT(converted, lifted);
  size_t after = out.find("graph after passes (");
  ASSERT_NE(after, std::string::npos) << out;
  EXPECT_NE(out.find("seqrt::Retention(", after), std::string::npos) << out;
  EXPECT_EQ(out.find("Loop(", after), std::string::npos) << out;
}

}  // namespace
}  // namespace seqrt::e2e
