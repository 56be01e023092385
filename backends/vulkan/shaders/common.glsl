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

#endif
