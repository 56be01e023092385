#include "compiler/passes/rewrite.h"

#include <gtest/gtest.h>

#include <memory>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;

// x -> Neg -> t; If(cond) whose branches read t by name; y = If output.
Graph capture_graph() {
  GraphBuilder then_b("then");
  then_b.output(then_b.add("Abs", {then_b.capture("t", DType::kF32, Shape{3})}),
                "out");
  GraphBuilder else_b("else");
  // A nested If reads t from two levels up without its parent declaring it.
  GraphBuilder inner("inner");
  inner.output(inner.add("Neg", {inner.capture("t", DType::kF32, Shape{3})}),
               "out");
  auto inner_graph = std::make_shared<Graph>(build_or_die(std::move(inner)));
  ValueId c = else_b.constant("c", Tensor::scalar<bool>(true));
  else_b.output(else_b.add("If", {c},
                           {{"then_branch", Attribute(inner_graph)},
                            {"else_branch", Attribute(inner_graph)}}),
                "out");
  GraphBuilder b("main");
  ValueId x = b.input("x", DType::kF32, {3});
  ValueId cond = b.input("cond", DType::kBool, {});
  ValueId t = b.add("Neg", {x}, {}, NodeOptions{"t"});
  (void)t;
  AttrMap branches = {
      {"then_branch",
       Attribute(std::make_shared<Graph>(build_or_die(std::move(then_b))))},
      // Verified as part of main: on its own, the nested capture of t
      // resolves nowhere.
      {"else_branch", Attribute(std::make_shared<Graph>(else_b.graph()))}};
  b.output(b.add("If", {cond}, branches), "y");
  return build_or_die(std::move(b));
}

TEST(Rewrite, CapturedValuesAreUses) {
  Graph graph = capture_graph();
  ValueUses uses = compute_uses(graph);
  ValueId t = graph.find_value("t");
  ASSERT_EQ(uses.consumers[t].size(), 1u);
  EXPECT_EQ(graph.nodes[uses.consumers[t][0]].op, "If");
  EXPECT_TRUE(uses.is_output[graph.find_value("y")]);
  EXPECT_EQ(uses.producer[t], 0);
  const Graph& else_branch = *graph.nodes[1].attr("else_branch")->as_graph();
  EXPECT_EQ(captured_names(else_branch), std::set<std::string>{"t"});
}

TEST(Rewrite, ReplaceAllUsesKeepsNamesThatOthersReadByName) {
  Graph graph = capture_graph();
  ValueId x = graph.find_value("x");
  ValueId t = graph.find_value("t");
  EXPECT_FALSE(replace_all_uses(graph, t, x).is_ok());  // captured
  EXPECT_FALSE(replace_all_uses(graph, graph.find_value("y"), x).is_ok());

  GraphBuilder b("plain");
  ValueId in = b.input("in", DType::kF32, {2});
  ValueId a = b.add("Relu", {in});
  ValueId c = b.add("Abs", {in});
  b.output(b.add("Add", {a, a}), "out");
  b.output(c, "other");
  Graph plain = build_or_die(std::move(b));
  ASSERT_TRUE(replace_all_uses(plain, a, c).is_ok());
  EXPECT_EQ(plain.nodes[2].inputs, (std::vector<ValueId>{c, c}));
}

TEST(Rewrite, RemoveNodesDropsOrphanValuesAndSorts) {
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, {2});
  ValueId a = b.add("Relu", {x});
  ValueId dead = b.add("Neg", {a});
  (void)dead;
  b.output(b.add("Abs", {a}), "y");
  Graph graph = build_or_die(std::move(b));
  // Put the Abs first, so remove_nodes has to sort.
  std::swap(graph.nodes[0], graph.nodes[2]);
  ASSERT_TRUE(remove_nodes(graph, {1}).is_ok());
  EXPECT_EQ(graph.values.size(), 3u);  // x, Relu, y
  ASSERT_EQ(graph.nodes.size(), 2u);
  EXPECT_EQ(graph.nodes[0].op, "Relu");
  EXPECT_EQ(graph.find_value("Neg_1"), kNoValue);
  EXPECT_TRUE(verify_graph(graph).is_ok());
}

TEST(Rewrite, FreshValuesHaveUniqueNames) {
  GraphBuilder b("g");
  b.output(b.add("Relu", {b.input("x", DType::kF32, {2})}), "x_heads");
  Graph graph = build_or_die(std::move(b));
  ValueId fresh = add_fresh_value(graph, "x_heads");
  EXPECT_EQ(graph.value(fresh).name, "x_heads_1");
}

}  // namespace
}  // namespace seqrt
