#include "graph/dtype.h"

#include <cstring>

#include <fp16.h>

namespace seqrt {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
      return 2;
    case DType::kBF16:
      return 2;
    case DType::kF64:
      return 8;
    case DType::kI8:
      return 1;
    case DType::kU8:
      return 1;
    case DType::kI32:
      return 4;
    case DType::kI64:
      return 8;
    case DType::kBool:
      return 1;
    case DType::kUndefined:
      return 0;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kF64:
      return "f64";
    case DType::kI8:
      return "i8";
    case DType::kU8:
      return "u8";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kBool:
      return "bool";
    case DType::kUndefined:
      return "undefined";
  }
  return "undefined";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (int i = 1; i <= static_cast<int>(kLastDType); ++i) {
    DType dtype = static_cast<DType>(i);
    if (name == dtype_name(dtype)) return dtype;
  }
  return std::nullopt;
}

bool is_float(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 ||
         dtype == DType::kBF16 || dtype == DType::kF64;
}

bool is_integer(DType dtype) {
  return dtype == DType::kI8 || dtype == DType::kU8 || dtype == DType::kI32 ||
         dtype == DType::kI64;
}

float f16_to_f32(uint16_t bits) { return fp16_ieee_to_fp32_value(bits); }

uint16_t f32_to_f16(float value) { return fp16_ieee_from_fp32_value(value); }

float bf16_to_f32(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

uint16_t f32_to_bf16(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  if ((word & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // keep NaN a NaN
  uint32_t rounding = 0x7fffu + ((word >> 16) & 1u);
  return static_cast<uint16_t>((word + rounding) >> 16);
}

}  // namespace seqrt
