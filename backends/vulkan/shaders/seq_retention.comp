// seqrt::Retention, recurrent form (OPS.md): S_t = γ_h S_{t−1} +
// (scale·k_t)ᵀ v_t, y_t = q_t S_t. The same tiling as the selective scan:
// a workgroup owns CH value columns of one (batch, head); each column's dk
// state rows are split over NS invocations, NPI rows each, in registers (or
// shared memory); q and scale·k rows are staged per token tile in shared
// memory. The state is read once and written once per pass.
#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#include "sequence_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint CH = 1;    // value columns per workgroup
layout(constant_id = 2) const uint NS = 1;    // invocations per column
layout(constant_id = 3) const uint NPI = 1;   // state rows per invocation
layout(constant_id = 4) const uint TT = 16;   // tokens per q/k tile
layout(constant_id = 5) const uint STATE_SHARED = 0;
layout(constant_id = 6) const uint USE_SUBGROUP = 0;
layout(constant_id = 7) const uint COUNT_STORES = 0;  // debug: count state stores

const uint WG = CH * NS;
const uint NP = NS * NPI;
const uint REG_LEN = STATE_SHARED != 0 ? 1 : NPI;
const uint SH_STATE_LEN = STATE_SHARED != 0 ? CH * NP : 1;
const uint PART_LEN = USE_SUBGROUP != 0 ? 1 : CH * NS * TT;

layout(push_constant) uniform Params {
  uint batch, heads, seq_len, dk, dv, flags;
  float scale;
  uint t_begin, t_end;  // this dispatch's tokens (a segment, tiling.h)
} pc;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Past { float past_state[]; };
layout(std430, binding = 4) readonly buffer Gammas { float gammas[]; };
layout(std430, binding = 5) writeonly buffer Y { float y[]; };
layout(std430, binding = 6) writeonly buffer Present { float present[]; };
layout(std430, binding = 7) buffer Counter { uint store_count; };

// The scan's shared arrays less its A copy: the planner's byte count
// (tiling.cc, scan_shared_bytes) is an upper bound here.
shared float tile_k[NP * TT];
shared float tile_q[NP * TT];
shared float partial[PART_LEN];
shared float state_sh[SH_STATE_LEN];

float s_reg[REG_LEN];

float get_s(uint slot, uint i) {
  return STATE_SHARED != 0 ? state_sh[slot * NPI + i] : s_reg[i];
}
void set_s(uint slot, uint i, float value) {
  if (STATE_SHARED != 0) state_sh[slot * NPI + i] = value; else s_reg[i] = value;
}

void main() {
  const uint role = USE_SUBGROUP != 0
      ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID
      : gl_LocalInvocationIndex;
  const uint ch = role / NS;
  const uint ns = role % NS;
  const uint slot = ch * NS + ns;
  const uint bh = gl_WorkGroupID.y;
  const uint h = bh % pc.heads;
  const uint first = gl_WorkGroupID.x * CH;
  const uint col = first + ch;
  const uint len = pc.seq_len;
  const uint dk = pc.dk;
  const uint dv = pc.dv;
  const float gamma = gammas[h];

  for (uint i = 0; i < NPI; ++i) {
    const uint row = ns + i * NS;
    const bool given = row < dk && seq_flag(pc.flags, SEQ_HAS_PAST);
    set_s(slot, i, given ? past_state[(bh * dk + row) * dv + col] : 0.0);
  }

  for (uint t0 = pc.t_begin; t0 < pc.t_end; t0 += TT) {
    const uint tl = min(TT, pc.t_end - t0);
    barrier();
    for (uint idx = gl_LocalInvocationIndex; idx < NP * TT; idx += WG) {
      const uint row = idx / TT;
      const uint tt = idx % TT;
      const bool valid = row < dk && tt < tl;
      const uint at = (bh * len + t0 + tt) * dk + row;
      tile_k[idx] = valid ? pc.scale * k[at] : 0.0;
      tile_q[idx] = valid ? q[at] : 0.0;
    }
    barrier();
    for (uint tt = 0; tt < tl; ++tt) {
      const uint at = (bh * len + t0 + tt) * dv + col;
      const float vv = v[at];
      float sum = 0.0;
      for (uint i = 0; i < NPI; ++i) {
        const uint row = ns + i * NS;
        const float s = gamma * get_s(slot, i) + tile_k[row * TT + tt] * vv;
        set_s(slot, i, s);
        sum += s * tile_q[row * TT + tt];
      }
      if (USE_SUBGROUP != 0) {
        for (uint off = NS / 2; off > 0; off >>= 1) {
          sum += subgroupShuffleXor(sum, off);
        }
        if (ns == 0) y[at] = sum;
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
        y[(bh * len + t0 + tt) * dv + first + c] = sum;
      }
    }
  }

  if (!seq_flag(pc.flags, SEQ_HAS_PRESENT)) return;
  for (uint i = 0; i < NPI; ++i) {
    const uint row = ns + i * NS;
    if (row >= dk) continue;
    present[(bh * dk + row) * dv + col] = get_s(slot, i);
    if (COUNT_STORES != 0) atomicAdd(store_count, 1u);
  }
}
