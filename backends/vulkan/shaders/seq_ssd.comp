// seqrt::SSD (Mamba-2, OPS.md), recurrent form: prefill and step alike.
// Δ = clamp(softplus(dt + dt_bias), dt_min, dt_max); per head a scalar
// decay e^{Δ·A_h} of a P×N state: h_t = e^{Δ A} h_{t−1} + Δ x_t ⊗ Bm_t,
// y_t = h_t·Cm_t + D_h x_t, gated by silu(z_t). The selective scan's
// tiling: a workgroup owns CH head columns p of one (batch, head); each
// column's N states are split over NS invocations (NPI each) in registers
// (or shared memory); the Bm/Cm rows of the head's group are staged per
// token tile. The state is read once and written once per pass.
#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#include "sequence_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint CH = 1;
layout(constant_id = 2) const uint NS = 1;
layout(constant_id = 3) const uint NPI = 1;
layout(constant_id = 4) const uint TT = 16;
layout(constant_id = 5) const uint STATE_SHARED = 0;
layout(constant_id = 6) const uint USE_SUBGROUP = 0;

const uint WG = CH * NS;
const uint NP = NS * NPI;
const uint REG_LEN = STATE_SHARED != 0 ? 1 : NPI;
const uint SH_STATE_LEN = STATE_SHARED != 0 ? CH * NP : 1;
const uint PART_LEN = USE_SUBGROUP != 0 ? 1 : CH * NS * TT;

layout(push_constant) uniform Params {
  uint batch, seq_len, heads, head_dim, states, groups, flags;
  float dt_min, dt_max;
  uint t_begin, t_end;  // this dispatch's tokens (a segment, tiling.h)
} pc;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Dt { float dt_in[]; };
layout(std430, binding = 2) readonly buffer AVec { float a_vec[]; };
layout(std430, binding = 3) readonly buffer BMat { float b_mat[]; };
layout(std430, binding = 4) readonly buffer CMat { float c_mat[]; };
layout(std430, binding = 5) readonly buffer Skip { float skip[]; };
layout(std430, binding = 6) readonly buffer Z { float z_gate[]; };
layout(std430, binding = 7) readonly buffer Bias { float dt_bias[]; };
layout(std430, binding = 8) readonly buffer Past { float past_state[]; };
layout(std430, binding = 9) writeonly buffer Y { float y[]; };
layout(std430, binding = 10) writeonly buffer Present { float present[]; };

shared float tile_b[NP * TT];
shared float tile_c[NP * TT];
shared float partial[PART_LEN];
shared float state_sh[SH_STATE_LEN];

float h_reg[REG_LEN];

float get_h(uint slot, uint i) {
  return STATE_SHARED != 0 ? state_sh[slot * NPI + i] : h_reg[i];
}
void set_h(uint slot, uint i, float v) {
  if (STATE_SHARED != 0) state_sh[slot * NPI + i] = v; else h_reg[i] = v;
}

float finish(float sum, uint head, uint at, float xv) {
  float out_v = sum;
  if (seq_flag(pc.flags, SEQ_HAS_SKIP)) out_v += skip[head] * xv;
  if (seq_flag(pc.flags, SEQ_HAS_Z)) out_v *= seq_silu(z_gate[at]);
  return out_v;
}

void main() {
  const uint role = USE_SUBGROUP != 0
      ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID
      : gl_LocalInvocationIndex;
  const uint ch = role / NS;
  const uint ns = role % NS;
  const uint slot = ch * NS + ns;
  const uint bh = gl_WorkGroupID.y;
  const uint b = bh / pc.heads, head = bh % pc.heads;
  const uint g = head / (pc.heads / pc.groups);
  const uint first = gl_WorkGroupID.x * CH;
  const uint p = first + ch;
  const uint n_size = pc.states, len = pc.seq_len, P = pc.head_dim;
  const uint state_at = (bh * P + p) * n_size;
  for (uint i = 0; i < NPI; ++i) {
    const uint n = ns + i * NS;
    const bool given = n < n_size && seq_flag(pc.flags, SEQ_HAS_PAST);
    set_h(slot, i, given ? past_state[state_at + n] : 0.0);
  }
  const float a = a_vec[head];
  const float bias = seq_flag(pc.flags, SEQ_HAS_BIAS) ? dt_bias[head] : 0.0;
  for (uint t0 = pc.t_begin; t0 < pc.t_end; t0 += TT) {
    const uint tl = min(TT, pc.t_end - t0);
    barrier();
    for (uint idx = gl_LocalInvocationIndex; idx < NP * TT; idx += WG) {
      const uint n = idx / TT, tt = idx % TT;
      const bool valid = n < n_size && tt < tl;
      const uint at = ((b * len + t0 + tt) * pc.groups + g) * n_size + n;
      tile_b[idx] = valid ? b_mat[at] : 0.0;
      tile_c[idx] = valid ? c_mat[at] : 0.0;
    }
    barrier();
    for (uint tt = 0; tt < tl; ++tt) {
      const uint token = b * len + t0 + tt;
      const float dt = seq_ssd_step(dt_in[token * pc.heads + head], bias,
                                    seq_flag(pc.flags, SEQ_SOFTPLUS),
                                    pc.dt_min, pc.dt_max);
      const float decay = exp(dt * a);
      const uint at = (token * pc.heads + head) * P + p;
      const float xv = x[at];
      const float dx = dt * xv;
      float sum = 0.0;
      for (uint i = 0; i < NPI; ++i) {
        const uint n = ns + i * NS;
        const float h = decay * get_h(slot, i) + dx * tile_b[n * TT + tt];
        set_h(slot, i, h);
        sum += h * tile_c[n * TT + tt];
      }
      if (USE_SUBGROUP != 0) {
        for (uint off = NS / 2; off > 0; off >>= 1) {
          sum += subgroupShuffleXor(sum, off);
        }
        if (ns == 0) y[at] = finish(sum, head, at, xv);
      } else {
        partial[slot * TT + tt] = sum;
      }
    }
    if (USE_SUBGROUP == 0) {
      barrier();
      for (uint idx = gl_LocalInvocationIndex; idx < CH * TT; idx += WG) {
        const uint c = idx / TT, tt = idx % TT;
        if (tt >= tl) continue;
        float sum = 0.0;
        for (uint s = 0; s < NS; ++s) sum += partial[(c * NS + s) * TT + tt];
        const uint at = ((b * len + t0 + tt) * pc.heads + head) * P + first + c;
        y[at] = finish(sum, head, at, x[at]);
      }
    }
  }
  if (!seq_flag(pc.flags, SEQ_HAS_PRESENT)) return;
  for (uint i = 0; i < NPI; ++i) {
    const uint n = ns + i * NS;
    if (n < n_size) present[state_at + n] = get_h(slot, i);
  }
}
