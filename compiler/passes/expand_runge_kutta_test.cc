#include "compiler/passes/expand_runge_kutta.h"

#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::expect_fused;
using pass_testing::random_tensor;

constexpr int64_t kWidth = 8;

// F(y) = Tanh(y·w) + 0.1, `w` captured from the outer graph, 0.1 a body
// constant (shared by the inlined stages).
std::shared_ptr<Graph> body() {
  GraphBuilder b("f");
  ValueId y = b.input("y", DType::kF32, Shape{2, 3, kWidth});
  ValueId w = b.capture("w", DType::kF32, Shape{kWidth, kWidth});
  ValueId shift = b.constant("shift", Tensor::scalar(0.1f));
  b.output(b.add("Add", {b.add("Tanh", {b.add("MatMul", {y, w})}), shift}),
           "f");
  return std::make_shared<Graph>(build_or_die(std::move(b)));
}

Graph runge_kutta_graph(const std::string& method) {
  GraphBuilder b("rk");
  ValueId y = b.input("y", DType::kF32, Shape{2, 3, kWidth});
  b.constant("w", random_tensor({kWidth, kWidth}, 7, 0.4f));
  std::vector<ValueId> inputs = {y};
  if (method == "rk2_gated") {
    inputs.push_back(b.input("gate_weight", DType::kF32, Shape{2 * kWidth}));
    inputs.push_back(b.input("gate_bias", DType::kF32, Shape{1}));
  }
  ValueId out =
      b.add("RungeKutta", inputs, {{"body", body()}, {"method", method}},
            NodeOptions{"rk", kSeqrtDomain, {}});
  b.output(out, "y_next");
  return build_or_die(std::move(b));
}

class ExpandRungeKutta : public testing::TestWithParam<std::string> {};

TEST_P(ExpandRungeKutta, GivesTheFusedOpsResult) {
  const std::string method = GetParam();
  std::map<std::string, Tensor> feeds = {
      {"y", random_tensor({2, 3, kWidth}, 1)}};
  if (method == "rk2_gated") {
    feeds["gate_weight"] = random_tensor({2 * kWidth}, 2, 0.5f);
    feeds["gate_bias"] = random_tensor({1}, 3);
  }
  Graph expanded = expect_fused(runge_kutta_graph(method),
                                Pass{"expand_runge_kutta", expand_runge_kutta},
                                "RungeKutta", 0, feeds);
  const size_t stages = method == "euler" ? 1 : method == "rk4" ? 4 : 2;
  EXPECT_EQ(pass_testing::count_ops(expanded, "Tanh"), stages);
}

INSTANTIATE_TEST_SUITE_P(Methods, ExpandRungeKutta,
                         testing::Values("euler", "rk2", "rk2_gated", "rk4"));

TEST(ExpandRungeKuttaBlocker, NamesABodyWithASubgraphOfItsOwn) {
  Graph graph = runge_kutta_graph("rk2");
  auto nested =
      std::make_shared<Graph>(*graph.nodes[0].attr("body")->as_graph());
  Node& inner = nested->nodes[0];
  inner.attrs["then_branch"] = Attribute(std::make_shared<Graph>(*nested));
  graph.nodes[0].attrs["body"] = Attribute(nested);
  EXPECT_NE(runge_kutta_expansion_blocker(graph, graph.nodes[0])
                .find("has a subgraph of its own"),
            std::string::npos);
  Graph plain = runge_kutta_graph("rk4");
  EXPECT_EQ(runge_kutta_expansion_blocker(plain, plain.nodes[0]), "");
}

}  // namespace
}  // namespace seqrt
