#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::f32;
using op_testing::infer_types;
using op_testing::info;
using op_testing::ints;
using op_testing::iota;
using op_testing::run_ok;
using op_testing::run_op;
using op_testing::sym;

TEST(TensorScatter, LinearWritesAtEachBatchIndex) {
  // Cache (2,4,1) of 0..7; updates of length 2 at rows 1 and 2.
  Tensor cache = iota(DType::kF32, {2, 4, 1});
  Tensor update = f32({2, 2, 1}, {-1, -2, -3, -4});
  Tensor out = run_ok("TensorScatter", {cache, update, ints({1, 2})});
  expect_values(out, {0, -1, -2, 3, 4, 5, -3, -4});
}

TEST(TensorScatter, CircularWrapsAndIndicesDefaultToZero) {
  Tensor cache = iota(DType::kF32, {1, 4, 2});
  Tensor update = f32({1, 3, 2}, {-1, -1, -2, -2, -3, -3});
  Tensor wrapped = run_ok("TensorScatter", {cache, update, ints({3})},
                          {{"mode", "circular"}});
  expect_values(wrapped, {-2, -2, -3, -3, 4, 5, -1, -1});
  Tensor start = run_ok("TensorScatter", {cache, update});
  expect_values(start, {-1, -1, -2, -2, -3, -3, 6, 7});
  // An index past the capacity wraps too: 5 % 4 = 1.
  Tensor far = run_ok("TensorScatter", {cache, update, ints({5})},
                      {{"mode", "circular"}});
  expect_values(far, {0, 1, -1, -1, -2, -2, -3, -3});
}

TEST(TensorScatter, InnerSequenceAxisAndIntegerDtype) {
  // (B,H,S,d) = (1,2,3,1) along axis 2 (-2 by default), int64 data.
  Tensor cache = iota(DType::kI64, {1, 2, 3, 1});
  Tensor update = Tensor::from_vector<int64_t>({1, 2, 1, 1}, {-1, -2});
  Tensor out = run_ok("TensorScatter", {cache, update, ints({2})});
  EXPECT_EQ(out.dtype(), DType::kI64);
  expect_values(out, {0, 1, -1, 3, 4, -2});
  // Axis 1 of a 3D cache (B,S,d).
  Tensor c3 = iota(DType::kF32, {1, 3, 2});
  Tensor u3 = f32({1, 1, 2}, {-1, -2});
  expect_values(run_ok("TensorScatter", {c3, u3, ints({0})}, {{"axis", 1}}),
                {-1, -2, 2, 3, 4, 5});
}

TEST(TensorScatter, Errors) {
  Tensor cache = iota(DType::kF32, {2, 4, 1});
  Tensor update = f32({2, 2, 1}, {1, 2, 3, 4});
  expect_error(run_op("TensorScatter", {cache, update, ints({3, 0})}).status(),
               {"[TensorScatter] node 'test'", "write_indices[0] = 3",
                "exceeds the cache length 4"});
  expect_error(run_op("TensorScatter", {cache, update, ints({-1, 0})}).status(),
               {"write_indices[0] = -1 must be >= 0"});
  expect_error(run_op("TensorScatter", {cache, update}, {{"axis", 0}}).status(),
               {"batch axis"});
  expect_error(run_op("TensorScatter", {cache, update}, {{"axis", 3}}).status(),
               {"axis 3"});
  expect_error(
      run_op("TensorScatter", {cache, f32({2, 2, 2}, std::vector<float>(8))})
          .status(),
      {"must match past_cache"});
  expect_error(
      run_op("TensorScatter", {cache, f32({2, 5, 1}, std::vector<float>(10))})
          .status(),
      {"must match past_cache"});
  expect_error(run_op("TensorScatter", {cache, update, ints({0})}).status(),
               {"write_indices must be (batch) = (2)"});
  expect_error(run_op("TensorScatter",
                      {cache, Tensor::allocate(DType::kF64, {2, 2, 1}).value()})
                   .status(),
               {"input 'update'"});
  expect_error(
      run_op("TensorScatter", {cache, update}, {{"mode", "ring"}}).status(),
      {"mode"});
}

TEST(TensorScatter, Inference) {
  Shape cache{sym("B"), 8, 128, 64};
  auto out = infer_types(
      "TensorScatter",
      {info(DType::kBF16, cache), info(DType::kBF16, Shape{sym("B"), 8, 1, 64}),
       info(DType::kI64, Shape{sym("B")})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kBF16);
  EXPECT_EQ((*out)[0].shape, cache);
  expect_error(infer_types("TensorScatter",
                           {info(DType::kF32, cache),
                            info(DType::kF32, Shape{sym("B"), 4, 1, 64})})
                   .status(),
               {"must match past_cache"});
}

}  // namespace
}  // namespace seqrt
