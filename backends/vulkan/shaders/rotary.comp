#version 450
// RotaryEmbedding (opset 23): one invocation per element of X, which is
// (batch, seq, heads * head_size) or (batch, heads, seq, head_size). Pairs
// are channels (i, i + rot / 2), or (2i, 2i + 1) when INTERLEAVED; the
// cache row is position_ids[b, s] (HAS_POSITIONS) or b * seq + s.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint INTERLEAVED = 0;
layout(constant_id = 2) const uint HAS_POSITIONS = 0;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Cos { float cos_cache[]; };
layout(std430, binding = 2) readonly buffer Sin { float sin_cache[]; };
layout(std430, binding = 3) readonly buffer Positions { uint positions[]; };
layout(std430, binding = 4) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint count;
  uint head_size;
  uint rot;        // rotated channels per head
  uint seq_div;    // flat-index elements per step along seq
  uint seq;
  uint batch_div;  // flat-index elements per batch
} p;

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  uint c = i % p.head_size;
  if (c >= p.rot) {
    y[i] = x[i];
    return;
  }
  uint s = (i / p.seq_div) % p.seq;
  uint b = i / p.batch_div;
  uint row = b * p.seq + s;
  if (HAS_POSITIONS != 0) row = positions[2 * row];  // i64: low word
  uint half_rot = p.rot / 2;
  uint pair;
  bool first;
  uint partner;
  if (INTERLEAVED != 0) {
    pair = c / 2;
    first = c % 2 == 0;
    partner = first ? i + 1 : i - 1;
  } else {
    first = c < half_rot;
    pair = first ? c : c - half_rot;
    partner = first ? i + half_rot : i - half_rot;
  }
  float cs = cos_cache[row * half_rot + pair];
  float sn = sin_cache[row * half_rot + pair];
  y[i] = first ? x[i] * cs - x[partner] * sn : x[partner] * sn + x[i] * cs;
}
