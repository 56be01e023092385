#include "tests/onnx_node/tensor_compare.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace seqrt::onnx_node {
namespace {

// "[1,2]": the multi-index of flat element `flat` in row-major `dims`.
std::string index_to_string(const std::vector<int64_t>& dims, int64_t flat) {
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] == 0) continue;
    index[i] = flat % dims[i];
    flat /= dims[i];
  }
  return fmt::format("[{}]", fmt::join(index, ","));
}

bool floats_match(double got, double expected, const Tolerance& tolerance) {
  if (std::isnan(got) || std::isnan(expected)) {
    return std::isnan(got) && std::isnan(expected);
  }
  if (std::isinf(got) || std::isinf(expected)) return got == expected;
  return std::fabs(got - expected) <=
         tolerance.atol + tolerance.rtol * std::fabs(expected);
}

std::string mismatch_message(const Tensor& expected, int64_t flat,
                             const std::string& got_text,
                             const std::string& expected_text,
                             const std::string& tolerance_text) {
  return fmt::format("element {} (index {}): got {}, expected {} ({})", flat,
                     index_to_string(expected.dims(), flat), got_text,
                     expected_text, tolerance_text);
}

}  // namespace

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return {1e-3, 1e-5};
    case DType::kF16:
      return {1e-2, 1e-3};
    case DType::kBF16:
      return {2e-2, 1e-2};
    case DType::kF64:
      return {1e-7, 1e-10};
    default:
      return {0, 0};
  }
}

std::optional<std::string> compare_tensors(const Tensor& got,
                                           const Tensor& expected) {
  if (got.dtype() != expected.dtype()) {
    return fmt::format("dtype {}, expected {}", dtype_name(got.dtype()),
                       dtype_name(expected.dtype()));
  }
  if (got.dims() != expected.dims()) {
    return fmt::format("dims {}, expected {}", dims_to_string(got.dims()),
                       dims_to_string(expected.dims()));
  }
  const DType dtype = expected.dtype();
  // float8 and f4e2m1 values compare as floats (NaN equals NaN), exactly:
  // ONNX's conversion rounds one way.
  if (is_float(dtype) || is_storage_float(dtype)) {
    const Tolerance tolerance = tolerance_for(dtype);
    for (int64_t i = 0; i < expected.num_elements(); ++i) {
      const double g = got.element_f64(i);
      const double e = expected.element_f64(i);
      if (!floats_match(g, e, tolerance)) {
        return mismatch_message(
            expected, i, fmt::format("{}", g), fmt::format("{}", e),
            fmt::format("{}: rtol {}, atol {}", dtype_name(dtype),
                        tolerance.rtol, tolerance.atol));
      }
    }
    return std::nullopt;
  }
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const int64_t g = got.element_i64(i);
    const int64_t e = expected.element_i64(i);
    if (g != e) {
      return mismatch_message(expected, i, std::to_string(g), std::to_string(e),
                              fmt::format("{}: exact", dtype_name(dtype)));
    }
  }
  return std::nullopt;
}

}  // namespace seqrt::onnx_node
