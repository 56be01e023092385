// seqrt::NeuralMemory (OPS.md), the chunk-parallel form: the same results
// as the token loop (seq_neural_memory.comp) with the work of a chunk done
// as matrix products, one dispatch per PHASE, the grid (elements / wg,
// batch·heads). Tokens run in rounds: round r of batch row b covers
// [max(0, r·C − off_b), min(T, (r + 1)·C − off_b)), off_b = position_b mod
// C, so a round never crosses a chunk boundary and all its gradients are
// taken at the same anchor A. With M0, S0 the weights and momentum before
// the round, the gates unroll to scalar coefficients (CPU:
// backends/cpu/kernels/neural_memory_chunk.cc)
//   S_i = s_i S0 − Σ_{j≤i} e_ij G_j,   M_i = β_i M0 + c_i S0 − Σ_{j≤i} w_ij G_j
// and each G_j is an outer product, so retrieval needs no per-token weights
// and the weights are formed once, at the round's end.
//
// Per (batch, head), `chunk` holds the round's intermediates, n = pc.rows
// rows each: COEF (n×n w_ij), ROWS (β_i, c_i, w_end_j, e_end_j, then
// β_end, c_end, s_end), SCORES (n×n), RES (n×d: r = 2(M_A(k) − v)), and for
// depth 2 ACT, DER, BACK, QACT (n×m: act(k·A1), act'(k·A1),
// (r·A2ᵀ) ⊙ act', act(retrieval's hidden layer)). `work` (B,H,3·P) holds
// the weights, momentum and anchor between rounds and runs, as the token
// loop's does, so the two forms continue each other's state.
#version 450
#include "neural_memory.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint PHASE = 0;

const uint PH_INIT = 0u;       // work from past_state or W1/W2; offsets
const uint PH_COEF = 1u;       // the gates' coefficients; anchor at chunk starts
const uint PH_FORWARD = 2u;    // ACT, DER (depth 2) or RES (depth 1) at the anchor
const uint PH_RESIDUAL = 3u;   // RES (depth 2)
const uint PH_BACK = 4u;       // BACK (depth 2)
const uint PH_SCORES_Q = 5u;   // SCORES = COEF ⊙ (q·kᵀ)
const uint PH_RETRIEVE1 = 6u;  // QACT (depth 2) or y (depth 1)
const uint PH_SCORES_A = 7u;   // SCORES = COEF ⊙ (QACT·ACTᵀ)
const uint PH_RETRIEVE2 = 8u;  // y (depth 2)
const uint PH_UPDATE = 9u;     // weights and momentum at the round's end

const uint NM_SKIP = 0xffffffffu;  // an offset: the batch row's position is negative

layout(push_constant) uniform Params {
  uint batch, heads, seq_len, d, m, depth, flags, chunk;
  uint round, rows;
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
layout(std430, binding = 11) buffer Work { float work[]; };
layout(std430, binding = 12) writeonly buffer Error { uint error_word[]; };
layout(std430, binding = 13) buffer Offsets { uint offsets[]; };  // per batch row
layout(std430, binding = 14) buffer Chunk { float chunk[]; };

uint params() { return pc.depth == 2 ? 2 * pc.d * pc.m : pc.d * pc.m; }

// Offsets of the regions of `chunk` for one (batch, head); as
// neural_memory_chunk_floats in kernels/sequence_neural_memory.h.
struct Regions {
  uint coef, rows, scores, res, act, der, back, qact;
};

Regions regions(uint bh) {
  const uint n = pc.rows;
  const uint per = 2 * n * n + 4 * n + 3 + n * pc.d +
                   (pc.depth == 2 ? 4 * n * pc.m : 0);
  Regions r;
  r.coef = bh * per;
  r.rows = r.coef + n * n;
  r.scores = r.rows + 4 * n + 3;
  r.res = r.scores + n * n;
  r.act = r.res + n * pc.d;
  r.der = r.act + n * pc.m;
  r.back = pc.depth == 2 ? r.der + n * pc.m : r.res;  // depth 1: δ = r
  r.qact = r.back + n * pc.m;
  return r;
}

void init(uint bh, uint e) {
  const uint b = bh / pc.heads, h = bh % pc.heads;
  if (e == 0u && h == 0u) {
    uint off = 0u;
    if (seq_flag(pc.flags, NM_HAS_POSITION)) {
      const uint lo = positions[2 * b], hi = positions[2 * b + 1];
      if (int(hi) < 0) {
        error_word[0] = 1u;
        off = NM_SKIP;
      } else {
        off = nm_wide_mod(lo, hi, pc.chunk);
      }
    }
    offsets[b] = off;
  }
  const uint p = params();
  if (e >= p) return;
  const uint w = bh * 3 * p + e;
  if (seq_flag(pc.flags, NM_HAS_PAST)) {
    work[w] = past_state[w];
    work[w + p] = past_state[w + p];
    work[w + 2 * p] = past_state[w + 2 * p];
    return;
  }
  const uint dm = pc.d * pc.m;
  const float w0 = e < dm ? w1_init[(bh % pc.heads) * dm + e]
                          : w2_init[(bh % pc.heads) * dm + e - dm];
  work[w] = w0;
  work[w + p] = 0.0;
  work[w + 2 * p] = w0;
}

// The gates of token i of the round as scalar coefficients (see the top).
// Invocation e owns column j = e of COEF (w_ij depends on j's own history
// only); invocation 0 also runs the scalar recurrences of β, c and s.
void coefficients(uint bh, uint first, uint n, uint e, Regions r) {
  const bool before = seq_flag(pc.flags, NM_BEFORE);
  const uint stride = pc.rows;
  const uint row0 = bh * pc.seq_len + first;
  if (e < n) {
    const uint j = e;
    float ej = 0.0, prev = 0.0;
    for (uint i = 0u; i < n; ++i) {
      if (before) chunk[r.coef + i * stride + j] = j < i ? prev : 0.0;
      if (i == j) ej = theta[row0 + i];
      if (i > j) ej *= eta[row0 + i];
      const float cur = j <= i ? (1.0 - alpha[row0 + i]) * prev + ej : 0.0;
      if (!before) chunk[r.coef + i * stride + j] = cur;
      prev = cur;
    }
    chunk[r.rows + 2 * n + j] = prev;
    chunk[r.rows + 3 * n + j] = ej;
  }
  if (e == 0u) {
    float beta = 1.0, c = 0.0, s = 1.0;
    for (uint i = 0u; i < n; ++i) {
      if (before) {
        chunk[r.rows + i] = beta;
        chunk[r.rows + n + i] = c;
      }
      const float keep = 1.0 - alpha[row0 + i];
      s *= eta[row0 + i];
      beta *= keep;
      c = keep * c + s;
      if (!before) {
        chunk[r.rows + i] = beta;
        chunk[r.rows + n + i] = c;
      }
    }
    chunk[r.rows + 4 * n] = beta;
    chunk[r.rows + 4 * n + 1] = c;
    chunk[r.rows + 4 * n + 2] = s;
  }
}

void main() {
  const uint bh = gl_WorkGroupID.y;
  const uint e = gl_GlobalInvocationID.x;
  if (PHASE == PH_INIT) {
    init(bh, e);
    return;
  }
  // This batch row's round: [first, first + n).
  const uint off = offsets[bh / pc.heads];
  if (off == NM_SKIP) return;
  const uint start = pc.round * pc.chunk;
  const uint first = start > off ? start - off : 0u;
  const uint last = min(pc.seq_len, start + pc.chunk - off);
  if (first >= last) return;
  const uint n = last - first;
  const uint d = pc.d, m = pc.m, p = params();
  const uint width = pc.depth == 2 ? m : d;  // columns of the first layer
  const uint wbase = bh * 3 * p, sbase = wbase + p, abase = sbase + p;
  const uint row0 = bh * pc.seq_len + first;  // of q, k, v, y
  const uint stride = pc.rows;
  const Regions r = regions(bh);

  if (PHASE == PH_COEF) {
    // The anchor is the weights at the chunk's start (absolute positions).
    if (start >= off && e < p) work[abase + e] = work[wbase + e];
    coefficients(bh, first, n, e, r);
  } else if (PHASE == PH_FORWARD) {
    if (e >= n * width) return;
    const uint i = e / width, j = e % width;
    float sum = 0.0;
    for (uint l = 0u; l < d; ++l) {
      sum += k[(row0 + i) * d + l] * work[abase + l * width + j];
    }
    if (pc.depth == 1) {
      chunk[r.res + e] = 2.0 * (sum - v[(row0 + i) * d + j]);
    } else {
      chunk[r.act + e] = nm_act(sum, pc.flags);
      chunk[r.der + e] = nm_act_derivative(sum, pc.flags);
    }
  } else if (PHASE == PH_RESIDUAL) {
    if (e >= n * d) return;
    const uint i = e / d, l = e % d;
    float sum = 0.0;
    for (uint j = 0u; j < m; ++j) {
      sum += chunk[r.act + i * m + j] * work[abase + d * m + j * d + l];
    }
    chunk[r.res + e] = 2.0 * (sum - v[(row0 + i) * d + l]);
  } else if (PHASE == PH_BACK) {
    if (e >= n * m) return;
    const uint i = e / m, j = e % m;
    float sum = 0.0;
    for (uint l = 0u; l < d; ++l) {
      sum += chunk[r.res + i * d + l] * work[abase + d * m + j * d + l];
    }
    chunk[r.back + e] = sum * chunk[r.der + e];
  } else if (PHASE == PH_SCORES_Q || PHASE == PH_SCORES_A) {
    if (e >= n * n) return;
    const uint i = e / n, j = e % n;
    if (j > i) return;  // COEF is zero there; retrieval reads j <= i only
    float sum = 0.0;
    if (PHASE == PH_SCORES_Q) {
      for (uint l = 0u; l < d; ++l) {
        sum += q[(row0 + i) * d + l] * k[(row0 + j) * d + l];
      }
    } else {
      for (uint c = 0u; c < m; ++c) {
        sum += chunk[r.qact + i * m + c] * chunk[r.act + j * m + c];
      }
    }
    chunk[r.scores + i * stride + j] = chunk[r.coef + i * stride + j] * sum;
  } else if (PHASE == PH_RETRIEVE1 || PHASE == PH_RETRIEVE2) {
    // x·(β_i M0 + c_i S0) − Σ_j SCORES_ij · grad_j for one layer: x is q
    // (layer 1) or QACT (layer 2), grad_j the gradient's right factor.
    const bool first_layer = PHASE == PH_RETRIEVE1;
    const uint cols = first_layer ? width : d;
    if (e >= n * cols) return;
    const uint i = e / cols, col = e % cols;
    const uint rows_in = first_layer ? d : m;
    const uint layer = first_layer ? 0u : d * m;
    float from_w = 0.0, from_s = 0.0;
    for (uint l = 0u; l < rows_in; ++l) {
      const float x = first_layer ? q[(row0 + i) * d + l]
                                  : chunk[r.qact + i * m + l];
      from_w += x * work[wbase + layer + l * cols + col];
      from_s += x * work[sbase + layer + l * cols + col];
    }
    const uint grad = first_layer ? r.back : r.res;
    float sum = chunk[r.rows + i] * from_w + chunk[r.rows + n + i] * from_s;
    for (uint j = 0u; j <= i; ++j) {
      sum -= chunk[r.scores + i * stride + j] * chunk[grad + j * cols + col];
    }
    if (first_layer && pc.depth == 2) {
      chunk[r.qact + e] = nm_act(sum, pc.flags);
    } else {
      y[(row0 + i) * d + col] = sum;
    }
  } else if (PHASE == PH_UPDATE) {
    // W ← β_end W + c_end S − Σ_i w_end_i left_iᵀ right_i and
    // S ← s_end S − Σ_i e_end_i left_iᵀ right_i, element e of the weights:
    // layer 1 has left k and right BACK, layer 2 left ACT and right RES.
    if (e >= p) return;
    const bool layer1 = e < d * width;
    const uint f = layer1 ? e : e - d * m;
    const uint cols = layer1 ? width : d;
    const uint row = f / cols, col = f % cols;
    float gw = 0.0, ge = 0.0;
    for (uint i = 0u; i < n; ++i) {
      const float left = layer1 ? k[(row0 + i) * d + row]
                                : chunk[r.act + i * m + row];
      const float right = layer1 ? chunk[r.back + i * width + col]
                                 : chunk[r.res + i * d + col];
      const float g = left * right;
      gw += chunk[r.rows + 2 * n + i] * g;
      ge += chunk[r.rows + 3 * n + i] * g;
    }
    const float s0 = work[sbase + e];
    work[wbase + e] = chunk[r.rows + 4 * n] * work[wbase + e] +
                      chunk[r.rows + 4 * n + 1] * s0 - gw;
    work[sbase + e] = chunk[r.rows + 4 * n + 2] * s0 - ge;
  }
}
