// seqrt::SelectiveScan (Mamba-1, OPS.md), prefill and step alike.
// Each workgroup owns CH channels of one batch row; each channel's N states
// are split over NS invocations, NPI states each, held in registers (or in
// shared memory when the planner found registers too small). Per token tile
// the B/C rows of the channels' group are staged once in shared memory and
// read by every channel. softplus(Δ), the D skip and the z gate are fused.
// The state is read once at the start and written once at the end: it never
// goes through device memory between time steps.
#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#include "sequence_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint CH = 1;    // channels per workgroup
layout(constant_id = 2) const uint NS = 1;    // invocations per channel
layout(constant_id = 3) const uint NPI = 1;   // states per invocation
layout(constant_id = 4) const uint TT = 16;   // tokens per B/C tile
layout(constant_id = 5) const uint STATE_SHARED = 0;
layout(constant_id = 6) const uint USE_SUBGROUP = 0;
layout(constant_id = 7) const uint COUNT_STORES = 0;  // debug: count state stores

const uint WG = CH * NS;
const uint NP = NS * NPI;  // N padded to the split
const uint REG_LEN = STATE_SHARED != 0 ? 1 : NPI;
const uint SH_STATE_LEN = STATE_SHARED != 0 ? CH * NP : 1;
const uint PART_LEN = USE_SUBGROUP != 0 ? 1 : CH * NS * TT;

layout(push_constant) uniform Params {
  uint batch, channels, seq_len, states, groups, flags;
  uint t_begin, t_end;  // this dispatch's tokens (a segment, tiling.h)
} pc;

layout(std430, binding = 0) readonly buffer U { float u[]; };
layout(std430, binding = 1) readonly buffer Delta { float delta[]; };
layout(std430, binding = 2) readonly buffer AMat { float a_mat[]; };
layout(std430, binding = 3) readonly buffer BMat { float b_mat[]; };
layout(std430, binding = 4) readonly buffer CMat { float c_mat[]; };
layout(std430, binding = 5) readonly buffer Skip { float skip[]; };
layout(std430, binding = 6) readonly buffer Z { float z_gate[]; };
layout(std430, binding = 7) readonly buffer Bias { float delta_bias[]; };
layout(std430, binding = 8) readonly buffer Past { float past_state[]; };
layout(std430, binding = 9) writeonly buffer Y { float y[]; };
layout(std430, binding = 10) writeonly buffer Present { float present[]; };
layout(std430, binding = 11) buffer Counter { uint store_count; };

shared float tile_b[NP * TT];
shared float tile_c[NP * TT];
shared float partial[PART_LEN];
shared float state_sh[SH_STATE_LEN];
shared float a_sh[SH_STATE_LEN];

float h_reg[REG_LEN];
float a_reg[REG_LEN];

float get_h(uint slot, uint i) {
  return STATE_SHARED != 0 ? state_sh[slot * NPI + i] : h_reg[i];
}
void set_h(uint slot, uint i, float v) {
  if (STATE_SHARED != 0) state_sh[slot * NPI + i] = v; else h_reg[i] = v;
}
float get_a(uint slot, uint i) {
  return STATE_SHARED != 0 ? a_sh[slot * NPI + i] : a_reg[i];
}
void set_a(uint slot, uint i, float v) {
  if (STATE_SHARED != 0) a_sh[slot * NPI + i] = v; else a_reg[i] = v;
}

// y_t from the channel's sum over states: D skip and z gate applied.
float finish(float sum, uint d, uint at, float uv) {
  float out_v = sum;
  if (seq_flag(pc.flags, SEQ_HAS_SKIP)) out_v += skip[d] * uv;
  if (seq_flag(pc.flags, SEQ_HAS_Z)) out_v *= seq_silu(z_gate[at]);
  return out_v;
}

void main() {
  // With subgroup shuffles a channel's NS invocations must sit in one
  // subgroup: number them by subgroup (the planner makes WG a multiple of
  // the subgroup size and NS a divisor of it).
  const uint role = USE_SUBGROUP != 0
      ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID
      : gl_LocalInvocationIndex;
  const uint ch = role / NS;
  const uint ns = role % NS;
  const uint slot = ch * NS + ns;
  const uint n_size = pc.states;
  const uint len = pc.seq_len;
  const uint b = gl_WorkGroupID.y;
  const uint first = gl_WorkGroupID.x * CH;
  const uint d = first + ch;
  const uint g = first / (pc.channels / pc.groups);
  const bool has_past = seq_flag(pc.flags, SEQ_HAS_PAST);

  for (uint i = 0; i < NPI; ++i) {
    const uint n = ns + i * NS;
    const bool valid = n < n_size;
    const uint at = (b * pc.channels + d) * n_size + n;
    set_h(slot, i, valid && has_past ? past_state[at] : 0.0);
    set_a(slot, i, valid ? a_mat[d * n_size + n] : 0.0);
  }

  const uint row = (b * pc.channels + d) * len;
  const uint bc = (b * pc.groups + g) * n_size * len;
  const float bias = seq_flag(pc.flags, SEQ_HAS_BIAS) ? delta_bias[d] : 0.0;
  for (uint t0 = pc.t_begin; t0 < pc.t_end; t0 += TT) {
    const uint tl = min(TT, pc.t_end - t0);
    barrier();
    for (uint idx = gl_LocalInvocationIndex; idx < NP * TT; idx += WG) {
      const uint n = idx / TT;
      const uint tt = idx % TT;
      const bool valid = n < n_size && tt < tl;
      tile_b[idx] = valid ? b_mat[bc + n * len + t0 + tt] : 0.0;
      tile_c[idx] = valid ? c_mat[bc + n * len + t0 + tt] : 0.0;
    }
    barrier();
    for (uint tt = 0; tt < tl; ++tt) {
      const uint at = row + t0 + tt;
      float dt = delta[at] + bias;
      if (seq_flag(pc.flags, SEQ_SOFTPLUS)) dt = seq_softplus(dt);
      const float uv = u[at];
      const float du = dt * uv;
      float sum = 0.0;
      for (uint i = 0; i < NPI; ++i) {
        const uint n = ns + i * NS;
        const float h = exp(dt * get_a(slot, i)) * get_h(slot, i) +
                        du * tile_b[n * TT + tt];
        set_h(slot, i, h);
        sum += h * tile_c[n * TT + tt];
      }
      if (USE_SUBGROUP != 0) {
        for (uint off = NS / 2; off > 0; off >>= 1) {
          sum += subgroupShuffleXor(sum, off);
        }
        if (ns == 0) y[at] = finish(sum, d, at, uv);
      } else {
        partial[slot * TT + tt] = sum;
      }
    }
    if (USE_SUBGROUP == 0) {
      barrier();
      for (uint idx = gl_LocalInvocationIndex; idx < CH * TT; idx += WG) {
        const uint c = idx / TT;
        const uint tt = idx % TT;
        if (tt >= tl) continue;
        float sum = 0.0;
        for (uint s = 0; s < NS; ++s) sum += partial[(c * NS + s) * TT + tt];
        const uint dc = first + c;
        const uint at = (b * pc.channels + dc) * len + t0 + tt;
        y[at] = finish(sum, dc, at, u[at]);
      }
    }
  }

  if (!seq_flag(pc.flags, SEQ_HAS_PRESENT)) return;
  for (uint i = 0; i < NPI; ++i) {
    const uint n = ns + i * NS;
    if (n >= n_size) continue;
    present[(b * pc.channels + d) * n_size + n] = get_h(slot, i);
    if (COUNT_STORES != 0) atomicAdd(store_count, 1u);
  }
}
