// Reductions against the reference kernels: every merge of kept and
// reduced axes (innermost reduced or kept, alternating groups, size-1
// dims), negative axes, keepdims, noop_with_empty_axes, empty inputs, NaN,
// and every dtype.
#include <gtest/gtest.h>

#include <limits>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

const char* const kReduceOps[] = {"ReduceSum", "ReduceMean", "ReduceMax",
                                  "ReduceMin"};

void expect_reduce(const Tensor& x, std::vector<int64_t> axes, int64_t keepdims,
                   double tol, int64_t noop = 0) {
  for (const char* op : kReduceOps) {
    SCOPED_TRACE(std::string(op) + " " + dims_to_string(x.dims()) + " axes " +
                 dims_to_string(axes) + " keepdims " +
                 std::to_string(keepdims));
    Tensor axes_tensor =
        op_testing::i64({static_cast<int64_t>(axes.size())}, axes);
    expect_matches_reference(
        kOnnxDomain, op, {x, axes_tensor},
        {{"keepdims", keepdims}, {"noop_with_empty_axes", noop}}, tol);
  }
}

TEST(CpuReduce, AxisPatterns) {
  Tensor x = uniform({3, 4, 1, 5, 6}, 1, -2, 2);
  const std::vector<std::vector<int64_t>> patterns = {
      {4}, {0}, {1, 3}, {0, 2, 4}, {-1, -2}, {0, 1, 2, 3, 4}, {2}, {1, -1}};
  for (const auto& axes : patterns) {
    for (int64_t keepdims : {0, 1}) expect_reduce(x, axes, keepdims, 1e-5);
  }
}

TEST(CpuReduce, NoAxesReducesAllOrNothing) {
  Tensor x = uniform({4, 7}, 2, -2, 2);
  for (const char* op : kReduceOps) {
    expect_matches_reference(kOnnxDomain, op, {x}, {{"keepdims", int64_t{0}}},
                             1e-5);
  }
  expect_reduce(x, {}, 1, 0, /*noop=*/1);
  expect_reduce(x, {}, 0, 1e-5, /*noop=*/0);
}

TEST(CpuReduce, LargeInputsSplitOverThreads) {
  expect_reduce(uniform({2, 300, 257}, 3, -1, 1), {1}, 1, 1e-5);
  expect_reduce(uniform({1000, 70}, 4, -1, 1), {0}, 0, 1e-5);
  expect_reduce(uniform({70, 1000}, 5, -1, 1), {1}, 0, 1e-5);
}

TEST(CpuReduce, EveryDtype) {
  for (DType dtype : {DType::kF16, DType::kBF16, DType::kF64, DType::kI8,
                      DType::kU8, DType::kI32, DType::kI64}) {
    SCOPED_TRACE(dtype_name(dtype));
    double tol = dtype == DType::kF16    ? 2e-3
                 : dtype == DType::kBF16 ? 2e-2
                                         : 1e-12;
    Tensor x = uniform({5, 6, 7}, 6, -100, 100, dtype);
    expect_reduce(x, {1}, 1, tol);
    expect_reduce(x, {0, 2}, 0, tol);
  }
  Tensor flags = uniform({4, 5}, 7, 0, 2, DType::kBool);
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    expect_matches_reference(kOnnxDomain, op,
                             {flags, op_testing::i64({1}, {1})}, {}, 0);
  }
}

TEST(CpuReduce, IntegerSumsWrapAndMeansTruncate) {
  Tensor x = Tensor::from_vector<int8_t>({2, 3}, {100, 100, 100, -7, 0, 0});
  Tensor axes = op_testing::i64({1}, {1});
  expect_matches_reference(kOnnxDomain, "ReduceSum", {x, axes}, {}, 0);
  expect_matches_reference(kOnnxDomain, "ReduceMean", {x, axes}, {}, 0);
}

TEST(CpuReduce, EmptyReductionsAndNaN) {
  Tensor empty = Tensor::allocate(DType::kF32, {3, 0}).value();
  expect_reduce(empty, {1}, 1, 0);
  expect_reduce(empty, {0}, 0, 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_reduce(op_testing::f32({2, 3}, {1, nan, 3, 4, 5, 6}), {1}, 1, 1e-6);
  expect_reduce(op_testing::f32({2, 3}, {1, nan, 3, 4, 5, 6}), {0}, 1, 1e-6);
}

}  // namespace
}  // namespace seqrt::cpu
