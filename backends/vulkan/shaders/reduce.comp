#version 450
// ReduceSum/Mean/Max/Min over any set of axes: one workgroup per output
// element. The kept coordinates (from the output index) give the row's base;
// the workgroup's invocations stride over the reduced coordinates.
#include "common.glsl"
#include "row_reduce.glsl"
layout(local_size_x = ROW_THREADS) in;
layout(constant_id = 0) const uint OP = 0;  // 0 sum, 1 mean, 2 max, 3 min
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint outputs;
  uint reduced;  // elements per output
  uint keep_rank;
  uint reduce_rank;
  uint keep_dims[MAX_RANK];
  uint keep_strides[MAX_RANK];
  uint reduce_dims[MAX_RANK];
  uint reduce_strides[MAX_RANK];
} p;

// Offset of the index-th coordinate of dims through strides.
uint offset_of(uint index, uint rank, bool keep) {
  uint off = 0, rest = index;
  for (int d = int(rank) - 1; d >= 0; --d) {
    uint size = keep ? p.keep_dims[d] : p.reduce_dims[d];
    uint stride = keep ? p.keep_strides[d] : p.reduce_strides[d];
    off += (rest % size) * stride;
    rest /= size;
  }
  return off;
}

void main() {
  uint o = row_index();
  if (o >= p.outputs) return;  // uniform over the workgroup
  uint base = offset_of(o, p.keep_rank, true);
  // Identities: the empty sum is 0, the empty max -inf, the empty min +inf.
  float identity = OP == 2 ? -1.0 / 0.0 : (OP == 3 ? 1.0 / 0.0 : 0.0);
  uint combine = OP == 2 ? 1 : (OP == 3 ? 2 : 0);
  float acc = identity;
  for (uint r = gl_LocalInvocationID.x; r < p.reduced; r += ROW_THREADS) {
    acc = row_combine(acc, x[base + offset_of(r, p.reduce_rank, false)],
                      combine);
  }
  acc = row_reduce(acc, combine);
  if (gl_LocalInvocationID.x == 0) {
    y[o] = OP == 1 ? acc / float(p.reduced) : acc;
  }
}
