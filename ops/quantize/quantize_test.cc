#include <gtest/gtest.h>

#include <cmath>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "ops/op_test_util.h"
#include "ops/registry.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::f32;
using op_testing::run_ok;
using op_testing::run_op;

Tensor u8(std::vector<int64_t> dims, std::vector<uint8_t> values) {
  return Tensor::from_vector<uint8_t>(std::move(dims), values);
}
Tensor i8(std::vector<int64_t> dims, std::vector<int8_t> values) {
  return Tensor::from_vector<int8_t>(std::move(dims), values);
}

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturates) {
  Tensor x = f32({6}, {0.5f, 1.5f, 2.5f, -1.0f, 300.0f, -0.5f});
  Tensor y = run_ok("QuantizeLinear", {x, Tensor::scalar<float>(1.0f)});
  EXPECT_EQ(y.dtype(), DType::kU8);  // no zero point, no output_dtype
  expect_values(y, {0, 2, 2, 0, 255, 0});
  Tensor zp = Tensor::scalar<int8_t>(-3);
  Tensor s = run_ok("QuantizeLinear", {x, Tensor::scalar<float>(0.5f), zp});
  expect_values(s, {-2, 0, 2, -5, 127, -4});
}

TEST(QuantizeLinear, Int4PerAxisAndBlocked) {
  Tensor x = f32({2, 4}, {1, 2, 3, 4, -1, -2, -30, 40});
  Tensor zp4 = Tensor::allocate(DType::kI4, {2}).value();
  Tensor y = run_ok("QuantizeLinear", {x, f32({2}, {1.0f, 2.0f}), zp4},
                    {{"axis", int64_t{0}}});
  EXPECT_EQ(y.dtype(), DType::kI4);
  EXPECT_EQ(y.byte_size(), 4u);
  expect_values(y, {1, 2, 3, 4, 0, -1, -8, 7});  // -0.5 -> 0 (even)

  // Blocks of 2 along axis 1: scale (2, 2).
  Tensor blocked = run_ok("QuantizeLinear", {x, f32({2, 2}, {1, 2, 1, 10})},
                          {{"axis", int64_t{1}},
                           {"block_size", int64_t{2}},
                           {"output_dtype", int64_t{21}}});
  EXPECT_EQ(blocked.dtype(), DType::kU4);
  expect_values(blocked, {1, 2, 2, 2, 0, 0, 0, 4});
}

TEST(QuantizeLinear, Float8HonoursSaturate) {
  Tensor x = f32({2}, {1000.0f, 0.3f});
  Tensor zp = Tensor::allocate(DType::kF8E4M3FN, {}).value();
  Tensor sat = run_ok("QuantizeLinear", {x, Tensor::scalar<float>(1.0f), zp});
  EXPECT_EQ(sat.element_f64(0), 448.0);
  EXPECT_EQ(sat.element_f64(1), 0.3125);  // nearest E4M3 value
  Tensor nan = run_ok("QuantizeLinear", {x, Tensor::scalar<float>(1.0f), zp},
                      {{"saturate", int64_t{0}}});
  EXPECT_TRUE(std::isnan(nan.element_f64(0)));
}

TEST(QuantizeLinear, Float4E2M1RoundsToEvenAndSaturates) {
  Tensor x = f32({2, 3}, {2.5f, 9.0f, -60.0f, 5.0f, -0.6f, 0.0f});
  Tensor zp = Tensor::allocate(DType::kF4E2M1, {2}).value();
  zp.set_element_f64(1, 0.5);
  Tensor y = run_ok("QuantizeLinear", {x, f32({2}, {1, 2}), zp},
                    {{"axis", int64_t{0}}, {"saturate", int64_t{0}}});
  EXPECT_EQ(y.dtype(), DType::kF4E2M1);
  EXPECT_EQ(y.byte_size(), 3u);
  // Row 1: 5/2 + 0.5 = 3; -0.6/2 + 0.5 = 0.2 -> 0; 0 + 0.5.
  expect_values(y, {2, 6, -6, 3, 0, 0.5});
  Tensor back = run_ok("DequantizeLinear", {y, f32({2}, {1, 2}), zp},
                       {{"axis", int64_t{0}}});
  expect_values(back, {2, 6, -6, 5, -1, 0});
}

TEST(QuantizeLinear, RefusesFloat8E8M0) {  // a scale format, Cast's only
  Tensor zp = Tensor::allocate(DType::kF8E8M0, {}).value();
  expect_error(run_op("QuantizeLinear",
                      {f32({1}, {1}), Tensor::scalar<float>(1.0f), zp}, {})
                   .status(),
               {"[QuantizeLinear]", "output 'y' must be", "got f8e8m0"});
}

TEST(QuantizeLinear, RefusesMismatchedScales) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_error(run_op("QuantizeLinear", {x, f32({2}, {1, 1})}, {}).status(),
               {"per-axis scale must be 1-D of length 3"});
  expect_error(run_op("QuantizeLinear", {x, f32({2, 1}, {1, 1})},
                      {{"block_size", int64_t{2}}})
                   .status(),
               {"must have dims (2,2)"});
  expect_error(run_op("QuantizeLinear",
                      {x, Tensor::scalar<float>(1.0f), u8({2}, {1, 2})}, {})
                   .status(),
               {"as many elements as y_scale"});
}

TEST(DequantizeLinear, PerTensorAxisAndBlocked) {
  Tensor y = run_ok("DequantizeLinear",
                    {u8({3}, {0, 10, 255}), Tensor::scalar<float>(0.5f),
                     Tensor::scalar<uint8_t>(10)});
  EXPECT_EQ(y.dtype(), DType::kF32);
  expect_values(y, {-5, 0, 122.5});

  Tensor w = Tensor::allocate(DType::kI4, {2, 3}).value();
  for (int64_t i = 0; i < 6; ++i) w.set_element_i64(i, i - 3);
  Tensor blocked = run_ok("DequantizeLinear", {w, f32({2, 2}, {1, 2, 3, 4})},
                          {{"axis", int64_t{1}}, {"block_size", int64_t{2}}});
  expect_values(blocked, {-3, -2, -2, 0, 3, 8});
  Tensor axis0 = run_ok("DequantizeLinear", {w, f32({2}, {1, 10})},
                        {{"axis", int64_t{0}}});
  expect_values(axis0, {-3, -2, -1, 0, 10, 20});
}

TEST(DequantizeLinear, Float8AndOutputDtype) {
  Tensor x = Tensor::allocate(DType::kF8E5M2, {2}).value();
  x.set_element_f64(0, -1.5);
  x.set_element_f64(1, 57344.0);
  Tensor y = run_ok("DequantizeLinear", {x, Tensor::scalar<float>(2.0f)},
                    {{"output_dtype", int64_t{10}}});
  EXPECT_EQ(y.dtype(), DType::kF16);
  EXPECT_EQ(y.element_f64(0), -3.0);
  EXPECT_TRUE(std::isinf(y.element_f64(1)));  // 114688 overflows f16
}

TEST(DynamicQuantizeLinear, ScaleAndZeroPointFromTheRange) {
  std::vector<Tensor> out =
      run_op("DynamicQuantizeLinear", {f32({3}, {-1.0f, 0.0f, 4.1f})}, {}, 3)
          .value();
  const float scale = 5.1f / 255.0f;
  EXPECT_FLOAT_EQ(out[1].data_as<float>()[0], scale);
  EXPECT_EQ(out[2].element_i64(0), 50);  // round(1 / 0.02)
  expect_values(out[0], {0, 50, 255});
  std::vector<Tensor> zeros =
      run_op("DynamicQuantizeLinear", {f32({2}, {0.0f, 0.0f})}, {}, 3).value();
  expect_values(zeros[0], {0, 0});
  EXPECT_EQ(zeros[1].data_as<float>()[0], 0.0f);
}

TEST(MatMulInteger, ZeroPointsPerRowAndPerColumn) {
  Tensor a = u8({2, 2}, {1, 2, 3, 4});
  Tensor b = u8({2, 2}, {5, 6, 7, 8});
  Tensor plain = run_ok("MatMulInteger", {a, b});
  EXPECT_EQ(plain.dtype(), DType::kI32);
  expect_values(plain, {19, 22, 43, 50});
  Tensor rows = run_ok("MatMulInteger",
                       {a, b, u8({2}, {1, 3}), Tensor::scalar<uint8_t>(5)});
  // (A - [[1],[3]]) = [[0,1],[0,1]]; (B - 5) = [[0,1],[2,3]].
  expect_values(rows, {2, 3, 2, 3});
  expect_error(run_op("MatMulInteger", {a, b, u8({3}, {1, 2, 3})}, {}).status(),
               {"a_zero_point must have 1 or 2 elements"});
}

TEST(QLinearMatMul, RequantizesTheProduct) {
  Tensor a = i8({1, 2}, {2, -4});
  Tensor b = i8({2, 1}, {3, 5});
  Tensor one = Tensor::scalar<float>(1.0f);
  Tensor y =
      run_ok("QLinearMatMul",
             {a, Tensor::scalar<float>(0.5f), Tensor::scalar<int8_t>(0), b, one,
              Tensor::scalar<int8_t>(1), one, Tensor::scalar<int8_t>(100)});
  // (2*2 + -4*4) * 0.5 = -6; + 100.
  EXPECT_EQ(y.dtype(), DType::kI8);
  expect_values(y, {94});
}

TEST(StorageOnlyTypes, OtherOpsRefuseThemAtTypeCheck) {
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kI4, Shape{4});
  b.output(b.add("Relu", {x}), "y");
  Graph graph = std::move(b).build().value();
  expect_error(infer_graph(graph),
               {"[Relu]", "input 'x' has dtype i4", "does not take"});

  GraphBuilder ok("g");
  ValueId w = ok.input("w", DType::kF8E4M3FN, Shape{4});
  ok.output(ok.add("Cast", {w}, {{"to", int64_t{1}}}), "y");
  Graph cast = std::move(ok).build().value();
  EXPECT_TRUE(infer_graph(cast).is_ok());
}

}  // namespace
}  // namespace seqrt
