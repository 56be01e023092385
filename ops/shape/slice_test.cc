#include <gtest/gtest.h>

#include <limits>

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
using op_testing::values_of;

constexpr int64_t kBig = std::numeric_limits<int64_t>::max();
constexpr int64_t kSmall = std::numeric_limits<int64_t>::min();

TEST(Slice, SlicesWithAxesAndSteps) {
  Tensor x = iota(DType::kF32, {3, 4});
  auto out = run_op(
      "Slice", {x, ints({1, 0}), ints({3, kBig}), ints({0, 1}), ints({1, 2})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{4, 6, 8, 10}));
}

TEST(Slice, NegativeStepsReverse) {
  Tensor x = iota(DType::kI64, {5});
  auto all =
      run_op("Slice", {x, ints({-1}), ints({kSmall}), ints({0}), ints({-1})});
  ASSERT_TRUE(all.is_ok()) << all.status().to_string();
  EXPECT_EQ(values_of((*all)[0]), (std::vector<double>{4, 3, 2, 1, 0}));
  auto some = run_op("Slice", {x, ints({10}), ints({0}), Tensor(), ints({-2})});
  ASSERT_TRUE(some.is_ok());
  EXPECT_EQ(values_of((*some)[0]), (std::vector<double>{4, 2}));
}

TEST(Slice, ClampsAndAllowsEmptyResults) {
  Tensor x = iota(DType::kF32, {4});
  auto clamped = run_op("Slice", {x, ints({-100}), ints({100})});
  ASSERT_TRUE(clamped.is_ok());
  EXPECT_EQ((*clamped)[0].dims(), (std::vector<int64_t>{4}));
  auto empty = run_op("Slice", {x, ints({3}), ints({1})});
  ASSERT_TRUE(empty.is_ok());
  EXPECT_EQ((*empty)[0].dims(), (std::vector<int64_t>{0}));
  auto huge_step =
      run_op("Slice", {x, ints({1}), ints({4}), ints({0}), ints({kSmall})});
  ASSERT_TRUE(huge_step.is_ok());
  EXPECT_EQ((*huge_step)[0].dims(), (std::vector<int64_t>{0}));
}

TEST(Slice, RejectsBadArguments) {
  Tensor x = iota(DType::kF32, {4, 4});
  auto zero = run_op("Slice", {x, ints({0}), ints({2}), ints({0}), ints({0})});
  ASSERT_FALSE(zero.is_ok());
  EXPECT_NE(zero.status().message().find("[Slice]"), std::string::npos);
  EXPECT_FALSE(run_op("Slice", {x, ints({0}), ints({2}), ints({2})}).is_ok());
  EXPECT_FALSE(
      run_op("Slice", {x, ints({0, 0}), ints({2, 2}), ints({1, -1})}).is_ok());
  EXPECT_FALSE(run_op("Slice", {x, ints({0, 0}), ints({2})}).is_ok());
}

TEST(Slice, InfersDims) {
  Tensor starts = ints({0, 2});
  Tensor ends = ints({kBig, 6});
  Tensor axes = ints({1, -1});
  auto out =
      infer_op("Slice", {typed(DType::kF32, Shape({sym("b"), sym("s"), 8})),
                         known(starts), known(ends), known(axes)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("b"), sym("s"), 4}));
  // Unknown starts: only the sliced axes become unknown.
  Tensor last = ints({-1});
  auto partial =
      infer_op("Slice", {typed(DType::kF32, Shape({3, 8})),
                         typed(DType::kI64, Shape({1})),
                         typed(DType::kI64, Shape({1})), known(last)});
  ASSERT_TRUE(partial.is_ok()) << partial.status().to_string();
  EXPECT_EQ(*partial->outputs[0].shape, Shape({3, Dim::unknown()}));
  auto no_axes = infer_op("Slice", {typed(DType::kF32, Shape({3, 8})),
                                    typed(DType::kI64, Shape({1})),
                                    typed(DType::kI64, Shape({1}))});
  ASSERT_TRUE(no_axes.is_ok());
  EXPECT_EQ(*no_axes->outputs[0].shape, Shape({Dim::unknown(), 8}));
  Tensor zero_step = ints({0});
  EXPECT_FALSE(
      infer_op("Slice", {typed(DType::kF32, Shape({3})), known(zero_step),
                         known(last), omitted(), known(zero_step)})
          .is_ok());
}

}  // namespace
}  // namespace seqrt
