// Element types of tensors and values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace seqrt {

// The numeric values are part of the .seqrt format (schema/seqrt.fbs): never
// renumber, only append.
enum class DType : uint8_t {
  kUndefined = 0,
  kF32 = 1,
  kF16 = 2,
  kBF16 = 3,
  kF64 = 4,
  kI8 = 5,
  kU8 = 6,
  kI32 = 7,
  kI64 = 8,
  kBool = 9,
};

inline constexpr DType kLastDType = DType::kBool;

// Bytes per element; 0 for kUndefined.
size_t dtype_size(DType dtype);
// "f32", "f16", "bf16", "f64", "i8", "u8", "i32", "i64", "bool".
const char* dtype_name(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);
bool is_float(DType dtype);    // f32, f16, bf16, f64
bool is_integer(DType dtype);  // i8, u8, i32, i64

// Conversions for the 16-bit float formats (IEEE half and bfloat16).
float f16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_bf16(float value);  // round to nearest even

}  // namespace seqrt
