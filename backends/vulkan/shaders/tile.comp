#version 450
// Tile: output element i reads the input element whose coordinate along
// every dim is the output's modulo the input's size, in 32-bit words
// (WORDS per element; with WORDS 0, elements of PART_BYTES within a word,
// bools or halves, one output word per invocation).
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint WORDS = 1;
layout(constant_id = 2) const uint PART_BYTES = 1;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push {
  uint count;
  uint rank;
  uint out_dims[MAX_RANK];
  uint in_dims[MAX_RANK];
} p;

// The input element output element i copies.
uint source_of(uint i) {
  uint rest = i;
  uint source = 0;
  uint stride = 1;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint coord = rest % p.out_dims[d];
    rest /= p.out_dims[d];
    source += (coord % p.in_dims[d]) * stride;
    stride *= p.in_dims[d];
  }
  return source;
}

void main() {
  uint i = flat_index();
  if (WORDS == 0) {
    const uint per_word = 4 / PART_BYTES;
    if (i * per_word >= p.count) return;
    uint packed = 0;
    for (uint k = 0; k < per_word && i * per_word + k < p.count; ++k) {
      uint part = PART_AT(x, source_of(i * per_word + k), PART_BYTES);
      packed |= part << (k * 8 * PART_BYTES);
    }
    y[i] = packed;
    return;
  }
  if (i >= p.count) return;
  uint source = source_of(i);
  for (uint w = 0; w < WORDS; ++w) y[i * WORDS + w] = x[source * WORDS + w];
}
