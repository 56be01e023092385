#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::f32;
using op_testing::i64;
using op_testing::infer_types;
using op_testing::info;
using op_testing::run_ok;
using op_testing::run_op;
using op_testing::sym;

TEST(Mod, IntegerRemainderTakesTheDivisorsSign) {
  Tensor a = i64({4}, {7, -7, 7, -7});
  Tensor b = i64({4}, {3, 3, -3, -3});
  expect_values(run_ok("Mod", {a, b}), {1, 2, -2, -1});
}

TEST(Mod, FmodTakesTheDividendsSign) {
  Tensor a = i64({4}, {7, -7, 7, -7});
  Tensor b = i64({4}, {3, 3, -3, -3});
  expect_values(run_ok("Mod", {a, b}, {{"fmod", 1}}), {1, -1, 1, -1});
  Tensor x = f32({3}, {5.5f, -5.5f, 4.0f});
  Tensor y = f32({1}, {2.0f});
  expect_values(run_ok("Mod", {x, y}, {{"fmod", 1}}), {1.5, -1.5, 0});
}

TEST(Mod, BroadcastsAndKeepsTheDtype) {
  Tensor a = Tensor::from_vector<int32_t>({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor b = Tensor::from_vector<int32_t>({3}, {2, 3, -4});
  Tensor c = run_ok("Mod", {a, b});
  EXPECT_EQ(c.dtype(), DType::kI32);
  EXPECT_EQ(c.dims(), (std::vector<int64_t>{2, 3}));
  expect_values(c, {0, 1, -2, 1, 1, -3});
}

TEST(Mod, LowestByMinusOneIsZero) {
  int64_t lowest = std::numeric_limits<int64_t>::min();
  Tensor a = i64({1}, {lowest});
  Tensor b = i64({1}, {-1});
  expect_values(run_ok("Mod", {a, b}), {0});
  expect_values(run_ok("Mod", {a, b}, {{"fmod", 1}}), {0});
}

TEST(Mod, Errors) {
  expect_error(run_op("Mod", {i64({2}, {1, 2}), i64({2}, {1, 0})}).status(),
               {"[Mod] node 'test'", "by zero", "element 1"});
  Tensor x = f32({1}, {1});
  expect_error(run_op("Mod", {x, x}).status(), {"[Mod]", "fmod=1", "f32"});
  expect_error(run_op("Mod", {x, i64({1}, {1})}, {{"fmod", 1}}).status(),
               {"[Mod]", "f32", "i64"});
  expect_error(
      run_op("Mod", {i64({1}, {1}), i64({1}, {1})}, {{"fmod", 2}}).status(),
      {"[Mod]", "'fmod'", "2"});
  expect_error(infer_types("Mod", {info(DType::kF16, Shape{2}),
                                   info(DType::kF16, Shape{2})})
                   .status(),
               {"[Mod]", "fmod=1"});
}

TEST(Mod, InferenceBroadcasts) {
  auto out = infer_types("Mod", {info(DType::kI64, Shape{sym("n"), 1}),
                                 info(DType::kI64, Shape{4})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kI64);
  EXPECT_EQ((*out)[0].shape, (Shape{sym("n"), 4}));
}

}  // namespace
}  // namespace seqrt
