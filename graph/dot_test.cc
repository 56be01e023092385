#include "graph/dot.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "graph/builder.h"

namespace seqrt {
namespace {

size_t count(const std::string& text, const std::string& part) {
  size_t found = 0;
  for (size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + part.size())) {
    ++found;
  }
  return found;
}

Graph mlp() {
  GraphBuilder b("mlp \"quoted\"");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("batch"), 4});
  ValueId w = b.constant("w", Tensor::allocate(DType::kF32, {4, 2}).value());
  ValueId y = b.add("MatMul", {x, w}, {}, {"mm"});
  b.output(b.add("Relu", {y}), "y");
  Graph graph = std::move(b).build().value();
  // The type inference lives above graph/ (ops/); give the types by hand.
  for (ValueId id : {y, graph.outputs[0]}) {
    graph.value(id).dtype = DType::kF32;
    graph.value(id).shape = Shape({Dim::symbol("batch"), 2});
  }
  return graph;
}

TEST(GraphToDot, DrawsNodesValuesAndTypedEdges) {
  std::string dot = graph_to_dot(mlp());
  EXPECT_EQ(dot.rfind("digraph \"mlp \\\"quoted\\\"\" {", 0), 0u) << dot;
  EXPECT_EQ(dot.back(), '\n');
  // x -> MatMul, MatMul -> Relu, Relu -> y; the weight is no edge.
  EXPECT_EQ(count(dot, " -> "), 3u) << dot;
  EXPECT_NE(dot.find("label=\"MatMul\\nmm\\nw: f32(4,2)\""), std::string::npos)
      << dot;
  EXPECT_NE(dot.find("label=\"x\\nf32(batch,4)\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0 -> n1 [label=\"f32(batch,2)\"]"), std::string::npos)
      << dot;
  EXPECT_EQ(count(dot, "shape=box"), 2u);
  EXPECT_EQ(count(dot, "shape=ellipse"), 2u);
}

TEST(GraphToDot, DrawsSubgraphsAsNestedClustersWithTheirOwnIds) {
  GraphBuilder body("body");
  ValueId captured = body.capture("x", DType::kF32, Shape({4}));
  body.output(body.add("Neg", {captured}), "out");
  auto body_graph = std::make_shared<Graph>(std::move(body).build().value());

  GraphBuilder b("main");
  ValueId x = b.input("x", DType::kF32, Shape({4}));
  ValueId cond = b.input("cond", DType::kBool, Shape());
  b.output(b.add("If", {cond},
                 {{"then_branch", Attribute(body_graph)},
                  {"else_branch", Attribute(body_graph)}}),
           "y");
  (void)x;
  Graph graph = std::move(b).build().value();
  std::string dot = graph_to_dot(graph);
  EXPECT_EQ(count(dot, "subgraph cluster_"), 2u) << dot;
  EXPECT_NE(dot.find("n0g0_n0 -> n0g0_v"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0g1_v0 -> n0g1_n0"), std::string::npos) << dot;
  // Every brace opened is closed.
  EXPECT_EQ(count(dot, "{"), count(dot, "}"));
}

}  // namespace
}  // namespace seqrt
