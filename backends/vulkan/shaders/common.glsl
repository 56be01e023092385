// Shared helpers of the standard-op shaders (backends/vulkan/kernels).
#ifndef SEQRT_COMMON_GLSL
#define SEQRT_COMMON_GLSL

#define MAX_RANK 6

// The flat invocation index of a 1-D launch that may spill into y when the
// x group count passes the device limit (kernel_util.cc groups_for).
uint flat_index() {
  return gl_GlobalInvocationID.x +
         gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
}

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
