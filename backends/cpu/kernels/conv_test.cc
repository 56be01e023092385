// Conv against the reference kernel: 1-D and 2-D, groups (depthwise too),
// strides, dilations, explicit and automatic pads, bias, f16 and f64.
#include <gtest/gtest.h>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

TEST(CpuConv, TwoDimensionalForms) {
  Tensor x = uniform({2, 4, 9, 11}, 1);
  Tensor w = uniform({6, 2, 3, 2}, 2);
  Tensor b = uniform({6}, 3);
  const std::vector<AttrMap> forms = {
      {{"group", int64_t{2}}},
      {{"group", int64_t{2}},
       {"strides", std::vector<int64_t>{2, 3}},
       {"pads", std::vector<int64_t>{1, 0, 2, 1}}},
      {{"group", int64_t{2}}, {"dilations", std::vector<int64_t>{2, 1}}},
      {{"group", int64_t{2}}, {"auto_pad", "SAME_UPPER"}},
      {{"group", int64_t{2}},
       {"auto_pad", "SAME_LOWER"},
       {"strides", std::vector<int64_t>{2, 2}}},
      {{"group", int64_t{2}}, {"auto_pad", "VALID"}},
  };
  for (const AttrMap& attrs : forms) {
    expect_matches_reference(kOnnxDomain, "Conv", {x, w, b}, attrs, 1e-5);
    expect_matches_reference(kOnnxDomain, "Conv", {x, w}, attrs, 1e-5);
  }
}

TEST(CpuConv, OneDimensionalDepthwiseAndTypes) {
  Tensor x = uniform({1, 8, 50}, 4);
  Tensor w = uniform({8, 1, 4}, 5);
  expect_matches_reference(
      kOnnxDomain, "Conv", {x, w},
      {{"group", int64_t{8}}, {"pads", std::vector<int64_t>{3, 0}}}, 1e-5);
  expect_matches_reference(kOnnxDomain, "Conv",
                           {uniform({2, 3, 20}, 6, -1, 1, DType::kF64),
                            uniform({5, 3, 3}, 7, -1, 1, DType::kF64),
                            uniform({5}, 8, -1, 1, DType::kF64)},
                           {{"strides", std::vector<int64_t>{2}}}, 1e-12);
  expect_matches_reference(kOnnxDomain, "Conv",
                           {uniform({1, 3, 6, 6}, 9, -1, 1, DType::kF16),
                            uniform({2, 3, 3, 3}, 10, -1, 1, DType::kF16)},
                           {}, 5e-3);
}

}  // namespace
}  // namespace seqrt::cpu
