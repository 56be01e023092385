// CPU elementwise kernels against the reference kernels: every broadcast
// layout the kernel treats differently (same shape, scalar on either side,
// row, column, general, empty, vector tails), IEEE edge values and
// f16/bf16. The f64 and integer forms are in elementwise_typed_test.cc.
#include <gtest/gtest.h>

#include <limits>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

void expect_binary(const char* op, std::vector<int64_t> a,
                   std::vector<int64_t> b, uint64_t seed,
                   DType dtype = DType::kF32, double tol = 1e-6) {
  SCOPED_TRACE(std::string(op) + " " + dims_to_string(a) + " " +
               dims_to_string(b));
  expect_matches_reference(
      kOnnxDomain, op,
      {uniform(a, seed, -2, 2, dtype), uniform(b, seed + 1, 0.5, 2, dtype)}, {},
      tol);
}

TEST(CpuElementwise, BinaryBroadcastLayouts) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      layouts = {
          {{37}, {37}},       {{4, 33}, {}},        {{}, {4, 33}},
          {{5, 3, 67}, {67}}, {{5, 3, 67}, {3, 1}}, {{2, 1, 4, 9}, {3, 1, 9}},
          {{1, 19}, {23, 1}}, {{0, 5}, {5}},        {{3, 1000}, {3, 1000}}};
  uint64_t seed = 1;
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"}) {
    for (const auto& [a, b] : layouts) expect_binary(op, a, b, seed += 2);
  }
}

TEST(CpuElementwise, HalfPrecisionBinary) {
  expect_binary("Add", {3, 17}, {17}, 50, DType::kF16, 1e-3);
  expect_binary("Mul", {3, 17}, {3, 1}, 52, DType::kBF16, 1e-2);
}

TEST(CpuElementwise, VariadicMaxFoldsEveryInput) {
  expect_matches_reference(
      kOnnxDomain, "Max",
      {uniform({4, 5}, 60), uniform({5}, 61), uniform({4, 1}, 62)}, {}, 0);
  expect_matches_reference(kOnnxDomain, "Min", {uniform({4, 5}, 63)}, {}, 0);
}

TEST(CpuElementwise, MaxMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = op_testing::f32({3}, {nan, 1.0f, 2.0f});
  Tensor b = op_testing::f32({3}, {0.0f, nan, 1.0f});
  for (const char* op : {"Max", "Min"}) {
    auto out = run_cpu(op, {a, b});
    ASSERT_TRUE(out.is_ok());
    EXPECT_TRUE(std::isnan((*out)[0].element_f64(0)));
    EXPECT_TRUE(std::isnan((*out)[0].element_f64(1)));
  }
}

TEST(CpuElementwise, PowExponents) {
  Tensor x = uniform({4, 9}, 70, 0.1, 3);
  for (float e : {2.0f, 0.5f, -1.5f, 3.0f}) {
    expect_matches_reference(kOnnxDomain, "Pow", {x, Tensor::scalar<float>(e)},
                             {}, 1e-6);
  }
  Tensor negative = uniform({9}, 71, -3, 3);
  expect_matches_reference(kOnnxDomain, "Pow",
                           {negative, op_testing::i64({1}, {3})}, {}, 1e-6);
}

// Values that reach every branch of the vector math: zeros, tails of the
// exp/log range, and the IEEE specials.
Tensor edge_values() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,    -0.0f,  1e-30f,  -1e-30f, 1e-3f,
                          -1e-3f,  0.5f,   -0.5f,   3.0f,    -3.0f,
                          20.0f,   -20.0f, 87.0f,   -87.0f,  89.0f,
                          -104.0f, 200.0f, -200.0f, inf,     -inf};
  for (int i = 0; i < 61; ++i) v.push_back(-6.0f + 0.2f * i);
  return op_testing::f32({static_cast<int64_t>(v.size())}, v);
}

TEST(CpuElementwise, UnaryOpsOnEdgeValues) {
  Tensor x = edge_values();
  Tensor positive = uniform({100}, 80, 1e-4, 50);
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg",
                         "Abs", "Reciprocal", "Erf", "Softplus"}) {
    SCOPED_TRACE(op);
    expect_matches_reference(kOnnxDomain, op, {x}, {}, 2e-6);
    expect_matches_reference(kOnnxDomain, op, {positive}, {}, 2e-6);
  }
  for (const char* approximate : {"none", "tanh"}) {
    SCOPED_TRACE(approximate);
    expect_matches_reference(kOnnxDomain, "Gelu", {x},
                             {{"approximate", approximate}}, 2e-6);
  }
}

TEST(CpuElementwise, LargeInputsRunInParallelChunks) {
  Tensor x = uniform({3, 70001}, 90, -5, 5);
  expect_matches_reference(kOnnxDomain, "Sigmoid", {x}, {}, 2e-6);
  expect_matches_reference(kOnnxDomain, "Add", {x, uniform({70001}, 91)}, {},
                           1e-6);
}

TEST(CpuElementwise, BroadcastErrors) {
  op_testing::expect_error(
      run_cpu("Add", {uniform({2, 3}, 1), uniform({4}, 2)}).status(),
      {"[Add]", "cannot be broadcast"});
}

}  // namespace
}  // namespace seqrt::cpu
