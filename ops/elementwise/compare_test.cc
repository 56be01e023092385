#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::infer_types;
using op_testing::info;
using op_testing::run_ok;
using op_testing::run_op;

TEST(Compare, RelationsWithBroadcasting) {
  Tensor a = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  Tensor b = Tensor::from_vector<float>({2}, {2, 3});
  Tensor eq = run_ok("Equal", {a, b});
  EXPECT_EQ(eq.dtype(), DType::kBool);
  EXPECT_EQ(eq.dims(), (std::vector<int64_t>{2, 2}));
  expect_values(eq, {0, 0, 0, 0});
  expect_values(run_ok("Less", {a, b}), {1, 1, 0, 0});
  expect_values(run_ok("Greater", {a, b}), {0, 0, 1, 1});
  expect_values(run_ok("LessOrEqual", {a, b}), {1, 1, 0, 0});
  expect_values(run_ok("GreaterOrEqual", {a, b}), {0, 0, 1, 1});
  expect_values(run_ok("Equal", {a, Tensor::from_vector<float>({}, {3})}),
                {0, 0, 1, 0});
}

TEST(Compare, LargeIntegersCompareExactly) {
  int64_t big = int64_t{1} << 53;  // big and big + 1 are one double
  Tensor a = Tensor::from_vector<int64_t>({1}, {big});
  Tensor b = Tensor::from_vector<int64_t>({1}, {big + 1});
  expect_values(run_ok("Less", {a, b}), {1});
  expect_values(run_ok("Equal", {a, b}), {0});
}

TEST(Compare, EqualTakesBoolOthersDoNot) {
  Tensor t = Tensor::from_vector<bool>({2}, {true, false});
  Tensor u = Tensor::from_vector<bool>({2}, {true, true});
  expect_values(run_ok("Equal", {t, u}), {1, 0});
  expect_error(run_op("Less", {t, u}).status(),
               {"[Less] node 'test'", "input 'A' must be", "got bool"});
}

TEST(Compare, MismatchedDtypesAreErrors) {
  Tensor a = Tensor::from_vector<float>({1}, {1});
  Tensor b = Tensor::from_vector<int32_t>({1}, {1});
  expect_error(run_op("Greater", {a, b}).status(),
               {"[Greater]", "same dtype", "f32", "i32"});
}

TEST(Compare, InferenceGivesBool) {
  auto out =
      infer_types("Equal", {info(DType::kI64, Shape{Dim::symbol("n"), 1}),
                            info(DType::kI64, Shape{5})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kBool);
  EXPECT_EQ((*out)[0].shape, (Shape{Dim::symbol("n"), 5}));
  expect_error(infer_types("Less", {info(DType::kF32, Shape{2}),
                                    info(DType::kF32, Shape{3})})
                   .status(),
               {"[Less]", "cannot be broadcast"});
}

}  // namespace
}  // namespace seqrt
