#include <gtest/gtest.h>

#include "backends/cpu/kernels/scan_kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using scan_kernel_testing::expect_cpu_matches_reference;
using scan_kernel_testing::run_cpu;
using scan_testing::expect_close;
using scan_testing::slice_axis;
using scan_testing::uniform;

TEST(CpuCausalConv, MatchesReferenceAcrossShapes) {
  uint64_t seed = 1;
  for (int64_t k : {1, 2, 4}) {
    for (int64_t length : {1, 3, 5, 200}) {
      for (const char* activation : {"none", "silu"}) {
        SCOPED_TRACE(testing::Message()
                     << "k=" << k << " L=" << length << " " << activation);
        Tensor x = uniform({2, 70, length}, seed++, -2, 2);
        Tensor w = uniform({70, 1, k}, seed++, -1, 1);
        Tensor bias = uniform({70}, seed++, -1, 1);
        Tensor past = uniform({2, 70, k - 1}, seed++, -2, 2);
        AttrMap attrs{{"activation", activation}};
        expect_cpu_matches_reference(kOnnxDomain, "CausalConvWithState",
                                     {x, w, bias, past}, attrs, 1e-5);
        expect_cpu_matches_reference(kOnnxDomain, "CausalConvWithState", {x, w},
                                     attrs, 1e-5);
      }
    }
  }
}

TEST(CpuCausalConv, HalfPrecision) {
  Tensor x = uniform({1, 8, 33}, 1, -2, 2, DType::kF16);
  Tensor w = uniform({8, 1, 4}, 2, -1, 1, DType::kF16);
  Tensor past = uniform({1, 8, 3}, 3, -1, 1, DType::kF16);
  expect_cpu_matches_reference(kOnnxDomain, "CausalConvWithState",
                               {x, w, Tensor(), past},
                               {{"activation", "swish"}}, 2e-3);
}

TEST(CpuCausalConv, PrefillThenStepsEqualsWhole) {
  Tensor x = uniform({2, 40, 30}, 5, -2, 2);
  Tensor w = uniform({40, 1, 4}, 6, -1, 1);
  Tensor bias = uniform({40}, 7, -1, 1);
  AttrMap silu{{"activation", "silu"}};
  auto whole = run_cpu(kOnnxDomain, "CausalConvWithState", {x, w, bias}, silu);
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  auto first = run_cpu(kOnnxDomain, "CausalConvWithState",
                       {slice_axis(x, 2, 0, 25), w, bias}, silu);
  ASSERT_TRUE(first.is_ok());
  expect_close((*first)[0], slice_axis((*whole)[0], 2, 0, 25), 1e-6);
  Tensor state = (*first)[1];
  for (int64_t t = 25; t < 30; ++t) {
    auto step = run_cpu(kOnnxDomain, "CausalConvWithState",
                        {slice_axis(x, 2, t, t + 1), w, bias, state}, silu);
    ASSERT_TRUE(step.is_ok());
    expect_close((*step)[0], slice_axis((*whole)[0], 2, t, t + 1), 1e-6);
    state = (*step)[1];
  }
  expect_close(state, (*whole)[1], 0.0, "state");
}

}  // namespace
}  // namespace seqrt::cpu
