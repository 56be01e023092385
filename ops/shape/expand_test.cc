#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::f32;
using op_testing::infer_op;
using op_testing::ints;
using op_testing::known;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(Expand, BroadcastsBothWays) {
  Tensor x = f32({3, 1}, {1, 2, 3});
  auto out = run_op("Expand", {x, ints({2, 1, 2})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(values_of((*out)[0]),
            (std::vector<double>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  auto smaller = run_op("Expand", {x, ints({4})});
  ASSERT_TRUE(smaller.is_ok());
  EXPECT_EQ((*smaller)[0].dims(), (std::vector<int64_t>{3, 4}));
}

TEST(Expand, RejectsIncompatibleShapes) {
  Tensor x = f32({3}, {1, 2, 3});
  auto bad = run_op("Expand", {x, ints({2})});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("[Expand]"), std::string::npos);
  EXPECT_FALSE(run_op("Expand", {x, ints({-1, 3})}).is_ok());
}

TEST(Expand, InfersShapes) {
  Tensor shape = ints({1, 4, 1});
  auto out = infer_op(
      "Expand", {typed(DType::kF32, Shape({sym("b"), 1, 8})), known(shape)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("b"), 4, 8}));
  auto partial = infer_op("Expand", {typed(DType::kF32, Shape({1, 8})),
                                     typed(DType::kI64, Shape({3}))});
  ASSERT_TRUE(partial.is_ok());
  EXPECT_EQ(*partial->outputs[0].shape,
            Shape({Dim::unknown(), Dim::unknown(), 8}));
}

}  // namespace
}  // namespace seqrt
