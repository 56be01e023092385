#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::ints;
using op_testing::iota;
using op_testing::known;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(Unsqueeze, InsertsDimsAtOutputAxes) {
  Tensor x = iota(DType::kF32, {3, 4});
  auto out = run_op("Unsqueeze", {x, ints({0, -1})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 3, 4, 1}));
  EXPECT_EQ(values_of((*out)[0]), values_of(x));
  auto middle = run_op("Unsqueeze", {x, ints({1, 3})});
  ASSERT_TRUE(middle.is_ok());
  EXPECT_EQ((*middle)[0].dims(), (std::vector<int64_t>{3, 1, 4, 1}));
  auto scalar = run_op("Unsqueeze", {Tensor::scalar<float>(2), ints({0})});
  ASSERT_TRUE(scalar.is_ok());
  EXPECT_EQ((*scalar)[0].dims(), (std::vector<int64_t>{1}));
}

TEST(Unsqueeze, RejectsBadAxes) {
  Tensor x = iota(DType::kF32, {3});
  auto range = run_op("Unsqueeze", {x, ints({2})});
  ASSERT_FALSE(range.is_ok());
  EXPECT_NE(range.status().message().find("[Unsqueeze]"), std::string::npos);
  EXPECT_FALSE(run_op("Unsqueeze", {x, ints({0, 0})}).is_ok());
  EXPECT_FALSE(run_op("Unsqueeze", {x, ints({0, -3})}).is_ok());
}

TEST(Unsqueeze, InfersShapes) {
  Tensor axes = ints({1});
  auto out = infer_op("Unsqueeze",
                      {typed(DType::kF32, Shape({sym("b"), 8})), known(axes)});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("b"), 1, 8}));
  auto rank_only = infer_op("Unsqueeze", {typed(DType::kF32, Shape({2})),
                                          typed(DType::kI64, Shape({2}))});
  ASSERT_TRUE(rank_only.is_ok());
  EXPECT_EQ(rank_only->outputs[0].shape->rank(), 3u);
}

}  // namespace
}  // namespace seqrt
