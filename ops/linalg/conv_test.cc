#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::f32;
using op_testing::infer_op;
using op_testing::iota;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(Conv, OneDimensionalWithBiasAndPads) {
  Tensor x = f32({1, 1, 4}, {1, 2, 3, 4});
  Tensor w = f32({1, 1, 3}, {1, 0, -1});
  Tensor b = f32({1}, {10});
  auto out = run_op("Conv", {x, w, b}, {{"pads", std::vector<int64_t>{1, 1}}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 1, 4}));
  // Padded x = 0 1 2 3 4 0; y[i] = x[i] - x[i+2] + 10.
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{8, 8, 8, 13}));
}

TEST(Conv, TwoDimensionalStridesAndDilations) {
  Tensor x = iota(DType::kF32, {1, 1, 5, 5});
  Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  auto out = run_op("Conv", {x, w},
                    {{"strides", std::vector<int64_t>{2, 2}},
                     {"dilations", std::vector<int64_t>{2, 2}}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  // Dilated kernel covers 3x3; outputs at rows/cols 0 and 2.
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 1, 2, 2}));
  // Top-left: x[0,0]+x[0,2]+x[2,0]+x[2,2] = 0+2+10+12.
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{24, 32, 64, 72}));
}

TEST(Conv, GroupedDepthwise) {
  // Two channels, group=2: each channel convolved with its own kernel.
  Tensor x = f32({1, 2, 3}, {1, 2, 3, 10, 20, 30});
  Tensor w = f32({2, 1, 2}, {1, 1, 1, -1});
  auto out = run_op("Conv", {x, w}, {{"group", Attribute(2)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{3, 5, -10, -10}));
}

TEST(Conv, SameUpperAndLowerPutTheOddPadAtOppositeEnds) {
  Tensor x = f32({1, 1, 4}, {1, 2, 3, 4});
  Tensor w = f32({1, 1, 2}, {1, 10});
  auto upper = run_op("Conv", {x, w}, {{"auto_pad", Attribute("SAME_UPPER")}});
  auto lower = run_op("Conv", {x, w}, {{"auto_pad", Attribute("SAME_LOWER")}});
  ASSERT_TRUE(upper.is_ok() && lower.is_ok());
  EXPECT_EQ(values_of((*upper)[0]), (std::vector<double>{21, 32, 43, 4}));
  EXPECT_EQ(values_of((*lower)[0]), (std::vector<double>{10, 21, 32, 43}));
  auto valid = run_op(
      "Conv", {x, w},
      {{"auto_pad", Attribute("VALID")}, {"strides", std::vector<int64_t>{2}}});
  ASSERT_TRUE(valid.is_ok());
  EXPECT_EQ(values_of((*valid)[0]), (std::vector<double>{21, 43}));
}

TEST(Conv, InfersShapes) {
  auto fixed = infer_op("Conv",
                        {typed(DType::kF32, Shape({1, 3, 32, 32})),
                         typed(DType::kF32, Shape({8, 3, 3, 3}))},
                        {{"strides", std::vector<int64_t>{2, 2}},
                         {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  ASSERT_TRUE(fixed.is_ok()) << fixed.status().to_string();
  EXPECT_EQ(*fixed->outputs[0].shape, Shape({1, 8, 16, 16}));
  // A causal 1-D conv over a symbolic sequence keeps the symbol when the
  // pads add up to kernel - 1.
  auto causal =
      infer_op("Conv",
               {typed(DType::kF32, Shape({sym("b"), 4, sym("seq")})),
                typed(DType::kF32, Shape({4, 1, 4}))},
               {{"group", Attribute(4)}, {"pads", std::vector<int64_t>{3, 0}}});
  ASSERT_TRUE(causal.is_ok()) << causal.status().to_string();
  EXPECT_EQ(*causal->outputs[0].shape, Shape({sym("b"), 4, sym("seq")}));
  auto strided = infer_op("Conv",
                          {typed(DType::kF32, Shape({1, 4, sym("seq")})),
                           typed(DType::kF32, Shape({2, 4, 3}))},
                          {{"strides", std::vector<int64_t>{2}}});
  ASSERT_TRUE(strided.is_ok());
  EXPECT_EQ(*strided->outputs[0].shape, Shape({1, 2, Dim::unknown()}));
}

TEST(Conv, RejectsBadShapesAndAttributes) {
  Tensor x = f32({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  auto channels = run_op("Conv", {x, f32({1, 3, 1}, {1, 1, 1})});
  ASSERT_FALSE(channels.is_ok());
  EXPECT_NE(channels.status().message().find("[Conv]"), std::string::npos);
  Tensor w = f32({1, 2, 2}, {1, 1, 1, 1});
  EXPECT_FALSE(
      run_op("Conv", {x, w}, {{"strides", std::vector<int64_t>{0}}}).is_ok());
  EXPECT_FALSE(
      run_op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1}}}).is_ok());
  EXPECT_FALSE(
      run_op("Conv", {x, w}, {{"kernel_shape", std::vector<int64_t>{3}}})
          .is_ok());
  EXPECT_FALSE(
      run_op("Conv", {x, f32({1, 2, 4}, {1, 1, 1, 1, 1, 1, 1, 1})}).is_ok());
  EXPECT_FALSE(run_op("Conv", {x, w, f32({2}, {1, 2})}).is_ok());
  Tensor empty_kernel = Tensor::allocate(DType::kF32, {1, 2, 0}).value();
  EXPECT_FALSE(run_op("Conv", {x, empty_kernel}).is_ok());
  EXPECT_FALSE(
      run_op("Conv", {x, w}, {{"group", Attribute(int64_t{1} << 62)}}).is_ok());
  EXPECT_FALSE(run_op("Conv", {x, w},
                      {{"dilations", std::vector<int64_t>{int64_t{1} << 47}}})
                   .is_ok());
  Tensor xi = Tensor::from_vector<int32_t>({1, 1, 1}, {1});
  EXPECT_FALSE(run_op("Conv", {xi, xi}).is_ok());
}

}  // namespace
}  // namespace seqrt
