// Lowering as a backend declares it: a node runs when its kernel takes it
// as it stands or once written out, and compile's prologue lists every
// node that does not.
#include "compiler/lower/lower.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt {
namespace {

// A backend whose only kernels are Add and Relu, in f32, and Cast.
Status f32_add_relu_only(const Graph& graph, const Node& node) {
  if (node.op == "Cast") return Status::ok();
  if (node.op != "Add" && node.op != "Relu") {
    return unsupported("{}: no kernel", node.label());
  }
  for (ValueId id : node.inputs) {
    if (graph.value(id).dtype != DType::kF32) {
      return unsupported("{}: f32 only", node.label());
    }
  }
  return Status::ok();
}

Graph typed(GraphBuilder builder) {
  Graph graph = std::move(builder).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

Graph sum_of_three() {
  GraphBuilder b("sum");
  ValueId x = b.input("x", DType::kF32, {4});
  b.output(b.add("Sum", {x, x, x}), "y");
  return typed(std::move(b));
}

Graph f16_relu() {
  GraphBuilder b("half");
  ValueId x = b.input("x", DType::kF16, {4});
  b.output(b.add("Relu", {x}), "y");
  return typed(std::move(b));
}

TEST(SupportedAfterLowering, AVariadicNodeRunsAsTwoInputSteps) {
  Graph graph = sum_of_three();
  LoweringNeeds none;
  EXPECT_FALSE(
      supported_after_lowering(graph, graph.nodes[0], none, f32_add_relu_only)
          .is_ok());
  LoweringNeeds chains;
  chains.expand_variadic = true;
  EXPECT_TRUE(
      supported_after_lowering(graph, graph.nodes[0], chains, f32_add_relu_only)
          .is_ok());
}

TEST(SupportedAfterLowering, AnF16NodeRunsInF32OnlyWhenDeclared) {
  Graph graph = f16_relu();
  LoweringNeeds none;
  Status refused =
      supported_after_lowering(graph, graph.nodes[0], none, f32_add_relu_only);
  EXPECT_NE(refused.message().find("f32 only"), std::string::npos)
      << refused.message();
  LoweringNeeds f32;
  f32.f16_in_f32 = true;
  EXPECT_TRUE(
      supported_after_lowering(graph, graph.nodes[0], f32, f32_add_relu_only)
          .is_ok());
}

TEST(SupportedAfterLowering, TheReasonNamesTheStepThatHasNoKernel) {
  GraphBuilder b("mul");
  ValueId x = b.input("x", DType::kF32, {4});
  b.output(b.add("Max", {x, x, x}, {}, NodeOptions{"m"}), "y");
  Graph graph = typed(std::move(b));
  LoweringNeeds chains;
  chains.expand_variadic = true;
  Status status = supported_after_lowering(graph, graph.nodes[0], chains,
                                           f32_add_relu_only);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("'m': as two-input steps: "),
            std::string::npos)
      << status.message();
}

TEST(LowerGraph, WritesF16InF32BetweenCasts) {
  Graph graph = f16_relu();
  LoweringNeeds f32;
  f32.f16_in_f32 = true;
  ASSERT_TRUE(lower_graph(graph, f32, f32_add_relu_only, {}).is_ok());
  int casts = 0;
  for (const Node& node : graph.nodes) {
    casts += node.op == "Cast";
    if (node.op == "Relu") {
      EXPECT_EQ(graph.value(node.inputs[0]).dtype, DType::kF32);
    }
  }
  EXPECT_EQ(casts, 2);
  EXPECT_EQ(graph.value(graph.outputs[0]).dtype, DType::kF16);
}

TEST(LowerAndAdmit, LeavesTheGraphAloneWhenNothingIsDeclared) {
  Graph graph = sum_of_three();
  Graph lowered;
  auto everything = [](const Graph&, const Node&) { return Status::ok(); };
  Result<const Graph*> admitted =
      lower_and_admit(graph, lowered, "the test backend", {}, everything, {});
  ASSERT_TRUE(admitted.is_ok()) << admitted.status().to_string();
  EXPECT_EQ(*admitted, &graph);
}

TEST(LowerAndAdmit, ListsEveryNodeTheBackendCannotRun) {
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {4});
  ValueId s = b.add("Sub", {x, x}, {}, NodeOptions{"first"});
  b.output(b.add("Mul", {s, x}, {}, NodeOptions{"second"}), "y");
  Graph graph = typed(std::move(b));
  Graph lowered;
  LoweringNeeds chains;
  chains.expand_variadic = true;
  Result<const Graph*> admitted = lower_and_admit(
      graph, lowered, "the test backend", chains, f32_add_relu_only, {});
  ASSERT_EQ(admitted.status().code(), StatusCode::kUnsupported);
  const std::string message = admitted.status().message();
  EXPECT_NE(message.find("the test backend cannot run 2 node(s): "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("'first'"), std::string::npos);
  EXPECT_NE(message.find("'second'"), std::string::npos);
}

TEST(LowerAndAdmit, UnknownOpsFailBeforeTheBackendIsAsked) {
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {4});
  b.output(b.add("NoSuchOp", {x}), "y");
  Graph graph = std::move(b).build().value();
  bool asked = false;
  auto ask = [&](const Graph&, const Node&) {
    asked = true;
    return Status::ok();
  };
  Graph lowered;
  EXPECT_FALSE(
      lower_and_admit(graph, lowered, "the test backend", {}, ask, {}).is_ok());
  EXPECT_FALSE(asked);
}

}  // namespace
}  // namespace seqrt
