#version 450
// Trilu over the last two dims, in 32-bit words (WORDS per element; with
// WORDS 0, elements of PART_BYTES within a word, bools or halves, one
// output word per invocation): keeps element (r, c) when c - r >= k (UPPER)
// or c - r <= k (lower), else 0.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint UPPER = 1;
layout(constant_id = 2) const uint WORDS = 1;
layout(constant_id = 3) const uint PART_BYTES = 1;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push {
  uint count;
  uint rows;
  uint cols;
  int k;
} p;

bool keeps(uint i) {
  int c = int(i % p.cols);
  int r = int((i / p.cols) % p.rows);
  return UPPER != 0 ? c - r >= p.k : c - r <= p.k;
}

void main() {
  uint i = flat_index();
  if (WORDS == 0) {
    const uint per_word = 4 / PART_BYTES;
    if (i * per_word >= p.count) return;
    uint packed = 0;
    for (uint k = 0; k < per_word && i * per_word + k < p.count; ++k) {
      uint e = i * per_word + k;
      if (keeps(e)) packed |= PART_AT(x, e, PART_BYTES) << (k * 8 * PART_BYTES);
    }
    y[i] = packed;
    return;
  }
  if (i >= p.count) return;
  bool keep = keeps(i);
  for (uint w = 0; w < WORDS; ++w) {
    y[i * WORDS + w] = keep ? x[i * WORDS + w] : 0u;
  }
}
