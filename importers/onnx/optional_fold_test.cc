// Optionals resolved at import (optional_fold.h): each rewrite runs to the
// values ONNX defines, and each case that only a run could decide is
// refused naming the node, the op, the value and why.
#include <gtest/gtest.h>

#include "importers/onnx/onnx_test_util.h"
#include "runtime/session.h"

namespace seqrt {
namespace {

using namespace onnx_test;  // NOLINT: test helpers
using onnx::TensorProto;

// Declares `name` as optional(tensor(elem_type, dims)).
void set_optional_type(onnx::ValueInfoProto& info, const std::string& name,
                       int32_t elem_type, std::vector<TestDim> dims) {
  onnx::ValueInfoProto tensor;
  set_type(tensor, name, elem_type, std::move(dims));
  info.set_name(name);
  *info.mutable_type()->mutable_optional_type()->mutable_elem_type() =
      tensor.type();
}

// An empty Optional node, typed by its 'type' attribute as exporters write.
onnx::NodeProto& add_empty_optional(onnx::GraphProto& graph,
                                    const std::string& output,
                                    const std::string& name) {
  onnx::NodeProto& node = add_node(graph, "Optional", {}, {output}, name);
  auto* attr = node.add_attribute();
  attr->set_name("type");
  attr->set_type(onnx::AttributeProto::TYPE_PROTO);
  onnx::ValueInfoProto tensor;
  set_type(tensor, output, TensorProto::FLOAT, {2});
  *attr->mutable_tp() = tensor.type();
  return node;
}

onnx::GraphProto& add_graph_attr(onnx::NodeProto& node,
                                 const std::string& name) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::GRAPH);
  attr->mutable_g()->set_name(name);
  return *attr->mutable_g();
}

std::map<std::string, Tensor> run_model(const onnx::ModelProto& model,
                                        std::map<std::string, Tensor> feeds) {
  Result<Graph> graph = import_model(model);
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  if (!graph.is_ok()) return {};
  for (const Node& node : graph->nodes) {
    EXPECT_EQ(node.op.rfind("Optional", 0), std::string::npos) << node.op;
  }
  auto session = Session::create(std::move(*graph), SessionOptions{});
  EXPECT_TRUE(session.is_ok()) << session.status().message();
  if (!session.is_ok()) return {};
  auto outputs = (*session)->run(feeds);
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().message();
  return outputs.is_ok() ? *outputs : std::map<std::string, Tensor>{};
}

// The import's error; it must fail as `code` with every part of `expected`.
void expect_refused(const onnx::ModelProto& model, StatusCode code,
                    std::vector<std::string> expected) {
  Result<Graph> graph = import_model(model);
  ASSERT_FALSE(graph.is_ok());
  EXPECT_EQ(graph.status().code(), code) << graph.status().message();
  for (const std::string& part : expected) {
    EXPECT_NE(graph.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << graph.status().message();
  }
}

const Tensor kX = Tensor::from_vector<float>({2}, {1.5f, -2});

TEST(onnx_optional, PresentOptionalIsItsTensor) {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {2});
  add_node(g, "Optional", {"x"}, {"o"}, "wrap");
  set_optional_type(*g.add_value_info(), "o", TensorProto::FLOAT, {2});
  add_node(g, "OptionalGetElement", {"o"}, {"y"}, "get");
  add_node(g, "OptionalHasElement", {"o"}, {"has"}, "has");
  // A graph output declared optional holds the tensor.
  add_node(g, "Identity", {"o"}, {"o_out"});
  add_output(g, "y", TensorProto::FLOAT, {2});
  add_output(g, "has", TensorProto::BOOL, {});
  set_optional_type(*g.add_output(), "o_out", TensorProto::FLOAT, {2});
  auto out = run_model(model, {{"x", kX}});
  EXPECT_TRUE(out["y"].same_as(kX));
  EXPECT_TRUE(out["o_out"].same_as(kX));
  EXPECT_TRUE(out["has"].same_as(Tensor::scalar<bool>(true)));
}

TEST(onnx_optional, EmptyOptionalHasNoElement) {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {2});
  add_empty_optional(g, "e", "none");
  set_optional_type(*g.add_value_info(), "e", TensorProto::FLOAT, {2});
  add_node(g, "Identity", {"e"}, {"e2"}, "copy");  // empty too
  add_node(g, "OptionalHasElement", {"e2"}, {"has_e"}, "has_e");
  add_node(g, "OptionalHasElement", {}, {"has_none"}, "has_none");
  add_node(g, "OptionalHasElement", {""}, {"has_blank"}, "has_blank");
  add_node(g, "Relu", {"x"}, {"y"});
  add_output(g, "has_e", TensorProto::BOOL, {});
  add_output(g, "has_none", TensorProto::BOOL, {});
  add_output(g, "has_blank", TensorProto::BOOL, {});
  add_output(g, "y", TensorProto::FLOAT, {2});
  auto out = run_model(model, {{"x", kX}});
  for (const char* name : {"has_e", "has_none", "has_blank"}) {
    EXPECT_TRUE(out[name].same_as(Tensor::scalar<bool>(false))) << name;
  }
}

// Since opset 18 both ops take a tensor: it is present.
TEST(onnx_optional, TensorInputIsPresent) {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {2});
  add_node(g, "OptionalHasElement", {"x"}, {"has"});
  add_node(g, "OptionalGetElement", {"x"}, {"y"});
  add_output(g, "has", TensorProto::BOOL, {});
  add_output(g, "y", TensorProto::FLOAT, {2});
  auto out = run_model(model, {{"x", kX}});
  EXPECT_TRUE(out["y"].same_as(kX));
  EXPECT_TRUE(out["has"].same_as(Tensor::scalar<bool>(true)));
}

// If(cond): then Optional(x), else Optional(-x); both present.
onnx::ModelProto if_present_model() {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  add_input(g, "cond", TensorProto::BOOL, {});
  add_input(g, "x", TensorProto::FLOAT, {2});
  auto& node = add_node(g, "If", {"cond"}, {"o"}, "choose");
  set_optional_type(*g.add_value_info(), "o", TensorProto::FLOAT, {2});
  auto& then_branch = add_graph_attr(node, "then_branch");
  add_node(then_branch, "Optional", {"x"}, {"t"});
  set_optional_type(*then_branch.add_output(), "t", TensorProto::FLOAT, {2});
  auto& else_branch = add_graph_attr(node, "else_branch");
  add_node(else_branch, "Neg", {"x"}, {"n"});
  add_node(else_branch, "Optional", {"n"}, {"e"});
  set_optional_type(*else_branch.add_output(), "e", TensorProto::FLOAT, {2});
  add_node(g, "OptionalGetElement", {"o"}, {"y"});
  add_output(g, "y", TensorProto::FLOAT, {2});
  return model;
}

TEST(onnx_optional, IfOutputPresentInBothBranches) {
  onnx::ModelProto model = if_present_model();
  auto out =
      run_model(model, {{"cond", Tensor::scalar<bool>(true)}, {"x", kX}});
  EXPECT_TRUE(out["y"].same_as(kX));
  out = run_model(model, {{"cond", Tensor::scalar<bool>(false)}, {"x", kX}});
  EXPECT_TRUE(out["y"].same_as(Tensor::from_vector<float>({2}, {-1.5f, 2})));
}

// An output empty in both branches leaves the If and both branches.
TEST(onnx_optional, IfOutputEmptyInBothBranchesIsRemoved) {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  add_input(g, "cond", TensorProto::BOOL, {});
  add_input(g, "x", TensorProto::FLOAT, {2});
  auto& node = add_node(g, "If", {"cond"}, {"o", "z"}, "choose");
  for (const char* name : {"then_branch", "else_branch"}) {
    auto& branch = add_graph_attr(node, name);
    std::string prefix = name;
    add_empty_optional(branch, prefix + "_o", "none");
    add_node(branch, "Relu", {"x"}, {prefix + "_z"});
    set_optional_type(*branch.add_output(), prefix + "_o", TensorProto::FLOAT,
                      {2});
    add_output(branch, prefix + "_z", TensorProto::FLOAT, {2});
  }
  add_node(g, "OptionalHasElement", {"o"}, {"has"});
  add_output(g, "has", TensorProto::BOOL, {});
  add_output(g, "z", TensorProto::FLOAT, {2});
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_EQ(graph->nodes.size(), 1u);
  EXPECT_EQ(graph->nodes[0].outputs.size(), 1u);
  auto out =
      run_model(model, {{"cond", Tensor::scalar<bool>(true)}, {"x", kX}});
  EXPECT_TRUE(out["has"].same_as(Tensor::scalar<bool>(false)));
  EXPECT_TRUE(out["z"].same_as(Tensor::from_vector<float>({2}, {1.5f, 0})));
}

// `if v is None` on an optional known at import: the branch that would
// read the missing element never runs, so it is not folded (TorchScript
// exports of `Optional[Tensor]` arguments look like this).
onnx::ModelProto if_none_model(bool present) {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {2});
  if (present) {
    add_node(g, "Optional", {"x"}, {"v"}, "given");
  } else {
    add_empty_optional(g, "v", "none");
  }
  add_node(g, "OptionalHasElement", {"v"}, {"has"});
  add_node(g, "Not", {"has"}, {"is_none"});
  add_node(g, "Identity", {"is_none"}, {"cond"});
  auto& node = add_node(g, "If", {"cond"}, {"w"}, "choose");
  auto& then_branch = add_graph_attr(node, "then_branch");  // v is None
  add_node(then_branch, "Neg", {"x"}, {"t"});
  add_output(then_branch, "t", TensorProto::FLOAT, {2});
  auto& else_branch = add_graph_attr(node, "else_branch");
  add_node(else_branch, "OptionalGetElement", {"v"}, {"e"});
  add_output(else_branch, "e", TensorProto::FLOAT, {2});
  add_output(g, "w", TensorProto::FLOAT, {2});
  return model;
}

TEST(onnx_optional, KnownConditionTakesOnlyItsBranch) {
  Result<Graph> graph = import_model(if_none_model(false));
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  for (const Node& node : graph->nodes) EXPECT_NE(node.op, "If");
  auto out = run_model(if_none_model(false), {{"x", kX}});
  EXPECT_TRUE(out["w"].same_as(Tensor::from_vector<float>({2}, {-1.5f, 2})));
  out = run_model(if_none_model(true), {{"x", kX}});
  EXPECT_TRUE(out["w"].same_as(kX));
}

// Branches that differ in presence are fine when the condition is known:
// here a bool initializer.
TEST(onnx_optional, KnownConditionJoinsBranchesThatDiffer) {
  onnx::ModelProto model = if_present_model();
  auto& g = *model.mutable_graph();
  g.mutable_input()->DeleteSubrange(0, 1);  // cond becomes an initializer
  auto* cond = g.add_initializer();
  cond->set_name("cond");
  cond->set_data_type(TensorProto::BOOL);
  cond->set_raw_data(std::string(1, '\1'));
  auto& else_branch = *g.mutable_node(0)->mutable_attribute(1)->mutable_g();
  else_branch.clear_node();
  add_empty_optional(else_branch, "e", "none");
  auto out = run_model(model, {{"x", kX}});
  EXPECT_TRUE(out["y"].same_as(kX));
  cond->set_raw_data(std::string(1, '\0'));  // the empty branch runs
  expect_refused(
      model, StatusCode::kUnsupported,
      {"[OptionalGetElement] node '#1' reads 'o'",
       "empty optional from the branch that [If] node 'choose' takes"});
}

// Ifs nested 40 deep, each on a known condition, each with a branch that
// reads an empty optional's element: each is replaced by the branch taken,
// in time and memory linear in the depth.
TEST(onnx_optional, NestedKnownConditionsInlineLinearly) {
  const int depth = 40;
  onnx::ModelProto model = make_model(18);
  onnx::GraphProto* graph = model.mutable_graph();
  add_input(*graph, "x", TensorProto::FLOAT, {2});
  add_output(*graph, "y0", TensorProto::FLOAT, {2});
  add_empty_optional(*graph, "v", "none");
  add_node(*graph, "OptionalHasElement", {"v"}, {"has"});
  for (int level = 0; level < depth; ++level) {
    std::string out = "y" + std::to_string(level);
    std::string inner = "y" + std::to_string(level + 1);
    auto& node =
        add_node(*graph, "If", {"has"}, {out}, "if" + std::to_string(level));
    auto& then_branch = add_graph_attr(node, "then_branch");
    add_node(then_branch, "OptionalGetElement", {"v"}, {"t" + out});
    add_output(then_branch, "t" + out, TensorProto::FLOAT, {2});
    graph = &add_graph_attr(node, "else_branch");
    add_output(*graph, inner, TensorProto::FLOAT, {2});
  }
  add_node(*graph, "Neg", {"x"}, {"y" + std::to_string(depth)});
  auto out = run_model(model, {{"x", kX}});
  EXPECT_TRUE(out["y0"].same_as(Tensor::from_vector<float>({2}, {-1.5f, 2})));
}

// Loop(M, cond, Optional(x)): the body adds 1 to the carried optional's
// element and wraps it again, so the carried value is present throughout.
onnx::ModelProto loop_model() {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  add_input(g, "m", TensorProto::INT64, {});
  add_input(g, "cond", TensorProto::BOOL, {});
  add_input(g, "x", TensorProto::FLOAT, {2});
  add_node(g, "Optional", {"x"}, {"o"});
  auto& loop = add_node(g, "Loop", {"m", "cond", "o"}, {"o_final"}, "loop");
  auto& body = add_graph_attr(loop, "body");
  add_input(body, "i", TensorProto::INT64, {});
  add_input(body, "c", TensorProto::BOOL, {});
  set_optional_type(*body.add_input(), "v", TensorProto::FLOAT, {2});
  add_float_initializer(body, "one", {}, {1});
  add_node(body, "Identity", {"c"}, {"c_out"});
  add_node(body, "OptionalGetElement", {"v"}, {"v_elem"});
  add_node(body, "Add", {"v_elem", "one"}, {"v_next"});
  add_node(body, "Optional", {"v_next"}, {"v_out"});
  add_output(body, "c_out", TensorProto::BOOL, {});
  set_optional_type(*body.add_output(), "v_out", TensorProto::FLOAT, {2});
  add_node(g, "OptionalGetElement", {"o_final"}, {"y"});
  add_output(g, "y", TensorProto::FLOAT, {2});
  return model;
}

TEST(onnx_optional, LoopCarriesAPresentOptional) {
  auto out = run_model(loop_model(), {{"m", Tensor::scalar<int64_t>(3)},
                                      {"cond", Tensor::scalar<bool>(true)},
                                      {"x", kX}});
  EXPECT_TRUE(out["y"].same_as(Tensor::from_vector<float>({2}, {4.5f, 1})));
}

TEST(onnx_optional, OptionalGraphInputRefusedAtItsReader) {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  set_optional_type(*g.add_input(), "x", TensorProto::FLOAT, {2});
  add_node(g, "OptionalHasElement", {"x"}, {"has"}, "has");
  add_output(g, "has", TensorProto::BOOL, {});
  expect_refused(model, StatusCode::kUnsupported,
                 {"graph 'g'", "[OptionalHasElement] node 'has' reads 'x'",
                  "optional graph input", "known only at run time",
                  "seqrt resolves optionals at import"});
}

TEST(onnx_optional, UnreadOptionalGraphInputRefused) {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  set_optional_type(*g.add_input(), "x", TensorProto::FLOAT, {2});
  add_input(g, "z", TensorProto::FLOAT, {2});
  add_node(g, "Relu", {"z"}, {"y"});
  add_output(g, "y", TensorProto::FLOAT, {2});
  expect_refused(model, StatusCode::kUnsupported,
                 {"graph input 'x' is an optional", "known only at run time"});
}

TEST(onnx_optional, GetElementOfEmptyRefused) {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  add_empty_optional(g, "e", "none");
  add_node(g, "OptionalGetElement", {"e"}, {"y"}, "get");
  add_output(g, "y", TensorProto::FLOAT, {2});
  expect_refused(
      model, StatusCode::kUnsupported,
      {"[OptionalGetElement] node 'get' reads 'e'",
       "empty optional made by [Optional] node 'none'", "no element to get"});
}

TEST(onnx_optional, OtherOpReadingEmptyRefused) {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  add_empty_optional(g, "e", "none");
  add_node(g, "Relu", {"e"}, {"y"}, "relu");
  add_output(g, "y", TensorProto::FLOAT, {2});
  expect_refused(model, StatusCode::kUnsupported,
                 {"[Relu] node 'relu' reads 'e'", "an empty optional"});
}

TEST(onnx_optional, EmptyGraphOutputRefused) {
  onnx::ModelProto model = make_model(18);
  auto& g = *model.mutable_graph();
  add_empty_optional(g, "e", "none");
  set_optional_type(*g.add_output(), "e", TensorProto::FLOAT, {2});
  expect_refused(model, StatusCode::kUnsupported,
                 {"graph output 'e' is an empty optional"});
}

TEST(onnx_optional, IfBranchesThatDifferRefused) {
  onnx::ModelProto model = if_present_model();
  auto& node = *model.mutable_graph()->mutable_node(0);
  auto& else_branch = *node.mutable_attribute(1)->mutable_g();
  else_branch.clear_node();
  add_empty_optional(else_branch, "e", "none");
  expect_refused(model, StatusCode::kUnsupported,
                 {"[If] node 'choose' output 'o'",
                  "present in then_branch and empty in else_branch",
                  "cannot know which branch runs"});
}

TEST(onnx_optional, LoopCarryingAnEmptyOptionalRefused) {
  onnx::ModelProto model = loop_model();
  auto& g = *model.mutable_graph();
  g.mutable_node(0)->clear_input();  // Optional() : empty on entry
  expect_refused(model, StatusCode::kUnsupported,
                 {"[Loop] node 'loop' carries 'o'", "present on entry"});
}

TEST(onnx_optional, LoopBodyEmptyingItsCarriedValueRefused) {
  onnx::ModelProto model = loop_model();
  auto& body = *model.mutable_graph()
                    ->mutable_node(1)
                    ->mutable_attribute(0)
                    ->mutable_g();
  body.mutable_node(3)->clear_input();  // v_out = Optional()
  expect_refused(model, StatusCode::kUnsupported,
                 {"[Loop] node 'loop' body output 'v_out' is an empty optional",
                  "present in every iteration"});
}

// Malformed nodes are errors, never crashes.
TEST(onnx_optional, MalformedNodesAreErrors) {
  struct Case {
    const char* op;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    const char* expected;
  };
  std::vector<Case> cases = {
      {"Optional", {"x", "x"}, {"o"}, "takes 0 to 1 input(s)"},
      {"Optional", {"x"}, {}, "makes 1 output"},
      {"OptionalHasElement", {"x"}, {"a", "b"}, "makes 1 output"},
      {"OptionalGetElement", {}, {"y"}, "takes 1 to 1 input(s)"},
      {"OptionalGetElement", {""}, {"y"}, "no input to get the element of"},
      {"OptionalGetElement", {"nowhere"}, {"y"}, "no graph input"},
      {"OptionalHasElement", {"nowhere"}, {"y"}, "no graph input"},
  };
  for (const Case& c : cases) {
    onnx::ModelProto model = make_model(18);
    auto& g = *model.mutable_graph();
    add_input(g, "x", TensorProto::FLOAT, {2});
    add_node(g, c.op, c.inputs, c.outputs, "bad");
    add_output(g, "x", TensorProto::FLOAT, {2});
    SCOPED_TRACE(c.expected);
    expect_refused(model, StatusCode::kInvalidModel,
                   {std::string("[") + c.op + "] node 'bad'", c.expected});
  }
}

// An If or Loop without its subgraphs is folded as any node; its own check
// then refuses it.
TEST(onnx_optional, ControlFlowWithoutSubgraphsIsAnError) {
  for (const char* op : {"If", "Loop"}) {
    onnx::ModelProto model = make_model(18);
    auto& g = *model.mutable_graph();
    add_input(g, "cond", TensorProto::BOOL, {});
    add_node(g, op, {"cond", "cond"}, {"y"}, "bad");
    add_output(g, "y", TensorProto::FLOAT, {2});
    EXPECT_FALSE(import_model(model).is_ok()) << op;
  }
}

}  // namespace
}  // namespace seqrt
