// ScatterND and ScatterElements against the reference kernels: slices and
// single elements, every reduction, duplicate and negative indices, the
// typed (f32, i32, i64) and the fallback (f16, f64, i8) dtypes.
#include <gtest/gtest.h>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

constexpr const char* kReductions[] = {"none", "add", "mul", "max", "min"};

TEST(CpuScatter, ScatterNdSlicesAndElements) {
  for (DType dtype : {DType::kF32, DType::kI32, DType::kI64, DType::kF16,
                      DType::kF64, DType::kI8}) {
    Tensor data = uniform({5, 4, 3}, 1, -4, 4, dtype);
    // k = 1 (slices of 4x3), k = 2 (rows of 3), k = 3 (elements); indices
    // repeat and count from the back.
    for (int64_t k : {1, 2, 3}) {
      std::vector<int64_t> index_dims = {6, k};
      Tensor indices = Tensor::allocate(DType::kI64, index_dims).value();
      for (int64_t i = 0; i < indices.num_elements(); ++i) {
        const int64_t size = data.dim(i % k);
        indices.set_element_i64(i, (i * 7) % (2 * size) - size);
      }
      std::vector<int64_t> update_dims = {6};
      for (int64_t d = k; d < 3; ++d) update_dims.push_back(data.dim(d));
      Tensor updates = uniform(update_dims, 2 + k, -4, 4, dtype);
      for (const char* reduction : kReductions) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " k " +
                     std::to_string(k) + " " + reduction);
        expect_matches_reference(kOnnxDomain, "ScatterND",
                                 {data, indices, updates},
                                 {{"reduction", reduction}}, 1e-6);
      }
    }
  }
  auto bad =
      run_cpu("ScatterND",
              {uniform({3}, 3), op_testing::i64({1, 1}, {3}), uniform({1}, 4)});
  op_testing::expect_error(bad.status(), {"[ScatterND]", "out of range"});
}

TEST(CpuScatter, ScatterElementsEveryAxis) {
  for (DType dtype : {DType::kF32, DType::kI64, DType::kF16}) {
    Tensor data = uniform({4, 5, 6}, 5, -4, 4, dtype);
    for (int64_t axis : {0, 1, 2, -1}) {
      const int64_t size = data.dim(axis < 0 ? axis + 3 : axis);
      Tensor indices = uniform({3, 4, 5}, 6, -size, size, DType::kI64);
      Tensor updates = uniform({3, 4, 5}, 7, -4, 4, dtype);
      for (const char* reduction : kReductions) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " axis " +
                     std::to_string(axis) + " " + reduction);
        expect_matches_reference(
            kOnnxDomain, "ScatterElements", {data, indices, updates},
            {{"axis", axis}, {"reduction", reduction}}, 1e-6);
      }
    }
  }
}

}  // namespace
}  // namespace seqrt::cpu
