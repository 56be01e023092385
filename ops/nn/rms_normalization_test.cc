#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::infer_types;
using op_testing::info;
using op_testing::run_ok;
using op_testing::run_op;

TEST(RMSNormalization, HandComputedRows) {
  // Row (3,4): mean square 12.5; row (1,1): mean square 1.
  Tensor x = Tensor::from_vector<float>({2, 2}, {3, 4, 1, 1});
  Tensor scale = Tensor::from_vector<float>({2}, {1, 2});
  Tensor y = run_ok("RMSNormalization", {x, scale}, {{"epsilon", 0.0f}});
  double r = std::sqrt(12.5);
  expect_values(y, {3 / r, 8 / r, 1, 2}, 1e-6);
}

TEST(RMSNormalization, EpsilonAxisAndScaleDtype) {
  // axis 0 of (2,1): one group (0, 2), mean square 2.
  Tensor x = Tensor::from_vector<float>({2, 1}, {0, 2});
  Tensor scale = Tensor::from_vector<double>({}, {1});
  Tensor y = run_ok("RMSNormalization", {x, scale}, {{"axis", 0}});
  EXPECT_EQ(y.dtype(), DType::kF64);  // Y has scale's dtype
  expect_values(y, {0, 2 / std::sqrt(2 + 1e-5)}, 1e-7);
}

TEST(RMSNormalization, Errors) {
  Tensor x = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  expect_error(run_op("RMSNormalization",
                      {x, Tensor::from_vector<float>({3}, {1, 1, 1})})
                   .status(),
               {"[RMSNormalization] node 'test'", "input 'scale'",
                "does not broadcast"});
  expect_error(
      run_op("RMSNormalization", {x, Tensor::from_vector<int32_t>({2}, {1, 1})})
          .status(),
      {"[RMSNormalization]", "input 'scale' must be", "got i32"});
  Tensor scale = Tensor::from_vector<float>({2}, {1, 1});
  expect_error(run_op("RMSNormalization", {x, scale}, {{"axis", -3}}).status(),
               {"[RMSNormalization]", "axis -3"});
}

TEST(RMSNormalization, Inference) {
  Shape x{Dim::symbol("batch"), Dim::unknown(), 32};
  auto out = infer_types("RMSNormalization",
                         {info(DType::kBF16, x), info(DType::kF32, Shape{32})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF32);
  EXPECT_EQ((*out)[0].shape, x);
  expect_error(infer_types("RMSNormalization",
                           {info(DType::kF32, x), info(DType::kF32, Shape{16})})
                   .status(),
               {"[RMSNormalization]", "does not broadcast"});
}

}  // namespace
}  // namespace seqrt
