// Shared helpers of the standard-op shaders (backends/vulkan/kernels).
#ifndef SEQRT_COMMON_GLSL
#define SEQRT_COMMON_GLSL

#define MAX_RANK 6

// erf to ~1.5e-7 (Abramowitz and Stegun 7.1.26); GLSL has none.
float erf_approx(float x) {
  float s = sign(x);
  float a = abs(x);
  float t = 1.0 / (1.0 + 0.3275911 * a);
  float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t -
                    0.284496736) * t + 0.254829592) * t * exp(-a * a);
  return s * y;
}

// Byte `index` of a buffer of bools read as 32-bit words.
#define BOOL_AT(words, index) \
  ((((words)[(index) >> 2]) >> (((index) & 3u) * 8u)) & 0xffu)

// IEEE half bits (the low 16 of `h`) to a float, exactly (subnormals,
// infinities and NaNs included).
float half_bits_to_float(uint h) {
  uint sign = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu;
  uint m = h & 0x3ffu;
  if (e == 0u) {
    float v = float(m) * 5.9604644775390625e-8;  // m * 2^-24
    return sign != 0u ? -v : v;
  }
  if (e == 31u) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
  return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

// A float to IEEE half bits, rounded to nearest even as the CPU backend
// does (packHalf2x16 leaves the rounding to the driver): too large -> inf,
// too small -> a subnormal or zero, NaN stays NaN.
uint float_to_half_bits(float value) {
  uint x = floatBitsToUint(value);
  uint sign = (x >> 16) & 0x8000u;
  uint e = (x >> 23) & 0xffu;
  uint m = x & 0x7fffffu;
  if (e == 0xffu) return sign | 0x7c00u | (m != 0u ? 0x200u | (m >> 13) : 0u);
  int exp = int(e) - 112;  // the half exponent field
  if (exp >= 31) return sign | 0x7c00u;
  if (exp <= 0) {
    if (exp < -10) return sign;
    m |= 0x800000u;
    uint shift = uint(14 - exp);
    uint h = m >> shift;
    uint rest = m & ((1u << shift) - 1u);
    uint halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (h & 1u) != 0u)) h += 1u;
    return sign | h;
  }
  uint h = sign | (uint(exp) << 10) | (m >> 13);
  uint rest = m & 0x1fffu;
  // A carry out of the mantissa steps the exponent, up to inf: correct.
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0u)) h += 1u;
  return h;
}

// Element `index` of a buffer of 32-bit words holding elements of `part`
// bytes (1: bools, 2: halves), in the low bits.
#define PART_AT(words, index, part)                                  \
  ((((words)[(index) / (4u / (part))]) >>                            \
    (((index) % (4u / (part))) * 8u * (part))) &                     \
   ((1u << (8u * (part))) - 1u))

// A 64-bit integer as (low word, high word) to a float; the shaders avoid
// the optional shaderInt64 feature.
float i64_to_float(uint lo, uint hi) {
  // Values that fit 32 bits convert in one rounding; the split form would
  // round lo first and lose the low bits of small negative numbers.
  if (hi == uint(int(lo) >> 31)) return float(int(lo));
  return float(int(hi)) * 4294967296.0 + float(lo);
}

// Splits a whole-number float into (low word, high word) of an int64.
uvec2 float_to_i64(float whole) {
  if (abs(whole) < 2147483648.0) {
    int v = int(whole);
    return uvec2(uint(v), v < 0 ? 0xffffffffu : 0u);
  }
  // Past 2^31 a float is a multiple of 256, so the split is exact.
  float high = floor(whole / 4294967296.0);
  return uvec2(uint(whole - high * 4294967296.0), uint(int(high)));
}

#endif
