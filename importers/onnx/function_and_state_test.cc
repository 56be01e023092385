// Model-local functions, subgraphs with captures, and state pairs.
#include <gtest/gtest.h>

#include "compiler/infer/infer_graph.h"
#include "graph/verifier.h"
#include "importers/onnx/graph_convert.h"
#include "importers/onnx/onnx_test_util.h"
#include "importers/onnx/state_pairs.h"
#include "runtime/session.h"

namespace seqrt {
namespace {

using namespace onnx_test;  // NOLINT: test helpers
using onnx::TensorProto;

// local.AddSoftmax(a, b) = Softmax(a + b, axis = <ax>)
void add_function(onnx::ModelProto& model) {
  auto* entry = model.add_opset_import();
  entry->set_domain("local");
  entry->set_version(1);
  onnx::FunctionProto& f = *model.add_functions();
  f.set_name("AddSoftmax");
  f.set_domain("local");
  f.add_input("a");
  f.add_input("b");
  f.add_output("c");
  f.add_attribute("ax");
  auto* opset = f.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::NodeProto* add = f.add_node();
  add->set_op_type("Add");
  add->add_input("a");
  add->add_input("b");
  add->add_output("t");
  onnx::NodeProto* softmax = f.add_node();
  softmax->set_op_type("Softmax");
  softmax->add_input("t");
  softmax->add_output("c");
  auto* attr = softmax->add_attribute();
  attr->set_name("axis");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_ref_attr_name("ax");
}

TEST(onnx_functions, InlinedWithFreshNamesAndResolvedAttributes) {
  onnx::ModelProto model = make_model(17);
  add_function(model);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {2, 2});
  // "t" is also used outside: the body's "t" must get a fresh name.
  add_node(g, "Relu", {"x"}, {"t"}, "relu");
  auto& call = add_node(g, "AddSoftmax", {"x", "t"}, {"y"}, "call");
  call.set_domain("local");
  set_int_attr(call, "ax", 0);
  add_output(g, "y", TensorProto::FLOAT, {2, 2});
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_EQ(graph->nodes.size(), 3u);
  EXPECT_EQ(graph->nodes[1].op, "Add");
  EXPECT_EQ(graph->nodes[2].op, "Softmax");
  EXPECT_EQ(graph->nodes[2].attr("axis")->as_int(), 0);
  EXPECT_EQ(graph->value(graph->nodes[1].outputs[0]).name, "call/t");
  EXPECT_EQ(graph->value(graph->nodes[2].outputs[0]).name, "y");

  // Softmax over axis 0 of x + relu(x) for x = [[0, 1], [0, 3]].
  auto session = Session::create(std::move(*graph), SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  auto out = (*session)->run(
      {{"x", Tensor::from_vector<float>({2, 2}, {0, 1, 0, 3})}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_NEAR((*out)["y"].element_f64(0), 0.5, 1e-6);
  EXPECT_NEAR((*out)["y"].element_f64(1), 1 / (1 + std::exp(4.0)), 1e-6);
}

TEST(onnx_functions, RegistryOpsAreNotInlined) {
  onnx::ModelProto model = make_model(17);
  // A function standing for an op we implement keeps the op.
  onnx::FunctionProto& f = *model.add_functions();
  f.set_name("Relu");
  f.set_domain("");
  f.add_input("a");
  f.add_output("b");
  onnx::NodeProto* neg = f.add_node();
  neg->set_op_type("Neg");
  neg->add_input("a");
  neg->add_output("b");
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {2});
  add_node(g, "Relu", {"x"}, {"y"});
  add_output(g, "y", TensorProto::FLOAT, {2});
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_EQ(graph->nodes.size(), 1u);
  EXPECT_EQ(graph->nodes[0].op, "Relu");
}

TEST(onnx_functions, RecursionIsAnError) {
  onnx::ModelProto model = make_model(17);
  auto* entry = model.add_opset_import();
  entry->set_domain("local");
  entry->set_version(1);
  onnx::FunctionProto& f = *model.add_functions();
  f.set_name("Loopy");
  f.set_domain("local");
  f.add_input("a");
  f.add_output("b");
  onnx::NodeProto* self = f.add_node();
  self->set_op_type("Loopy");
  self->set_domain("local");
  self->add_input("a");
  self->add_output("b");
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {2});
  add_node(g, "Loopy", {"x"}, {"y"}, "call").set_domain("local");
  add_output(g, "y", TensorProto::FLOAT, {2});
  Result<Graph> graph = import_model(model);
  ASSERT_FALSE(graph.is_ok());
  EXPECT_NE(graph.status().message().find("recursive"), std::string::npos);
}

// If(cond) { y = x + 1 } else { y = x - 1 }: both branches read the outer
// x and the outer initializer "one" as captures.
onnx::ModelProto if_model() {
  onnx::ModelProto model = make_model(17);
  auto& g = *model.mutable_graph();
  add_input(g, "cond", TensorProto::BOOL, {});
  add_input(g, "x", TensorProto::FLOAT, {2});
  add_float_initializer(g, "one", {}, {1});
  auto& node = add_node(g, "If", {"cond"}, {"y"}, "if0");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* attr = node.add_attribute();
    attr->set_name(branch);
    attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto& body = *attr->mutable_g();
    body.set_name(branch);
    add_node(body, std::string(branch) == "then_branch" ? "Add" : "Sub",
             {"x", "one"}, {"r"});
    add_output(body, "r", TensorProto::FLOAT, {2});
  }
  add_output(g, "y", TensorProto::FLOAT, {2});
  return model;
}

TEST(onnx_subgraphs, OuterReadsBecomeCaptures) {
  onnx::ModelProto model = if_model();
  FunctionTable functions;
  ImportContext ctx;
  ctx.source = "test model";
  ctx.opsets[""] = 17;
  ctx.functions = &functions;
  ctx.registry = &OpRegistry::global();
  Result<Graph> graph = convert_graph(model.graph(), ctx, nullptr);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Attribute* then_branch = graph->nodes[0].attr("then_branch");
  ASSERT_NE(then_branch, nullptr);
  const Graph& body = *then_branch->as_graph();
  ASSERT_EQ(body.captures.size(), 2u);
  EXPECT_EQ(body.value(body.captures[0]).name, "x");
  EXPECT_EQ(body.value(body.captures[0]).dtype, DType::kF32);
  EXPECT_EQ(body.value(body.captures[1]).name, "one");
  EXPECT_TRUE(body.inputs.empty());
  EXPECT_TRUE(verify_graph(*graph).is_ok());

  // A subgraph reading a name no graph defines is an error naming it.
  model.mutable_graph()
      ->mutable_node(0)
      ->mutable_attribute(0)
      ->mutable_g()
      ->mutable_node(0)
      ->set_input(0, "ghost");
  Result<Graph> bad = convert_graph(model.graph(), ctx, nullptr);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'ghost'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("then_branch"), std::string::npos);
}

// An If inside an If's branch reads the main graph's x: the middle branch
// captures x too, so every level passes it down.
TEST(onnx_subgraphs, CapturesPassThroughEveryLevel) {
  onnx::ModelProto model = if_model();
  onnx::GraphProto& then_branch = *model.mutable_graph()
                                       ->mutable_node(0)
                                       ->mutable_attribute(0)
                                       ->mutable_g();
  then_branch.clear_node();
  then_branch.clear_output();
  auto& inner_if = add_node(then_branch, "If", {"cond"}, {"r"}, "inner");
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* attr = inner_if.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto& body = *attr->mutable_g();
    body.set_name(std::string("inner_") + name);
    add_node(body, "Neg", {"x"}, {"n"});
    add_output(body, "n", TensorProto::FLOAT, {2});
  }
  add_output(then_branch, "r", TensorProto::FLOAT, {2});

  FunctionTable functions;
  ImportContext ctx;
  ctx.source = "test model";
  ctx.opsets[""] = 17;
  ctx.functions = &functions;
  ctx.registry = &OpRegistry::global();
  Result<Graph> graph = convert_graph(model.graph(), ctx, nullptr);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Graph& middle = *graph->nodes[0].attr("then_branch")->as_graph();
  ASSERT_EQ(middle.captures.size(), 2u);
  EXPECT_EQ(middle.value(middle.captures[0]).name, "cond");
  EXPECT_EQ(middle.value(middle.captures[1]).name, "x");
  const Graph& inner = *middle.nodes[0].attr("then_branch")->as_graph();
  ASSERT_EQ(inner.captures.size(), 1u);
  EXPECT_EQ(inner.value(inner.captures[0]).name, "x");
  EXPECT_TRUE(verify_graph(*graph).is_ok());
}

TEST(onnx_subgraphs, IfRuns) {
  Result<Graph> graph = import_model(if_model());
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto session = Session::create(std::move(*graph), SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  auto out = (*session)->run({{"cond", Tensor::scalar<bool>(false)},
                              {"x", Tensor::from_vector<float>({2}, {5, 6})}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_TRUE((*out)["y"].same_as(Tensor::from_vector<float>({2}, {4, 5})));
}

// Scan(s, xs) with a body whose inputs carry no type, as ONNX allows: the
// importer keeps them untyped and inference types them from the node (the
// state as given, the scan input without its scan axis).
TEST(onnx_subgraphs, UntypedScanBodyInputsTakeTheNodeTypes) {
  onnx::ModelProto model = make_model(17);
  auto& g = *model.mutable_graph();
  add_input(g, "s0", TensorProto::FLOAT, {2});
  add_input(g, "xs", TensorProto::FLOAT, {3, 2});
  auto& scan = add_node(g, "Scan", {"s0", "xs"}, {"s_final", "ys"}, "scan0");
  set_int_attr(scan, "num_scan_inputs", 1);
  auto* attr = scan.add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& body = *attr->mutable_g();
  body.set_name("step");
  body.add_input()->set_name("s");
  body.add_input()->set_name("x");
  add_node(body, "Add", {"s", "x"}, {"s_next"});
  add_node(body, "Mul", {"x", "x"}, {"y"});
  body.add_output()->set_name("s_next");
  body.add_output()->set_name("y");
  add_output(g, "s_final", TensorProto::FLOAT, {2});
  add_output(g, "ys", TensorProto::FLOAT, {3, 2});

  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_TRUE(infer_graph(*graph).is_ok());
  const Graph& typed_body = *graph->nodes[0].attr("body")->as_graph();
  const Value& x = typed_body.value(typed_body.inputs[1]);
  EXPECT_EQ(x.dtype, DType::kF32);
  ASSERT_TRUE(x.shape.has_value());
  EXPECT_EQ(*x.shape, Shape({2}));

  auto session = Session::create(std::move(*graph), SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  auto out = (*session)->run(
      {{"s0", Tensor::from_vector<float>({2}, {0, 1})},
       {"xs", Tensor::from_vector<float>({3, 2}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_TRUE(
      (*out)["s_final"].same_as(Tensor::from_vector<float>({2}, {9, 13})));
}

// The main graph's inputs still need a type.
TEST(onnx_subgraphs, UntypedMainGraphInputIsAnError) {
  onnx::ModelProto model = make_model(17);
  auto& g = *model.mutable_graph();
  g.add_input()->set_name("x");
  add_node(g, "Neg", {"x"}, {"y"});
  add_output(g, "y", TensorProto::FLOAT, {2});
  Result<Graph> graph = import_model(model);
  ASSERT_FALSE(graph.is_ok());
  EXPECT_NE(graph.status().message().find("'x' has no element type"),
            std::string::npos);
}

// A decoder-like graph: caches concatenated with new entries, a state
// updated in place.
onnx::ModelProto stateful_model() {
  onnx::ModelProto model = make_model(17);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {1, "seq", 4});
  add_input(g, "past_key_values.0.key", TensorProto::FLOAT, {1, "past", 4});
  add_input(g, "past_state", TensorProto::FLOAT, {1, 4});
  add_input(g, "past_mismatch", TensorProto::FLOAT, {1, 4});
  set_int_attr(
      add_node(g, "Concat", {"past_key_values.0.key", "x"}, {"present.0.key"}),
      "axis", 1);
  add_node(g, "Relu", {"past_state"}, {"present_state"});
  set_ints_attr(
      add_node(g, "ReduceSum", {"past_mismatch"}, {"present_mismatch"}), "axes",
      {});
  add_output(g, "present.0.key", TensorProto::FLOAT, {1, "total", 4});
  add_output(g, "present_state", TensorProto::FLOAT, {1, 4});
  auto* out = g.add_output();
  out->set_name("present_mismatch");
  return model;
}

TEST(onnx_state, PairsFromPastAndPresentNames) {
  onnx::ModelProto model = stateful_model();
  // ReduceSum over all axes makes present_mismatch rank 0: no pair.
  model.mutable_graph()->mutable_node(2)->clear_attribute();
  set_int_attr(*model.mutable_graph()->mutable_node(2), "keepdims", 0);
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_EQ(graph->state_pairs.size(), 2u);
  EXPECT_EQ(graph->value(graph->state_pairs[0].input).name,
            "past_key_values.0.key");
  EXPECT_EQ(graph->value(graph->state_pairs[0].output).name, "present.0.key");
  EXPECT_EQ(graph->value(graph->state_pairs[1].input).name, "past_state");
  EXPECT_EQ(graph->value(graph->state_pairs[1].output).name, "present_state");
}

TEST(onnx_state, PairsFromMetadata) {
  onnx::ModelProto model = stateful_model();
  model.mutable_graph()->mutable_node(2)->clear_attribute();
  auto* prop = model.add_metadata_props();
  prop->set_key(kStatePairsKey);
  prop->set_value("past_state:present_state;past_mismatch:present_mismatch");
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_EQ(graph->state_pairs.size(), 2u);
  EXPECT_EQ(graph->value(graph->state_pairs[1].input).name, "past_mismatch");
  EXPECT_EQ(graph->metadata[kStatePairsKey],
            "past_state:present_state;past_mismatch:present_mismatch");

  prop->set_value("past_state:nothing");
  Result<Graph> bad = import_model(model);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'nothing'"), std::string::npos);
}

}  // namespace
}  // namespace seqrt
