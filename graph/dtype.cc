#include "graph/dtype.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fp16.h>

namespace seqrt {

size_t dtype_bits(DType dtype) {
  if (is_packed(dtype)) return 4;
  return 8 * dtype_size(dtype);
}

size_t dtype_bytes(DType dtype, size_t count) {
  return (count * dtype_bits(dtype) + 7) / 8;
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kI4:
    case DType::kU4:
    case DType::kF4E2M1:
      return 0;
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ:
    case DType::kF8E8M0:
      return 1;
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
    case DType::kI4:
      return "i4";
    case DType::kU4:
      return "u4";
    case DType::kF8E4M3FN:
      return "f8e4m3fn";
    case DType::kF8E4M3FNUZ:
      return "f8e4m3fnuz";
    case DType::kF8E5M2:
      return "f8e5m2";
    case DType::kF8E5M2FNUZ:
      return "f8e5m2fnuz";
    case DType::kF8E8M0:
      return "f8e8m0";
    case DType::kF4E2M1:
      return "f4e2m1";
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

bool is_packed(DType dtype) {
  return dtype == DType::kI4 || dtype == DType::kU4 || dtype == DType::kF4E2M1;
}

bool is_float8(DType dtype) {
  return dtype == DType::kF8E4M3FN || dtype == DType::kF8E4M3FNUZ ||
         dtype == DType::kF8E5M2 || dtype == DType::kF8E5M2FNUZ ||
         dtype == DType::kF8E8M0;
}

bool is_storage_float(DType dtype) {
  return is_float8(dtype) || dtype == DType::kF4E2M1;
}

bool is_storage_only(DType dtype) {
  return is_packed(dtype) || is_float8(dtype);
}

int8_t unpack_int4(const uint8_t* data, int64_t i, bool is_signed) {
  const uint8_t byte = data[i / 2];
  const int nibble = (i % 2 == 0) ? (byte & 0x0f) : (byte >> 4);
  if (is_signed && nibble >= 8) return static_cast<int8_t>(nibble - 16);
  return static_cast<int8_t>(nibble);
}

void pack_int4(uint8_t* data, int64_t i, int8_t value) {
  const uint8_t nibble = static_cast<uint8_t>(value) & 0x0f;
  uint8_t& byte = data[i / 2];
  byte = (i % 2 == 0) ? static_cast<uint8_t>((byte & 0xf0) | nibble)
                      : static_cast<uint8_t>((byte & 0x0f) | (nibble << 4));
}

namespace {

// A small sign-exponent-mantissa layout (the float8s but E8M0, and
// f4e2m1): exponent and mantissa widths, bias, the largest finite
// magnitude as a code, and which specials it has.
struct SmallFloatFormat {
  int exp_bits;
  int man_bits;
  int bias;
  uint8_t max_code;  // largest finite magnitude, sign bit clear
  bool fnuz;         // 0x80 is the NaN; no -0, no infinity
  bool has_inf;      // E5M2: exponent all ones is inf (mantissa 0) or NaN
};

SmallFloatFormat small_float_format(DType dtype) {
  switch (dtype) {
    case DType::kF8E4M3FNUZ:
      return {4, 3, 8, 0x7f, true, false};
    case DType::kF8E5M2:
      return {5, 2, 15, 0x7b, false, true};
    case DType::kF8E5M2FNUZ:
      return {5, 2, 16, 0x7f, true, false};
    case DType::kF4E2M1:  // no specials at all: 0x7 (6) is the largest
      return {2, 1, 1, 0x7, false, false};
    default:  // kF8E4M3FN: S.1111.111 is NaN, so 0x7e is the largest
      return {4, 3, 7, 0x7e, false, false};
  }
}

uint8_t nan_code(const SmallFloatFormat& f) { return f.fnuz ? 0x80 : 0x7f; }

// The value of a magnitude code (sign bit clear) that is neither NaN nor
// infinity.
double decode_magnitude(const SmallFloatFormat& f, int code) {
  const int exp_field = code >> f.man_bits;
  const int mantissa = code & ((1 << f.man_bits) - 1);
  if (exp_field == 0) return std::ldexp(mantissa, 1 - f.bias - f.man_bits);
  return std::ldexp((1 << f.man_bits) + mantissa,
                    exp_field - f.bias - f.man_bits);
}

// The magnitude code nearest a finite `magnitude` >= 0, ties to even; a
// code above f.max_code means it overflowed the format.
int encode_magnitude(const SmallFloatFormat& f, double magnitude) {
  const int min_exp = 1 - f.bias;  // exponent of the smallest normal
  int frexp_exp = 0;
  std::frexp(magnitude, &frexp_exp);
  const int exp = std::max(frexp_exp - 1, min_exp);
  // Scaling by a power of two is exact, so nearbyint rounds the true value
  // to nearest even.
  const double steps = std::nearbyint(std::ldexp(magnitude, f.man_bits - exp));
  const double implicit = std::ldexp(1.0, f.man_bits);
  if (steps < implicit) return static_cast<int>(steps);  // subnormal or 0
  if (steps >= 2 * implicit) {  // rounded up into the next binade
    return (exp + 1 + f.bias) << f.man_bits;
  }
  return ((exp + f.bias) << f.man_bits) | static_cast<int>(steps - implicit);
}

constexpr uint8_t kE8M0Nan = 0xff;

float e8m0_to_f32(uint8_t bits) {
  if (bits == kE8M0Nan) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, bits - 127);  // 2^-127 is an f32 subnormal
}

}  // namespace

float f8_to_f32(DType dtype, uint8_t bits) {
  if (dtype == DType::kF8E8M0) return e8m0_to_f32(bits);
  const SmallFloatFormat f = small_float_format(dtype);
  const uint8_t magnitude = bits & 0x7f;
  const bool negative = (bits & 0x80) != 0;
  if (f.fnuz && bits == 0x80) return std::numeric_limits<float>::quiet_NaN();
  if (!f.fnuz && !f.has_inf && magnitude == 0x7f) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  if (f.has_inf && (magnitude >> f.man_bits) == (1 << f.exp_bits) - 1) {
    if ((magnitude & ((1 << f.man_bits) - 1)) != 0) {
      return std::numeric_limits<float>::quiet_NaN();
    }
    return negative ? -std::numeric_limits<float>::infinity()
                    : std::numeric_limits<float>::infinity();
  }
  const double value = decode_magnitude(f, magnitude);
  return static_cast<float>(negative ? -value : value);
}

uint8_t f64_to_f8(DType dtype, double value, bool saturate) {
  if (dtype == DType::kF8E8M0) {
    return f64_to_e8m0(value, saturate, E8M0Rounding::kUp);
  }
  const SmallFloatFormat f = small_float_format(dtype);
  if (std::isnan(value)) return nan_code(f);
  const uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  const uint8_t overflow =
      saturate ? static_cast<uint8_t>(f.max_code | sign)
               : (f.has_inf ? static_cast<uint8_t>(0x7c | sign) : nan_code(f));
  if (std::isinf(value)) return overflow;
  const int code = encode_magnitude(f, std::fabs(value));
  if (code > f.max_code) return overflow;
  if (code == 0) return f.fnuz ? 0 : sign;
  return static_cast<uint8_t>(sign | code);
}

uint8_t f64_to_e8m0(double value, bool saturate, E8M0Rounding rounding) {
  if (!std::isfinite(value)) return kE8M0Nan;
  const double magnitude = std::fabs(value);
  constexpr int kBias = 127;
  if (magnitude <= std::ldexp(1.0, -kBias)) return 0;
  int frexp_exp = 0;
  // magnitude = fraction * 2^frexp_exp with fraction in [0.5, 1), so it
  // lies in [2^exp, 2^(exp + 1)) before rounding.
  const double fraction = std::frexp(magnitude, &frexp_exp);
  int exp = frexp_exp - 1;
  switch (rounding) {
    case E8M0Rounding::kUp:
      if (fraction != 0.5) ++exp;
      break;
    case E8M0Rounding::kDown:
      break;
    case E8M0Rounding::kNearest:  // the midpoint is 1.5 * 2^exp
      if (fraction >= 0.75) ++exp;
      break;
  }
  const int code = exp + kBias;
  if (code > 0xfe) return saturate ? 0xfe : kE8M0Nan;
  return static_cast<uint8_t>(code);
}

float f4e2m1_to_f32(uint8_t nibble) {
  const SmallFloatFormat f = small_float_format(DType::kF4E2M1);
  const auto value = static_cast<float>(decode_magnitude(f, nibble & 0x7));
  return (nibble & 0x8) != 0 ? -value : value;
}

uint8_t f64_to_f4e2m1(double value) {
  if (std::isnan(value)) return 0x8;
  const SmallFloatFormat f = small_float_format(DType::kF4E2M1);
  const uint8_t sign = std::signbit(value) ? 0x8 : 0x0;
  if (std::isinf(value)) return sign | f.max_code;
  const int code = encode_magnitude(f, std::fabs(value));
  return static_cast<uint8_t>(sign | std::min<int>(code, f.max_code));
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
