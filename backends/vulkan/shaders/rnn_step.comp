// One time step of RNN, GRU or LSTM (ops/rnn/) for every (hidden unit j,
// batch row b, direction d): one invocation per unit computes its gates'
// dot products over x_t and h_{t-1}, the gate math, and writes h_t (the
// other ping-pong buffer), c_t (in place, its own element only) and its Y
// element. States are laid out as the op's initial_h (by `layout`). GRU
// without linear_before_reset runs two dispatches a step: PHASE 0 stores z
// and r ⊙ h_{t-1}, PHASE 1 the candidate (it needs r ⊙ h of every unit).
#version 450
#include "group_size.glsl"
layout(constant_id = 1) const uint KIND = 2;   // 0 RNN, 1 GRU, 2 LSTM
layout(constant_id = 2) const uint PHASE = 0;

const uint LAYOUT1 = 1u, BIDIRECTIONAL = 2u, REVERSE = 4u, HAS_BIAS = 8u,
           HAS_LENS = 16u, HAS_PEEP = 32u, HAS_CLIP = 64u,
           INPUT_FORGET = 128u, LINEAR_BEFORE_RESET = 256u, HAS_Y = 512u,
           TWO_PHASE = 1024u;

layout(push_constant) uniform Params {
  uint seq, batch, input_size, hidden;
  uint step, flags, acts;  // acts: 4 bits per (direction, slot)
  float clip;
  float alpha[6];
  float beta[6];
} pc;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer R { float r[]; };
layout(std430, binding = 3) readonly buffer B { float bias[]; };
layout(std430, binding = 4) readonly buffer Lens { int lens[]; };
layout(std430, binding = 5) readonly buffer P { float peep[]; };
layout(std430, binding = 6) readonly buffer HPrev { float h_prev[]; };
layout(std430, binding = 7) writeonly buffer HNext { float h_next[]; };
layout(std430, binding = 8) buffer C { float c_state[]; };
layout(std430, binding = 9) writeonly buffer Y { float y[]; };
layout(std430, binding = 10) buffer Z { float z_saved[]; };
layout(std430, binding = 11) buffer RH { float rh_saved[]; };

bool has(uint f) { return (pc.flags & f) != 0u; }

// The activations in RnnActivation::Fn's order.
float activate(uint slot_index, float v) {
  const uint code = (pc.acts >> (4u * slot_index)) & 15u;
  const float a = pc.alpha[slot_index], b = pc.beta[slot_index];
  switch (code) {
    case 0u: return max(v, 0.0);
    case 1u: return tanh(v);
    case 2u: return 1.0 / (1.0 + exp(-v));
    case 3u: return a * v + b;
    case 4u: return v >= 0.0 ? v : a * v;
    case 5u: return v > a ? v : 0.0;
    case 6u: return a * tanh(b * v);
    case 7u: return clamp(a * v + b, 0.0, 1.0);
    case 8u: return v >= 0.0 ? v : a * (exp(v) - 1.0);
    case 9u: return v / (1.0 + abs(v));
    default: return v > 0.0 ? v + log(1.0 + exp(-v)) : log(1.0 + exp(v));
  }
}

float clipped(float v) {
  return has(HAS_CLIP) ? clamp(v, -pc.clip, pc.clip) : v;
}

void main() {
  const uint j = gl_GlobalInvocationID.x;
  const uint b = gl_WorkGroupID.y, d = gl_WorkGroupID.z;
  const uint H = pc.hidden, I = pc.input_size;
  if (j >= H) return;
  const uint dirs = has(BIDIRECTIONAL) ? 2u : 1u;
  const uint gates = KIND == 2u ? 4u : (KIND == 1u ? 3u : 1u);
  const uint st = (has(LAYOUT1) ? b * dirs + d : d * pc.batch + b) * H;
  const uint len = has(HAS_LENS) ? uint(max(lens[b], 0)) : pc.seq;
  const float hp = h_prev[st + j];
  const bool last_phase = !has(TWO_PHASE) || PHASE == 1u;
  if (pc.step >= len) {
    // Past its length a row keeps its state; a row of length 0 ends at 0.
    if (last_phase) {
      h_next[st + j] = len == 0u ? 0.0 : hp;
      if (len == 0u && KIND == 2u) c_state[st + j] = 0.0;
    }
    return;
  }
  const bool backwards = has(REVERSE) || d == 1u;
  const uint t = backwards ? len - 1u - pc.step : pc.step;
  const uint xrow = (has(LAYOUT1) ? b * pc.seq + t : t * pc.batch + b) * I;
  const uint slot = d * 3u;
  // X·Wᵀ + biases of gate k (Rb left out when `with_rb` is false).
  float xw[4];
  for (uint k = 0u; k < gates; ++k) {
    const uint wrow = (d * gates + k) * H + j;
    float s = 0.0;
    for (uint i = 0u; i < I; ++i) s += x[xrow + i] * w[wrow * I + i];
    if (has(HAS_BIAS)) s += bias[(d * 2u * gates + k) * H + j];
    xw[k] = s;
  }
  float rb[4];
  for (uint k = 0u; k < gates; ++k) {
    rb[k] = has(HAS_BIAS) ? bias[(d * 2u * gates + gates + k) * H + j] : 0.0;
  }
  float hr[4];
  const uint hr_gates = (KIND == 1u && !has(LINEAR_BEFORE_RESET)) ? 2u : gates;
  for (uint k = 0u; k < hr_gates; ++k) {
    const uint rrow = (d * gates + k) * H + j;
    float s = 0.0;
    for (uint m = 0u; m < H; ++m) s += h_prev[st + m] * r[rrow * H + m];
    hr[k] = s;
  }
  float h;
  if (KIND == 0u) {
    h = activate(slot, clipped(xw[0] + hr[0] + rb[0]));
  } else if (KIND == 2u) {
    const float cp = c_state[st + j];
    const uint pd = d * 3u * H;
    float gi = xw[0] + hr[0] + rb[0], go = xw[1] + hr[1] + rb[1];
    float gf = xw[2] + hr[2] + rb[2], gc = xw[3] + hr[3] + rb[3];
    if (has(HAS_PEEP)) {
      gi += peep[pd + j] * cp;
      gf += peep[pd + 2u * H + j] * cp;
    }
    const float ig = activate(slot, clipped(gi));
    const float fg =
        has(INPUT_FORGET) ? 1.0 - ig : activate(slot, clipped(gf));
    const float cn = fg * cp + ig * activate(slot + 1u, clipped(gc));
    if (has(HAS_PEEP)) go += peep[pd + H + j] * cn;
    h = activate(slot, clipped(go)) * activate(slot + 2u, cn);
    c_state[st + j] = cn;
  } else if (has(LINEAR_BEFORE_RESET)) {
    const float z = activate(slot, clipped(xw[0] + hr[0] + rb[0]));
    const float rg = activate(slot, clipped(xw[1] + hr[1] + rb[1]));
    const float cand = activate(slot + 1u, clipped(xw[2] + rg * (hr[2] + rb[2])));
    h = (1.0 - z) * cand + z * hp;
  } else if (PHASE == 0u) {
    z_saved[st + j] = activate(slot, clipped(xw[0] + hr[0] + rb[0]));
    rh_saved[st + j] = activate(slot, clipped(xw[1] + hr[1] + rb[1])) * hp;
    return;
  } else {
    const uint rrow = (d * gates + 2u) * H + j;
    float s = 0.0;
    for (uint m = 0u; m < H; ++m) s += rh_saved[st + m] * r[rrow * H + m];
    const float z = z_saved[st + j];
    const float cand = activate(slot + 1u, clipped(xw[2] + s + rb[2]));
    h = (1.0 - z) * cand + z * hp;
  }
  h_next[st + j] = h;
  if (has(HAS_Y)) {
    const uint yrow = has(LAYOUT1) ? (b * pc.seq + t) * dirs + d
                                   : (t * dirs + d) * pc.batch + b;
    y[yrow * H + j] = h;
  }
}
