#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::infer_types;
using op_testing::info;
using op_testing::run_ok;
using op_testing::run_op;

TEST(LayerNormalization, HandComputedRows) {
  // Rows (1,3) and (2,4): means 2 and 3, variance 1 -> (-1, 1) each.
  Tensor x = Tensor::from_vector<float>({2, 2}, {1, 3, 2, 4});
  Tensor scale = Tensor::from_vector<float>({2}, {2, 1});
  Tensor bias = Tensor::from_vector<float>({2}, {0, 10});
  auto out =
      run_op("LayerNormalization", {x, scale, bias}, {{"epsilon", 0.0f}}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_values((*out)[0], {-2, 11, -2, 11}, 1e-6);
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ((*out)[1].dtype(), DType::kF32);
  expect_values((*out)[1], {2, 3});
  expect_values((*out)[2], {1, 1});
}

TEST(LayerNormalization, EpsilonAndNoBias) {
  Tensor x = Tensor::from_vector<double>({1, 2}, {0, 2});
  Tensor scale = Tensor::from_vector<double>({2}, {1, 1});
  double inv = 1.0 / std::sqrt(1.0 + 1e-5);
  Tensor y = run_ok("LayerNormalization", {x, scale});
  EXPECT_EQ(y.dtype(), DType::kF64);
  expect_values(y, {-inv, inv}, 1e-7);
}

TEST(LayerNormalization, AxisCoversTrailingDims) {
  // axis -2 of (1,2,2): one group of 4 values 1..4, mean 2.5, var 1.25.
  Tensor x = Tensor::from_vector<float>({1, 2, 2}, {1, 2, 3, 4});
  Tensor scale = Tensor::from_vector<float>({}, {1});
  auto out = run_op("LayerNormalization", {x, scale},
                    {{"axis", -2}, {"epsilon", 0.0f}}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  double inv = 1.0 / std::sqrt(1.25);
  expect_values((*out)[0], {-1.5 * inv, -0.5 * inv, 0.5 * inv, 1.5 * inv},
                1e-6);
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{1, 1, 1}));
  expect_values((*out)[1], {2.5});
  expect_values((*out)[2], {inv}, 1e-6);
}

TEST(LayerNormalization, Errors) {
  Tensor x = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor scale2 = Tensor::from_vector<float>({2}, {1, 1});
  expect_error(run_op("LayerNormalization", {x, scale2}).status(),
               {"[LayerNormalization] node 'test'", "input 'Scale'",
                "does not broadcast"});
  Tensor scale = Tensor::from_vector<float>({3}, {1, 1, 1});
  expect_error(run_op("LayerNormalization", {x, scale}, {{"axis", 2}}).status(),
               {"[LayerNormalization]", "axis 2"});
  expect_error(run_op("LayerNormalization",
                      {x, Tensor::from_vector<double>({3}, {1, 1, 1})})
                   .status(),
               {"[LayerNormalization]", "same dtype"});
  expect_error(
      run_op("LayerNormalization", {x, scale}, {{"stash_type", 7}}).status(),
      {"[LayerNormalization]", "stash_type"});
}

TEST(LayerNormalization, InferenceOfStatsShapes) {
  Shape x{Dim::symbol("batch"), Dim::symbol("seq"), 64};
  auto out = infer_types("LayerNormalization",
                         {info(DType::kF16, x), info(DType::kF16, Shape{64}),
                          info(DType::kF16, Shape{64})},
                         {}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF16);
  EXPECT_EQ((*out)[0].shape, x);
  EXPECT_EQ((*out)[1].dtype, DType::kF32);  // stash_type 1
  EXPECT_EQ((*out)[1].shape,
            (Shape{Dim::symbol("batch"), Dim::symbol("seq"), 1}));
  EXPECT_EQ((*out)[2].shape, (*out)[1].shape);

  out = infer_types(
      "LayerNormalization",
      {info(DType::kF32, std::nullopt), info(DType::kF32, Shape{8})}, {}, 2);
  ASSERT_TRUE(out.is_ok());
  EXPECT_FALSE((*out)[1].shape.has_value());

  expect_error(
      infer_types("LayerNormalization",
                  {info(DType::kF32, Shape{2, 8}), info(DType::kF32, Shape{4})})
          .status(),
      {"[LayerNormalization]", "does not broadcast"});
}

}  // namespace
}  // namespace seqrt
