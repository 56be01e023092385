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
  // 4-bit integers, two per byte as ONNX packs them: element i sits in the
  // low nibble of byte i/2 when i is even, in the high nibble when odd.
  kI4 = 10,
  kU4 = 11,
  // The ONNX float8 formats (one byte each): E4M3FN (no infinities, NaN
  // S.1111.111), E4M3FNUZ and E5M2FNUZ (no -0, 0x80 the only NaN), E5M2
  // (IEEE-like, with infinities).
  kF8E4M3FN = 12,
  kF8E4M3FNUZ = 13,
  kF8E5M2 = 14,
  kF8E5M2FNUZ = 15,
  // ONNX FLOAT8E8M0 (the OCP microscaling scale): exponent only, no sign, no
  // zero, no infinity; code c is 2^(c - 127), 0xff is NaN.
  kF8E8M0 = 16,
  // ONNX FLOAT4E2M1: sign, 2 exponent bits (bias 1), 1 mantissa bit, no
  // infinity or NaN: +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}. Packed two a byte like
  // kI4/kU4.
  kF4E2M1 = 17,
};

inline constexpr DType kLastDType = DType::kF4E2M1;

// Bits per element; 0 for kUndefined.
size_t dtype_bits(DType dtype);
// Bytes that `count` elements occupy, rounded up to whole bytes: the one way
// to size a tensor's storage (4-bit types pack two elements a byte).
size_t dtype_bytes(DType dtype, size_t count);
// Bytes per element of a byte-addressable dtype; 0 for kUndefined and for
// the packed 4-bit types, which have no whole-byte element (use dtype_bytes).
size_t dtype_size(DType dtype);
// "f32", "f16", "bf16", "f64", "i8", "u8", "i32", "i64", "bool", "i4", "u4",
// "f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz", "f8e8m0", "f4e2m1".
const char* dtype_name(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);
bool is_float(DType dtype);    // f32, f16, bf16, f64
bool is_integer(DType dtype);  // i8, u8, i32, i64
bool is_packed(DType dtype);   // i4, u4, f4e2m1: two elements a byte
bool is_float8(DType dtype);   // the five float8 formats, f8e8m0 included
// The float8s and f4e2m1: floats read and written through element_f64.
bool is_storage_float(DType dtype);
// Types only a few ops take (Cast, CastLike, the quantization ops,
// Constant): i4, u4, f4e2m1 and the float8s. Every other op refuses them
// at type check, so no kernel ever reads them as whole bytes.
bool is_storage_only(DType dtype);

// 4-bit elements of any packed dtype: element i of packed data (its raw
// nibble for u4 and f4e2m1), sign-extended for i4.
int8_t unpack_int4(const uint8_t* data, int64_t i, bool is_signed);
// Stores the low 4 bits of `value` as element i, keeping its neighbour.
void pack_int4(uint8_t* data, int64_t i, int8_t value);

// The float8 formats <-> float. Encoding rounds to nearest even; with
// `saturate`, values beyond the largest finite one (infinities included)
// become it; without, they become infinity (E5M2) or NaN (the others), as
// ONNX's Cast does. f8e8m0 encodes as f64_to_e8m0 with kUp, Cast's default.
float f8_to_f32(DType dtype, uint8_t bits);
uint8_t f64_to_f8(DType dtype, double value, bool saturate);

// ONNX Cast's `round_mode` for f8e8m0, on the magnitude: kUp to the nearest
// power of two at or above it, kDown at or below it, kNearest to the nearer
// one, a tie (1.5 * 2^k) going up.
enum class E8M0Rounding : uint8_t { kUp, kDown, kNearest };
// E8M0 has no sign, so the sign is dropped; magnitudes at or below 2^-127
// (zero included) become 0x00, 2^-127, its smallest value (ONNX's
// reference, reading the f32 exponent field, rounds nonzero f32 subnormals
// up to 0x01 instead; normal inputs agree in every mode). NaN and the
// infinities become 0xff (NaN) as ONNX's reference writes them; a finite
// magnitude that rounds past 2^127 becomes 0xfe (2^127) with `saturate`,
// else 0xff.
uint8_t f64_to_e8m0(double value, bool saturate, E8M0Rounding rounding);

// f4e2m1 nibbles (the low 4 bits) <-> float. Encoding rounds to nearest
// even and always saturates to +-6, the format having no infinity; NaN
// becomes 0x8 (-0), as ONNX's reference and its conformance data write it
// (the spec's table says +6).
float f4e2m1_to_f32(uint8_t nibble);
uint8_t f64_to_f4e2m1(double value);

// Conversions for the 16-bit float formats (IEEE half and bfloat16).
float f16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_bf16(float value);  // round to nearest even

}  // namespace seqrt
