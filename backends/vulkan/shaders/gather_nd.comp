#version 450
// GatherND: output element i is element (i % slice) of slice t = i / slice,
// which starts in data at batch entry t / per_batch and the index tuple
// indices[t * K .. t * K + K). Elements in 32-bit words (WORDS per element;
// with WORDS 0, elements of PART_BYTES within a word, bools or halves, one
// output word per invocation). Indices are i32 or i64 (INDEX_WORDS 1 or 2;
// the low word carries any index that fits); negative ones count from the
// end. An index out of range sets the error word (the run then fails
// naming the node) and is clamped, so nothing outside the data is read.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint WORDS = 1;
layout(constant_id = 2) const uint PART_BYTES = 4;
layout(constant_id = 3) const uint INDEX_WORDS = 2;
layout(std430, binding = 0) readonly buffer Data { uint data[]; };
layout(std430, binding = 1) readonly buffer Indices { uint indices[]; };
layout(std430, binding = 2) writeonly buffer Out { uint result[]; };
layout(std430, binding = 3) writeonly buffer Error { uint error_word; };
layout(push_constant) uniform Push {
  uint count;         // output elements
  uint slice;         // elements per slice
  uint k;             // indices' last dim
  uint per_batch;     // tuples per batch entry
  uint batch_stride;  // data elements per batch entry
  uint dims[MAX_RANK];     // the sizes of the k indexed dims
  uint strides[MAX_RANK];  // their strides in data
} p;

uint index_at(uint j, uint size) {
  int v = int(indices[j * INDEX_WORDS]);
  // An i64 index fits in its low word when the high word is its sign.
  bool fits = INDEX_WORDS == 1 || indices[j * INDEX_WORDS + 1] ==
                                      (v < 0 ? 0xffffffffu : 0u);
  if (v < 0) v += int(size);
  if (!fits || v < 0 || v >= int(size)) error_word = 1u;
  return uint(clamp(v, 0, int(size) - 1));
}

// The data element output element i copies.
uint source_of(uint i) {
  uint t = i / p.slice;
  uint source = (t / p.per_batch) * p.batch_stride + i % p.slice;
  for (uint d = 0; d < p.k; ++d) {
    source += index_at(t * p.k + d, p.dims[d]) * p.strides[d];
  }
  return source;
}

void main() {
  uint i = flat_index();
  if (WORDS == 0) {
    const uint per_word = 4 / PART_BYTES;
    if (i * per_word >= p.count) return;
    uint packed = 0;
    for (uint e = 0; e < per_word && i * per_word + e < p.count; ++e) {
      uint part = PART_AT(data, source_of(i * per_word + e), PART_BYTES);
      packed |= part << (e * 8 * PART_BYTES);
    }
    result[i] = packed;
    return;
  }
  if (i >= p.count) return;
  uint source = source_of(i);
  for (uint w = 0; w < WORDS; ++w) {
    result[i * WORDS + w] = data[source * WORDS + w];
  }
}
