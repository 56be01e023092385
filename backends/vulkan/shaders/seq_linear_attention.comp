// ONNX LinearAttention (opset 27), recurrent form, all four update rules:
//   linear       S_t = S_{t-1} + k_t v_tᵀ
//   gated        S_t = e^{g_t} S_{t-1} + k_t v_tᵀ
//   delta        S_t = S_{t-1} + β_t k_t (v_t − S_{t-1}ᵀ k_t)ᵀ
//   gated_delta  S_t = e^{g_t} S_{t-1} + β_t k_t (v_t − e^{g_t} S_{t-1}ᵀ k_t)ᵀ
// and o_t = scale · q_tᵀ S_t for each query head of the kv head's group.
// A workgroup owns CH value columns of one (batch, kv head); each column's
// dk state rows are split over NS invocations (NPI each) in registers, or
// shared memory when the planner found registers too small. Per token tile
// the k rows, the G query heads' q rows and the decays are staged in shared
// memory. Sums over a column's rows (Sᵀk for the delta rules, qᵀS for the
// outputs) use subgroup shuffles or shared memory. The state is read once
// and written once per pass.
#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#include "sequence_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint CH = 1;   // value columns per workgroup
layout(constant_id = 2) const uint NS = 1;   // invocations per column
layout(constant_id = 3) const uint NPI = 1;  // state rows per invocation
layout(constant_id = 4) const uint TT = 16;  // tokens per tile
layout(constant_id = 5) const uint STATE_SHARED = 0;
layout(constant_id = 6) const uint USE_SUBGROUP = 0;
layout(constant_id = 7) const uint G = 1;  // query heads per kv head

const uint WG = CH * NS;
const uint NP = NS * NPI;
const uint REG_LEN = STATE_SHARED != 0 ? 1 : NPI;
const uint SH_STATE_LEN = STATE_SHARED != 0 ? CH * NP : 1;
const uint RED_LEN = USE_SUBGROUP != 0 || NS == 1 ? 1 : WG * G;

// Flag bits (sequence_linear_attention.cc).
const uint LA_DECAY = 1u, LA_DECAY_PER_KEY = 2u, LA_BETA = 4u,
           LA_BETA_PER_HEAD = 8u, LA_HAS_PAST = 16u, LA_HAS_PRESENT = 32u;

layout(push_constant) uniform Params {
  uint batch, seq_len, q_heads, kv_heads, dk, dv, flags;
  float scale;
  uint t_begin, t_end;  // this dispatch's tokens (a segment, tiling.h)
} pc;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Past { float past_state[]; };
layout(std430, binding = 4) readonly buffer Decay { float decay[]; };
layout(std430, binding = 5) readonly buffer Beta { float beta[]; };
layout(std430, binding = 6) writeonly buffer Out { float o[]; };
layout(std430, binding = 7) writeonly buffer Present { float present[]; };

shared float tile_k[NP * TT];
shared float tile_q[G * NP * TT];
shared float tile_f[NP * TT];  // e^decay per row (or per head in row 0)
shared float tile_beta[TT];
shared float red[RED_LEN];
shared float state_sh[SH_STATE_LEN];

float s_reg[REG_LEN];

float get_s(uint slot, uint i) {
  return STATE_SHARED != 0 ? state_sh[slot * NPI + i] : s_reg[i];
}
void set_s(uint slot, uint i, float value) {
  if (STATE_SHARED != 0) state_sh[slot * NPI + i] = value; else s_reg[i] = value;
}

// The sum of `x` over the NS invocations of a column (every one gets it).
// Called in uniform control flow: the shared-memory path has barriers.
float column_sum(float x, uint ch, uint slot, uint h) {
  if (NS == 1) return x;
  if (USE_SUBGROUP != 0) {
    for (uint off = NS / 2; off > 0; off >>= 1) x += subgroupShuffleXor(x, off);
    return x;
  }
  red[slot * G + h] = x;
  barrier();
  float total = 0.0;
  for (uint s = 0; s < NS; ++s) total += red[(ch * NS + s) * G + h];
  barrier();
  return total;
}

void main() {
  const uint role = USE_SUBGROUP != 0
      ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID
      : gl_LocalInvocationIndex;
  const uint ch = role / NS;
  const uint ns = role % NS;
  const uint slot = ch * NS + ns;
  const uint j = gl_WorkGroupID.x * CH + ch;  // value column
  const uint b = gl_WorkGroupID.y / pc.kv_heads;
  const uint g = gl_WorkGroupID.y % pc.kv_heads;
  const uint dk = pc.dk, dv = pc.dv, len = pc.seq_len;
  const uint state_at = (b * pc.kv_heads + g) * dk * dv;
  const bool has_past = seq_flag(pc.flags, LA_HAS_PAST);
  for (uint r = 0; r < NPI; ++r) {
    const uint i = ns + r * NS;
    set_s(slot, r, i < dk && has_past ? past_state[state_at + i * dv + j] : 0.0);
  }

  const bool gated = seq_flag(pc.flags, LA_DECAY);
  const bool per_key = seq_flag(pc.flags, LA_DECAY_PER_KEY);
  const bool delta = seq_flag(pc.flags, LA_BETA);
  const uint decay_width = per_key ? pc.kv_heads * dk : pc.kv_heads;
  const uint beta_width = seq_flag(pc.flags, LA_BETA_PER_HEAD) ? pc.kv_heads : 1;
  for (uint t0 = pc.t_begin; t0 < pc.t_end; t0 += TT) {
    const uint tl = min(TT, pc.t_end - t0);
    barrier();  // the previous tile's readers are done
    for (uint idx = gl_LocalInvocationIndex; idx < NP * TT; idx += WG) {
      const uint i = idx / TT, tt = idx % TT, t = t0 + tt;
      const bool valid = i < dk && tt < tl;
      const uint row = b * len + t;
      tile_k[idx] = valid ? k[row * pc.kv_heads * dk + g * dk + i] : 0.0;
      float f = 1.0;
      if (valid && gated) {
        f = exp(per_key ? decay[row * decay_width + g * dk + i]
                        : decay[row * decay_width + g]);
      }
      tile_f[idx] = f;
      for (uint h = 0; h < G; ++h) {
        tile_q[(h * NP + i) * TT + tt] =
            valid ? q[row * pc.q_heads * dk + (g * G + h) * dk + i] : 0.0;
      }
    }
    for (uint tt = gl_LocalInvocationIndex; tt < TT; tt += WG) {
      tile_beta[tt] = delta && tt < tl
          ? beta[(b * len + t0 + tt) * beta_width + (beta_width == 1 ? 0 : g)]
          : 0.0;
    }
    barrier();
    for (uint tt = 0; tt < tl; ++tt) {
      const uint row = b * len + t0 + tt;
      float sk = 0.0;
      for (uint r = 0; r < NPI; ++r) {
        const uint i = ns + r * NS;
        float s = get_s(slot, r);
        if (gated) s *= tile_f[i * TT + tt];
        set_s(slot, r, s);
        sk += s * tile_k[i * TT + tt];
      }
      float u = v[row * pc.kv_heads * dv + g * dv + j];
      if (delta) u = tile_beta[tt] * (u - column_sum(sk, ch, slot, 0));
      float part[G];
      for (uint h = 0; h < G; ++h) part[h] = 0.0;
      for (uint r = 0; r < NPI; ++r) {
        const uint i = ns + r * NS;
        const float s = get_s(slot, r) + tile_k[i * TT + tt] * u;
        set_s(slot, r, s);
        for (uint h = 0; h < G; ++h) part[h] += tile_q[(h * NP + i) * TT + tt] * s;
      }
      if (NS > 1 && USE_SUBGROUP == 0) {
        // All G sums through shared memory with one pair of barriers.
        for (uint h = 0; h < G; ++h) red[slot * G + h] = part[h];
        barrier();
        for (uint h = 0; h < G; ++h) {
          float total = 0.0;
          for (uint s = 0; s < NS; ++s) total += red[(ch * NS + s) * G + h];
          part[h] = total;
        }
        barrier();
      } else {
        for (uint h = 0; h < G; ++h) part[h] = column_sum(part[h], ch, slot, h);
      }
      if (ns == 0) {
        for (uint h = 0; h < G; ++h) {
          o[row * pc.q_heads * dv + (g * G + h) * dv + j] = pc.scale * part[h];
        }
      }
    }
  }

  if (!seq_flag(pc.flags, LA_HAS_PRESENT)) return;
  for (uint r = 0; r < NPI; ++r) {
    const uint i = ns + r * NS;
    if (i < dk) present[state_at + i * dv + j] = get_s(slot, r);
  }
}
