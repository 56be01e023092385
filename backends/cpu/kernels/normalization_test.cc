// CPU LayerNormalization, RMSNormalization, Softmax and LogSoftmax against
// the reference: axes, wide rows with vector tails, parameters that vary by
// row, the optional statistics outputs, large logits, f16 and f64.
#include <gtest/gtest.h>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

TEST(CpuLayerNorm, AxesAndParameters) {
  Tensor x = uniform({3, 5, 67}, 1, -3, 3);
  expect_matches_reference(kOnnxDomain, "LayerNormalization",
                           {x, uniform({67}, 2), uniform({67}, 3)}, {}, 1e-5,
                           3);
  expect_matches_reference(kOnnxDomain, "LayerNormalization",
                           {x, uniform({5, 67}, 4)}, {{"axis", int64_t{1}}},
                           1e-5, 3);
  // Scale varying by row (broadcast over the rows' axis too).
  expect_matches_reference(kOnnxDomain, "LayerNormalization",
                           {x, uniform({3, 1, 67}, 5), uniform({1}, 6)},
                           {{"epsilon", 1e-3f}}, 1e-5);
  expect_matches_reference(kOnnxDomain, "LayerNormalization",
                           {uniform({4, 1000}, 7, -2, 2, DType::kF16),
                            uniform({1000}, 8, -1, 1, DType::kF16)},
                           {}, 5e-3);
}

TEST(CpuRmsNorm, AxesAndParameters) {
  Tensor x = uniform({3, 5, 67}, 11, -3, 3);
  expect_matches_reference(kOnnxDomain, "RMSNormalization",
                           {x, uniform({67}, 12)}, {}, 1e-5);
  expect_matches_reference(kOnnxDomain, "RMSNormalization",
                           {x, uniform({5, 67}, 13)}, {{"axis", int64_t{1}}},
                           1e-5);
  expect_matches_reference(kOnnxDomain, "RMSNormalization",
                           {uniform({2000, 33}, 14), uniform({33}, 15)}, {},
                           1e-5);
}

TEST(CpuSoftmax, AxesAndLargeValues) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    SCOPED_TRACE(op);
    Tensor x = uniform({3, 4, 37}, 21, -3, 3);
    for (int64_t axis : {-1, 0, 1, 2}) {
      expect_matches_reference(kOnnxDomain, op, {x}, {{"axis", axis}}, 1e-6);
    }
    expect_matches_reference(kOnnxDomain, op, {uniform({4, 7}, 22, -80, 80)},
                             {}, 1e-6);
    expect_matches_reference(
        kOnnxDomain, op, {uniform({3, 9}, 23, -4, 4, DType::kF16)}, {}, 2e-3);
    expect_matches_reference(kOnnxDomain, op, {uniform({600, 300}, 24)}, {},
                             1e-6);
  }
}

TEST(CpuNormalization, DoubleInputsComputeInDouble) {
  auto f64 = [](std::vector<int64_t> dims, uint64_t seed) {
    return uniform(std::move(dims), seed, -3, 3, DType::kF64);
  };
  Tensor x = f64({3, 5, 8}, 31);
  expect_matches_reference(kOnnxDomain, "LayerNormalization",
                           {x, f64({8}, 32), f64({5, 8}, 33)},
                           {{"stash_type", int64_t{11}}}, 1e-13, 3);
  expect_matches_reference(kOnnxDomain, "LayerNormalization",
                           {x, f64({3, 1, 1}, 34)}, {{"axis", int64_t{1}}},
                           1e-13, 3);
  expect_matches_reference(kOnnxDomain, "RMSNormalization", {x, f64({8}, 35)},
                           {}, 1e-13);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t axis : {0, -1}) {
      expect_matches_reference(kOnnxDomain, op, {f64({4, 9}, 36)},
                               {{"axis", axis}}, 1e-14);
    }
  }
}

TEST(CpuSoftmax, AxisOutOfRange) {
  op_testing::expect_error(
      run_cpu("Softmax", {uniform({2, 3}, 1)}, {{"axis", int64_t{2}}}).status(),
      {"[Softmax]", "axis"});
}

}  // namespace
}  // namespace seqrt::cpu
