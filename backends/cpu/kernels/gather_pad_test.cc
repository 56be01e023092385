// GatherElements, Pad, Tile and Trilu against the reference kernels: every
// axis, negative indices, element widths 1 to 8 bytes, the four pad modes
// with crops and axes, and diagonals beyond the matrix.
#include <gtest/gtest.h>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

TEST(CpuGatherPad, GatherElementsEveryAxis) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kF64, DType::kI8}) {
    Tensor data = uniform({4, 5, 6}, 1, -9, 9, dtype);
    for (int64_t axis : {0, 1, 2, -1}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " axis " +
                   std::to_string(axis));
      int64_t size = data.dim(axis < 0 ? axis + 3 : axis);
      Tensor indices = uniform({3, 4, 5}, 2, -size, size, DType::kI64);
      expect_matches_reference(kOnnxDomain, "GatherElements", {data, indices},
                               {{"axis", axis}}, 0);
    }
  }
  auto bad =
      run_cpu("GatherElements", {uniform({3}, 3), op_testing::i64({1}, {3})});
  op_testing::expect_error(bad.status(), {"[GatherElements]", "out of range"});
}

TEST(CpuGatherPad, PadModesCropsAndAxes) {
  Tensor x = uniform({3, 4, 5}, 4, -5, 5);
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    SCOPED_TRACE(mode);
    expect_matches_reference(kOnnxDomain, "Pad",
                             {x, op_testing::i64({6}, {1, 0, 2, 2, 3, 1}),
                              op_testing::f32({}, {1.5f})},
                             {{"mode", mode}}, 0);
    expect_matches_reference(kOnnxDomain, "Pad",
                             {x, op_testing::i64({4}, {-1, 2, 1, -2}), Tensor(),
                              op_testing::i64({2}, {-1, 1})},
                             {{"mode", mode}}, 0);
  }
  expect_matches_reference(kOnnxDomain, "Pad",
                           {uniform({2, 3}, 5, -5, 5, DType::kI64),
                            op_testing::i64({4}, {0, 2, 1, 0})},
                           {}, 0);
}

TEST(CpuGatherPad, TileRepeats) {
  for (DType dtype : {DType::kF32, DType::kBool, DType::kI64}) {
    Tensor x = uniform({2, 3, 4}, 6, 0, 2, dtype);
    expect_matches_reference(kOnnxDomain, "Tile",
                             {x, op_testing::i64({3}, {2, 1, 3})}, {}, 0);
    expect_matches_reference(kOnnxDomain, "Tile",
                             {x, op_testing::i64({3}, {1, 0, 2})}, {}, 0);
  }
}

TEST(CpuGatherPad, TriluDiagonals) {
  Tensor x = uniform({2, 4, 6}, 7, -5, 5);
  for (int64_t upper : {0, 1}) {
    for (int64_t k : {-7, -2, 0, 1, 5, 9}) {
      SCOPED_TRACE("upper " + std::to_string(upper) + " k " +
                   std::to_string(k));
      expect_matches_reference(kOnnxDomain, "Trilu",
                               {x, op_testing::i64({}, {k})},
                               {{"upper", upper}}, 0);
    }
    expect_matches_reference(kOnnxDomain, "Trilu",
                             {uniform({5, 3}, 8, -5, 5, DType::kI64)},
                             {{"upper", upper}}, 0);
  }
}

}  // namespace
}  // namespace seqrt::cpu
