// CPU kernel of seqrt::NeuralMemory (OPS.md): f32, parallel over
// batch × heads; the chunk-parallel form (neural_memory_chunk.cc) for
// prefill, the token step below for decode and chunk_size 1.
#include "backends/cpu/kernels/neural_memory.h"

#include <algorithm>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
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

struct TokenBuffers {
  explicit TokenBuffers(const NeuralMemoryDims& n)
      : hidden(n.m), act(n.m), deriv(n.m), back(n.m), residual(n.d) {}
  std::vector<float> hidden, act, deriv, back, residual;
};

// One token: gradient at the anchor, then S and W row by row as rank-1
// updates (S_i = η S_i − θ left_i right; W_i = (1 − α) W_i + S_i).
void token_update(const NeuralMemoryDims& n, const float* k, const float* v,
                  float theta, float eta, float alpha, float* state,
                  TokenBuffers& buf) {
  const int64_t p_count = n.params();
  float* w = state;
  float* s = state + p_count;
  const float* anchor = state + 2 * p_count;
  float* r = buf.residual.data();
  forward(n, anchor, k, buf.hidden.data(), buf.act.data(), buf.deriv.data(), r);
  for (int64_t l = 0; l < n.d; ++l) r[l] = 2.0f * (r[l] - v[l]);
  // Rows of W1 pair k_i with δ (depth 2) or r (depth 1).
  const float* delta = r;
  int64_t width = n.d;
  if (n.depth == 2) {
    const float* anchor2 = anchor + n.d * n.m;
    for (int64_t j = 0; j < n.m; ++j) {
      buf.back[j] = dot(r, anchor2 + j * n.d, n.d) * buf.deriv[j];
    }
    delta = buf.back.data();
    width = n.m;
  }
  auto update_rows = [&](const float* left, int64_t rows, const float* right,
                         int64_t cols, float* wl, float* sl) {
    for (int64_t i = 0; i < rows; ++i) {
      float* s_row = sl + i * cols;
      float* w_row = wl + i * cols;
      scale(eta, s_row, cols);
      axpy(-theta * left[i], right, s_row, cols);
      scale(1.0f - alpha, w_row, cols);
      axpy(1.0f, s_row, w_row, cols);
    }
  };
  update_rows(k, n.d, delta, width, w, s);
  if (n.depth == 2) {
    update_rows(buf.act.data(), n.m, r, n.d, w + n.d * n.m, s + n.d * n.m);
  }
}

}  // namespace

void neural_memory_head_token_step(const NeuralMemoryDims& n,
                                   const NeuralMemoryHead& head) {
  const int64_t p_count = n.params();
  float* w = head.state;
  float* anchor = w + 2 * p_count;
  TokenBuffers buf(n);
  std::vector<float> hidden(n.m), act(n.m), deriv(n.m);
  for (int64_t t = 0; t < n.seq; ++t) {
    const float* q = head.q + t * n.d;
    float* y = head.y + t * n.d;
    if ((head.position + t) % n.chunk == 0) std::copy_n(w, p_count, anchor);
    if (n.retrieve_before) {
      forward(n, w, q, hidden.data(), act.data(), deriv.data(), y);
    }
    token_update(n, head.k + t * n.d, head.v + t * n.d, head.theta[t],
                 head.eta[t], head.alpha[t], head.state, buf);
    if (!n.retrieve_before) {
      forward(n, w, q, hidden.data(), act.data(), deriv.data(), y);
    }
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
  SEQRT_ASSIGN_OR_RETURN(
      Tensor y, Tensor::allocate(DType::kF32, ctx.input(kNmQ)->dims()));
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
  DType q_dtype = ctx.input(kNmQ)->dtype();
  SEQRT_ASSIGN_OR_RETURN(Tensor y_out, store_as(y, q_dtype));
  ctx.set_output(0, std::move(y_out));
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
