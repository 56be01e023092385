#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::ints;
using op_testing::iota;
using op_testing::known;
using op_testing::omitted;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;

TEST(Squeeze, RemovesGivenOrAllUnitDims) {
  Tensor x = iota(DType::kF32, {1, 3, 1, 2});
  auto given = run_op("Squeeze", {x, ints({-2})});
  ASSERT_TRUE(given.is_ok()) << given.status().to_string();
  EXPECT_EQ((*given)[0].dims(), (std::vector<int64_t>{1, 3, 2}));
  auto all = run_op("Squeeze", {x});
  ASSERT_TRUE(all.is_ok());
  EXPECT_EQ((*all)[0].dims(), (std::vector<int64_t>{3, 2}));
}

TEST(Squeeze, RejectsNonUnitAndBadAxes) {
  Tensor x = iota(DType::kF32, {1, 3});
  auto size = run_op("Squeeze", {x, ints({1})});
  ASSERT_FALSE(size.is_ok());
  EXPECT_NE(size.status().message().find("[Squeeze]"), std::string::npos);
  EXPECT_FALSE(run_op("Squeeze", {x, ints({2})}).is_ok());
  EXPECT_FALSE(run_op("Squeeze", {x, ints({0, -2})}).is_ok());
}

TEST(Squeeze, InfersShapes) {
  Tensor axes = ints({0});
  auto out = infer_op(
      "Squeeze", {typed(DType::kF32, Shape({1, sym("s"), 4})), known(axes)});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("s"), 4}));
  // Without axes, a symbol might be 1: the rank is unknown.
  auto symbolic = infer_op(
      "Squeeze", {typed(DType::kF32, Shape({1, sym("s")})), omitted()});
  ASSERT_TRUE(symbolic.is_ok());
  EXPECT_FALSE(symbolic->outputs[0].shape.has_value());
  auto fixed = infer_op("Squeeze", {typed(DType::kF32, Shape({1, 5, 1}))});
  ASSERT_TRUE(fixed.is_ok());
  EXPECT_EQ(*fixed->outputs[0].shape, Shape({5}));
  EXPECT_FALSE(
      infer_op("Squeeze", {typed(DType::kF32, Shape({2, 5})), known(axes)})
          .is_ok());
}

}  // namespace
}  // namespace seqrt
