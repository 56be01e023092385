// seqrt::NeuralMemory (Titans long-term memory, OPS.md): the token loop.
// One workgroup per (batch, head) runs tokens [t_begin, t_end): its memory
// MLP's weights W, momentum S and anchor weights live in `work` (B,H,3·P),
// too large for shared memory; the per-token vectors (hidden, residual,
// backpropagated) live in shared memory. Per token: the anchor is reset at
// chunk starts (absolute positions), the gradient of Σ(M(k) − v)² is taken
// at the anchor, S = ηS − θ∇, W = (1 − α)W + S, and y = M(q) before or
// after the update. Segments of tokens (tiling.h) continue from `work`.
// `position` (B, i64) is read here: a negative one sets the error word and
// the workgroup stops.
#version 450
#include "neural_memory.glsl"

#include "group_size.glsl"
layout(constant_id = 1) const uint MAXW = 64;  // max(d, m)

layout(push_constant) uniform Params {
  uint batch, heads, seq_len, d, m, depth, flags, chunk;
  uint t_begin, t_end;
} pc;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Theta { float theta[]; };
layout(std430, binding = 4) readonly buffer Eta { float eta[]; };
layout(std430, binding = 5) readonly buffer Alpha { float alpha[]; };
layout(std430, binding = 6) readonly buffer W1 { float w1_init[]; };
layout(std430, binding = 7) readonly buffer W2 { float w2_init[]; };
layout(std430, binding = 8) readonly buffer Past { float past_state[]; };
layout(std430, binding = 9) readonly buffer Positions { uint positions[]; };  // i64 words
layout(std430, binding = 10) writeonly buffer Y { float y[]; };
layout(std430, binding = 11) coherent buffer Work { float work[]; };
layout(std430, binding = 12) writeonly buffer Error { uint error_word[]; };

shared float hid[MAXW];   // x·W1
shared float outv[MAXW];  // M(x), then the residual r = 2(M(k) − v)
shared float back[MAXW];  // (r·W2ᵀ) ⊙ act'(h)

float act(float x) { return nm_act(x, pc.flags); }

float act_derivative(float x) { return nm_act_derivative(x, pc.flags); }

void sync() {
  memoryBarrierBuffer();
  memoryBarrierShared();
  barrier();
}

// outv = M(x) with the weights at work[base...]; x is row `row` of `src`
// (0: q, 1: k). Leaves hid = x·W1.
void forward(uint base, uint row, uint src) {
  const uint d = pc.d;
  const uint width = pc.depth == 2 ? pc.m : d;
  for (uint j = gl_LocalInvocationIndex; j < width; j += GROUP_SIZE) {
    float sum = 0.0;
    for (uint i = 0; i < d; ++i) {
      const float xi = src == 0 ? q[row * d + i] : k[row * d + i];
      sum += xi * work[base + i * width + j];
    }
    hid[j] = sum;
  }
  sync();
  if (pc.depth == 1) {
    for (uint l = gl_LocalInvocationIndex; l < d; l += GROUP_SIZE) {
      outv[l] = hid[l];
    }
  } else {
    const uint w2 = base + d * pc.m;
    for (uint l = gl_LocalInvocationIndex; l < d; l += GROUP_SIZE) {
      float sum = 0.0;
      for (uint j = 0; j < pc.m; ++j) sum += act(hid[j]) * work[w2 + j * d + l];
      outv[l] = sum;
    }
  }
  sync();
}

void main() {
  const uint bh = gl_WorkGroupID.y;
  const uint b = bh / pc.heads, h = bh % pc.heads;
  const uint d = pc.d, m = pc.m;
  const uint params = pc.depth == 2 ? 2 * d * m : d * m;
  const uint wbase = bh * 3 * params;
  const uint sbase = wbase + params;
  const uint abase = sbase + params;
  const uint lid = gl_LocalInvocationIndex, wg = GROUP_SIZE;

  uint position = 0u;  // modulo the chunk
  if (seq_flag(pc.flags, NM_HAS_POSITION)) {
    const uint lo = positions[2 * b], hi = positions[2 * b + 1];
    if (int(hi) < 0) {
      if (lid == 0u) error_word[0] = 1u;
      return;  // the whole workgroup: b is the same for all
    }
    position = nm_wide_mod(lo, hi, pc.chunk);
  }
  if (seq_flag(pc.flags, NM_INIT)) {
    for (uint e = lid; e < params; e += wg) {
      float w;
      if (seq_flag(pc.flags, NM_HAS_PAST)) {
        work[wbase + e] = past_state[wbase + e];
        work[sbase + e] = past_state[sbase + e];
        work[abase + e] = past_state[abase + e];
        continue;
      }
      w = e < d * m ? w1_init[h * d * m + e] : w2_init[h * m * d + e - d * m];
      work[wbase + e] = w;
      work[sbase + e] = 0.0;
      work[abase + e] = w;
    }
    sync();
  }
  for (uint t = pc.t_begin; t < pc.t_end; ++t) {
    const uint row = bh * pc.seq_len + t;
    if ((position + t) % pc.chunk == 0u) {
      for (uint e = lid; e < params; e += wg) work[abase + e] = work[wbase + e];
      sync();
    }
    if (seq_flag(pc.flags, NM_BEFORE)) {
      forward(wbase, row, 0u);
      for (uint l = lid; l < d; l += wg) y[row * d + l] = outv[l];
      sync();
    }
    // The gradient at the anchor: r = 2(M(k) − v), back = (r·W2ᵀ) ⊙ act'(h).
    forward(abase, row, 1u);
    for (uint l = lid; l < d; l += wg) outv[l] = 2.0 * (outv[l] - v[row * d + l]);
    sync();
    if (pc.depth == 2) {
      const uint a2 = abase + d * m;
      for (uint j = lid; j < m; j += wg) {
        float sum = 0.0;
        for (uint l = 0; l < d; ++l) sum += outv[l] * work[a2 + j * d + l];
        back[j] = sum * act_derivative(hid[j]);
      }
      sync();
    }
    const float th = theta[row], et = eta[row], keep = 1.0 - alpha[row];
    for (uint e = lid; e < params; e += wg) {
      float grad;
      if (pc.depth == 1) {
        grad = k[row * d + e / d] * outv[e % d];
      } else if (e < d * m) {
        grad = k[row * d + e / m] * back[e % m];
      } else {
        const uint f = e - d * m;
        grad = act(hid[f / d]) * outv[f % d];
      }
      const float s = et * work[sbase + e] - th * grad;
      work[sbase + e] = s;
      work[wbase + e] = keep * work[wbase + e] + s;
    }
    sync();
    if (!seq_flag(pc.flags, NM_BEFORE)) {
      forward(wbase, row, 0u);
      for (uint l = lid; l < d; l += wg) y[row * d + l] = outv[l];
      sync();
    }
  }
}
