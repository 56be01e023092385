#include "ops/type_support.h"

#include <limits>
#include <vector>

namespace seqrt {

std::string DTypeSet::to_string() const {
  std::vector<std::string> names;
  for (int i = 1; i <= static_cast<int>(kLastDType); ++i) {
    DType dtype = static_cast<DType>(i);
    if (contains(dtype)) names.push_back(dtype_name(dtype));
  }
  if (names.empty()) return "nothing";
  std::string out = names[0];
  for (size_t i = 1; i < names.size(); ++i) {
    out += (i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return out;
}

Status check_input_dtype(const OpContext& ctx, const std::string& what,
                         DType dtype, DTypeSet allowed) {
  if (allowed.contains(dtype)) return Status::ok();
  return ctx.error("{} must be {}, got {}", what, allowed.to_string(),
                   dtype_name(dtype));
}

Status check_same_dtype(const OpContext& ctx, const std::string& what_a,
                        DType a, const std::string& what_b, DType b) {
  if (a == b) return Status::ok();
  return ctx.error("{} and {} must have the same dtype, got {} and {}", what_a,
                   what_b, dtype_name(a), dtype_name(b));
}

Result<DType> dtype_from_onnx_code(const OpContext& ctx,
                                   const std::string& attr_name, int64_t code) {
  switch (code) {
    case 1:
      return DType::kF32;
    case 2:
      return DType::kU8;
    case 3:
      return DType::kI8;
    case 6:
      return DType::kI32;
    case 7:
      return DType::kI64;
    case 9:
      return DType::kBool;
    case 10:
      return DType::kF16;
    case 11:
      return DType::kF64;
    case 16:
      return DType::kBF16;
    case 17:
      return DType::kF8E4M3FN;
    case 18:
      return DType::kF8E4M3FNUZ;
    case 19:
      return DType::kF8E5M2;
    case 20:
      return DType::kF8E5M2FNUZ;
    case 21:
      return DType::kU4;
    case 22:
      return DType::kI4;
    case 23:
      return DType::kF4E2M1;
    case 24:
      return DType::kF8E8M0;
    default:
      break;
  }
  return ctx.unsupported_error(
      "attribute '{}' is ONNX data type {}, which seqrt does not support; "
      "expected 1 (float), 2 (uint8), 3 (int8), 6 (int32), 7 (int64), 9 "
      "(bool), 10 (float16), 11 (double), 16 (bfloat16), 17-20 (the float8 "
      "types), 21 (uint4), 22 (int4), 23 (float4e2m1) or 24 (float8e8m0)",
      attr_name, code);
}

int64_t integer_lowest(DType dtype) {
  switch (dtype) {
    case DType::kI8:
      return std::numeric_limits<int8_t>::lowest();
    case DType::kI32:
      return std::numeric_limits<int32_t>::lowest();
    case DType::kI64:
      return std::numeric_limits<int64_t>::lowest();
    case DType::kI4:
      return -8;
    default:
      return 0;  // u8, u4, bool
  }
}

int64_t integer_highest(DType dtype) {
  switch (dtype) {
    case DType::kI8:
      return std::numeric_limits<int8_t>::max();
    case DType::kU8:
      return std::numeric_limits<uint8_t>::max();
    case DType::kI32:
      return std::numeric_limits<int32_t>::max();
    case DType::kI64:
      return std::numeric_limits<int64_t>::max();
    case DType::kBool:
      return 1;
    case DType::kI4:
      return 7;
    case DType::kU4:
      return 15;
    default:
      return 0;
  }
}

}  // namespace seqrt
