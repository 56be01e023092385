#version 450
// Pad in 32-bit words (WORDS per element). MODE 0 constant (the value's
// words come in the push constants), 1 reflect (mirror without repeating
// the edge), 2 edge (repeat the edge), 3 wrap. Each output coordinate c maps
// to c - begin in the input, folded back in by the mode.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint WORDS = 1;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push {
  uint count;
  uint rank;
  uint value[2];
  uint out_dims[MAX_RANK];
  uint in_dims[MAX_RANK];
  int begin[MAX_RANK];
} p;

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  uint rest = i, src = 0, stride = 1;
  bool outside = false;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    int size = int(p.in_dims[d]);
    int c = int(rest % p.out_dims[d]) - p.begin[d];
    rest /= p.out_dims[d];
    if (c < 0 || c >= size) {
      if (MODE == 0) {
        outside = true;
      } else if (MODE == 1) {
        // Mirror about the edges until inside (pads may pass the size).
        int period = 2 * (size - 1);
        c = period == 0 ? 0 : abs(c) % period;
        if (c >= size) c = period - c;
      } else if (MODE == 2) {
        c = clamp(c, 0, size - 1);
      } else {
        c = ((c % size) + size) % size;
      }
    }
    src += uint(c) * stride;
    stride *= uint(size);
  }
  for (uint w = 0; w < WORDS; ++w) {
    y[i * WORDS + w] = outside ? p.value[w] : x[src * WORDS + w];
  }
}
