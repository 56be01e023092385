// Importing small ModelProtos built in C++: types, initializers, version
// conversion, unsupported ops, malformed input.
#include <gtest/gtest.h>

#include "importers/onnx/importer.h"
#include "importers/onnx/onnx_test_util.h"
#include "runtime/session.h"

namespace seqrt {
namespace {

using namespace onnx_test;  // NOLINT: test helpers
using onnx::TensorProto;

const Node* find_node(const Graph& graph, const std::string& op) {
  for (const Node& node : graph.nodes) {
    if (node.op == op) return &node;
  }
  return nullptr;
}

std::map<std::string, Tensor> run_graph(Graph graph,
                                        std::map<std::string, Tensor> feeds) {
  auto session = Session::create(std::move(graph), SessionOptions{});
  EXPECT_TRUE(session.is_ok()) << session.status().message();
  if (!session.is_ok()) return {};
  auto outputs = (*session)->run(feeds);
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().message();
  return outputs.is_ok() ? *outputs : std::map<std::string, Tensor>{};
}

onnx::ModelProto add_model() {
  onnx::ModelProto model = make_model(17);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {"batch", 3});
  add_float_initializer(g, "bias", {3}, {1, 2, 3});
  add_node(g, "Add", {"x", "bias"}, {"y"}, "add0");
  add_output(g, "y", TensorProto::FLOAT, {"batch", 3});
  return model;
}

TEST(onnx_import, SymbolicDimsInitializersAndMetadata) {
  onnx::ModelProto model = add_model();
  auto* prop = model.add_metadata_props();
  prop->set_key("author");
  prop->set_value("tests");
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_EQ(graph->inputs.size(), 1u);
  const Value& x = graph->value(graph->inputs[0]);
  EXPECT_EQ(x.dtype, DType::kF32);
  EXPECT_EQ(x.shape->to_string(), "(batch,3)");
  EXPECT_EQ(graph->constants.size(), 1u);
  EXPECT_EQ(graph->value(graph->outputs[0]).shape->to_string(), "(batch,3)");
  EXPECT_EQ(graph->metadata["author"], "tests");
  EXPECT_EQ(graph->nodes[0].name, "add0");

  Tensor input = Tensor::from_vector<float>({2, 3}, {0, 0, 0, 1, 1, 1});
  auto outputs = run_graph(std::move(*graph), {{"x", input}});
  EXPECT_TRUE(outputs["y"].same_as(
      Tensor::from_vector<float>({2, 3}, {1, 2, 3, 2, 3, 4})));
}

TEST(onnx_import, InputsThatAreInitializersBecomeConstants) {
  onnx::ModelProto model = add_model();
  add_input(*model.mutable_graph(), "bias", TensorProto::FLOAT, {3});
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->inputs.size(), 1u);
  EXPECT_TRUE(graph->is_constant(graph->find_value("bias")));
}

TEST(onnx_import, UnknownDimsAndMissingShapes) {
  onnx::ModelProto model = make_model(13);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {"?", 4});
  add_node(g, "Relu", {"x"}, {"y"});
  auto* out = g.add_output();
  out->set_name("y");
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->value(graph->inputs[0]).shape->to_string(), "(?,4)");
  EXPECT_EQ(graph->value(graph->outputs[0]).dtype, DType::kF32);
}

// ReduceMean takes axes as an attribute before opset 18, as an input since.
TEST(onnx_import, ReduceAxesAttributeBecomesAConstantInput) {
  Tensor input = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  std::map<int, Tensor> results;
  for (int opset : {13, 18}) {
    onnx::ModelProto model = make_model(opset);
    auto& g = *model.mutable_graph();
    add_input(g, "x", TensorProto::FLOAT, {2, 3});
    if (opset >= 18) {
      auto* axes = g.add_initializer();
      axes->set_name("axes");
      axes->set_data_type(TensorProto::INT64);
      axes->add_dims(1);
      axes->add_int64_data(1);
      add_node(g, "ReduceMean", {"x", "axes"}, {"y"}, "mean");
    } else {
      set_ints_attr(add_node(g, "ReduceMean", {"x"}, {"y"}, "mean"), "axes",
                    {1});
    }
    add_output(g, "y", TensorProto::FLOAT, {2, 1});
    Result<Graph> graph = import_model(model);
    ASSERT_TRUE(graph.is_ok())
        << "opset " << opset << ": " << graph.status().message();
    const Node* mean = find_node(*graph, "ReduceMean");
    ASSERT_NE(mean, nullptr);
    EXPECT_EQ(mean->inputs.size(), 2u);
    EXPECT_EQ(mean->attr("axes"), nullptr);
    EXPECT_TRUE(graph->is_constant(mean->inputs[1]));
    results[opset] = run_graph(std::move(*graph), {{"x", input}})["y"];
  }
  EXPECT_TRUE(results[13].same_as(Tensor::from_vector<float>({2, 1}, {2, 5})));
  EXPECT_TRUE(results[13].same_as(results[18]));
}

// ReduceSum already takes axes as an input at opset 13.
TEST(onnx_import, ReduceSumAtOpset13And18) {
  for (int opset : {13, 18}) {
    onnx::ModelProto model = make_model(opset);
    auto& g = *model.mutable_graph();
    add_input(g, "x", TensorProto::FLOAT, {2, 2});
    set_int_attr(add_node(g, "ReduceSum", {"x"}, {"y"}), "keepdims", 0);
    add_output(g, "y", TensorProto::FLOAT, {});
    Result<Graph> graph = import_model(model);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    auto out =
        run_graph(std::move(*graph),
                  {{"x", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}});
    EXPECT_EQ(out["y"].element_f64(0), 10.0);
  }
}

// Split before opset 18 cuts into as many parts as it has outputs.
TEST(onnx_import, SplitCountFromOutputsBeforeOpset18) {
  onnx::ModelProto model = make_model(13);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {4});
  add_node(g, "Split", {"x"}, {"a", "b"}, "split");
  add_output(g, "a", TensorProto::FLOAT, {2});
  add_output(g, "b", TensorProto::FLOAT, {2});
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Node* split = find_node(*graph, "Split");
  ASSERT_NE(split->attr("num_outputs"), nullptr);
  EXPECT_EQ(split->attr("num_outputs")->as_int(), 2);
  auto out = run_graph(std::move(*graph),
                       {{"x", Tensor::from_vector<float>({4}, {1, 2, 3, 4})}});
  EXPECT_TRUE(out["b"].same_as(Tensor::from_vector<float>({2}, {3, 4})));
}

// Exporters write `type {}` for outputs whose type they leave to inference
// (silero VAD's If branches): valid ONNX, imported as an untyped value.
TEST(onnx_import, AnEmptyTypeIsLeftToInference) {
  onnx::ModelProto model = make_model(17);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {2});
  add_node(g, "Relu", {"x"}, {"y"}, "relu0");
  onnx::ValueInfoProto* y = g.add_output();
  y->set_name("y");
  y->mutable_type();  // present and empty
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto outputs = run_graph(std::move(*graph),
                           {{"x", Tensor::from_vector<float>({2}, {-1, 2})}});
  EXPECT_TRUE(outputs["y"].same_as(Tensor::from_vector<float>({2}, {0, 2})));

  y->mutable_type()->mutable_sequence_type();  // a sequence stays refused
  Result<Graph> sequence = import_model(model);
  ASSERT_FALSE(sequence.is_ok());
  EXPECT_NE(sequence.status().message().find("is not a tensor"),
            std::string::npos);
}

// A Constant node becomes a constant only once its attributes check out
// (a 'value' of the wrong type crashed the kernel, found by fuzzing); else
// it stays a node and fails with the op's own error.
TEST(onnx_import, AConstantWithABadAttributeIsRefusedCleanly) {
  onnx::ModelProto model = make_model(17);
  auto& g = *model.mutable_graph();
  onnx::NodeProto& node = add_node(g, "Constant", {}, {"c"}, "c0");
  set_int_attr(node, "value", 3);  // must be a tensor
  add_output(g, "c", TensorProto::FLOAT, {});
  Result<Graph> graph = import_model(model);
  ASSERT_FALSE(graph.is_ok());
  EXPECT_NE(graph.status().message().find("[Constant] node 'c0'"),
            std::string::npos)
      << graph.status().message();
}

TEST(onnx_import, UnsupportedOpsAreListedTogether) {
  onnx::ModelProto model = make_model(17);
  auto* custom = model.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {2});
  add_node(g, "Frobnicate", {"x"}, {"a"}, "first");
  add_node(g, "Gelu", {"a"}, {"b"}, "too_new");  // Gelu arrives in opset 20
  add_node(g, "Mystery", {"b"}, {"c"}, "third").set_domain("com.example");
  add_output(g, "c", TensorProto::FLOAT, {2});
  Result<Graph> graph = import_model(model);
  ASSERT_FALSE(graph.is_ok());
  EXPECT_EQ(graph.status().code(), StatusCode::kUnsupported);
  const std::string message = graph.status().message();
  EXPECT_NE(message.find("3 node(s)"), std::string::npos) << message;
  EXPECT_NE(message.find("Frobnicate (domain 'ai.onnx', opset 17) in "
                         "[Frobnicate] node 'first'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Gelu (domain 'ai.onnx', opset 17)"),
            std::string::npos);
  EXPECT_NE(message.find("Mystery (domain 'com.example', opset 1) in "
                         "[Mystery] node 'third'"),
            std::string::npos);
}

// Opsets 7-12 go through the ONNX version converter to opset 13.
TEST(onnx_import, OldOpsetsAreConverted) {
  onnx::ModelProto model = add_model();
  model.mutable_opset_import(0)->set_version(11);
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto outputs =
      run_graph(std::move(*graph),
                {{"x", Tensor::from_vector<float>({1, 3}, {1, 1, 1})}});
  EXPECT_TRUE(
      outputs["y"].same_as(Tensor::from_vector<float>({1, 3}, {2, 3, 4})));

  // The converter crashes on a name nothing defines (found by fuzzing):
  // such a model is refused before it reaches it.
  onnx::ModelProto dangling = model;
  dangling.mutable_graph()->mutable_output(0)->set_name("nowhere");
  Result<Graph> refused = import_model(dangling);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("reads a name that no input"),
            std::string::npos)
      << refused.status().message();

  model.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  Result<Graph> failed = import_model(model);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_NE(failed.status().message().find(
                "uses ONNX opset 11; converting it to opset 13 failed"),
            std::string::npos)
      << failed.status().message();
}

TEST(onnx_import, OpsetsOutsideTheRangeAreRefused) {
  for (int opset : {6, 28}) {
    onnx::ModelProto model = add_model();
    model.mutable_opset_import(0)->set_version(opset);
    Result<Graph> graph = import_model(model);
    ASSERT_FALSE(graph.is_ok());
    EXPECT_NE(graph.status().message().find("opset " + std::to_string(opset)),
              std::string::npos);
  }
}

TEST(onnx_import, AiOnnxDomainNameIsTheDefaultDomain) {
  onnx::ModelProto model = add_model();
  model.mutable_opset_import(0)->set_domain("ai.onnx");
  model.mutable_graph()->mutable_node(0)->set_domain("ai.onnx");
  Result<Graph> graph = import_model(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->nodes[0].domain, "");
}

TEST(onnx_import, DanglingNamesAndBadModelsNameTheNode) {
  onnx::ModelProto dangling = add_model();
  dangling.mutable_graph()->mutable_node(0)->set_input(1, "nowhere");
  Result<Graph> a = import_model(dangling);
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("[Add] node 'add0' reads 'nowhere'"),
            std::string::npos)
      << a.status().message();

  onnx::ModelProto missing_output = add_model();
  missing_output.mutable_graph()->mutable_output(0)->set_name("z");
  EXPECT_FALSE(import_model(missing_output).is_ok());

  onnx::ModelProto twice = add_model();
  add_node(*twice.mutable_graph(), "Relu", {"x"}, {"y"}, "again");
  Result<Graph> b = import_model(twice);
  ASSERT_FALSE(b.is_ok());
  EXPECT_NE(b.status().message().find("defined twice"), std::string::npos);

  onnx::ModelProto bad_shape = add_model();
  bad_shape.mutable_graph()->mutable_initializer(0)->set_dims(0, 4);
  Result<Graph> c = import_model(bad_shape);
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("'bias'"), std::string::npos);

  onnx::ModelProto string_input = add_model();
  string_input.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(TensorProto::STRING);
  Result<Graph> d = import_model(string_input);
  ASSERT_FALSE(d.is_ok());
  EXPECT_NE(d.status().message().find("graph input 'x'"), std::string::npos);

  onnx::ModelProto no_graph;
  EXPECT_FALSE(import_model(no_graph).is_ok());
}

TEST(onnx_import, TruncatedAndGarbageBytesAreCleanErrors) {
  std::string bytes = serialize(add_model());
  int errors = 0;
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    Result<Graph> graph = import_onnx_buffer(
        reinterpret_cast<const uint8_t*>(bytes.data()), cut, "");
    if (graph.is_ok()) continue;  // a cut at a field boundary may parse
    ++errors;
    EXPECT_FALSE(graph.status().message().empty());
  }
  EXPECT_GT(errors, static_cast<int>(bytes.size()) / 2);

  std::string garbage(64, '\xff');
  Result<Graph> graph = import_onnx_buffer(
      reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size(), "");
  ASSERT_FALSE(graph.is_ok());
  EXPECT_NE(graph.status().message().find("truncated or corrupt"),
            std::string::npos);

  Result<Graph> missing = import_onnx_file("/nonexistent/model.onnx");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace seqrt
