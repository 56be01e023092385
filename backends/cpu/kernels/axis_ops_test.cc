// ArgMax, ArgMin and CumSum against the reference kernels: every axis
// position (first, middle, last, negative), keepdims, select_last_index
// with ties and NaN, exclusive/reverse, and the dtypes.
#include <gtest/gtest.h>

#include <limits>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

TEST(CpuAxisOps, ArgMaxArgMinAxesAndTies) {
  // Few distinct values, so ties occur.
  Tensor x = uniform({4, 5, 3000}, 1, 0, 3);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t axis : {0, 1, 2, -1}) {
      for (int64_t keepdims : {0, 1}) {
        for (int64_t last : {0, 1}) {
          SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis));
          expect_matches_reference(kOnnxDomain, op, {x},
                                   {{"axis", axis},
                                    {"keepdims", keepdims},
                                    {"select_last_index", last}},
                                   0);
        }
      }
    }
  }
}

TEST(CpuAxisOps, ArgMaxDtypesAndNaN) {
  for (DType dtype : {DType::kF16, DType::kF64, DType::kI8, DType::kU8,
                      DType::kI32, DType::kI64}) {
    SCOPED_TRACE(dtype_name(dtype));
    expect_matches_reference(kOnnxDomain, "ArgMax",
                             {uniform({6, 7}, 2, -50, 50, dtype)},
                             {{"axis", int64_t{1}}}, 0);
    expect_matches_reference(kOnnxDomain, "ArgMin",
                             {uniform({6, 7}, 3, -50, 50, dtype)}, {}, 0);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = op_testing::f32({2, 4}, {1, nan, 3, nan, 2, 2, -1, 2});
  for (int64_t last : {0, 1}) {
    for (const char* op : {"ArgMax", "ArgMin"}) {
      expect_matches_reference(
          kOnnxDomain, op, {x},
          {{"axis", int64_t{1}}, {"select_last_index", last}}, 0);
    }
  }
}

TEST(CpuAxisOps, CumSumForms) {
  Tensor x = uniform({3, 40, 5}, 4, -2, 2);
  for (int64_t axis : {0, 1, 2, -1}) {
    for (int64_t exclusive : {0, 1}) {
      for (int64_t reverse : {0, 1}) {
        SCOPED_TRACE("axis " + std::to_string(axis));
        expect_matches_reference(
            kOnnxDomain, "CumSum", {x, op_testing::i64({}, {axis})},
            {{"exclusive", exclusive}, {"reverse", reverse}}, 1e-6);
      }
    }
  }
}

TEST(CpuAxisOps, CumSumDtypes) {
  Tensor axis = Tensor::scalar<int32_t>(1);
  for (DType dtype : {DType::kF64, DType::kI32, DType::kI64, DType::kF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    double tol = dtype == DType::kF16 ? 2e-3 : 1e-12;
    expect_matches_reference(kOnnxDomain, "CumSum",
                             {uniform({4, 2000}, 5, -100, 100, dtype), axis},
                             {{"reverse", int64_t{1}}}, tol);
  }
  const int32_t top = std::numeric_limits<int32_t>::max();
  expect_matches_reference(kOnnxDomain, "CumSum",
                           {Tensor::from_vector<int32_t>({3}, {top, 1, 1}),
                            Tensor::scalar<int32_t>(0)},
                           {}, 0);
}

}  // namespace
}  // namespace seqrt::cpu
