#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::infer_types;
using op_testing::info;
using op_testing::run_ok;
using op_testing::run_op;

TEST(Cast, FloatToIntegerTruncatesTowardZero) {
  Tensor x =
      Tensor::from_vector<float>({4}, {-1.7f, 2.9f, 0.0f, std::nanf("")});
  Tensor y = run_ok("Cast", {x}, {{"to", 6}});
  EXPECT_EQ(y.dtype(), DType::kI32);
  expect_values(y, {-1, 2, 0, 0});
}

TEST(Cast, IntoFloat8RoundsToNearestEvenAndSaturates) {
  Tensor x = Tensor::from_vector<float>(
      {4}, {1.0625f, 1.1875f, 1e6f, -std::numeric_limits<float>::infinity()});
  Tensor y = run_ok("Cast", {x}, {{"to", 17}});  // FLOAT8E4M3FN
  EXPECT_EQ(y.dtype(), DType::kF8E4M3FN);
  // 1.0625 and 1.1875 lie halfway between E4M3 neighbours: ties to even.
  expect_values(y, {1.0, 1.25, 448, -448});
  Tensor wrapped = run_ok("Cast", {x}, {{"to", 19}, {"saturate", 0}});
  EXPECT_EQ(wrapped.element_f64(2), std::numeric_limits<double>::infinity());
  Tensor nan = run_ok("Cast", {x}, {{"to", 18}, {"saturate", 0}});
  EXPECT_TRUE(std::isnan(nan.element_f64(2)));
  Tensor back = run_ok("Cast", {y}, {{"to", 10}});
  EXPECT_EQ(back.dtype(), DType::kF16);
  expect_values(back, {1.0, 1.25, 448, -448});
}

TEST(Cast, Int4TruncatesAndWrapsLikeNarrowIntegers) {
  Tensor x = Tensor::from_vector<float>({4}, {-9.0f, 7.9f, 8.0f, -2.5f});
  Tensor y = run_ok("Cast", {x}, {{"to", 22}});  // INT4
  EXPECT_EQ(y.dtype(), DType::kI4);
  EXPECT_EQ(y.byte_size(), 2u);
  expect_values(y, {7, 7, -8, -2});
  Tensor u = run_ok("Cast", {y}, {{"to", 2}});  // to uint8, wrapping
  expect_values(u, {7, 7, 248, 254});
}

TEST(Cast, IntoFloat8E8M0FollowsRoundMode) {
  Tensor x =
      Tensor::from_vector<float>({5}, {3.0f, 2.5f, -0.124f, 0.0f, 3e38f});
  Tensor up = run_ok("Cast", {x}, {{"to", 24}});  // FLOAT8E8M0, "up"
  EXPECT_EQ(up.dtype(), DType::kF8E8M0);
  EXPECT_EQ(up.byte_size(), 5u);
  expect_values(up, {4, 4, 0.125, std::ldexp(1.0, -127), std::ldexp(1.0, 127)});
  Tensor down = run_ok("Cast", {x}, {{"to", 24}, {"round_mode", "down"}});
  expect_values(down,
                {2, 2, 0.0625, std::ldexp(1.0, -127), std::ldexp(1.0, 127)});
  Tensor nearest = run_ok("Cast", {x}, {{"to", 24}, {"round_mode", "nearest"}});
  expect_values(nearest,
                {4, 2, 0.125, std::ldexp(1.0, -127), std::ldexp(1.0, 127)});
  // 3e38 rounds up past 2^127 (saturated above): NaN without saturation.
  Tensor nan = run_ok("Cast", {x}, {{"to", 24}, {"saturate", 0}});
  EXPECT_TRUE(std::isnan(nan.element_f64(4)));
  Tensor back = run_ok("Cast", {up}, {{"to", 10}});  // to float16
  expect_values(back,
                {4, 4, 0.125, 0, std::numeric_limits<double>::infinity()});
  expect_error(
      run_op("Cast", {x}, {{"to", 24}, {"round_mode", "sideways"}}).status(),
      {"[Cast]", "round_mode", "sideways"});
}

TEST(Cast, IntoFloat4E2M1RoundsToEvenAndSaturates) {
  Tensor x = Tensor::from_vector<float>(
      {5}, {2.5f, -3.5f, 100.0f, std::nanf(""), 0.3f});
  Tensor y = run_ok("Cast", {x}, {{"to", 23}, {"saturate", 0}});
  EXPECT_EQ(y.dtype(), DType::kF4E2M1);
  EXPECT_EQ(y.byte_size(), 3u);  // an odd count: the last byte half used
  // No infinity to overflow into, so saturation ignores `saturate`.
  expect_values(y, {2, -4, 6, -0.0, 0.5});
  Tensor ints = run_ok("Cast", {y}, {{"to", 3}});  // to int8, truncating
  expect_values(ints, {2, -4, 6, 0, 0});
  Tensor like = Tensor::allocate(DType::kF4E2M1, {0}).value();
  Tensor z = run_ok("CastLike", {ints, like});
  EXPECT_EQ(z.dtype(), DType::kF4E2M1);
  expect_values(z, {2, -4, 6, 0, 0});
}

TEST(Cast, ToAndFromBool) {
  Tensor x = Tensor::from_vector<float>({3}, {0.0f, -0.5f, 3.0f});
  Tensor b = run_ok("Cast", {x}, {{"to", 9}});
  EXPECT_EQ(b.dtype(), DType::kBool);
  expect_values(b, {0, 1, 1});
  Tensor f = run_ok("Cast", {b}, {{"to", 1}});
  EXPECT_EQ(f.dtype(), DType::kF32);
  expect_values(f, {0, 1, 1});
}

TEST(Cast, IntegersConvertExactly) {
  int64_t big = (int64_t{1} << 53) + 1;
  Tensor x = Tensor::from_vector<int64_t>({2}, {big, -300});
  Tensor same = run_ok("Cast", {x}, {{"to", 7}});
  EXPECT_EQ(same.element_i64(0), big);
  Tensor narrow = run_ok("Cast", {x}, {{"to", 3}});
  EXPECT_EQ(narrow.dtype(), DType::kI8);
  EXPECT_EQ(narrow.element_i64(1), static_cast<int8_t>(-300));
  Tensor u8 =
      run_ok("Cast", {Tensor::from_vector<uint8_t>({1}, {200})}, {{"to", 11}});
  EXPECT_EQ(u8.dtype(), DType::kF64);
  expect_values(u8, {200});
}

TEST(Cast, ToHalfTypesRounds) {
  Tensor x = Tensor::from_vector<double>({2}, {1.0 / 3.0, 1000.0});
  Tensor h = run_ok("Cast", {x}, {{"to", 10}});
  EXPECT_EQ(h.dtype(), DType::kF16);
  expect_values(h, {0.333251953125, 1000});
  Tensor b = run_ok("Cast", {x}, {{"to", 16}});
  EXPECT_EQ(b.dtype(), DType::kBF16);
  expect_values(b, {0.333984375, 1000});
}

TEST(Cast, AcceptsSaturate) {
  Tensor x = Tensor::from_vector<float>({1}, {1.5f});
  expect_values(run_ok("Cast", {x}, {{"to", 11}, {"saturate", 0}}), {1.5});
}

TEST(Cast, RejectsUnknownCodes) {
  Tensor x = Tensor::from_vector<float>({1}, {1});
  expect_error(run_op("Cast", {x}, {{"to", 8}}).status(),
               {"[Cast] node 'test'", "'to'", "8"});
  expect_error(run_op("Cast", {x}, {{"to", 0}}).status(), {"[Cast]", "0"});
  expect_error(run_op("Cast", {x}).status(), {"[Cast]", "'to'"});
  expect_error(
      infer_types("Cast", {info(DType::kF32, Shape{1})}, {{"to", 12}}).status(),
      {"[Cast]", "12"});
}

TEST(Cast, InferenceUsesTo) {
  Shape shape{Dim::symbol("batch"), 3};
  auto out = infer_types("Cast", {info(DType::kF32, shape)}, {{"to", 7}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kI64);
  EXPECT_EQ((*out)[0].shape, shape);
}

TEST(CastLike, ConvertsToTheSecondInputsDtype) {
  Tensor x = Tensor::from_vector<float>({3}, {-1.7f, 2.9f, 0.0f});
  Tensor like = Tensor::from_vector<int32_t>({1}, {0});
  Tensor y = run_ok("CastLike", {x, like});
  EXPECT_EQ(y.dtype(), DType::kI32);
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{3}));
  expect_values(y, {-1, 2, 0});
  Tensor half = Tensor::allocate(DType::kF16, {}).value();
  Tensor third = Tensor::from_vector<double>({1}, {1.0 / 3.0});
  Tensor h = run_ok("CastLike", {third, half});
  EXPECT_EQ(h.dtype(), DType::kF16);
  expect_values(h, {0.333251953125});
}

TEST(CastLike, AcceptsSaturateAndInfersFromTheTarget) {
  Tensor x = Tensor::from_vector<int64_t>({2}, {0, 5});
  Tensor like = Tensor::from_vector<bool>({1}, {true});
  Tensor y = run_ok("CastLike", {x, like}, {{"saturate", 0}});
  EXPECT_EQ(y.dtype(), DType::kBool);
  expect_values(y, {0, 1});
  Shape shape{Dim::symbol("batch"), 3};
  auto out = infer_types(
      "CastLike", {info(DType::kF32, shape), info(DType::kBF16, Shape{})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kBF16);
  EXPECT_EQ((*out)[0].shape, shape);
}

TEST(CastLike, RejectsMissingTarget) {
  Tensor x = Tensor::from_vector<float>({1}, {1});
  expect_error(run_op("CastLike", {x}).status(), {"CastLike", "input"});
}

}  // namespace
}  // namespace seqrt
