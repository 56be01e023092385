#include <gtest/gtest.h>

#include "graph/builder.h"
#include "graph/printer.h"
#include "graph/verifier.h"

namespace seqrt {
namespace {

Tensor weights(std::vector<int64_t> dims) {
  return Tensor::allocate(DType::kF32, std::move(dims)).value();
}

Graph small_graph() {
  GraphBuilder b("mlp");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("batch"), 4});
  ValueId w = b.constant("w", weights({4, 2}));
  ValueId y = b.add("MatMul", {x, w}, {}, {"mm"});
  b.output(b.add("Relu", {y}, {{"unused", Attribute(int64_t{1})}}), "y");
  b.set_metadata("author", "test");
  return std::move(b).build().value();
}

TEST(Builder, BuildsAVerifiedGraph) {
  Graph g = small_graph();
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.value(g.outputs[0]).name, "y");
  EXPECT_EQ(g.find_value("w"), 1);
  EXPECT_TRUE(g.is_constant(1));
  EXPECT_EQ(g.nodes[0].name, "mm");
  EXPECT_EQ(g.nodes[1].name, "Relu_1");
  EXPECT_TRUE(verify_graph(g).is_ok());
}

TEST(Graph, EqualityIsDeep) {
  Graph a = small_graph();
  Graph b = small_graph();
  EXPECT_TRUE(graphs_equal(a, b));
  b.nodes[1].attrs["unused"] = Attribute(int64_t{2});
  EXPECT_FALSE(graphs_equal(a, b));
  Graph c = small_graph();
  c.constants[1].mutable_data_as<float>()[0] = 1.0f;
  EXPECT_FALSE(graphs_equal(a, c));
}

TEST(Graph, TopologicalOrderFollowsDependencies) {
  Graph g = small_graph();
  std::swap(g.nodes[0], g.nodes[1]);  // Relu listed before its producer
  std::vector<int> order = g.topological_order().value();
  EXPECT_EQ(order, (std::vector<int>{1, 0}));
  EXPECT_TRUE(verify_graph(g).is_ok());
}

TEST(Verifier, RejectsCycles) {
  Graph g = small_graph();
  g.nodes[0].inputs[0] = g.nodes[1].outputs[0];  // MatMul reads Relu's output
  g.inputs.clear();
  Status status = verify_graph(g);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("cycle"), std::string::npos)
      << status.message();
}

TEST(Verifier, RejectsUndefinedAndOutOfRangeValues) {
  Graph g = small_graph();
  g.add_value(Value{"ghost", DType::kF32, Shape{}});
  g.nodes[1].inputs[0] = static_cast<ValueId>(g.values.size() - 1);
  Status status = verify_graph(g);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("'ghost' is never defined"),
            std::string::npos)
      << status.message();

  Graph h = small_graph();
  h.nodes[0].inputs[1] = 99;
  EXPECT_NE(verify_graph(h).message().find("value #99"), std::string::npos);
}

TEST(Verifier, RejectsDuplicateNamesAndDefinitions) {
  Graph g = small_graph();
  g.values[1].name = "x";
  EXPECT_NE(verify_graph(g).message().find("two values are named 'x'"),
            std::string::npos);
  Graph h = small_graph();
  h.nodes[1].outputs[0] = h.nodes[0].outputs[0];
  EXPECT_NE(verify_graph(h).message().find("defined twice"), std::string::npos);
}

TEST(Verifier, ChecksConstantTypes) {
  Graph g = small_graph();
  g.values[1].shape = Shape{4, 3};
  Status status = verify_graph(g);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("constant 'w'"), std::string::npos);
}

TEST(Verifier, ChecksStatePairs) {
  GraphBuilder b("stateful");
  ValueId past = b.input("past_state", DType::kF32, {2, 3});
  ValueId x = b.input("x", DType::kF32, {2, 3});
  ValueId present = b.add("Add", {past, x}, {}, {"present"});
  b.output(present, "present_state");
  b.state_pair(past, present, weights({2, 3}));
  Graph good = std::move(b).build().value();
  good.value(present).dtype = DType::kF32;
  good.value(present).shape = Shape{2, 3};
  EXPECT_TRUE(verify_graph(good).is_ok());

  Graph wrong_initial = good;
  wrong_initial.state_pairs[0].initial = weights({3, 3});
  EXPECT_FALSE(verify_graph(wrong_initial).is_ok());

  Graph not_io = good;
  not_io.state_pairs[0].input = x;
  not_io.state_pairs[0].output = 0;
  EXPECT_NE(verify_graph(not_io).message().find("must join a graph input"),
            std::string::npos);
}

std::shared_ptr<Graph> body_capturing(const std::string& name) {
  GraphBuilder body("body");
  ValueId outer = body.capture(name, DType::kF32, std::nullopt);
  ValueId in = body.input("body_in", DType::kF32, {4});
  body.output(body.add("Add", {in, outer}), "out");
  return std::make_shared<Graph>(std::move(body).build().value());
}

TEST(Verifier, SubgraphCapturesResolveAgainstEnclosingGraphs) {
  Graph g = small_graph();
  g.nodes[1].attrs["body"] = Attribute(body_capturing("w"));
  EXPECT_TRUE(verify_graph(g).is_ok());
  g.nodes[1].attrs["body"] = Attribute(body_capturing("nowhere"));
  Status status = verify_graph(g);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("'nowhere' is not defined"),
            std::string::npos)
      << status.message();
}

TEST(Graph, TopologicalOrderWaitsForCapturedValues) {
  // The Relu node's subgraph captures 'late', which a node listed after it
  // produces: the order must put that producer first.
  GraphBuilder b("captures");
  ValueId x = b.input("x", DType::kF32, {4});
  ValueId y = b.add("Relu", {x}, {{"body", Attribute(body_capturing("late"))}});
  b.output(y, "y");
  ValueId late = b.add("Neg", {x}, {}, {"late"});
  b.output(late);
  Graph g = std::move(b).build().value();
  EXPECT_EQ(g.topological_order().value(), (std::vector<int>{1, 0}));
}

TEST(Verifier, BoundsSubgraphDepth) {
  std::shared_ptr<Graph> inner = body_capturing("h");
  // Each level captures 'h' from the level around it; building verifies,
  // so the level past the limit fails to build.
  Status last;
  int depth = 0;
  for (; depth <= kMaxSubgraphDepth + 1 && last.is_ok(); ++depth) {
    GraphBuilder level("level");
    ValueId h = level.input("h", DType::kF32, {4});
    ValueId y = level.add("Identity", {h}, {{"body", Attribute(inner)}});
    level.output(y, "out");
    Result<Graph> built = std::move(level).build();
    last = built.status();
    if (built.is_ok())
      inner = std::make_shared<Graph>(std::move(built).value());
  }
  ASSERT_FALSE(last.is_ok());
  EXPECT_EQ(last.code(), StatusCode::kLimitExceeded) << last.message();
  EXPECT_EQ(depth, kMaxSubgraphDepth + 1);
}

TEST(Printer, ShowsTypesNodesAndAttributes) {
  Graph g = small_graph();
  std::string text = print_graph(g);
  EXPECT_NE(text.find("graph mlp (x: f32(batch,4))"), std::string::npos)
      << text;
  EXPECT_NE(text.find("const w: f32(4,2)"), std::string::npos) << text;
  EXPECT_NE(text.find("mm = MatMul(x, w)"), std::string::npos) << text;
  EXPECT_NE(text.find("y = Relu(mm) {unused=1}"), std::string::npos) << text;
}

}  // namespace
}  // namespace seqrt
