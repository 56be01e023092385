#version 450
// Gather (ELEMENTS = 0) and GatherElements (ELEMENTS = 1), in 32-bit words
// (WORDS per element). Indices are i32 or i64 (INDEX_WORDS 1 or 2; the low
// word carries any index that fits the tensor); negative ones count from the
// end. An index out of range sets the error word (the run then fails naming
// the node) and is clamped, so nothing outside the data is read.
//
// Gather: the output is (outer, indices, inner) and reads data (outer,
// axis_len, inner). GatherElements: the output has the indices' dims; its
// coordinate c reads data at c with c[axis] replaced by the index.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint ELEMENTS = 0;
layout(constant_id = 2) const uint WORDS = 1;
layout(constant_id = 3) const uint INDEX_WORDS = 2;
layout(std430, binding = 0) readonly buffer Data { uint data[]; };
layout(std430, binding = 1) readonly buffer Indices { uint indices[]; };
layout(std430, binding = 2) writeonly buffer Out { uint result[]; };
layout(std430, binding = 3) writeonly buffer Error { uint error_word; };
layout(push_constant) uniform Push {
  uint count;  // output elements
  uint axis_len;
  uint inner;  // Gather: elements after the axis
  uint num_indices;  // Gather: indices per outer step
  uint rank;   // GatherElements: rank and axis
  uint axis;
  uint dims[MAX_RANK];          // GatherElements: output (indices) dims
  uint data_strides[MAX_RANK];  // GatherElements: data strides
} p;

uint index_at(uint j) {
  int v = int(indices[j * INDEX_WORDS]);
  // An i64 index fits in its low word when the high word is its sign.
  bool fits = INDEX_WORDS == 1 || indices[j * INDEX_WORDS + 1] ==
                                      (v < 0 ? 0xffffffffu : 0u);
  if (v < 0) v += int(p.axis_len);
  if (!fits || v < 0 || v >= int(p.axis_len)) error_word = 1u;
  return uint(clamp(v, 0, int(p.axis_len) - 1));
}

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  uint src;
  if (ELEMENTS == 0) {
    uint inner = i % p.inner;
    uint j = (i / p.inner) % p.num_indices;
    uint outer = i / (p.inner * p.num_indices);
    src = (outer * p.axis_len + index_at(j)) * p.inner + inner;
  } else {
    uint rest = i;
    src = 0;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      uint c = rest % p.dims[d];
      rest /= p.dims[d];
      src += (uint(d) == p.axis ? index_at(i) : c) * p.data_strides[d];
    }
  }
  for (uint w = 0; w < WORDS; ++w) result[i * WORDS + w] = data[src * WORDS + w];
}
