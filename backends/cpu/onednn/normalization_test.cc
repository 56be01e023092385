// oneDNN's softmax (Softmax, LogSoftmax over any axis) and layer
// normalisation (with and without shift) against the reference kernels,
// through the CPU kernels with the oneDNN path forced; the cases oneDNN
// does not take (statistics outputs, a scale varying by row) fall back.
#include <gtest/gtest.h>

#include "backends/cpu/onednn/kernel_check.h"

namespace seqrt::cpu::onednn {
namespace {

using kernel_testing::uniform;
using testing::expect_onednn_matches_reference;
using testing::expect_own_path_runs_no_primitive;

TEST(OneDnnSoftmax, AxesMatchReference) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    SCOPED_TRACE(op);
    Tensor x = uniform({2, 3, 4, 37}, 1, -8, 8);
    for (int64_t axis : {-1, 0, 2}) {
      expect_onednn_matches_reference(op, {x}, {{"axis", axis}}, 1e-5);
    }
    expect_onednn_matches_reference(op, {uniform({5, 300}, 2, -80, 80)}, {},
                                    1e-5);
    expect_own_path_runs_no_primitive(op, {x}, {}, 1e-6);
  }
}

TEST(OneDnnLayerNorm, ScaleAndShiftMatchReference) {
  Tensor x = uniform({2, 7, 67}, 3, -3, 3);
  expect_onednn_matches_reference(
      "LayerNormalization", {x, uniform({67}, 4, 0.5, 1.5), uniform({67}, 5)},
      {}, 1e-5);
  // No shift; the rows are the last two axes.
  expect_onednn_matches_reference(
      "LayerNormalization", {x, uniform({7, 67}, 6, 0.5, 1.5)},
      {{"axis", int64_t{1}}, {"epsilon", 1e-3f}}, 1e-5);
  expect_own_path_runs_no_primitive(
      "LayerNormalization", {x, uniform({67}, 7), uniform({67}, 8)}, {}, 1e-5);
}

TEST(OneDnnLayerNorm, StatisticsOutputsStayOnOwnKernel) {
  ScopedPath forced(Path::kOneDnn);
  const int64_t before = execute_count();
  kernel_testing::expect_matches_reference(
      kOnnxDomain, "LayerNormalization",
      {uniform({3, 16}, 9), uniform({16}, 10), uniform({16}, 11)}, {}, 1e-5, 3);
  EXPECT_EQ(execute_count(), before);
}

}  // namespace
}  // namespace seqrt::cpu::onednn
