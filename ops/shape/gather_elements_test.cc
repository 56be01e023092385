#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::f32;
using op_testing::i64;
using op_testing::infer_op;
using op_testing::run_op;
using op_testing::typed;
using op_testing::values_of;

TEST(GatherElements, PicksAlongAxis) {
  Tensor data = f32({2, 2}, {1, 2, 3, 4});
  auto out = run_op("GatherElements", {data, i64({2, 2}, {0, 0, 1, 0})},
                    {{"axis", Attribute(1)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{1, 1, 4, 3}));
  auto rows = run_op("GatherElements",
                     {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({1, 2}, {-1, 0})});
  ASSERT_TRUE(rows.is_ok());
  EXPECT_EQ(values_of((*rows)[0]), (std::vector<double>{5, 2}));
}

TEST(GatherElements, RejectsBadIndices) {
  Tensor data = f32({2, 2}, {1, 2, 3, 4});
  auto range = run_op("GatherElements", {data, i64({1, 1}, {2})});
  ASSERT_FALSE(range.is_ok());
  EXPECT_NE(range.status().message().find("[GatherElements]"),
            std::string::npos);
  EXPECT_FALSE(run_op("GatherElements", {data, i64({2}, {0, 1})}).is_ok());
  EXPECT_FALSE(
      run_op("GatherElements", {data, i64({1, 3}, {0, 0, 0})}).is_ok());
}

TEST(GatherElements, InfersIndicesShape) {
  auto out = infer_op("GatherElements",
                      {typed(DType::kF32, Shape({4, 5})),
                       typed(DType::kI64, Shape({Dim::symbol("k"), 5}))});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(*out->outputs[0].shape, Shape({Dim::symbol("k"), 5}));
  EXPECT_FALSE(infer_op("GatherElements", {typed(DType::kF32, Shape({4, 5})),
                                           typed(DType::kI64, Shape({4}))})
                   .is_ok());
}

}  // namespace
}  // namespace seqrt
