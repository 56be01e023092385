// The flat index of the element-wise and copy shaders: a 1-D launch of
// GROUP_SIZE invocations per workgroup (the host's kLocalSize) that spills
// into y past the device's x limit (kernels/kernel_util.cc groups_for).
#ifndef SEQRT_FLAT_INDEX_GLSL
#define SEQRT_FLAT_INDEX_GLSL

#include "group_size.glsl"

uint flat_index() {
  return gl_GlobalInvocationID.x +
         gl_GlobalInvocationID.y * gl_NumWorkGroups.x * GROUP_SIZE;
}

#endif
