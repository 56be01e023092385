#version 450
// Softmax or LogSoftmax along one axis: one workgroup per line. The tensor is
// seen as (outer, len, inner); line r starts at (r / inner) * len *
// inner + r % inner and its elements are `inner` apart. The line's max is
// subtracted before exp so large inputs do not overflow.
#include "row_reduce.glsl"
layout(local_size_x = ROW_THREADS) in;
layout(constant_id = 0) const uint LOG = 0;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint rows;
  uint len;
  uint inner;
} p;

void main() {
  uint row = row_index();
  if (row >= p.rows) return;  // uniform over the workgroup
  uint base = (row / p.inner) * p.len * p.inner + row % p.inner;
  uint lane = gl_LocalInvocationID.x;
  float top = -3.402823466e38;
  for (uint j = lane; j < p.len; j += ROW_THREADS) {
    top = max(top, x[base + j * p.inner]);
  }
  top = row_reduce(top, 1);
  float sum = 0.0;
  for (uint j = lane; j < p.len; j += ROW_THREADS) {
    sum += exp(x[base + j * p.inner] - top);
  }
  sum = row_reduce(sum, 0);
  float log_sum = log(sum);
  for (uint j = lane; j < p.len; j += ROW_THREADS) {
    float shifted = x[base + j * p.inner] - top;
    y[base + j * p.inner] = LOG != 0 ? shifted - log_sum : exp(shifted) / sum;
  }
}
