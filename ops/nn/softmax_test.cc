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

TEST(Softmax, LastAxisByDefault) {
  Tensor x = Tensor::from_vector<float>({2, 2}, {0, 0, 0, std::log(3.0f)});
  expect_values(run_ok("Softmax", {x}), {0.5, 0.5, 0.25, 0.75}, 1e-6);
  expect_values(run_ok("LogSoftmax", {x}),
                {std::log(0.5), std::log(0.5), std::log(0.25), std::log(0.75)},
                1e-6);
}

TEST(Softmax, OtherAxesAndNegativeAxes) {
  // Along axis 0 of (2,2): columns (0, log 3) and (0, 0).
  Tensor x = Tensor::from_vector<float>({2, 2}, {0, 0, std::log(3.0f), 0});
  Tensor by0 = run_ok("Softmax", {x}, {{"axis", 0}});
  expect_values(by0, {0.25, 0.5, 0.75, 0.5}, 1e-6);
  EXPECT_TRUE(by0.same_as(run_ok("Softmax", {x}, {{"axis", -2}})));
  // The middle axis of a (2,3,2) tensor: each of the 4 lines sums to 1.
  Tensor y = Tensor::allocate(DType::kF64, {2, 3, 2}).value();
  for (int64_t i = 0; i < 12; ++i) y.set_element_f64(i, 0.1 * i);
  Tensor s = run_ok("Softmax", {y}, {{"axis", 1}});
  for (int64_t outer = 0; outer < 2; ++outer) {
    for (int64_t inner = 0; inner < 2; ++inner) {
      double sum = 0;
      for (int64_t k = 0; k < 3; ++k) {
        sum += s.element_f64(outer * 6 + k * 2 + inner);
      }
      EXPECT_NEAR(sum, 1.0, 1e-12);
    }
  }
}

TEST(Softmax, LargeInputsDoNotOverflow) {
  Tensor x = Tensor::from_vector<float>({3}, {1000, 1000, -1000});
  expect_values(run_ok("Softmax", {x}), {0.5, 0.5, 0}, 1e-6);
  expect_values(run_ok("LogSoftmax", {x}),
                {-std::log(2.0), -std::log(2.0), -2000 - std::log(2.0)}, 1e-3);
}

TEST(Softmax, Errors) {
  Tensor x = Tensor::from_vector<float>({2, 2}, {0, 0, 0, 0});
  expect_error(run_op("Softmax", {x}, {{"axis", 2}}).status(),
               {"[Softmax] node 'test'", "axis 2", "rank 2"});
  expect_error(
      run_op("LogSoftmax", {Tensor::from_vector<int32_t>({1}, {1})}).status(),
      {"[LogSoftmax]", "got i32"});
  expect_error(
      infer_types("Softmax", {info(DType::kF32, Shape{2, 3})}, {{"axis", -3}})
          .status(),
      {"[Softmax]", "axis -3"});
}

TEST(Softmax, Inference) {
  Shape shape{Dim::symbol("batch"), Dim::symbol("seq"), 16};
  auto out = infer_types("LogSoftmax", {info(DType::kF16, shape)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF16);
  EXPECT_EQ((*out)[0].shape, shape);
  // Any axis passes when the rank is unknown.
  out =
      infer_types("Softmax", {info(DType::kF32, std::nullopt)}, {{"axis", 7}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_FALSE((*out)[0].shape.has_value());
}

}  // namespace
}  // namespace seqrt
