// com.microsoft MatMulNBits → quantized seqrt::Linear: the unpacking of
// packed zero points and of odd K by hand, a whole import run against
// values computed by hand, and the refusals.
#include "importers/onnx/matmul_nbits.h"

#include <gtest/gtest.h>

#include "importers/onnx/onnx_test_util.h"
#include "ops/linalg/quantized_linear.h"
#include "runtime/session.h"

namespace seqrt {
namespace {

using namespace onnx_test;  // NOLINT: test helpers
using onnx::TensorProto;

TEST(MatMulNBits, Unpacks4BitZeroPointsWithRowsPaddedToAByte) {
  // N = 2 rows of 3 blocks: 2 bytes a row, the last high nibble padding.
  const uint8_t packed[] = {0x21, 0xF3, 0x54, 0xE6};
  EXPECT_EQ(unpack_zero_points(packed, 2, 3, 4),
            (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
}

TEST(MatMulNBits, Unpacks8BitZeroPointsOnePerByte) {
  const uint8_t packed[] = {7, 200, 128, 0};
  EXPECT_EQ(unpack_zero_points(packed, 2, 2, 8),
            (std::vector<uint8_t>{7, 200, 128, 0}));
}

TEST(MatMulNBits, OddKKeepsItsPadNibbleOutOfTheCodes) {
  // K = 5: 3 bytes a row, element 4 in the low nibble of byte 2.
  EXPECT_EQ(quantized_row_bytes(5, 4), 3);
  const uint8_t row[] = {0x10, 0x32, 0xF4};
  for (int64_t k = 0; k < 5; ++k) {
    EXPECT_EQ(quantized_code(row, k, 4), k) << "element " << k;
  }
  // Blobs of 2 blocks x 8 bytes cropped to those 3 bytes a row.
  std::vector<uint8_t> blobs(2 * 16);
  for (size_t i = 0; i < blobs.size(); ++i) blobs[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(crop_weight_rows(blobs.data(), 2, 16, 3),
            (std::vector<uint8_t>{0, 1, 2, 16, 17, 18}));
}

void add_u8_initializer(onnx::GraphProto& graph, const std::string& name,
                        std::vector<int64_t> dims,
                        const std::vector<uint8_t>& bytes) {
  auto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(TensorProto::UINT8);
  for (int64_t d : dims) tensor->add_dims(d);
  tensor->set_raw_data(bytes.data(), bytes.size());
}

// y (1, 2) = x (1, 5) · W + bias, W 4-bit with K = 5 (odd, one short block
// of 16), N = 2; row n's codes are 0..4 (n = 0) and 15, 14, .. (n = 1).
onnx::ModelProto nbits_model(int64_t bits = 4, int64_t accuracy_level = 0) {
  onnx::ModelProto model = make_model(21);
  auto* ms = model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  auto& g = *model.mutable_graph();
  add_input(g, "x", TensorProto::FLOAT, {1, 5});
  std::vector<uint8_t> blobs(2 * 8, 0);
  blobs[0] = 0x10;
  blobs[1] = 0x32;
  blobs[2] = 0x04;
  blobs[8] = 0xEF;
  blobs[9] = 0xCD;
  blobs[10] = 0x0B;
  add_u8_initializer(g, "w_q", {2, 1, 8}, blobs);
  add_float_initializer(g, "w_scales", {2}, {0.5f, 0.25f});
  add_u8_initializer(g, "w_zp", {2, 1}, {0x02, 0x08});
  add_float_initializer(g, "bias", {2}, {1.0f, -1.0f});
  onnx::NodeProto& node =
      add_node(g, "MatMulNBits", {"x", "w_q", "w_scales", "w_zp", "", "bias"},
               {"y"}, "mm");
  node.set_domain("com.microsoft");
  set_int_attr(node, "K", 5);
  set_int_attr(node, "N", 2);
  set_int_attr(node, "bits", bits);
  set_int_attr(node, "block_size", 16);
  set_int_attr(node, "accuracy_level", accuracy_level);
  add_output(g, "y", TensorProto::FLOAT, {1, 2});
  return model;
}

TEST(MatMulNBits, ImportsAsQuantizedLinearAndRuns) {
  Result<Graph> graph = import_model(nbits_model());
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_EQ(graph->nodes.size(), 1u);
  const Node& linear = graph->nodes[0];
  EXPECT_EQ(linear.domain, kSeqrtDomain);
  EXPECT_EQ(linear.op, "Linear");
  EXPECT_EQ(linear.attrs.at("bits").as_int(), 4);
  EXPECT_EQ(linear.attrs.at("K").as_int(), 5);
  const Tensor* w = graph->constant(linear.inputs[kLinearW]);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dims(), (std::vector<int64_t>{2, 3}));
  const Tensor* zp = graph->constant(linear.inputs[kLinearWZeroPoint]);
  ASSERT_NE(zp, nullptr);
  EXPECT_EQ(zp->dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(zp->data_as<uint8_t>()[1], 8);
  // The converted W, scales and zero points, and the bias; MatMulNBits'
  // own B, scales and zero points are gone.
  EXPECT_EQ(graph->constants.size(), 4u);
  EXPECT_EQ(graph->constant(graph->find_value("w_q")), nullptr);

  auto session = Session::create(std::move(*graph), SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  Tensor x = Tensor::from_vector<float>({1, 5}, {1, 2, 3, 4, 5});
  auto out = (*session)->run({{"x", x}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  // Row 0: codes 0..4, zp 2, scale 0.5: weights -1, -0.5, 0, 0.5, 1.
  // Row 1: codes 15..11, zp 8, scale 0.25: 1.75, 1.5, 1.25, 1, 0.75.
  const float y0 = 1.0f + (-1 - 1 + 0 + 2 + 5);
  const float y1 = -1.0f + (1.75f + 3 + 3.75f + 4 + 3.75f);
  const Tensor& y = out->at("y");
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 2}));
  EXPECT_FLOAT_EQ(y.data_as<float>()[0], y0);
  EXPECT_FLOAT_EQ(y.data_as<float>()[1], y1);
}

TEST(MatMulNBits, AccuracyLevel4RunsWithInt8Activations) {
  Result<Graph> graph = import_model(nbits_model(4, /*accuracy_level=*/4));
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->nodes[0].attrs.at("activation_bits").as_int(), 8);
  auto session = Session::create(std::move(*graph), SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  Tensor x = Tensor::from_vector<float>({1, 5}, {1, 2, 3, 4, 5});
  auto out = (*session)->run({{"x", x}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  // X's one block: scale 5/127, codes round(x·25.4) = 25, 51, 76, 102, 127.
  // Row 0: (code − zp) = -2..2, Σ·x codes = 255; row 1: 7..3, Σ = 1650.
  const float xs = 5.0f / 127.0f;
  const Tensor& y = out->at("y");
  EXPECT_NEAR(y.data_as<float>()[0], 1.0f + 0.5f * xs * 255, 1e-5);
  EXPECT_NEAR(y.data_as<float>()[1], -1.0f + 0.25f * xs * 1650, 1e-5);
  // Level 0 (unset) keeps X in f32.
  Result<Graph> f32 = import_model(nbits_model(4, 0));
  ASSERT_TRUE(f32.is_ok());
  EXPECT_EQ(f32->nodes[0].attrs.count("activation_bits"), 0u);
}

std::string import_error(const onnx::ModelProto& model) {
  Result<Graph> graph = import_model(model);
  return graph.is_ok() ? "" : graph.status().message();
}

TEST(MatMulNBits, RefusesWhatItCannotImport) {
  EXPECT_NE(import_error(nbits_model(2)).find("bits=2"), std::string::npos);

  onnx::ModelProto float_zp = nbits_model();
  auto& g = *float_zp.mutable_graph();
  for (auto& init : *g.mutable_initializer()) {
    if (init.name() == "w_zp") {
      init.set_data_type(TensorProto::FLOAT);
      init.set_raw_data(std::string(8, '\0'));
    }
  }
  EXPECT_NE(import_error(float_zp).find("zero_points"), std::string::npos)
      << import_error(float_zp);

  onnx::ModelProto g_idx = nbits_model();
  auto* gi = g_idx.mutable_graph()->add_initializer();
  gi->set_name("g_idx");
  gi->set_data_type(TensorProto::INT32);
  gi->add_dims(5);
  for (int v : {0, 0, 0, 1, 0}) gi->add_int32_data(v);
  g_idx.mutable_graph()->mutable_node(0)->set_input(4, "g_idx");
  EXPECT_NE(import_error(g_idx).find("g_idx"), std::string::npos);

  onnx::ModelProto runtime_b = nbits_model();
  add_input(*runtime_b.mutable_graph(), "w_q2", TensorProto::UINT8, {2, 1, 8});
  runtime_b.mutable_graph()->mutable_node(0)->set_input(1, "w_q2");
  EXPECT_NE(import_error(runtime_b).find("must be a constant"),
            std::string::npos);

  onnx::ModelProto bad_b = nbits_model();
  bad_b.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_i(40);
  EXPECT_NE(import_error(bad_b).find("(N, n_blocks, blob_size)"),
            std::string::npos)
      << import_error(bad_b);
}

}  // namespace
}  // namespace seqrt
