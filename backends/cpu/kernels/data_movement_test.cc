// CPU data-movement kernels against the reference, bit for bit: storage
// sharing of the reshape family, strided copies (Transpose, Slice with
// negative steps, Expand), block copies (Concat, Gather, Split) over several
// dtypes, and errors.
#include <gtest/gtest.h>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT
using op_testing::ints;

void expect_same(const std::string& op, const std::vector<Tensor>& inputs,
                 const AttrMap& attrs = {}, size_t num_outputs = 1) {
  auto want = run_kernel(false, kOnnxDomain, op, inputs, attrs, num_outputs);
  auto got = run_kernel(true, kOnnxDomain, op, inputs, attrs, num_outputs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_TRUE((*got)[i].same_as((*want)[i])) << op << " output " << i;
  }
}

TEST(CpuDataMovement, ReshapeFamilySharesStorage) {
  Tensor x = uniform({2, 3, 4}, 1);
  auto out = run_cpu("Reshape", {x, ints({4, -1})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), std::vector<int64_t>({4, 6}));
  EXPECT_EQ((*out)[0].data(), x.data());
  expect_same("Reshape", {x, ints({0, -1})});
  expect_same("Flatten", {x}, {{"axis", int64_t{2}}});
  expect_same("Squeeze", {uniform({2, 1, 3}, 2), ints({1})});
  expect_same("Unsqueeze", {x, ints({0, -1})});
  expect_same("Identity", {op_testing::i64({3}, {1, 2, 3})});
  op_testing::expect_error(run_cpu("Reshape", {x, ints({5, -1})}).status(),
                           {"[Reshape]"});
}

TEST(CpuDataMovement, Transpose) {
  Tensor x = uniform({2, 3, 4, 5}, 3);
  for (std::vector<int64_t> perm : {std::vector<int64_t>{0, 2, 1, 3},
                                    {3, 2, 1, 0},
                                    {0, 1, 3, 2},
                                    {1, 0, 2, 3}}) {
    expect_same("Transpose", {x}, {{"perm", perm}});
  }
  expect_same("Transpose", {uniform({3, 7}, 4, -1, 1, DType::kF16)});
  op_testing::expect_error(
      run_cpu("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 0, 1, 2}}})
          .status(),
      {"[Transpose]", "not a permutation"});
}

TEST(CpuDataMovement, SliceSteps) {
  Tensor x = uniform({6, 7, 8}, 5);
  expect_same("Slice", {x, ints({1, -3}), ints({5, 100}), ints({0, 2})});
  expect_same("Slice", {x, ints({-1}), ints({-100}), ints({1}), ints({-2})});
  expect_same("Slice", {x, ints({0, 6, 7}), ints({6, 0, -9}), ints({0, 1, 2}),
                        ints({2, -3, -1})});
  expect_same("Slice", {x, ints({3}), ints({3}), ints({0})});
  op_testing::expect_error(
      run_cpu("Slice", {x, ints({0}), ints({2}), ints({0}), ints({0})})
          .status(),
      {"[Slice]", "steps must not be 0"});
}

TEST(CpuDataMovement, ExpandConcatGatherSplit) {
  expect_same("Expand", {uniform({3, 1}, 6), ints({2, 3, 4})});
  expect_same("Expand", {op_testing::i64({1}, {7}), ints({5})});
  expect_same(
      "Concat",
      {uniform({2, 3, 4}, 7), uniform({2, 1, 4}, 8), uniform({2, 0, 4}, 9)},
      {{"axis", int64_t{-2}}});
  Tensor table = uniform({10, 6}, 10);
  expect_same("Gather", {table, op_testing::i64({2, 3}, {0, 9, -1, 4, 4, 2})});
  expect_same("Gather", {table, op_testing::i64({2}, {5, -6})},
              {{"axis", int64_t{1}}});
  op_testing::expect_error(
      run_cpu("Gather", {table, op_testing::i64({1}, {10})}).status(),
      {"[Gather]", "out of range"});
  expect_same("Split", {uniform({4, 9}, 11), ints({2, 3, 4})},
              {{"axis", int64_t{1}}}, 3);
  expect_same("Split", {uniform({7, 2}, 12)}, {{"num_outputs", int64_t{3}}}, 3);
}

}  // namespace
}  // namespace seqrt::cpu
