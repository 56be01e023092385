#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::f32;
using op_testing::infer_types;
using op_testing::info;
using op_testing::run_ok;
using op_testing::run_op;

TEST(Binary, ArithmeticWithBroadcasting) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor row = f32({3}, {10, 20, 30});
  Tensor y = run_ok("Add", {a, row});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3}));
  expect_values(y, {11, 22, 33, 14, 25, 36});
  expect_values(run_ok("Sub", {a, row}), {-9, -18, -27, -6, -15, -24});
  expect_values(run_ok("Mul", {a, row}), {10, 40, 90, 40, 100, 180});
  expect_values(run_ok("Div", {a, f32({}, {2})}), {0.5, 1, 1.5, 2, 2.5, 3});

  // (2,1) with (1,3) grows both ways.
  Tensor col = f32({2, 1}, {1, 2});
  Tensor y2 = run_ok("Mul", {col, f32({1, 3}, {1, 10, 100})});
  EXPECT_EQ(y2.dims(), (std::vector<int64_t>{2, 3}));
  expect_values(y2, {1, 10, 100, 2, 20, 200});
}

TEST(Binary, IntegerArithmeticIsExactInInt64) {
  int64_t big = (int64_t{1} << 53) + 1;
  Tensor a = Tensor::from_vector<int64_t>({2}, {big, -7});
  Tensor b = Tensor::from_vector<int64_t>({2}, {1, 2});
  EXPECT_EQ(run_ok("Add", {a, b}).element_i64(0), big + 1);
  EXPECT_EQ(run_ok("Mul", {a, b}).element_i64(0), big);
  // Division truncates toward zero.
  Tensor q = run_ok("Div", {a, b});
  EXPECT_EQ(q.element_i64(1), -3);
  Tensor q2 = run_ok("Div", {Tensor::from_vector<int32_t>({2}, {7, -7}),
                             Tensor::from_vector<int32_t>({2}, {-2, -2})});
  EXPECT_EQ(q2.dtype(), DType::kI32);
  EXPECT_EQ(q2.element_i64(0), -3);
  EXPECT_EQ(q2.element_i64(1), 3);
  // Overflow wraps instead of being undefined.
  Tensor lowest = Tensor::from_vector<int64_t>(
      {1}, {std::numeric_limits<int64_t>::lowest()});
  Tensor minus_one = Tensor::from_vector<int64_t>({1}, {-1});
  EXPECT_EQ(run_ok("Div", {lowest, minus_one}).element_i64(0),
            std::numeric_limits<int64_t>::lowest());
}

TEST(Binary, IntegerDivisionByZeroIsAnError) {
  Tensor a = Tensor::from_vector<int32_t>({2}, {1, 2});
  Tensor b = Tensor::from_vector<int32_t>({2}, {1, 0});
  expect_error(run_op("Div", {a, b}).status(),
               {"[Div] node 'test'", "division by zero", "element 1"});
  // Float division by zero is IEEE infinity.
  expect_values(run_ok("Div", {f32({1}, {1}), f32({1}, {0})}),
                {std::numeric_limits<double>::infinity()});
}

TEST(Binary, PowMixesDtypes) {
  Tensor y = run_ok(
      "Pow", {f32({2}, {2, 4}), Tensor::from_vector<int64_t>({2}, {3, -1})});
  EXPECT_EQ(y.dtype(), DType::kF32);
  expect_values(y, {8, 0.25});
  Tensor base = Tensor::from_vector<int32_t>({4}, {3, 2, -1, 1});
  Tensor exponent = Tensor::from_vector<int64_t>({4}, {4, -1, -3, -5});
  Tensor z = run_ok("Pow", {base, exponent});
  EXPECT_EQ(z.dtype(), DType::kI32);
  expect_values(z, {81, 0, -1, 1});
  // An integer base with a float exponent truncates the real result.
  expect_values(
      run_ok("Pow", {Tensor::from_vector<int64_t>({1}, {10}), f32({1}, {0.5})}),
      {3});
  expect_error(run_op("Pow", {Tensor::from_vector<int64_t>({1}, {0}),
                              Tensor::from_vector<int64_t>({1}, {-1})})
                   .status(),
               {"[Pow]", "negative power"});
  expect_error(
      run_op("Pow", {Tensor::from_vector<uint8_t>({1}, {2}), f32({1}, {2})})
          .status(),
      {"[Pow]", "base 'X' must be", "got u8"});
}

TEST(Binary, VariadicMaxMinSum) {
  Tensor a = f32({2, 2}, {1, 5, 3, 7});
  Tensor b = f32({2}, {4, 2});
  Tensor c = f32({}, {3});
  expect_values(run_ok("Max", {a, b, c}), {4, 5, 4, 7});
  expect_values(run_ok("Min", {a, b, c}), {1, 2, 3, 2});
  expect_values(run_ok("Sum", {a, b, c}), {8, 10, 10, 12});
  expect_values(run_ok("Sum", {b}), {4, 2});
  Tensor nan = f32({1}, {std::nanf("")});
  EXPECT_TRUE(std::isnan(run_ok("Max", {nan, f32({1}, {1})}).element_f64(0)));
  Tensor ints = Tensor::from_vector<int64_t>({2}, {-3, 9});
  Tensor m = run_ok("Max", {ints, Tensor::from_vector<int64_t>({1}, {0})});
  EXPECT_EQ(m.element_i64(0), 0);
  EXPECT_EQ(m.element_i64(1), 9);
  expect_error(run_op("Sum", {ints}).status(), {"[Sum]", "got i64"});
}

TEST(Binary, LogicalOps) {
  Tensor a = Tensor::from_vector<bool>({4}, {false, false, true, true});
  Tensor b = Tensor::from_vector<bool>({4}, {false, true, false, true});
  expect_values(run_ok("And", {a, b}), {0, 0, 0, 1});
  expect_values(run_ok("Or", {a, b}), {0, 1, 1, 1});
  expect_values(run_ok("Xor", {a, b}), {0, 1, 1, 0});
  EXPECT_EQ(run_ok("And", {a, b}).dtype(), DType::kBool);
  expect_error(run_op("Or", {f32({1}, {1}), f32({1}, {0})}).status(),
               {"[Or]", "must be bool"});
}

TEST(Binary, MismatchedDtypesAndShapesAreErrors) {
  Tensor x = f32({2}, {1, 2});
  Tensor i = Tensor::from_vector<int64_t>({2}, {1, 2});
  expect_error(run_op("Add", {x, i}).status(),
               {"[Add] node 'test'", "same dtype", "f32", "i64"});
  expect_error(
      run_op("Mul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({4}, {1, 2, 3, 4})})
          .status(),
      {"[Mul] node 'test'", "cannot be broadcast"});
  expect_error(infer_types("Add", {info(DType::kF32, Shape{2}),
                                   info(DType::kI64, Shape{2})})
                   .status(),
               {"[Add] node 'test'", "same dtype"});
}

TEST(Binary, InferenceBroadcastsSymbolicShapes) {
  auto out =
      infer_types("Add", {info(DType::kF32, Shape{Dim::symbol("batch"), 1, 3}),
                          info(DType::kF32, Shape{4, 1})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, (Shape{Dim::symbol("batch"), 4, 3}));

  out = infer_types("Max", {info(DType::kF16, Shape{Dim::symbol("seq")}),
                            info(DType::kF16, Shape{1}),
                            info(DType::kF16, Shape{Dim::symbol("seq")})});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].dtype, DType::kF16);
  EXPECT_EQ((*out)[0].shape, (Shape{Dim::symbol("seq")}));

  out = infer_types(
      "Pow", {info(DType::kF32, std::nullopt), info(DType::kI32, Shape{3})});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].dtype, DType::kF32);
  EXPECT_FALSE((*out)[0].shape.has_value());

  // Fixed sizes that clash are an error even next to an unknown rank.
  expect_error(infer_types("Sum", {info(DType::kF32, Shape{2}),
                                   info(DType::kF32, Shape{3}),
                                   info(DType::kF32, std::nullopt)})
                   .status(),
               {"[Sum]", "cannot be broadcast"});
}

}  // namespace
}  // namespace seqrt
