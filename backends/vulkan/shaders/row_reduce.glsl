// Workgroup-wide sum and max for the one-workgroup-per-row shaders
// (softmax, norms, reductions): a shared-memory tree, since subgroup
// arithmetic is optional on Vulkan devices. Every invocation of the
// workgroup must call these in uniform control flow.
#ifndef SEQRT_ROW_REDUCE_GLSL
#define SEQRT_ROW_REDUCE_GLSL

#define ROW_THREADS 128
shared float row_partial[ROW_THREADS];

float row_combine(float a, float b, uint op) {
  if (op == 1) return max(a, b);
  if (op == 2) return min(a, b);
  if (op == 3) return a * b;
  return a + b;
}

// op: 0 sum, 1 max, 2 min, 3 product.
float row_reduce(float value, uint op) {
  uint lane = gl_LocalInvocationID.x;
  row_partial[lane] = value;
  barrier();
  for (uint half_width = ROW_THREADS / 2; half_width > 0; half_width /= 2) {
    if (lane < half_width) {
      row_partial[lane] =
          row_combine(row_partial[lane], row_partial[lane + half_width], op);
    }
    barrier();
  }
  float result = row_partial[0];
  barrier();  // row_partial is reused by the next call
  return result;
}

// The row this workgroup owns; rows past 65535 workgroups spill into y.
uint row_index() {
  return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
}

#endif
