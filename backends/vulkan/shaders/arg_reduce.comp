#version 450
// ArgMax (MAX = 1) and ArgMin along one axis of the (outer, len, inner)
// view: one workgroup per output, each invocation keeping its best (value,
// index), then a shared-memory tree. Ties go to the first index, or the
// last with LAST; NaN beats every number (as numpy's argmax/argmin). The
// i64 result is written as (index, 0).
#include "row_reduce.glsl"
layout(local_size_x = ROW_THREADS) in;
layout(constant_id = 0) const uint MAX = 1;
layout(constant_id = 1) const uint LAST = 0;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push {
  uint outputs;
  uint len;
  uint inner;
} p;

const uint NONE = 0xffffffffu;
shared float best_value[ROW_THREADS];
shared uint best_index[ROW_THREADS];

// Whether (v, i) should replace (w, k) as the best so far.
bool better(float v, uint i, float w, uint k) {
  if (i == NONE) return false;
  if (k == NONE) return true;
  bool v_nan = isnan(v), w_nan = isnan(w);
  bool tie = (v_nan && w_nan) || v == w;
  if (tie) return LAST != 0 ? i > k : i < k;
  if (v_nan != w_nan) return v_nan;
  return MAX != 0 ? v > w : v < w;
}

void main() {
  uint o = row_index();
  if (o >= p.outputs) return;  // uniform over the workgroup
  uint base = (o / p.inner) * p.len * p.inner + o % p.inner;
  uint lane = gl_LocalInvocationID.x;
  float value = 0.0;
  uint index = NONE;
  for (uint j = lane; j < p.len; j += ROW_THREADS) {
    float v = x[base + j * p.inner];
    if (better(v, j, value, index)) {
      value = v;
      index = j;
    }
  }
  best_value[lane] = value;
  best_index[lane] = index;
  barrier();
  for (uint half_width = ROW_THREADS / 2; half_width > 0; half_width /= 2) {
    if (lane < half_width) {
      float v = best_value[lane + half_width];
      uint i = best_index[lane + half_width];
      if (better(v, i, best_value[lane], best_index[lane])) {
        best_value[lane] = v;
        best_index[lane] = i;
      }
    }
    barrier();
  }
  if (lane == 0) {
    y[2 * o] = best_index[0] == NONE ? 0u : best_index[0];
    y[2 * o + 1] = 0u;
  }
}
