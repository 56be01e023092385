#include <gtest/gtest.h>

#include <cmath>

#include "ops/sequence/scan_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::f32;
using op_testing::info;
using op_testing::sym;
using scan_testing::expect_close;
using scan_testing::slice_axis;
using scan_testing::uniform;

Result<std::vector<Tensor>> conv(const std::vector<Tensor>& inputs,
                                 const AttrMap& attrs = {}) {
  return scan_testing::run_op(kOnnxDomain, "CausalConvWithState", inputs,
                              attrs);
}

TEST(CausalConvWithState, HandComputedWithPastAndBias) {
  // k = 3: out[t] = 1 + 1·x[t-2] + 2·x[t-1] + 3·x[t], past = (10, 20).
  Tensor x = f32({1, 1, 3}, {1, 2, 3});
  Tensor w = f32({1, 1, 3}, {1, 2, 3});
  Tensor bias = f32({1}, {1});
  Tensor past = f32({1, 1, 2}, {10, 20});
  auto out = conv({x, w, bias, past});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_values((*out)[0], {1 + 10 + 40 + 3, 1 + 20 + 2 + 6, 1 + 1 + 4 + 9});
  expect_values((*out)[1], {2, 3});
}

TEST(CausalConvWithState, ShortInputKeepsPartOfPast) {
  // L = 1 < k - 1 = 2: the new state is (past[1], x[0]).
  Tensor x = f32({1, 1, 1}, {5});
  Tensor w = f32({1, 1, 3}, {1, 1, 1});
  Tensor past = f32({1, 1, 2}, {7, 8});
  auto out = conv({x, w, Tensor(), past}, {{"activation", "silu"}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_values((*out)[0], {20 / (1 + std::exp(-20.0))}, 1e-5);
  expect_values((*out)[1], {8, 5});
}

TEST(CausalConvWithState, KernelSizeOneHasEmptyState) {
  Tensor x = f32({1, 2, 2}, {1, 2, 3, 4});
  Tensor w = f32({2, 1, 1}, {2, -1});
  auto out = conv({x, w});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_values((*out)[0], {2, 4, -3, -4});
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{1, 2, 0}));
}

TEST(CausalConvWithState, WholeEqualsPartsAndSteps) {
  Tensor x = uniform({2, 3, 10}, 1, -2, 2);
  Tensor w = uniform({3, 1, 4}, 2, -1, 1);
  Tensor bias = uniform({3}, 3, -1, 1);
  AttrMap silu{{"activation", "swish"}};
  auto whole = conv({x, w, bias}, silu);
  ASSERT_TRUE(whole.is_ok());
  // Prefill of 6, then 4 single steps.
  auto state = conv({slice_axis(x, 2, 0, 6), w, bias}, silu);
  ASSERT_TRUE(state.is_ok());
  expect_close((*state)[0], slice_axis((*whole)[0], 2, 0, 6), 1e-6);
  Tensor carried = (*state)[1];
  for (int64_t t = 6; t < 10; ++t) {
    auto step = conv({slice_axis(x, 2, t, t + 1), w, bias, carried}, silu);
    ASSERT_TRUE(step.is_ok());
    expect_close((*step)[0], slice_axis((*whole)[0], 2, t, t + 1), 1e-6);
    carried = (*step)[1];
  }
  expect_close(carried, (*whole)[1], 0.0, "state");
}

TEST(CausalConvWithState, Errors) {
  Tensor x = uniform({1, 2, 5}, 1, -1, 1);
  Tensor w = uniform({2, 1, 3}, 2, -1, 1);
  expect_error(conv({x, uniform({3, 1, 3}, 2, -1, 1)}).status(),
               {"[CausalConvWithState] node 'test'",
                "weight must be (channels,1,k) = (2,1,3), got (3,1,3)"});
  expect_error(conv({x, uniform({2, 2, 3}, 2, -1, 1)}).status(),
               {"weight must be (channels,1,k), got (2,2,3)"});
  expect_error(conv({x, uniform({2, 1, 0}, 2, -1, 1)}).status(), {"k >= 1"});
  expect_error(conv({x, w, Tensor(), uniform({1, 2, 3}, 3, 0, 1)}).status(),
               {"past_state must be (batch_size,channels,k-1) = (1,2,2), got "
                "(1,2,3)"});
  expect_error(conv({x, uniform({2, 1, 3}, 2, -1, 1, DType::kF16)}).status(),
               {"input 'weight'"});
  expect_error(conv({x, w}, {{"activation", "relu"}}).status(),
               {"activation", "relu"});
}

TEST(CausalConvWithState, Inference) {
  Shape in{sym("batch"), 16, sym("seq")};
  auto out = scan_testing::infer(
      kOnnxDomain, "CausalConvWithState",
      {info(DType::kF16, in), info(DType::kF16, Shape{16, 1, 4})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF16);
  EXPECT_EQ(*(*out)[0].shape, in);
  EXPECT_EQ((*out)[1].dtype, DType::kF16);
  EXPECT_EQ(*(*out)[1].shape, (Shape{sym("batch"), 16, 3}));
}

}  // namespace
}  // namespace seqrt
