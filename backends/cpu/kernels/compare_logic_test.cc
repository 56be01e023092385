// Comparisons, logical ops and Where against the reference kernels: every
// dtype (i64 beyond 2^53 compares exactly), broadcasting, NaN, and Where's
// three-way broadcast.
#include <gtest/gtest.h>

#include <limits>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

Tensor bools(std::vector<int64_t> dims, uint64_t seed) {
  return uniform(std::move(dims), seed, 0, 2, DType::kBool);
}

TEST(CpuCompareLogic, ComparisonsOnEveryDtype) {
  uint64_t seed = 1;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64,
                      DType::kI8, DType::kU8, DType::kI32, DType::kI64}) {
    for (const char* op :
         {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
      SCOPED_TRACE(std::string(op) + " " + dtype_name(dtype));
      // Few distinct values, so ties occur.
      expect_matches_reference(kOnnxDomain, op,
                               {uniform({3, 1, 17}, seed, 0, 4, dtype),
                                uniform({5, 17}, seed + 1, 0, 4, dtype)},
                               {}, 0);
      seed += 2;
    }
  }
  expect_matches_reference(kOnnxDomain, "Equal",
                           {bools({4, 6}, 90), bools({6}, 91)}, {}, 0);
}

TEST(CpuCompareLogic, LargeI64AndNaN) {
  const int64_t big = (int64_t{1} << 60) + 1;
  auto eq = run_cpu("Equal", {op_testing::i64({2}, {big, big}),
                              op_testing::i64({2}, {big - 1, big})});
  ASSERT_TRUE(eq.is_ok());
  op_testing::expect_values((*eq)[0], {0, 1});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = op_testing::f32({2}, {nan, 1.0f});
  for (const char* op : {"Equal", "Less", "GreaterOrEqual"}) {
    expect_matches_reference(kOnnxDomain, op, {a, a}, {}, 0);
  }
}

TEST(CpuCompareLogic, LogicalOps) {
  for (const char* op : {"And", "Or", "Xor"}) {
    SCOPED_TRACE(op);
    expect_matches_reference(kOnnxDomain, op,
                             {bools({2, 3, 9}, 3), bools({3, 1}, 4)}, {}, 0);
    expect_matches_reference(kOnnxDomain, op,
                             {bools({70000}, 5), bools({70000}, 6)}, {}, 0);
  }
  expect_matches_reference(kOnnxDomain, "Not", {bools({3, 70}, 7)}, {}, 0);
}

TEST(CpuCompareLogic, WhereBroadcastsAllThreeInputs) {
  for (DType dtype :
       {DType::kF32, DType::kF16, DType::kF64, DType::kI8, DType::kI64}) {
    SCOPED_TRACE(dtype_name(dtype));
    expect_matches_reference(
        kOnnxDomain, "Where",
        {bools({4, 1, 9}, 8), uniform({3, 9}, 9, -5, 5, dtype),
         uniform({4, 3, 1}, 10, -5, 5, dtype)},
        {}, 0);
    expect_matches_reference(
        kOnnxDomain, "Where",
        {bools({5, 7}, 11), uniform({5, 7}, 12, -5, 5, dtype),
         uniform({5, 7}, 13, -5, 5, dtype)},
        {}, 0);
  }
  expect_matches_reference(kOnnxDomain, "Where",
                           {bools({6}, 14), bools({6}, 15), bools({}, 16)}, {},
                           0);
}

}  // namespace
}  // namespace seqrt::cpu
