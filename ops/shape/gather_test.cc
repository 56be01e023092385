#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::i64;
using op_testing::infer_op;
using op_testing::iota;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(Gather, PicksRowsWithNegativeIndices) {
  Tensor data = iota(DType::kF32, {3, 2});
  auto out = run_op("Gather", {data, i64({2, 2}, {0, -1, 1, 2})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(values_of((*out)[0]),
            (std::vector<double>{0, 1, 4, 5, 2, 3, 4, 5}));
}

TEST(Gather, AlongInnerAxisWithScalarIndex) {
  Tensor data = iota(DType::kI32, {2, 3});
  auto out = run_op("Gather", {data, Tensor::scalar<int32_t>(-2)},
                    {{"axis", Attribute(1)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{1, 4}));
}

TEST(Gather, RejectsOutOfRangeIndices) {
  Tensor data = iota(DType::kF32, {3});
  auto high = run_op("Gather", {data, i64({1}, {3})});
  ASSERT_FALSE(high.is_ok());
  EXPECT_NE(high.status().message().find("[Gather]"), std::string::npos);
  EXPECT_NE(high.status().message().find("out of range"), std::string::npos);
  EXPECT_FALSE(run_op("Gather", {data, i64({1}, {-4})}).is_ok());
  EXPECT_FALSE(run_op("Gather", {data, op_testing::f32({1}, {0})}).is_ok());
  EXPECT_FALSE(run_op("Gather", {data, i64({1}, {0})}, {{"axis", Attribute(1)}})
                   .is_ok());
}

TEST(Gather, InfersShape) {
  auto out = infer_op("Gather",
                      {typed(DType::kF16, Shape({32000, 64})),
                       typed(DType::kI64, Shape({sym("batch"), sym("seq")}))});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out->outputs[0].dtype, DType::kF16);
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("batch"), sym("seq"), 64}));
  Tensor bad = op_testing::ints({0, 4});
  auto range = infer_op(
      "Gather", {typed(DType::kF32, Shape({4})), op_testing::known(bad)});
  ASSERT_FALSE(range.is_ok());
  EXPECT_NE(range.status().message().find("index 4"), std::string::npos);
  auto unknown = infer_op("Gather", {typed(DType::kF32, Shape({4})),
                                     typed(DType::kI64, std::nullopt)});
  ASSERT_TRUE(unknown.is_ok());
  EXPECT_FALSE(unknown->outputs[0].shape.has_value());
}

}  // namespace
}  // namespace seqrt
