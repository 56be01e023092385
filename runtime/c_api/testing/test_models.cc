#include "runtime/c_api/testing/test_models.h"

#include "runtime/c_api/testing/retention_graph.h"

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "importers/native/writer.h"
#include "importers/onnx/onnx_test_util.h"

namespace seqrt {

using c_api_test::kDim;
using c_api_test::kHeads;

Result<Graph> build_retention_test_graph() {
  GraphBuilder b("retention_model");
  ValueId x = b.input("x", DType::kF32, {1, kHeads, Dim::symbol("seq"), kDim});
  ValueId past = b.input("past_state", DType::kF32, {1, kHeads, kDim, kDim});
  std::vector<ValueId> qkv;
  for (int p = 0; p < 3; ++p) {
    std::vector<float> w(kDim * kDim);
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] = 0.3f * std::sin(static_cast<float>(i * 7 + p * 3));
    }
    ValueId weight = b.constant("w" + std::to_string(p),
                                Tensor::from_vector<float>({kDim, kDim}, w));
    qkv.push_back(b.add("MatMul", {x, weight}));
  }
  NodeOptions options;
  options.domain = kSeqrtDomain;
  options.output_names = {"retained", "present_state"};
  std::vector<ValueId> outs =
      b.add_node("Retention", {qkv[0], qkv[1], qkv[2], past}, {}, 2, options);
  b.output(b.add("Add", {x, outs[0]}), "y");
  b.output(outs[1]);
  b.state_pair(past, outs[1]);
  b.set_metadata("producer", "c_api_test");
  SEQRT_ASSIGN_OR_RETURN(Graph graph, std::move(b).build());
  SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  return graph;
}

}  // namespace seqrt

namespace c_api_test {

std::vector<uint8_t> retention_model_bytes() {
  seqrt::Result<seqrt::Graph> graph = seqrt::build_retention_test_graph();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  if (!graph.is_ok()) return {};
  seqrt::Result<std::vector<uint8_t>> bytes = seqrt::write_seqrt_buffer(*graph);
  EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  return bytes.is_ok() ? std::move(bytes).value() : std::vector<uint8_t>{};
}

std::vector<uint8_t> loop_model_bytes() {
  seqrt::GraphBuilder body("body");
  body.input("i", seqrt::DType::kI64, seqrt::Shape{});
  seqrt::ValueId cond =
      body.input("cond_in", seqrt::DType::kBool, seqrt::Shape{});
  seqrt::ValueId v = body.input("v", seqrt::DType::kF32, seqrt::Shape{2});
  seqrt::ValueId one = body.constant("one", seqrt::Tensor::scalar<float>(1.0f));
  body.output(body.add("Identity", {cond}), "cond_out");
  body.output(body.add("Add", {v, one}), "v_next");
  auto built_body = std::move(body).build();
  EXPECT_TRUE(built_body.is_ok()) << built_body.status().to_string();
  seqrt::GraphBuilder b("loop");
  seqrt::ValueId m = b.input("m", seqrt::DType::kI64, seqrt::Shape{});
  seqrt::ValueId v0 = b.input("v0", seqrt::DType::kF32, seqrt::Shape{2});
  seqrt::NodeOptions options;
  options.name = "loop0";
  auto outs = b.add_node(
      "Loop", {m, seqrt::kNoValue, v0},
      {{"body", std::make_shared<seqrt::Graph>(std::move(built_body).value())}},
      1, options);
  b.output(outs[0], "v_final");
  auto graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  auto bytes = seqrt::write_seqrt_buffer(*graph);
  EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  return bytes.is_ok() ? *bytes : std::vector<uint8_t>();
}

std::string onnx_relu_model_bytes() {
  namespace ot = seqrt::onnx_test;
  onnx::ModelProto model = ot::make_model(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  ot::add_input(graph, "x", onnx::TensorProto::FLOAT, {2, "n"});
  ot::add_node(graph, "Relu", {"x"}, {"y"}, "relu");
  ot::add_output(graph, "y", onnx::TensorProto::FLOAT, {2, "n"});
  return ot::serialize(model);
}

}  // namespace c_api_test
