// CPU kernel of ONNX LinearAttention: f32 compute (f16/bf16 converted at the
// edges), one task per (batch, kv head) whose state lives in a local buffer
// and serves the kv head's group of query heads. Every rule with a per-head
// (or no) decay runs chunkwise (chunked_state.h; the delta rules through
// the UT transform); per-key decay runs a vectorised token loop.
#include "backends/cpu/kernels/linear_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/linear_attention_simd.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/simd/vec.h"

namespace seqrt::cpu {
namespace {

using In = LinearAttentionInput;
using Out = LinearAttentionOutput;

// A decay of −inf (forget everything) as a finite log: e^(−1e4) is 0.
constexpr double kMinLogDecay = -1.0e4;

// f32 views of the packed inputs and outputs of one call.
struct Buffers {
  const float* q;
  const float* k;
  const float* v;
  const float* decay;  // null unless the rule reads it
  const float* beta;   // null unless the rule reads it
  int64_t decay_width;
  int64_t beta_width;
  float* out;
  float* states;
};

// Row offsets into the packed (B, T, H·d) tensors.
struct Rows {
  const LinearAttentionProblem& p;
  int64_t b;
  int64_t token(int64_t t) const { return b * p.seq + t; }
  int64_t q(int64_t t, int64_t h) const {
    return (token(t) * p.q_heads + h) * p.dk;
  }
  int64_t k(int64_t t, int64_t g) const {
    return (token(t) * p.kv_heads + g) * p.dk;
  }
  int64_t v(int64_t t, int64_t g) const {
    return (token(t) * p.kv_heads + g) * p.dv;
  }
  int64_t out(int64_t t, int64_t h) const {
    return (token(t) * p.q_heads + h) * p.dv;
  }
};

void recurrent_task(const LinearAttentionProblem& p, const Buffers& x,
                    int64_t b, int64_t g, float* state) {
  const int64_t dk = p.dk, dv = p.dv;
  const Rows rows{p, b};
  const auto out_scale = static_cast<float>(p.scale);
  std::vector<float> factor(dk), u(dv);
  for (int64_t t = 0; t < p.seq; ++t) {
    const float* k = x.k + rows.k(t, g);
    const float* v = x.v + rows.v(t, g);
    const float* row_decay = nullptr;
    float decay = 1.0f;
    if (x.decay) {
      const float* d = x.decay + rows.token(t) * x.decay_width;
      if (p.decay_per_key) {
        std::copy_n(d + g * dk, dk, factor.data());
        exp_inplace(factor.data(), dk);
        row_decay = factor.data();
      } else {
        decay = std::exp(d[g]);
      }
    }
    const float* w = v;  // what the token writes: v, or the delta rule's δ
    if (x.beta) {
      // δ = β (v − (decayed S)ᵀ k), read after decaying the state.
      decay_and_read_keys(row_decay, decay, k, dk, dv, state, u.data());
      float beta =
          x.beta[rows.token(t) * x.beta_width + (p.beta_per_head ? g : 0)];
      for (int64_t j = 0; j < dv; ++j) u[j] = beta * (v[j] - u[j]);
      w = u.data();
      row_decay = nullptr;
      decay = 1.0f;
    }
    const int64_t h0 = g * p.group;
    decay_update_read(row_decay, decay, k, w, x.q + rows.q(t, h0), out_scale,
                      dk, dv, state, x.out + rows.out(t, h0));
    for (int64_t h = h0 + 1; h < h0 + p.group; ++h) {
      read_state(out_scale, x.q + rows.q(t, h), state, dk, dv,
                 x.out + rows.out(t, h));
    }
  }
}

// Chunk-local cumulative log-decays of tokens [c0, c0 + len).
void cumulative_log_decay(const Buffers& x, const Rows& rows, int64_t g,
                          int64_t c0, int64_t len, std::vector<double>& cum) {
  cum.assign(len, 0.0);
  if (!x.decay) return;
  double acc = 0.0;
  for (int64_t j = 0; j < len; ++j) {
    double log_a = x.decay[rows.token(c0 + j) * x.decay_width + g];
    acc += std::max(log_a, kMinLogDecay);
    cum[j] = acc;
  }
}

// A chunk's rows gathered from the packed (B, T, H·d) layout into
// contiguous blocks, and its outputs scattered back. Read in place, a kv
// head's rows are H·d floats apart — 4 KiB at H = 8, d = 128 — so they all
// fall in the same few L1 sets and evict each other inside the products.
struct PackedChunk {
  std::vector<float> q, k, v, y;  // q, y: G blocks of L rows

  PackedChunk(int64_t group, int64_t length, int64_t dk, int64_t dv)
      : q(group * length * dk),
        k(length * dk),
        v(length * dv),
        y(group * length * dv) {}

  // Copies tokens [c0, c0 + len) of kv head g and its query heads.
  ChunkRows gather(const LinearAttentionProblem& p, const Buffers& x,
                   const Rows& rows, int64_t g, int64_t c0, int64_t len) {
    const int64_t dk = p.dk, dv = p.dv, G = p.group;
    for (int64_t j = 0; j < len; ++j) {
      std::copy_n(x.k + rows.k(c0 + j, g), dk, k.data() + j * dk);
      std::copy_n(x.v + rows.v(c0 + j, g), dv, v.data() + j * dv);
      for (int64_t h = 0; h < G; ++h) {
        std::copy_n(x.q + rows.q(c0 + j, g * G + h), dk,
                    q.data() + (h * len + j) * dk);
      }
    }
    return ChunkRows{q.data(), dk, len * dk, k.data(), dk,
                     v.data(), dv, y.data(), dv,       len * dv};
  }

  void scatter(const LinearAttentionProblem& p, const Buffers& x,
               const Rows& rows, int64_t g, int64_t c0, int64_t len) const {
    for (int64_t h = 0; h < p.group; ++h) {
      for (int64_t j = 0; j < len; ++j) {
        std::copy_n(y.data() + (h * len + j) * p.dv, p.dv,
                    x.out + rows.out(c0 + j, g * p.group + h));
      }
    }
  }
};

// The next chunk's rows, in place, for prefetch_chunk.
ChunkRows rows_in_place(const LinearAttentionProblem& p, const Buffers& x,
                        const Rows& rows, int64_t g, int64_t c0) {
  return ChunkRows{x.q + rows.q(c0, g * p.group),
                   p.q_heads * p.dk,
                   p.dk,
                   x.k + rows.k(c0, g),
                   p.kv_heads * p.dk,
                   x.v + rows.v(c0, g),
                   p.kv_heads * p.dv,
                   x.out + rows.out(c0, g * p.group),
                   p.q_heads * p.dv,
                   p.dv};
}

void chunked_task(const LinearAttentionProblem& p, const Buffers& x,
                  int64_t length, int64_t b, int64_t g, float* state) {
  const int64_t dk = p.dk, dv = p.dv, G = p.group;
  const Rows rows{p, b};
  const auto out_scale = static_cast<float>(p.scale);
  const ChunkScales scales{out_scale, out_scale, 1.0f};  // on the output
  std::vector<float> beta(x.beta ? length : 0), delta(x.beta ? length * dv : 0);
  std::vector<double> cum;
  ChunkDecay decay;
  ChunkWork work;
  work.reserve(length, dk, dv);
  PackedChunk packed(G, length, dk, dv);
  for (int64_t c0 = 0; c0 < p.seq; c0 += length) {
    const int64_t len = std::min(length, p.seq - c0);
    const int64_t next = c0 + length;
    if (next < p.seq) {
      prefetch_chunk(rows_in_place(p, x, rows, g, next), G,
                     std::min(length, p.seq - next), dk, dv);
    }
    if (x.decay || decay.length != len) {
      cumulative_log_decay(x, rows, g, c0, len, cum);
      decay.set(cum.data(), len);
    }
    ChunkRows chunk = packed.gather(p, x, rows, g, c0, len);
    if (x.beta) {
      for (int64_t j = 0; j < len; ++j) {
        beta[j] = x.beta[rows.token(c0 + j) * x.beta_width +
                         (p.beta_per_head ? g : 0)];
      }
      delta_values(decay, dk, dv, chunk.k, chunk.ldk, chunk.v, chunk.ldv,
                   beta.data(), state, delta.data(), work);
      chunk.v = delta.data();
      chunk.ldv = dv;
    }
    chunk_step(decay, G, dk, dv, chunk, scales, state, work);
    packed.scatter(p, x, rows, g, c0, len);
  }
}

// A per-key decay makes the intra-chunk decay depend on the key channel, so
// Q Kᵀ ⊙ D is no longer one product: those problems run the token loop.
bool has_chunked_form(const LinearAttentionProblem& p) {
  return !rule_uses_decay(p.rule) || !p.decay_per_key;
}

Status run_linear_attention_kernel(KernelContext& ctx) {
  return run_linear_attention_cpu(ctx);
}

}  // namespace

ScanForm choose_linear_attention_form(const LinearAttentionProblem& p) {
  if (!has_chunked_form(p)) return ScanForm::kRecurrent;
  return choose_scan_form(p.seq, p.chunk_size);
}

Status run_linear_attention_cpu(KernelContext& ctx,
                                std::optional<ScanForm> forced) {
  SEQRT_ASSIGN_OR_RETURN(LinearAttentionProblem p, check_linear_attention(ctx));
  ScanForm form = forced ? *forced : choose_linear_attention_form(p);
  if (form != ScanForm::kRecurrent && !has_chunked_form(p)) {
    return ctx.unsupported_error(
        "the {} form needs a per-head decay; per-key decay runs the token loop",
        scan_form_name(form));
  }
  const bool use_decay = rule_uses_decay(p.rule);
  const bool use_beta = rule_uses_beta(p.rule);
  SEQRT_ASSIGN_OR_RETURN(Tensor q, load_f32(*ctx.input(In::kQuery)));
  SEQRT_ASSIGN_OR_RETURN(Tensor k, load_f32(*ctx.input(In::kKey)));
  SEQRT_ASSIGN_OR_RETURN(Tensor v, load_f32(*ctx.input(In::kValue)));
  Tensor decay, beta;
  if (use_decay) {
    SEQRT_ASSIGN_OR_RETURN(decay, load_f32(*ctx.input(In::kDecay)));
  }
  if (use_beta) {
    SEQRT_ASSIGN_OR_RETURN(beta, load_f32(*ctx.input(In::kBeta)));
  }
  SEQRT_ASSIGN_OR_RETURN(
      F32Output out,
      F32Output::begin(ctx, Out::kOutput, ctx.input(In::kQuery)->dtype(),
                       {p.batch, p.seq, p.q_heads * p.dv}));
  SEQRT_ASSIGN_OR_RETURN(
      Tensor states,
      Tensor::allocate(DType::kF32, {p.batch, p.kv_heads, p.dk, p.dv}));
  if (const Tensor* past = ctx.input(In::kPastState)) {
    SEQRT_ASSIGN_OR_RETURN(Tensor past_f32, load_f32(*past));
    std::copy_n(past_f32.data_as<float>(), past_f32.num_elements(),
                states.mutable_data_as<float>());
  }
  Buffers x{q.data_as<float>(),
            k.data_as<float>(),
            v.data_as<float>(),
            use_decay ? decay.data_as<float>() : nullptr,
            use_beta ? beta.data_as<float>() : nullptr,
            use_decay ? decay.dim(2) : 0,
            use_beta ? beta.dim(2) : 0,
            out.data(),
            states.mutable_data_as<float>()};
  const int64_t length =
      chunk_length_for(form, p.seq, p.chunk_size, p.dk, p.dv);
  parallel_for(p.batch * p.kv_heads, [&](int64_t task) {
    int64_t b = task / p.kv_heads, g = task % p.kv_heads;
    float* state = x.states + task * p.dk * p.dv;
    if (form == ScanForm::kRecurrent) {
      recurrent_task(p, x, b, g, state);
    } else {
      chunked_task(p, x, length, b, g, state);
    }
  });
  SEQRT_RETURN_IF_ERROR(out.finish(ctx));
  if (ctx.num_outputs() > Out::kPresentState) {
    SEQRT_ASSIGN_OR_RETURN(Tensor present, store_as(states, p.state_dtype));
    ctx.set_output(Out::kPresentState, std::move(present));
  }
  return Status::ok();
}

void register_linear_attention_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "LinearAttention",
                      run_linear_attention_kernel, nullptr});
}

}  // namespace seqrt::cpu
