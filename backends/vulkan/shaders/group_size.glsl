// The workgroup size of shaders whose size is spec constant 0, and
// GROUP_SIZE to read it by. Shaders read GROUP_SIZE, never
// gl_WorkGroupSize: lavapipe (Mesa 22.3) evaluates gl_WorkGroupSize with
// the unspecialised size 1, so loops striding by it ran every element in
// every invocation there, and a GPU would run other code than the tests.
#ifndef SEQRT_GROUP_SIZE_GLSL
#define SEQRT_GROUP_SIZE_GLSL

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint GROUP_SIZE = 64;

#endif
