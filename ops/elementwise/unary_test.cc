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

constexpr double kE = 2.718281828459045;
constexpr double kPi = 3.141592653589793;

TEST(Unary, FloatFunctionsOnHandValues) {
  expect_values(run_ok("Sqrt", {f32({2}, {4, 9})}), {2, 3});
  expect_values(run_ok("Exp", {f32({2}, {0, 1})}), {1, kE}, 1e-6);
  expect_values(run_ok("Log", {f32({2}, {1, static_cast<float>(kE)})}), {0, 1},
                1e-6);
  expect_values(run_ok("Reciprocal", {f32({2}, {4, -0.5})}), {0.25, -2});
  expect_values(run_ok("Erf", {f32({2}, {0, 1})}), {0, 0.8427007929}, 1e-6);
  expect_values(run_ok("Tanh", {f32({2}, {0, 1})}), {0, 0.7615941559}, 1e-6);
  expect_values(run_ok("Sin", {f32({2}, {0, static_cast<float>(kPi / 2)})}),
                {0, 1}, 1e-6);
  expect_values(run_ok("Cos", {f32({1}, {0})}), {1});
  expect_values(run_ok("Floor", {f32({3}, {-1.5, 1.5, 2})}), {-2, 1, 2});
  expect_values(run_ok("Ceil", {f32({3}, {-1.5, 1.5, 2})}), {-1, 2, 2});
  expect_values(run_ok("Abs", {f32({2}, {-3, 2})}), {3, 2});
  expect_values(run_ok("Neg", {f32({2}, {-3, 2})}), {3, -2});
}

TEST(Unary, ActivationsAreStableAtTheExtremes) {
  expect_values(run_ok("Sigmoid", {f32({3}, {0, -1000, 1000})}), {0.5, 0, 1});
  expect_values(run_ok("Softplus", {f32({3}, {0, 1000, -1000})}),
                {std::log(2.0), 1000, 0}, 1e-6);
  expect_values(run_ok("Relu", {f32({3}, {-1, 0, 2})}), {0, 0, 2});
}

TEST(Unary, GeluExactAndTanh) {
  Tensor x = f32({3}, {-1, 0, 1});
  expect_values(run_ok("Gelu", {x}), {-0.1586552539, 0, 0.8413447461}, 1e-6);
  expect_values(run_ok("Gelu", {x}, {{"approximate", "tanh"}}),
                {-0.1588080094, 0, 0.8411919906}, 1e-6);
  Result<std::vector<Tensor>> bad =
      run_op("Gelu", {x}, {{"approximate", "erf"}});
  expect_error(bad.status(), {"[Gelu]", "approximate"});
}

TEST(Unary, SignOfFloatsAndIntegers) {
  expect_values(run_ok("Sign", {f32({5}, {-2.5f, 0, 3, -0.0f, std::nanf("")})}),
                {-1, 0, 1, 0, std::nan("")});
  Tensor ints = Tensor::from_vector<int64_t>(
      {3}, {std::numeric_limits<int64_t>::min(), 0, 7});
  Tensor s = run_ok("Sign", {ints});
  EXPECT_EQ(s.dtype(), DType::kI64);
  expect_values(s, {-1, 0, 1});
  expect_values(run_ok("Sign", {Tensor::from_vector<uint8_t>({2}, {0, 200})}),
                {0, 1});
  expect_error(
      run_op("Sign", {Tensor::from_vector<bool>({1}, {true})}).status(),
      {"[Sign] node 'test'", "bool"});
}

TEST(Unary, IntegerInputsAreExact) {
  int64_t big = (int64_t{1} << 53) + 1;  // not representable in double
  Tensor x = Tensor::from_vector<int64_t>({3}, {-big, 5, 0});
  Tensor abs = run_ok("Abs", {x});
  EXPECT_EQ(abs.element_i64(0), big);
  Tensor neg = run_ok("Neg", {x});
  EXPECT_EQ(neg.element_i64(0), big);
  EXPECT_EQ(neg.element_i64(1), -5);
  Tensor relu = run_ok("Relu", {Tensor::from_vector<int8_t>({2}, {-7, 7})});
  EXPECT_EQ(relu.dtype(), DType::kI8);
  EXPECT_EQ(relu.element_i64(0), 0);
  EXPECT_EQ(relu.element_i64(1), 7);
  // The lowest value wraps like hardware negation, without overflow.
  Tensor lowest = Tensor::from_vector<int64_t>(
      {1}, {std::numeric_limits<int64_t>::lowest()});
  EXPECT_EQ(run_ok("Neg", {lowest}).element_i64(0),
            std::numeric_limits<int64_t>::lowest());
}

TEST(Unary, NotOnBool) {
  Tensor x = Tensor::from_vector<bool>({2}, {true, false});
  Tensor y = run_ok("Not", {x});
  EXPECT_EQ(y.dtype(), DType::kBool);
  expect_values(y, {0, 1});
}

TEST(Unary, KeepsTheInputDtype) {
  Tensor x = Tensor::allocate(DType::kF16, {2}).value();
  x.set_element_f64(0, 1.0);
  Tensor y = run_ok("Exp", {x});
  EXPECT_EQ(y.dtype(), DType::kF16);
  expect_values(y, {kE, 1}, 2e-3);
}

TEST(Unary, RejectsDtypesOnnxRejects) {
  Tensor i32 = Tensor::from_vector<int32_t>({1}, {4});
  expect_error(run_op("Sqrt", {i32}).status(),
               {"[Sqrt] node 'test'", "input 'X' must be", "got i32"});
  Tensor u8 = Tensor::from_vector<uint8_t>({1}, {4});
  expect_error(run_op("Neg", {u8}).status(), {"[Neg]", "got u8"});
  expect_error(run_op("Not", {f32({1}, {1})}).status(), {"[Not]", "bool"});
  expect_error(run_op("Relu", {u8}).status(), {"[Relu]", "got u8"});
}

TEST(Unary, InferenceKeepsSymbolsAndUnknownRanks) {
  Shape shape{Dim::symbol("batch"), Dim::unknown(), 8};
  auto out = infer_types("Tanh", {info(DType::kBF16, shape)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kBF16);
  EXPECT_EQ((*out)[0].shape, shape);

  out = infer_types("Abs", {info(DType::kI32, std::nullopt)});
  ASSERT_TRUE(out.is_ok());
  EXPECT_FALSE((*out)[0].shape.has_value());

  expect_error(infer_types("Exp", {info(DType::kI64, shape)}).status(),
               {"[Exp] node 'test'", "got i64"});
}

}  // namespace
}  // namespace seqrt
