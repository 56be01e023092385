#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::f32;
using op_testing::infer_types;
using op_testing::run_ok;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;

// [[2, 5, 5],
//  [7, 1, 1]]
Tensor sample() { return f32({2, 3}, {2, 5, 5, 7, 1, 1}); }

TEST(ArgReduce, DefaultAxisZeroKeepsDims) {
  Tensor y = run_ok("ArgMax", {sample()});
  EXPECT_EQ(y.dtype(), DType::kI64);
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 3}));
  expect_values(y, {1, 0, 0});
  expect_values(run_ok("ArgMin", {sample()}), {0, 1, 1});
}

TEST(ArgReduce, TiesPickFirstOrLast) {
  AttrMap last = {{"axis", 1}, {"keepdims", 0}, {"select_last_index", 1}};
  AttrMap first = {{"axis", -1}, {"keepdims", 0}};
  Tensor y = run_ok("ArgMax", {sample()}, first);
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2}));
  expect_values(y, {1, 0});
  expect_values(run_ok("ArgMax", {sample()}, last), {2, 0});
  expect_values(run_ok("ArgMin", {sample()}, first), {0, 1});
  expect_values(run_ok("ArgMin", {sample()}, last), {0, 2});
}

TEST(ArgReduce, IntegersAreExactAndNanWins) {
  int64_t big = (int64_t{1} << 53) + 1;
  Tensor x = Tensor::from_vector<int64_t>({2}, {big - 1, big});
  expect_values(run_ok("ArgMax", {x}, {{"keepdims", 0}}), {1});
  Tensor n = f32({4}, {1, std::nanf(""), 3, std::nanf("")});
  expect_values(run_ok("ArgMax", {n}), {1});
  expect_values(run_ok("ArgMin", {n}), {1});
  expect_values(run_ok("ArgMin", {n}, {{"select_last_index", 1}}), {3});
}

TEST(ArgReduce, Errors) {
  expect_error(run_op("ArgMax", {sample()}, {{"axis", 2}}).status(),
               {"[ArgMax] node 'test'", "axis 2"});
  Tensor empty = Tensor::allocate(DType::kF32, {0, 3}).value();
  expect_error(run_op("ArgMin", {empty}).status(), {"[ArgMin]", "size 0"});
  expect_error(
      run_op("ArgMax", {Tensor::from_vector<bool>({1}, {true})}).status(),
      {"[ArgMax]", "bool"});
  expect_error(infer_types("ArgMin", {typed(DType::kF32, Shape{sym("n"), 0})},
                           {{"axis", 1}})
                   .status(),
               {"[ArgMin]", "size 0"});
  // A scalar has no axis 0 (found by fuzz_onnx_importer: inference indexed
  // the empty shape).
  expect_error(infer_types("ArgMax", {typed(DType::kF32, Shape{})}).status(),
               {"[ArgMax]", "scalar"});
  expect_error(run_op("ArgMax", {f32({}, {1})}).status(), {"scalar"});
}

TEST(ArgReduce, InferenceDropsOrKeepsTheAxis) {
  Shape shape{sym("b"), sym("t"), 8};
  auto out = infer_types("ArgMax", {typed(DType::kBF16, shape)},
                         {{"axis", -1}, {"keepdims", 0}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kI64);
  EXPECT_EQ((*out)[0].shape, (Shape{sym("b"), sym("t")}));
  out = infer_types("ArgMin", {typed(DType::kI32, shape)}, {{"axis", 1}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].shape, (Shape{sym("b"), 1, 8}));
}

}  // namespace
}  // namespace seqrt
