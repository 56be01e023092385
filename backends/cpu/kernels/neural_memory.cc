// CPU kernel of seqrt::NeuralMemory (OPS.md): f32, parallel over
// batch × heads; the chunk-parallel form (neural_memory_chunk.cc) for
// prefill, the token step below for decode and chunk_size 1.
#include "backends/cpu/kernels/neural_memory.h"

#include <algorithm>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/neural_memory_step.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/simd/vec.h"

namespace seqrt::cpu {
namespace {

// y = M(x) with weights w (W1 (d,width) then W2 (m,d)); hidden, act hold m.
void forward(const NeuralMemoryDims& n, const float* w, const float* x,
             float* hidden, float* act, float* deriv, float* y) {
  int64_t width = n.depth == 2 ? n.m : n.d;
  float* h = n.depth == 2 ? hidden : y;
  std::fill(h, h + width, 0.0f);
  for (int64_t i = 0; i < n.d; ++i) axpy(x[i], w + i * width, h, width);
  if (n.depth == 1) return;
  neural_memory_activation(hidden, act, deriv, n.m, n.gelu);
  const float* w2 = w + n.d * n.m;
  std::fill(y, y + n.d, 0.0f);
  for (int64_t j = 0; j < n.m; ++j) axpy(act[j], w2 + j * n.d, y, n.d);
}

// Per-head buffers of the token step. "k" rows are the token's forward at
// the anchor, "q" rows the retrieval, "next" rows the next token's forward
// when the update pass computes it (chunk_size 1).
struct StepBuffers {
  explicit StepBuffers(const NeuralMemoryDims& n)
      : k_hidden(n.m),
        k_act(n.m),
        k_deriv(n.m),
        back(n.m),
        residual(n.d),
        q_hidden(n.m),
        q_act(n.m),
        q_deriv(n.m),
        next_hidden(n.m),
        next_act(n.m),
        next_deriv(n.m),
        next_residual(n.d) {}
  std::vector<float> k_hidden, k_act, k_deriv, back, residual;
  std::vector<float> q_hidden, q_act, q_deriv;
  std::vector<float> next_hidden, next_act, next_deriv, next_residual;
};

// Token t of a head: its forward at the anchor (unless the previous pass
// left it in buf), the residual and, for depth 2, δ = (r·A2ᵀ) ⊙ act'(h);
// then one pass per layer over W and S. The passes also accumulate the
// retrieval of token `ret` (t, or t + 1 for before_update; none when past
// the end) and, with `fused`, the next token's forward at the new weights.
void token_step(const NeuralMemoryDims& n, const NeuralMemoryHead& head,
                int64_t t, bool forward_ready, bool fused, StepBuffers& buf) {
  const int64_t d = n.d, m = n.m, p_count = n.params();
  float* w = head.state;
  float* s = w + p_count;
  const float* anchor = fused ? w : w + 2 * p_count;
  const float* k = head.k + t * d;
  const float* v = head.v + t * d;
  const int64_t ret = n.retrieve_before ? t + 1 : t;
  const bool has_ret = ret < n.seq;
  const bool has_next = fused && t + 1 < n.seq;
  float* r = buf.residual.data();
  if (!forward_ready) {
    forward(n, anchor, k, buf.k_hidden.data(), buf.k_act.data(),
            buf.k_deriv.data(), r);
  }
  for (int64_t l = 0; l < d; ++l) r[l] = 2.0f * (r[l] - v[l]);
  NmRowPass pass;
  pass.w = w;
  pass.s = s;
  pass.theta = head.theta[t];
  pass.eta = head.eta[t];
  pass.keep = 1.0f - head.alpha[t];
  pass.rows = d;
  pass.left = k;
  if (n.depth == 1) {
    pass.cols = d;
    pass.right = r;
    pass.xa = has_ret ? head.q + ret * d : nullptr;
    pass.acc_a = has_ret ? head.y + ret * d : nullptr;
    pass.xb = has_next ? head.k + (t + 1) * d : nullptr;
    pass.acc_b = buf.next_residual.data();
    neural_memory_row_pass(pass);
    return;
  }
  const float* anchor2 = anchor + d * m;
  neural_memory_row_dots(anchor2, m, d, r, buf.k_deriv.data(), buf.back.data());
  pass.cols = m;
  pass.right = buf.back.data();
  pass.xa = has_ret ? head.q + ret * d : nullptr;
  pass.acc_a = buf.q_hidden.data();
  pass.xb = has_next ? head.k + (t + 1) * d : nullptr;
  pass.acc_b = buf.next_hidden.data();
  neural_memory_row_pass(pass);
  if (has_ret) {
    neural_memory_activation(buf.q_hidden.data(), buf.q_act.data(),
                             buf.q_deriv.data(), m, n.gelu);
  }
  if (has_next) {
    neural_memory_activation(buf.next_hidden.data(), buf.next_act.data(),
                             buf.next_deriv.data(), m, n.gelu);
  }
  pass.w = w + d * m;
  pass.s = s + d * m;
  pass.rows = m;
  pass.cols = d;
  pass.left = buf.k_act.data();
  pass.right = r;
  pass.xa = has_ret ? buf.q_act.data() : nullptr;
  pass.acc_a = has_ret ? head.y + ret * d : nullptr;
  pass.xb = has_next ? buf.next_act.data() : nullptr;
  pass.acc_b = buf.next_residual.data();
  neural_memory_row_pass(pass);
}

}  // namespace

// With chunk_size 1 the anchor of token t + 1 is W_t, so each token's
// update pass also computes the next token's forward (`fused`); the anchor
// slot of the state is written once, before the last token, as the
// contract has it. Larger chunks (decode of a chunked op) keep the anchor.
void neural_memory_head_token_step(const NeuralMemoryDims& n,
                                   const NeuralMemoryHead& head) {
  const int64_t p_count = n.params();
  float* w = head.state;
  float* anchor = w + 2 * p_count;
  const bool fused = n.chunk == 1;
  StepBuffers buf(n);
  if (n.retrieve_before && n.seq > 0) {
    forward(n, w, head.q, buf.q_hidden.data(), buf.q_act.data(),
            buf.q_deriv.data(), head.y);
  }
  for (int64_t t = 0; t < n.seq; ++t) {
    bool chunk_start = (head.position + t) % n.chunk == 0;
    if (fused ? t == n.seq - 1 : chunk_start) std::copy_n(w, p_count, anchor);
    bool forward_ready = fused && t > 0;
    if (forward_ready) {
      std::swap(buf.k_hidden, buf.next_hidden);
      std::swap(buf.k_act, buf.next_act);
      std::swap(buf.k_deriv, buf.next_deriv);
      std::swap(buf.residual, buf.next_residual);
    }
    token_step(n, head, t, forward_ready, fused, buf);
  }
}

void neural_memory_initial_state(const NeuralMemoryDims& n, const float* w1,
                                 const float* w2, float* state) {
  const int64_t p_count = n.params();
  std::copy_n(w1, n.d * n.m, state);
  if (n.depth == 2) std::copy_n(w2, n.m * n.d, state + n.d * n.m);
  std::fill(state + p_count, state + 2 * p_count, 0.0f);
  std::copy_n(state, p_count, state + 2 * p_count);
}

namespace {

Status run_neural_memory(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(NeuralMemoryDims n, check_neural_memory(ctx));
  std::vector<Tensor> in(kNmPosition);
  for (size_t i = 0; i < kNmPosition; ++i) {
    if (ctx.has_input(i)) {
      SEQRT_ASSIGN_OR_RETURN(in[i], load_f32(*ctx.input(i)));
    }
  }
  const int64_t p_count = n.params();
  const int64_t rows = n.batch * n.heads;
  SEQRT_ASSIGN_OR_RETURN(
      Tensor state,
      Tensor::allocate(DType::kF32, {n.batch, n.heads, 3 * p_count}));
  const DType q_dtype = ctx.input(kNmQ)->dtype();
  SEQRT_ASSIGN_OR_RETURN(Tensor y,
                         f32_output(ctx, 0, q_dtype, ctx.input(kNmQ)->dims()));
  std::vector<int64_t> positions(n.batch, 0);
  if (ctx.has_input(kNmPosition)) {
    for (int64_t b = 0; b < n.batch; ++b) {
      positions[b] = ctx.input(kNmPosition)->element_i64(b);
    }
  }
  const float* past =
      in[kNmPastState].empty() ? nullptr : in[kNmPastState].data_as<float>();
  const float* w1 = in[kNmW1].data_as<float>();
  const float* w2 = in[kNmW2].empty() ? nullptr : in[kNmW2].data_as<float>();
  float* state_data = state.mutable_data_as<float>();
  float* y_data = y.mutable_data_as<float>();
  // The chunked form pays off once a segment holds several tokens.
  const bool chunked = n.chunk > 1 && n.seq > 1;
  parallel_for(rows, [&](int64_t row) {
    int64_t h = row % n.heads;
    float* row_state = state_data + row * 3 * p_count;
    if (past != nullptr) {
      std::copy_n(past + row * 3 * p_count, 3 * p_count, row_state);
    } else {
      neural_memory_initial_state(n, w1 + h * n.d * n.m,
                                  w2 ? w2 + h * n.m * n.d : nullptr, row_state);
    }
    int64_t seq_offset = row * n.seq;
    NeuralMemoryHead head;
    head.q = in[kNmQ].data_as<float>() + seq_offset * n.d;
    head.k = in[kNmK].data_as<float>() + seq_offset * n.d;
    head.v = in[kNmV].data_as<float>() + seq_offset * n.d;
    head.theta = in[kNmTheta].data_as<float>() + seq_offset;
    head.eta = in[kNmEta].data_as<float>() + seq_offset;
    head.alpha = in[kNmAlpha].data_as<float>() + seq_offset;
    head.y = y_data + seq_offset * n.d;
    head.state = row_state;
    head.position = positions[row / n.heads];
    if (chunked) {
      NeuralMemoryScratch scratch(n);
      neural_memory_head_chunked(n, head, scratch);
    } else {
      neural_memory_head_token_step(n, head);
    }
  });
  SEQRT_RETURN_IF_ERROR(set_output_as(ctx, 0, y, q_dtype));
  if (ctx.num_outputs() > 1) {
    SEQRT_ASSIGN_OR_RETURN(Tensor state_out,
                           store_as(state, neural_memory_state_dtype(q_dtype)));
    ctx.set_output(1, std::move(state_out));
  }
  return Status::ok();
}

}  // namespace

void register_neural_memory_kernels(KernelTable& table) {
  table.add(
      CpuKernel{kSeqrtDomain, "NeuralMemory", run_neural_memory, nullptr});
}

}  // namespace seqrt::cpu
