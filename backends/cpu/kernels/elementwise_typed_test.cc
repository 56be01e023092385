// The f64 and integer elementwise kernels against the reference kernels:
// every numeric dtype through the broadcast layouts, two's-complement
// wrapping at the ends of each integer range, integer division and modulo
// (truncation, signs, lowest / -1, by zero), integer powers, and the
// scalar unary forms.
#include <gtest/gtest.h>

#include <limits>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

const DType kExactTypes[] = {DType::kF64, DType::kI8, DType::kU8, DType::kI32,
                             DType::kI64};

TEST(CpuElementwiseTyped, BinaryOpsOnEveryDtypeAndLayout) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      layouts = {{{37}, {37}},
                 {{4, 33}, {}},
                 {{}, {4, 33}},
                 {{5, 3, 67}, {67}},
                 {{2, 1, 4, 9}, {3, 1, 9}},
                 {{0, 5}, {5}}};
  uint64_t seed = 1;
  for (DType dtype : kExactTypes) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
      for (const auto& [a, b] : layouts) {
        SCOPED_TRACE(std::string(op) + " " + dtype_name(dtype) + " " +
                     dims_to_string(a) + " " + dims_to_string(b));
        // Divisors in [1, 100): never zero, also for u8.
        expect_matches_reference(kOnnxDomain, op,
                                 {uniform(a, seed, -100, 100, dtype),
                                  uniform(b, seed + 1, 1, 100, dtype)},
                                 {}, 0);
        seed += 2;
      }
    }
  }
}

TEST(CpuElementwiseTyped, IntegersWrapAndTruncate) {
  Tensor a = Tensor::from_vector<int8_t>({4}, {100, -128, -7, 7});
  Tensor b = Tensor::from_vector<int8_t>({4}, {100, -1, 2, -2});
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    SCOPED_TRACE(op);
    expect_matches_reference(kOnnxDomain, op, {a, b}, {}, 0);
  }
  auto sum = run_cpu("Add", {a, b});
  ASSERT_TRUE(sum.is_ok());
  EXPECT_EQ((*sum)[0].element_i64(0), -56);  // 200 wraps
  auto quotient = run_cpu("Div", {a, b});
  ASSERT_TRUE(quotient.is_ok());
  op_testing::expect_values((*quotient)[0], {1, -128, -3, -3});
  const int32_t lowest = std::numeric_limits<int32_t>::lowest();
  Tensor c = Tensor::from_vector<int32_t>({2}, {lowest, 65536});
  Tensor d = Tensor::from_vector<int32_t>({2}, {-1, 65536});
  expect_matches_reference(kOnnxDomain, "Div", {c, d}, {}, 0);
  expect_matches_reference(kOnnxDomain, "Mul", {c, d}, {}, 0);
}

TEST(CpuElementwiseTyped, IntegerDivisionByZeroIsAnError) {
  auto out = run_cpu(
      "Div", {op_testing::i64({2}, {1, 2}), op_testing::i64({2}, {1, 0})});
  op_testing::expect_error(out.status(), {"[Div]", "division by zero"});
}

TEST(CpuElementwiseTyped, VariadicSumAndMaxFoldEveryInput) {
  std::vector<Tensor> inputs = {uniform({4, 5}, 1, -3, 3, DType::kF64),
                                uniform({5}, 2, -3, 3, DType::kF64),
                                uniform({4, 1}, 3, -3, 3, DType::kF64)};
  expect_matches_reference(kOnnxDomain, "Sum", inputs, {}, 1e-15);
  expect_matches_reference(kOnnxDomain, "Sum", {uniform({3}, 4)}, {}, 0);
  expect_matches_reference(kOnnxDomain, "Max",
                           {uniform({4, 5}, 5, -9, 9, DType::kI32),
                            uniform({5}, 6, -9, 9, DType::kI32)},
                           {}, 0);
}

TEST(CpuElementwiseTyped, IntegerAndDoublePowers) {
  Tensor base = op_testing::iota(DType::kI32, {2, 5});
  expect_matches_reference(kOnnxDomain, "Pow",
                           {base, op_testing::i64({5}, {0, 1, 2, 3, -1})}, {},
                           0);
  expect_matches_reference(
      kOnnxDomain, "Pow",
      {op_testing::i64({4}, {-3, 2, 40, -1}), op_testing::f32({1}, {2.5f})}, {},
      0);
  expect_matches_reference(kOnnxDomain, "Pow",
                           {uniform({7}, 7, 0.1, 3, DType::kF64),
                            uniform({7}, 8, -2, 2, DType::kF64)},
                           {}, 1e-15);
  auto out =
      run_cpu("Pow", {op_testing::i64({1}, {0}), op_testing::i64({1}, {-1})});
  op_testing::expect_error(out.status(), {"[Pow]", "negative power"});
}

TEST(CpuElementwiseTyped, UnaryOpsInDouble) {
  Tensor x = uniform({64}, 9, -4, 4, DType::kF64);
  Tensor positive = uniform({64}, 10, 1e-3, 30, DType::kF64);
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg",
                         "Abs", "Reciprocal", "Erf", "Softplus", "Sign", "Sin",
                         "Cos", "Floor", "Ceil"}) {
    SCOPED_TRACE(op);
    expect_matches_reference(kOnnxDomain, op, {x}, {}, 0);
    expect_matches_reference(kOnnxDomain, op, {positive}, {}, 0);
  }
  expect_matches_reference(kOnnxDomain, "Gelu", {x}, {{"approximate", "tanh"}},
                           0);
}

TEST(CpuElementwiseTyped, IntegerUnaryForms) {
  Tensor i8 = Tensor::from_vector<int8_t>({5}, {-128, -3, 0, 5, 127});
  for (const char* op : {"Neg", "Abs", "Sign", "Relu"}) {
    SCOPED_TRACE(op);
    expect_matches_reference(kOnnxDomain, op, {i8}, {}, 0);
    expect_matches_reference(
        kOnnxDomain, op, {uniform({40}, 11, -1e6, 1e6, DType::kI64)}, {}, 0);
  }
  expect_matches_reference(kOnnxDomain, "Abs",
                           {uniform({9}, 12, 0, 255, DType::kU8)}, {}, 0);
  expect_matches_reference(kOnnxDomain, "Erf",
                           {uniform({9}, 13, -3, 3, DType::kI32)}, {}, 0);
}

TEST(CpuElementwiseTyped, ScalarUnaryOpsOnHalfTypes) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    Tensor x = uniform({3, 41}, 14, -6, 6, dtype);
    for (const char* op : {"Sign", "Sin", "Cos", "Floor", "Ceil"}) {
      SCOPED_TRACE(std::string(op) + " " + dtype_name(dtype));
      expect_matches_reference(kOnnxDomain, op, {x}, {}, 1e-6);
    }
  }
}

TEST(CpuElementwiseTyped, ModSignsAndErrors) {
  Tensor a = op_testing::i64({6}, {7, -7, 7, -7, 0, 5});
  Tensor b = op_testing::i64({6}, {3, 3, -3, -3, 4, -1});
  for (int64_t fmod : {0, 1}) {
    SCOPED_TRACE(fmod);
    expect_matches_reference(kOnnxDomain, "Mod", {a, b}, {{"fmod", fmod}}, 0);
  }
  auto floor_mod = run_cpu("Mod", {a, b});
  ASSERT_TRUE(floor_mod.is_ok());
  op_testing::expect_values((*floor_mod)[0], {1, 2, -2, -1, 0, 0});
  for (DType dtype : {DType::kI8, DType::kU8, DType::kI32}) {
    expect_matches_reference(
        kOnnxDomain, "Mod",
        {uniform({3, 8}, 15, -100, 100, dtype), uniform({8}, 16, 1, 20, dtype)},
        {}, 0);
  }
  for (DType dtype : {DType::kF64, DType::kF32, DType::kF16}) {
    expect_matches_reference(
        kOnnxDomain, "Mod",
        {uniform({3, 8}, 17, -9, 9, dtype), uniform({3, 1}, 18, 0.5, 3, dtype)},
        {{"fmod", int64_t{1}}}, 0);
  }
  auto by_zero = run_cpu("Mod", {a, op_testing::i64({1}, {0})});
  op_testing::expect_error(by_zero.status(), {"[Mod]", "modulo by zero"});
}

}  // namespace
}  // namespace seqrt::cpu
