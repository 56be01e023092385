#include "compiler/quantize/quantize_weights.h"

#include <gtest/gtest.h>

#include <cmath>

#include "backends/reference/reference_backend.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "ops/linalg/quantized_linear.h"
#include "testing/random_tensor.h"

namespace seqrt {
namespace {

constexpr int64_t kK = 40, kN = 24, kOut = 10;  // K crosses a block edge

// x (3, K) -> MatMul(w1: K x N) -> Relu -> Gemm(w2: out x N, transB, bias)
// -> y: a hidden layer and an output layer.
Graph two_layers() {
  GraphBuilder b("two_layers");
  ValueId x = b.input("x", DType::kF32, Shape{3, kK});
  ValueId w1 = b.constant("w1", random_uniform_f32({kK, kN}, 1));
  ValueId w2 = b.constant("w2", random_uniform_f32({kOut, kN}, 2));
  ValueId bias = b.constant("bias", random_uniform_f32({kOut}, 3));
  NodeOptions hidden;
  hidden.name = "hidden";
  ValueId h = b.add("Relu", {b.add("MatMul", {x, w1}, {}, hidden)});
  NodeOptions head;
  head.name = "head";
  b.output(b.add("Gemm", {h, w2, bias}, {{"transB", int64_t{1}}}, head), "y");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

const Node* find(const Graph& graph, const std::string& name) {
  for (const Node& node : graph.nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

Tensor run(const Graph& graph, const Tensor& x) {
  auto compiled = create_reference_backend()->compile(graph, CompileOptions{});
  EXPECT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto out = (*compiled)->run({x});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return (*out)[0];
}

// Each dequantised weight of the quantized node is within half a step of
// the f32 one.
void expect_within_half_a_step(const Graph& graph, const Node& node,
                               const Tensor& original, bool transposed) {
  const Tensor& codes = *graph.constant(node.inputs[kLinearW]);
  const Tensor& scales = *graph.constant(node.inputs[kLinearWScale]);
  const Tensor* zeros = node.inputs[kLinearWZeroPoint] == kNoValue
                            ? nullptr
                            : graph.constant(node.inputs[kLinearWZeroPoint]);
  const int64_t bits = node.attrs.at("bits").as_int();
  const int64_t block = node.attrs.at("block_size").as_int();
  const int64_t k = node.attrs.at("K").as_int();
  const int64_t n = codes.dim(0), blocks = scales.dim(1);
  for (int64_t col = 0; col < n; ++col) {
    const uint8_t* row = codes.data_as<uint8_t>() + col * codes.dim(1);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t b = col * blocks + i / block;
      const int zero =
          zeros ? zeros->data_as<uint8_t>()[b] : default_zero_point(bits);
      const float scale = scales.data_as<float>()[b];
      const float real = (quantized_code(row, i, bits) - zero) * scale;
      const float want = transposed ? original.data_as<float>()[col * k + i]
                                    : original.data_as<float>()[i * n + col];
      ASSERT_LE(std::fabs(real - want), 0.5f * scale + 1e-6f)
          << "column " << col << ", row " << i;
    }
  }
}

TEST(QuantizeWeights, HiddenLayersBecomeQuantizedLinearsTheOutputLayerStays) {
  for (int bits : {4, 8}) {
    for (bool symmetric : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << bits << " bits, symmetric " << symmetric);
      Graph graph = two_layers();
      const Tensor w1 = *graph.constant(graph.find_value("w1"));
      QuantizeOptions options;
      options.bits = bits;
      options.symmetric = symmetric;
      Result<QuantizeReport> report = quantize_weights(graph, options);
      ASSERT_TRUE(report.is_ok()) << report.status().to_string();
      ASSERT_EQ(report->quantized.size(), 1u);
      EXPECT_EQ(report->quantized[0].node, "hidden");
      ASSERT_EQ(report->kept.size(), 1u);
      EXPECT_NE(report->kept[0].find("output layer"), std::string::npos);
      const Node* hidden = find(graph, "hidden");
      ASSERT_NE(hidden, nullptr);
      EXPECT_EQ(hidden->op, "Linear");
      EXPECT_EQ(hidden->inputs[kLinearWZeroPoint] == kNoValue, symmetric);
      EXPECT_EQ(graph.find_value("w1"), kNoValue) << "the f32 weight is gone";
      EXPECT_LT(report->parameter_bytes_after, report->parameter_bytes_before);
      ASSERT_NO_FATAL_FAILURE(
          expect_within_half_a_step(graph, *hidden, w1, false));
      EXPECT_TRUE(infer_graph(graph).is_ok());
    }
  }
}

TEST(QuantizeWeights, OutputsStayCloseToTheF32Model) {
  const Tensor x = random_uniform_f32({3, kK}, 7);
  const Tensor want = run(two_layers(), x);
  for (int bits : {4, 8}) {
    Graph graph = two_layers();
    QuantizeOptions options;
    options.bits = bits;
    options.output_layer_bits = bits;  // both layers
    ASSERT_TRUE(quantize_weights(graph, options).is_ok());
    const Node* head = find(graph, "head");
    ASSERT_NE(head, nullptr);
    EXPECT_EQ(head->op, "Linear");
    EXPECT_NE(head->inputs[kLinearB], kNoValue) << "Gemm's bias kept";
    const Tensor got = run(graph, x);
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < want.num_elements(); ++i) {
      worst =
          std::max(worst, std::fabs(got.element_f64(i) - want.element_f64(i)));
      scale = std::max(scale, std::fabs(want.element_f64(i)));
    }
    // Relative to the outputs' size: 4 bits is coarse, 8 bits is fine.
    EXPECT_LT(worst / scale, bits == 8 ? 0.02 : 0.2) << bits << " bits";
    EXPECT_GT(worst, 0) << "the weights really changed";
  }
}

TEST(QuantizeWeights, Int8ActivationsStayCloseAndDifferFromWeightOnly) {
  const Tensor x = random_uniform_f32({3, kK}, 8);
  const Tensor want = run(two_layers(), x);
  Graph weight_only = two_layers();
  QuantizeOptions options;
  options.output_layer_bits = 8;
  ASSERT_TRUE(quantize_weights(weight_only, options).is_ok());
  Graph int8 = two_layers();
  options.activation_bits = 8;
  ASSERT_TRUE(quantize_weights(int8, options).is_ok());
  for (const char* name : {"hidden", "head"}) {
    EXPECT_EQ(find(int8, name)->attrs.at("activation_bits").as_int(), 8);
    EXPECT_EQ(find(weight_only, name)->attrs.count("activation_bits"), 0u);
  }
  const Tensor got = run(int8, x), weight_only_got = run(weight_only, x);
  double worst = 0, scale = 0, apart = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    worst = std::max(worst, std::fabs(got.element_f64(i) - want.element_f64(i)));
    apart = std::max(apart, std::fabs(got.element_f64(i) -
                                      weight_only_got.element_f64(i)));
    scale = std::max(scale, std::fabs(want.element_f64(i)));
  }
  EXPECT_LT(worst / scale, 0.03);
  EXPECT_GT(apart, 0) << "the activations were really quantized";
  options.activation_bits = 4;
  Graph bad = two_layers();
  EXPECT_NE(quantize_weights(bad, options).status().message().find(
                "activations take 8 bits"),
            std::string::npos);
}

TEST(QuantizeWeights, SkippedNodesStay) {
  Graph graph = two_layers();
  QuantizeOptions options;
  options.skip = {"w1"};
  options.output_layer_bits = 8;
  Result<QuantizeReport> report = quantize_weights(graph, options);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(find(graph, "hidden")->op, "MatMul");
  EXPECT_EQ(find(graph, "head")->op, "Linear");
}

TEST(QuantizeWeights, BadOptionsAreNamed) {
  Graph graph = two_layers();
  QuantizeOptions options;
  options.bits = 3;
  EXPECT_NE(quantize_weights(graph, options).status().message().find("3-bit"),
            std::string::npos);
  options.bits = 4;
  options.block_size = 48;
  EXPECT_NE(
      quantize_weights(graph, options).status().message().find("block size 48"),
      std::string::npos);
}

}  // namespace
}  // namespace seqrt
