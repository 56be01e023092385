// Attention (OPS.md; seqrt::Attention and ONNX Attention): tiled flash
// attention with an online softmax, or sigmoid scores (no max/sum).
//
// A workgroup owns BQ rows of one (batch, kv head): row r is query r % Tq of
// query head kv_head * G + r / Tq (G = Hq / Hkv), so every query head that
// shares the kv head reads the same K/V tiles (GQA). Each row's d query
// values and dv accumulators are split over NS invocations (DPI and VPI
// each, in registers). Keys are walked in tiles of BK, staged in shared
// memory with their values; only the tiles that some row of the workgroup
// can see (causal, windows, valid length) are visited. The per-key dot
// products are summed over a row's NS invocations with subgroup shuffles or
// through shared memory. Keys come from past_key then K (concat on T)
// without a copy.
//
// With SPLIT the workgroup sees only keys [z * keys_per_split, ...) and
// writes its unnormalised accumulators, running max and sum to a partial
// buffer; seq_attention_reduce combines the splits (decode over long
// caches, where one query row per head leaves the device idle).
#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#include "sequence_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BQ = 1;   // rows per workgroup
layout(constant_id = 2) const uint NS = 1;   // invocations per row
layout(constant_id = 3) const uint DPI = 1;  // query values per invocation
layout(constant_id = 4) const uint VPI = 1;  // accumulators per invocation
layout(constant_id = 5) const uint BK = 16;  // keys per K/V tile
layout(constant_id = 6) const uint USE_SUBGROUP = 0;
layout(constant_id = 7) const uint SPLIT = 0;  // write split-K partials

const uint WG = BQ * NS;
const uint DP = NS * DPI;  // d padded to the split
const uint VP = NS * VPI;  // dv padded to the split
const uint PART_LEN = USE_SUBGROUP != 0 ? 1 : BQ * NS * BK;

layout(push_constant) uniform Params {
  uint batch, q_heads, kv_heads, q_len, new_len, past_len, head_dim, value_dim;
  uint flags;
  float scale, softcap, sigmoid_bias;
  int window_left, window_right, causal_shift;
  uint mask_cols;
  uint mask_stride[4];
  uint keys_per_split, splits;
} pc;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Mask { uint mask_words[]; };
layout(std430, binding = 4) readonly buffer PastK { float past_k[]; };
layout(std430, binding = 5) readonly buffer PastV { float past_v[]; };
layout(std430, binding = 6) readonly buffer Lens { uint kv_lens[]; };
layout(std430, binding = 7) writeonly buffer Y { float y[]; };

shared float k_tile[BK * DP];
shared float v_tile[BK * VP];
shared float scores[BQ * BK];
shared float partial[PART_LEN];
shared uint range_lo, range_hi;

float q_reg[DPI];
float acc[VPI];

struct Row {
  bool valid;
  uint head, query;  // query head, query index
  int lo, hi;        // visible keys [lo, hi) before the mask
};

uint total_len() { return pc.past_len + pc.new_len; }

Row row_info(uint r, uint b, uint kv_head) {
  const uint group = pc.q_heads / pc.kv_heads;
  Row row;
  row.valid = r < group * pc.q_len;
  row.head = kv_head * group + r / pc.q_len;
  row.query = r % pc.q_len;
  const int len = seq_flag(pc.flags, ATTN_HAS_LENS) ? int(kv_lens[b])
                                                    : int(total_len());
  // Bottom-right aligned position, moved by causal_shift for ONNX's
  // top-left causal alignment.
  const int p = len - int(pc.q_len) + int(row.query) + pc.causal_shift;
  row.lo = 0;
  row.hi = len;
  if (seq_flag(pc.flags, ATTN_CAUSAL)) row.hi = min(row.hi, p + 1);
  if (pc.window_left >= 0) row.lo = max(row.lo, p - pc.window_left);
  if (pc.window_right >= 0) row.hi = min(row.hi, p + pc.window_right + 1);
  if (seq_flag(pc.flags, ATTN_HAS_MASK)) row.hi = min(row.hi, int(pc.mask_cols));
  if (!row.valid) row.hi = row.lo;
  return row;
}

// Element strides (batch, head, time) of Q / K,V / Y: (B,H,T,w), or the
// packed (B,T,H*w) of 3D ONNX inputs.
uvec3 strides(uint heads, uint len, uint width) {
  if (seq_flag(pc.flags, ATTN_PACKED)) {
    return uvec3(len * heads * width, width, heads * width);
  }
  return uvec3(heads * len * width, len * width, width);
}

// The logit of (row, key j) after scale, softcap, the mask (and the sigmoid
// bias); -inf when the key is hidden.
float finish_score(float dot, uint r, uint b, uint kv_head, int j) {
  const Row row = row_info(r, b, kv_head);
  if (j < row.lo || j >= row.hi) return SEQ_NEG_INF;
  float s = dot;  // q was scaled on load
  if (pc.softcap > 0.0) s = pc.softcap * seq_tanh(s / pc.softcap);
  if (seq_flag(pc.flags, ATTN_HAS_MASK)) {
    const uint at = b * pc.mask_stride[0] + row.head * pc.mask_stride[1] +
                    row.query * pc.mask_stride[2] + uint(j) * pc.mask_stride[3];
    if (seq_flag(pc.flags, ATTN_MASK_BOOL)) {
      const uint byte_v = (mask_words[at / 4u] >> (8u * (at % 4u))) & 0xffu;
      if (byte_v == 0u) return SEQ_NEG_INF;
    } else {
      s += uintBitsToFloat(mask_words[at]);
    }
  }
  if (seq_flag(pc.flags, ATTN_SIGMOID)) s += pc.sigmoid_bias;
  return s;
}

void main() {
  const uint role = USE_SUBGROUP != 0
      ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID
      : gl_LocalInvocationIndex;
  const uint lr = role / NS;  // row within the workgroup
  const uint ns = role % NS;
  const uint r = gl_WorkGroupID.x * BQ + lr;
  const uint b = gl_WorkGroupID.y / pc.kv_heads;
  const uint kv_head = gl_WorkGroupID.y % pc.kv_heads;
  const uint d = pc.head_dim;
  const uint dv = pc.value_dim;
  const bool sigmoid = seq_flag(pc.flags, ATTN_SIGMOID);
  const Row row = row_info(r, b, kv_head);

  // This workgroup's keys: the union of its rows' bands, within its split.
  const int split_lo = int(gl_WorkGroupID.z * pc.keys_per_split);
  const int split_hi = split_lo + int(pc.keys_per_split);
  if (gl_LocalInvocationIndex == 0) {
    range_lo = 0xffffffffu;
    range_hi = 0u;
  }
  barrier();
  const int my_lo = max(row.lo, split_lo);
  const int my_hi = min(row.hi, split_hi);
  if (ns == 0 && my_lo < my_hi) {
    atomicMin(range_lo, uint(my_lo));
    atomicMax(range_hi, uint(my_hi));
  }
  barrier();
  const uint lo = range_lo;
  const uint hi = range_hi;

  const uvec3 qs = strides(pc.q_heads, pc.q_len, d);
  const uint q_at = b * qs.x + row.head * qs.y + row.query * qs.z;
  for (uint i = 0; i < DPI; ++i) {
    const uint c = ns + i * NS;
    q_reg[i] = row.valid && c < d ? pc.scale * q[q_at + c] : 0.0;
  }
  for (uint i = 0; i < VPI; ++i) acc[i] = 0.0;
  float run_max = SEQ_NEG_INF;
  float run_sum = 0.0;

  const uvec3 ks = strides(pc.kv_heads, pc.new_len, d);
  const uvec3 vs = strides(pc.kv_heads, pc.new_len, dv);
  const uint past_row = b * pc.kv_heads + kv_head;
  for (uint t0 = lo; t0 < hi; t0 += BK) {
    const uint tl = min(BK, hi - t0);
    barrier();  // the previous tile's readers are done
    for (uint idx = gl_LocalInvocationIndex; idx < BK * DP; idx += WG) {
      const uint kk = idx / DP, c = idx % DP, j = t0 + kk;
      float value = 0.0;
      if (kk < tl && c < d) {
        value = j < pc.past_len
            ? past_k[(past_row * pc.past_len + j) * d + c]
            : k[b * ks.x + kv_head * ks.y + (j - pc.past_len) * ks.z + c];
      }
      k_tile[idx] = value;
    }
    for (uint idx = gl_LocalInvocationIndex; idx < BK * VP; idx += WG) {
      const uint kk = idx / VP, c = idx % VP, j = t0 + kk;
      float value = 0.0;
      if (kk < tl && c < dv) {
        value = j < pc.past_len
            ? past_v[(past_row * pc.past_len + j) * dv + c]
            : v[b * vs.x + kv_head * vs.y + (j - pc.past_len) * vs.z + c];
      }
      v_tile[idx] = value;
    }
    barrier();
    for (uint kk = 0; kk < tl; ++kk) {
      float dot = 0.0;
      for (uint i = 0; i < DPI; ++i) dot += q_reg[i] * k_tile[kk * DP + ns + i * NS];
      if (USE_SUBGROUP != 0) {
        for (uint off = NS / 2; off > 0; off >>= 1) {
          dot += subgroupShuffleXor(dot, off);
        }
        if (ns == 0) {
          scores[lr * BK + kk] = finish_score(dot, r, b, kv_head, int(t0 + kk));
        }
      } else {
        partial[(lr * NS + ns) * BK + kk] = dot;
      }
    }
    if (USE_SUBGROUP == 0) {
      barrier();
      for (uint idx = gl_LocalInvocationIndex; idx < BQ * BK; idx += WG) {
        const uint row2 = idx / BK, kk = idx % BK;
        if (kk >= tl) continue;
        float dot = 0.0;
        for (uint s = 0; s < NS; ++s) dot += partial[(row2 * NS + s) * BK + kk];
        scores[idx] = finish_score(dot, gl_WorkGroupID.x * BQ + row2, b,
                                   kv_head, int(t0 + kk));
      }
    }
    barrier();
    if (sigmoid) {
      for (uint kk = 0; kk < tl; ++kk) {
        const float s = scores[lr * BK + kk];
        if (s == SEQ_NEG_INF) continue;
        const float w = seq_sigmoid(s);
        for (uint i = 0; i < VPI; ++i) acc[i] += w * v_tile[kk * VP + ns + i * NS];
      }
      continue;
    }
    float tile_max = SEQ_NEG_INF;
    for (uint kk = 0; kk < tl; ++kk) tile_max = max(tile_max, scores[lr * BK + kk]);
    if (tile_max == SEQ_NEG_INF) continue;  // nothing visible to this row
    const float new_max = max(run_max, tile_max);
    const float correction = exp(run_max - new_max);  // 0 for the first
    run_sum *= correction;
    for (uint i = 0; i < VPI; ++i) acc[i] *= correction;
    for (uint kk = 0; kk < tl; ++kk) {
      const float s = scores[lr * BK + kk];
      if (s == SEQ_NEG_INF) continue;
      const float w = exp(s - new_max);
      run_sum += w;
      for (uint i = 0; i < VPI; ++i) acc[i] += w * v_tile[kk * VP + ns + i * NS];
    }
    run_max = new_max;
  }

  if (!row.valid) return;
  const uint global_row = (b * pc.q_heads + row.head) * pc.q_len + row.query;
  if (SPLIT != 0) {
    // acc, max, sum of this split; the reduce pass normalises.
    const uint at = (global_row * pc.splits + gl_WorkGroupID.z) * (dv + 2);
    for (uint i = 0; i < VPI; ++i) {
      const uint c = ns + i * NS;
      if (c < dv) y[at + c] = acc[i];
    }
    if (ns == 0) {
      y[at + dv] = run_max;
      y[at + dv + 1] = run_sum;
    }
    return;
  }
  // A row with no visible key keeps acc = 0 and sum = 0: its output is 0.
  const float norm = sigmoid || run_sum == 0.0 ? 1.0 : 1.0 / run_sum;
  const uvec3 ys = strides(pc.q_heads, pc.q_len, dv);
  const uint y_at = b * ys.x + row.head * ys.y + row.query * ys.z;
  for (uint i = 0; i < VPI; ++i) {
    const uint c = ns + i * NS;
    if (c < dv) y[y_at + c] = acc[i] * norm;
  }
}
