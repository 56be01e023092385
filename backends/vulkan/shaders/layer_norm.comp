#version 450
// LayerNormalization and RMSNormalization over contiguous rows of `len`
// elements: one workgroup per row. Scale and bias may broadcast to X's
// shape, so their element is found through strides over X's coordinates.
// Mean and 1/std (LayerNormalization's optional outputs) are written per
// row; the kernel gives scratch where the graph does not want them.
#include "common.glsl"
#include "row_reduce.glsl"
layout(local_size_x = ROW_THREADS) in;
layout(constant_id = 0) const uint RMS = 0;
layout(constant_id = 1) const uint HAS_BIAS = 0;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Scale { float scale[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(std430, binding = 4) writeonly buffer Mean { float mean_out[]; };
layout(std430, binding = 5) writeonly buffer InvStd { float inv_std_out[]; };
layout(push_constant) uniform Push {
  uint rows;
  uint len;
  uint rank;
  float epsilon;
  uint dims[MAX_RANK];
  uint scale_strides[MAX_RANK];
  uint bias_strides[MAX_RANK];
} p;

void main() {
  uint row = row_index();
  if (row >= p.rows) return;  // uniform over the workgroup
  uint base = row * p.len;
  uint lane = gl_LocalInvocationID.x;
  float mean = 0.0;
  if (RMS == 0) {
    float sum = 0.0;
    for (uint j = lane; j < p.len; j += ROW_THREADS) sum += x[base + j];
    mean = row_reduce(sum, 0) / float(p.len);
  }
  // Two passes (mean, then squared deviations) for accuracy.
  float squares = 0.0;
  for (uint j = lane; j < p.len; j += ROW_THREADS) {
    float d = x[base + j] - mean;
    squares += d * d;
  }
  float inv_std =
      inversesqrt(row_reduce(squares, 0) / float(p.len) + p.epsilon);
  if (lane == 0) {
    mean_out[row] = mean;
    inv_std_out[row] = inv_std;
  }
  for (uint j = lane; j < p.len; j += ROW_THREADS) {
    uint i = base + j, rest = i, si = 0, bi = 0;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      uint c = rest % p.dims[d];
      rest /= p.dims[d];
      si += c * p.scale_strides[d];
      bi += c * p.bias_strides[d];
    }
    float v = (x[i] - mean) * inv_std * scale[si];
    if (HAS_BIAS != 0) v += bias[bi];
    y[i] = v;
  }
}
