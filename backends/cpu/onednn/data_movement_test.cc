// oneDNN's reorder (Transpose as a copy between strided layouts) and
// concat primitives against the reference kernels, through the CPU kernels
// with the oneDNN path forced. Both copy, so results must be exact.
#include <gtest/gtest.h>

#include <vector>

#include "backends/cpu/onednn/kernel_check.h"

namespace seqrt::cpu::onednn {
namespace {

using kernel_testing::uniform;
using testing::expect_onednn_matches_reference;
using testing::expect_own_path_runs_no_primitive;

TEST(OneDnnReorder, TransposesMatchReference) {
  Tensor x = uniform({2, 5, 3, 7}, 1);
  for (const std::vector<int64_t>& perm :
       {std::vector<int64_t>{0, 2, 1, 3}, std::vector<int64_t>{3, 2, 1, 0},
        std::vector<int64_t>{1, 3, 0, 2}}) {
    expect_onednn_matches_reference("Transpose", {x}, {{"perm", perm}}, 0.0);
  }
  expect_onednn_matches_reference("Transpose", {uniform({9, 17}, 2)}, {}, 0.0);
  expect_own_path_runs_no_primitive("Transpose", {x}, {}, 0.0);
}

TEST(OneDnnConcat, AxesMatchReference) {
  Tensor a = uniform({2, 3, 5}, 3);
  Tensor b = uniform({2, 4, 5}, 4);
  expect_onednn_matches_reference("Concat", {a, b, a}, {{"axis", int64_t{1}}},
                                  0.0);
  expect_onednn_matches_reference("Concat", {a, uniform({2, 3, 2}, 5)},
                                  {{"axis", int64_t{-1}}}, 0.0);
  expect_onednn_matches_reference("Concat", {a, uniform({1, 3, 5}, 6)},
                                  {{"axis", int64_t{0}}}, 0.0);
  expect_own_path_runs_no_primitive("Concat", {a, b}, {{"axis", int64_t{1}}},
                                    0.0);
}

TEST(OneDnnConcat, EmptyInputFallsBack) {
  ScopedPath forced(Path::kOneDnn);
  const int64_t before = execute_count();
  kernel_testing::expect_matches_reference(
      kOnnxDomain, "Concat", {uniform({2, 0}, 7), uniform({2, 3}, 8)},
      {{"axis", int64_t{1}}}, 0.0);
  EXPECT_EQ(execute_count(), before);
}

}  // namespace
}  // namespace seqrt::cpu::onednn
