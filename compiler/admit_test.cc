// require_supported: one error listing every node a backend refuses
// (subgraphs when asked).
#include "compiler/admit.h"

#include <gtest/gtest.h>

#include <memory>

#include "graph/builder.h"

namespace seqrt {
namespace {

Graph relu_add_relu() {
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {4});
  ValueId r = b.add("Relu", {x}, {}, NodeOptions{"first"});
  ValueId a = b.add("Add", {r, x});
  b.output(b.add("Relu", {a}, {}, NodeOptions{"second"}), "y");
  return std::move(b).build().value();
}

Status no_relu(const Graph&, const Node& node) {
  if (node.op == "Relu") return unsupported("{}: no Relu here", node.label());
  return Status::ok();
}

TEST(RequireSupported, ListsEveryNodeTheBackendRefuses) {
  Status status = require_supported(relu_add_relu(), "the test backend",
                                    no_relu, Subgraphs::kSkip);
  ASSERT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("the test backend cannot run 2 node(s): "),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("'first'"), std::string::npos);
  EXPECT_NE(status.message().find("'second'"), std::string::npos);
}

TEST(RequireSupported, AcceptsAGraphItCanRun) {
  auto everything = [](const Graph&, const Node&) { return Status::ok(); };
  EXPECT_TRUE(require_supported(relu_add_relu(), "the test backend", everything,
                                Subgraphs::kVisit)
                  .is_ok());
}

TEST(RequireSupported, VisitsSubgraphsOnlyWhenAsked) {
  GraphBuilder b("outer");
  ValueId x = b.input("x", DType::kF32, {4});
  b.output(b.add("Add", {x, x}), "y");
  Graph graph = std::move(b).build().value();
  graph.nodes[0].attrs["body"] =
      Attribute(std::make_shared<Graph>(relu_add_relu()));
  EXPECT_TRUE(unsupported_nodes(graph, no_relu, Subgraphs::kSkip).empty());
  EXPECT_EQ(unsupported_nodes(graph, no_relu, Subgraphs::kVisit).size(), 2u);
}

}  // namespace
}  // namespace seqrt
