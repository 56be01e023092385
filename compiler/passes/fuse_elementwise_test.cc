#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr const char* kFused = "FusedElementwise";

const Graph& body_of(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    if (node.op == kFused) return *node.attr("body")->as_graph();
  }
  ADD_FAILURE() << "no " << kFused << " node";
  return graph;
}

// SiLU as PyTorch exports F.silu: x * Sigmoid(x).
TEST(FuseElementwise, FusesSilu) {
  GraphBuilder b("silu");
  ValueId x = b.input("x", DType::kF32, {5, 33});
  b.output(b.add("Mul", {x, b.add("Sigmoid", {x})}), "y");
  Graph fused =
      expect_fused(build_or_die(std::move(b)), fuse_elementwise_pass(), kFused,
                   1, {{"x", random_tensor({5, 33}, 1, 3.0f)}});
  ASSERT_EQ(fused.nodes.size(), 1u);
  EXPECT_EQ(fused.nodes[0].domain, kSeqrtDomain);
  EXPECT_EQ(fused.nodes[0].inputs.size(), 1u);
  EXPECT_EQ(body_of(fused).nodes.size(), 2u);
}

// The SwiGLU gate: silu(x·W1) * (x·W3); the MatMuls stay outside.
TEST(FuseElementwise, FusesSiluGate) {
  GraphBuilder b("swiglu");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("seq"), 8});
  ValueId w1 = b.constant("w1", random_tensor({8, 16}, 2));
  ValueId w3 = b.constant("w3", random_tensor({8, 16}, 3));
  ValueId h = b.add("MatMul", {x, w1});
  ValueId g = b.add("MatMul", {x, w3});
  ValueId silu = b.add("Mul", {h, b.add("Sigmoid", {h})});
  b.output(b.add("Mul", {silu, g}), "y");
  Graph fused =
      expect_fused(build_or_die(std::move(b)), fuse_elementwise_pass(), kFused,
                   1, {{"x", random_tensor({7, 8}, 4)}});
  EXPECT_EQ(count_ops(fused, "MatMul"), 2u);
  EXPECT_EQ(body_of(fused).nodes.size(), 3u);
  EXPECT_EQ(body_of(fused).inputs.size(), 2u);
}

// ((x + bias) * 0.5) then Tanh, Sub 1, Pow 2, Max with y: a bias vector
// broadcast along the last axis and scalar constants, one of rank 2.
TEST(FuseElementwise, FusesChainWithBiasAndScalars) {
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, {3, 4, 37});
  ValueId y = b.input("y", DType::kF32, {3, 4, 37});
  ValueId bias = b.constant("bias", random_tensor({37}, 5));
  ValueId half = b.constant("half", Tensor::from_vector<float>({1, 1}, {0.5f}));
  ValueId one = b.constant("one", Tensor::scalar(1.0f));
  ValueId two = b.constant("two", Tensor::scalar(2.0f));
  ValueId h = b.add("Mul", {b.add("Add", {x, bias}), half});
  h = b.add("Sub", {b.add("Tanh", {h}), one});
  b.output(b.add("Max", {b.add("Pow", {h, two}), y}), "out");
  Graph fused = expect_fused(build_or_die(std::move(b)),
                             fuse_elementwise_pass(), kFused, 1,
                             {{"x", random_tensor({3, 4, 37}, 6)},
                              {"y", random_tensor({3, 4, 37}, 7)}});
  ASSERT_EQ(fused.nodes.size(), 1u);
  // x, bias and y are node inputs; 0.5, 1 and 2 live in the body.
  EXPECT_EQ(fused.nodes[0].inputs.size(), 3u);
  EXPECT_EQ(body_of(fused).constants.size(), 3u);
  for (const auto& [id, tensor] : body_of(fused).constants) {
    EXPECT_EQ(tensor.rank(), 0u);
  }
}

// A tree: Gelu(a) * Exp(-b) + Abs(a) / Sqrt(Softplus(b)).
TEST(FuseElementwise, FusesTreeOfTwoInputs) {
  GraphBuilder b("tree");
  ValueId a = b.input("a", DType::kF32, {2, 50});
  ValueId c = b.input("b", DType::kF32, {2, 50});
  ValueId left = b.add("Mul", {b.add("Gelu", {a}, {{"approximate", "tanh"}}),
                               b.add("Exp", {b.add("Neg", {c})})});
  ValueId right = b.add(
      "Div", {b.add("Abs", {a}), b.add("Sqrt", {b.add("Softplus", {c})})});
  b.output(b.add("Add", {left, right}), "y");
  Graph fused = expect_fused(
      build_or_die(std::move(b)), fuse_elementwise_pass(), kFused, 1,
      {{"a", random_tensor({2, 50}, 8)}, {"b", random_tensor({2, 50}, 9)}});
  ASSERT_EQ(fused.nodes.size(), 1u);
  EXPECT_EQ(body_of(fused).nodes.size(), 9u);
}

// Inside a RungeKutta body too.
TEST(FuseElementwise, FusesInsideSubgraphs) {
  GraphBuilder body("f");
  ValueId y = body.input("y", DType::kF32, {4, 6});
  body.output(body.add("Mul", {y, body.add("Sigmoid", {y})}), "f");
  GraphBuilder b("rk");
  ValueId x = b.input("x", DType::kF32, {4, 6});
  NodeOptions options;
  options.domain = kSeqrtDomain;
  b.output(
      b.add("RungeKutta", {x},
            {{"body", std::make_shared<Graph>(build_or_die(std::move(body)))},
             {"method", "rk2"}},
            options),
      "y");
  Graph graph = build_or_die(std::move(b));
  Graph fused = expect_fused(graph, fuse_elementwise_pass(), "RungeKutta", 1,
                             {{"x", random_tensor({4, 6}, 10)}});
  EXPECT_EQ(count_ops(*fused.nodes[0].attr("body")->as_graph(), kFused), 1u);
}

// Sigmoid(x) is also read by a MatMul: fusing would need it twice.
TEST(FuseElementwise, KeepsIntermediateReadOutside) {
  GraphBuilder b("shared");
  ValueId x = b.input("x", DType::kF32, {4, 4});
  ValueId s = b.add("Sigmoid", {x});
  ValueId silu = b.add("Mul", {x, s});
  b.output(b.add("MatMul", {silu, s}), "y");
  expect_unchanged(build_or_die(std::move(b)), fuse_elementwise_pass());
}

TEST(FuseElementwise, KeepsIntermediateGraphOutput) {
  GraphBuilder b("exposed");
  ValueId x = b.input("x", DType::kF32, {4, 4});
  ValueId s = b.add("Sigmoid", {x});
  b.output(s, "s");
  b.output(b.add("Mul", {x, s}), "y");
  expect_unchanged(build_or_die(std::move(b)), fuse_elementwise_pass());
}

// Relu - MatMul - Exp: two single-node groups, nothing to fuse.
TEST(FuseElementwise, KeepsGroupsSplitByOtherOps) {
  GraphBuilder b("split");
  ValueId x = b.input("x", DType::kF32, {4, 4});
  ValueId w = b.constant("w", random_tensor({4, 4}, 11));
  ValueId h = b.add("MatMul", {b.add("Relu", {x}), w});
  b.output(b.add("Exp", {h}), "y");
  expect_unchanged(build_or_die(std::move(b)), fuse_elementwise_pass());
}

TEST(FuseElementwise, KeepsSingleNode) {
  GraphBuilder b("single");
  ValueId x = b.input("x", DType::kF32, {4, 4});
  b.output(b.add("Sigmoid", {x}), "y");
  expect_unchanged(build_or_die(std::move(b)), fuse_elementwise_pass());
}

// Sigmoid(x) feeds two Muls that leave separately: two outputs.
TEST(FuseElementwise, KeepsGroupWithTwoOutputs) {
  GraphBuilder b("two_outputs");
  ValueId x = b.input("x", DType::kF32, {4, 4});
  ValueId s = b.add("Sigmoid", {x});
  b.output(b.add("Mul", {x, s}), "y");
  b.output(b.add("Add", {x, s}), "z");
  expect_unchanged(build_or_die(std::move(b)), fuse_elementwise_pass());
}

TEST(FuseElementwise, KeepsNonF32) {
  GraphBuilder b("f16");
  ValueId x = b.input("x", DType::kF16, {4, 4});
  b.output(b.add("Mul", {x, b.add("Sigmoid", {x})}), "y");
  expect_unchanged(build_or_die(std::move(b)), fuse_elementwise_pass());
}

// Sigmoid of a bias vector runs once on the vector, not on every row.
TEST(FuseElementwise, KeepsSmallerShapesOutside) {
  GraphBuilder b("bias_gate");
  ValueId x = b.input("x", DType::kF32, {6, 10});
  ValueId bias = b.input("bias", DType::kF32, {10});
  ValueId gate = b.add("Sigmoid", {bias});
  b.output(b.add("Relu", {b.add("Mul", {x, gate})}), "y");
  Graph fused = expect_fused(
      build_or_die(std::move(b)), fuse_elementwise_pass(), kFused, 1,
      {{"x", random_tensor({6, 10}, 12)}, {"bias", random_tensor({10}, 13)}});
  EXPECT_EQ(count_ops(fused, "Sigmoid"), 1u);
}

// The default pipeline runs it after the other fusions: the erf GELU
// becomes Gelu first, which then joins the gate's Mul in the body.
TEST(FuseElementwise, RunsAfterOtherFusionsInDefaultPipeline) {
  GraphBuilder b("gelu_gate");
  ValueId x = b.input("x", DType::kF32, {4, 8});
  ValueId g = b.input("g", DType::kF32, {4, 8});
  auto scalar = [&](const char* name, float value) {
    return b.constant(name, Tensor::scalar(value));
  };
  ValueId erf = b.add("Erf", {b.add("Div", {x, scalar("sqrt2", 1.41421356f)})});
  ValueId a = b.add("Add", {erf, scalar("one", 1.0f)});
  ValueId gelu = b.add("Mul", {b.add("Mul", {x, a}), scalar("half", 0.5f)});
  b.output(b.add("Mul", {gelu, g}), "y");
  Graph graph = build_or_die(std::move(b));
  Graph optimized = pass_testing::apply(graph, default_passes());
  ASSERT_EQ(optimized.nodes.size(), 1u);
  EXPECT_EQ(optimized.nodes[0].op, kFused);
  EXPECT_EQ(count_ops(body_of(optimized), "Gelu"), 1u);
  std::map<std::string, Tensor> feeds = {{"x", random_tensor({4, 8}, 14)},
                                         {"g", random_tensor({4, 8}, 15)}};
  pass_testing::expect_close(
      pass_testing::run_reference(optimized, feeds).at("y"),
      pass_testing::run_reference(graph, feeds).at("y"));
}

}  // namespace
}  // namespace seqrt
