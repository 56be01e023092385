#include <gtest/gtest.h>

#include <memory>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::apply;
using pass_testing::build_or_die;
using pass_testing::count_ops;

TEST(EliminateDeadCode, RemovesUnreachableNodesAndConstants) {
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {4});
  ValueId unused_input = b.input("unused", DType::kF32, {4});
  (void)unused_input;
  ValueId w = b.constant("w", Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
  ValueId dead_w = b.constant("dead_w", Tensor::scalar(2.0f));
  ValueId dead = b.add("Mul", {b.add("Relu", {x}), dead_w});
  (void)dead;
  b.output(b.add("Add", {x, w}), "y");
  Graph graph = apply(build_or_die(std::move(b)), {eliminate_dead_code_pass()});
  EXPECT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.constants.size(), 1u);
  EXPECT_EQ(graph.inputs.size(), 2u);  // callers feed inputs by name
  EXPECT_EQ(graph.find_value("dead_w"), kNoValue);
  EXPECT_NE(graph.find_value("w"), kNoValue);
}

TEST(EliminateDeadCode, KeepsStateOutputsAndCapturedValues) {
  GraphBuilder branch("branch");
  branch.output(branch.add("Abs", {branch.capture("t", DType::kF32, Shape{4})}),
                "out");
  auto body = std::make_shared<Graph>(build_or_die(std::move(branch)));
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {4});
  ValueId state = b.input("state", DType::kF32, {4});
  ValueId cond = b.input("cond", DType::kBool, {});
  b.add("Neg", {x}, {}, NodeOptions{"t"});
  ValueId y = b.add(
      "If", {cond},
      {{"then_branch", Attribute(body)}, {"else_branch", Attribute(body)}});
  ValueId next = b.add("Add", {state, x});
  b.output(y, "y");
  b.output(next, "next_state");
  b.state_pair(state, next);
  Graph graph = build_or_die(std::move(b));
  Graph result = apply(graph, {eliminate_dead_code_pass()});
  EXPECT_EQ(result.nodes.size(), 3u);
  EXPECT_EQ(count_ops(result, "Neg"), 1u);
  ASSERT_EQ(result.state_pairs.size(), 1u);
  EXPECT_EQ(result.value(result.state_pairs[0].output).name, "next_state");
}

TEST(EliminateDeadCode, CleansSubgraphs) {
  GraphBuilder branch("branch");
  ValueId t = branch.capture("x", DType::kF32, Shape{4});
  branch.add("Neg", {t});  // dead inside the branch
  branch.output(branch.add("Abs", {t}), "out");
  auto body = std::make_shared<Graph>(build_or_die(std::move(branch)));
  GraphBuilder b("g");
  b.input("x", DType::kF32, {4});
  ValueId cond = b.input("cond", DType::kBool, {});
  b.output(b.add("If", {cond},
                 {{"then_branch", Attribute(body)},
                  {"else_branch", Attribute(body)}}),
           "y");
  Graph result =
      apply(build_or_die(std::move(b)), {eliminate_dead_code_pass()});
  const Graph& then_branch = *result.nodes[0].attr("then_branch")->as_graph();
  EXPECT_EQ(then_branch.nodes.size(), 1u);
  EXPECT_EQ(body->nodes.size(), 2u);  // the shared original is untouched
}

}  // namespace
}  // namespace seqrt
