#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::ints;
using op_testing::known;
using op_testing::run_op;
using op_testing::typed;
using op_testing::values_of;

TEST(ConstantOfShape, DefaultsToFloatZero) {
  auto out = run_op("ConstantOfShape", {ints({2, 3})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype(), DType::kF32);
  EXPECT_EQ(values_of((*out)[0]), std::vector<double>(6, 0.0));
}

TEST(ConstantOfShape, FillsWithTheValueAndItsDtype) {
  AttrMap attrs = {{"value", Tensor::from_vector<int64_t>({1}, {-7})}};
  auto out = run_op("ConstantOfShape", {ints({3})}, attrs);
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].dtype(), DType::kI64);
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{-7, -7, -7}));
  auto scalar =
      run_op("ConstantOfShape", {Tensor::from_vector<int64_t>({0}, {})}, attrs);
  ASSERT_TRUE(scalar.is_ok());
  EXPECT_TRUE((*scalar)[0].dims().empty());
}

TEST(ConstantOfShape, RejectsBadInputs) {
  auto negative = run_op("ConstantOfShape", {ints({2, -1})});
  ASSERT_FALSE(negative.is_ok());
  EXPECT_NE(negative.status().message().find("[ConstantOfShape]"),
            std::string::npos);
  AttrMap two = {{"value", Tensor::from_vector<float>({2}, {1, 2})}};
  EXPECT_FALSE(run_op("ConstantOfShape", {ints({2})}, two).is_ok());
  EXPECT_FALSE(run_op("ConstantOfShape", {op_testing::f32({1}, {2})}).is_ok());
}

TEST(ConstantOfShape, InfersShape) {
  Tensor shape = ints({4, 5});
  auto out = infer_op("ConstantOfShape", {known(shape)},
                      {{"value", Tensor::from_vector<uint8_t>({1}, {1})}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(out->outputs[0].dtype, DType::kU8);
  EXPECT_EQ(*out->outputs[0].shape, Shape({4, 5}));
  auto rank = infer_op("ConstantOfShape", {typed(DType::kI64, Shape({3}))});
  ASSERT_TRUE(rank.is_ok());
  EXPECT_EQ(rank->outputs[0].shape->rank(), 3u);
}

}  // namespace
}  // namespace seqrt
