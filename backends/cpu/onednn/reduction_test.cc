// oneDNN's reduction primitive (ReduceSum, ReduceMean, ReduceMax,
// ReduceMin over inner, outer and several axes, with and without keepdims)
// against the reference kernels, through the CPU kernels with the oneDNN
// path forced.
#include <gtest/gtest.h>

#include <vector>

#include "backends/cpu/onednn/kernel_check.h"

namespace seqrt::cpu::onednn {
namespace {

using kernel_testing::uniform;
using testing::expect_onednn_matches_reference;
using testing::expect_own_path_runs_no_primitive;

Tensor axes(std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}

TEST(OneDnnReduction, AxesAndKeepdimsMatchReference) {
  Tensor x = uniform({3, 4, 50}, 1, -2, 2);
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    SCOPED_TRACE(op);
    expect_onednn_matches_reference(op, {x, axes({-1})}, {}, 1e-5);
    expect_onednn_matches_reference(op, {x, axes({0})},
                                    {{"keepdims", int64_t{0}}}, 1e-5);
    expect_onednn_matches_reference(op, {x, axes({0, 2})}, {}, 1e-5);
    expect_onednn_matches_reference(op, {x}, {}, 1e-5);  // every axis
  }
  expect_own_path_runs_no_primitive("ReduceSum", {x, axes({1})}, {}, 1e-5);
}

}  // namespace
}  // namespace seqrt::cpu::onednn
