#version 450
// Trilu over the last two dims, in 32-bit words (WORDS per element): keeps
// element (r, c) when c - r >= k (UPPER) or c - r <= k (lower), else 0.
#include "common.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint UPPER = 1;
layout(constant_id = 2) const uint WORDS = 1;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push {
  uint count;
  uint rows;
  uint cols;
  int k;
} p;

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  int c = int(i % p.cols);
  int r = int((i / p.cols) % p.rows);
  bool keep = UPPER != 0 ? c - r >= p.k : c - r <= p.k;
  for (uint w = 0; w < WORDS; ++w) {
    y[i * WORDS + w] = keep ? x[i * WORDS + w] : 0u;
  }
}
