#version 450
// Slice whose starts, axes or steps are computed on the device (shape
// arithmetic): each invocation reads them, clamps the starts as ONNX does,
// and copies one element (WORDS 32-bit words). The output dims come from
// the plan, so `ends` is never read. Index inputs are i32 or i64
// (INDEX_WORDS 1 or 2).
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint WORDS = 1;
layout(constant_id = 2) const uint INDEX_WORDS = 2;
layout(constant_id = 3) const uint HAS_AXES = 0;
layout(constant_id = 4) const uint HAS_STEPS = 0;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer Starts { uint starts[]; };
layout(std430, binding = 2) readonly buffer Axes { uint axes[]; };
layout(std430, binding = 3) readonly buffer Steps { uint steps[]; };
layout(std430, binding = 4) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push {
  uint count;
  uint rank;
  uint entries;  // elements of starts
  uint in_dims[MAX_RANK];
  uint out_dims[MAX_RANK];
} p;

// Index k of an i32 or i64 buffer, saturated to +-2^30 when an i64 does
// not fit 32 bits (ONNX uses such values for "to the end").
int read_index(uint word_lo, uint word_hi) {
  if (INDEX_WORDS == 1) return int(word_lo);
  if (word_hi == uint(int(word_lo) >> 31)) return int(word_lo);
  return int(word_hi) < 0 ? -(1 << 30) : (1 << 30);
}

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  int start[MAX_RANK];
  int step[MAX_RANK];
  for (int d = 0; d < MAX_RANK; ++d) {
    start[d] = 0;
    step[d] = 1;
  }
  for (uint k = 0; k < p.entries; ++k) {
    uint at = k * INDEX_WORDS;
    int axis = HAS_AXES != 0 ? read_index(axes[at], axes[at + INDEX_WORDS - 1])
                             : int(k);
    if (axis < 0) axis += int(p.rank);
    int st = HAS_STEPS != 0
                 ? read_index(steps[at], steps[at + INDEX_WORDS - 1])
                 : 1;
    int dim = int(p.in_dims[axis]);
    int s = read_index(starts[at], starts[at + INDEX_WORDS - 1]);
    if (s < 0) s += dim;
    s = st > 0 ? clamp(s, 0, dim) : clamp(s, 0, dim - 1);
    start[axis] = s;
    step[axis] = st;
  }
  uint rest = i, src = 0, stride = 1;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    int c = int(rest % p.out_dims[d]);
    rest /= p.out_dims[d];
    src += uint(start[d] + c * step[d]) * stride;
    stride *= p.in_dims[d];
  }
  for (uint w = 0; w < WORDS; ++w) y[i * WORDS + w] = x[src * WORDS + w];
}
