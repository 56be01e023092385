// CPU kernel of seqrt::Retention: f32 compute (f16/bf16 converted at the
// edges), one task per (batch, head) with its state in a local buffer, in
// one of three forms (chunked_state.h): the token loop for decode steps,
// the parallel form (one chunk) for short inputs, chunks otherwise.
#include "backends/cpu/kernels/retention.h"

#include <algorithm>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/linear_attention_simd.h"
#include "backends/cpu/parallel.h"
#include "ops/sequence/retention.h"

namespace seqrt::cpu {
namespace {

using In = RetentionInput;
using Out = RetentionOutput;

struct HeadData {
  const float* q;
  const float* k;
  const float* v;
  float* y;
  float* state;  // dk×dv, in: past state, out: present state
};

void recurrent_head(const RetentionProblem& p, float gamma, const HeadData& h) {
  const auto scale = static_cast<float>(p.scale);
  std::vector<float> w(p.dv);  // scale·v: the scale is on K
  for (int64_t t = 0; t < p.seq; ++t) {
    const float* v = h.v + t * p.dv;
    for (int64_t j = 0; j < p.dv; ++j) w[j] = scale * v[j];
    decay_update_read(nullptr, gamma, h.k + t * p.dk, w.data(), h.q + t * p.dk,
                      1.0f, p.dk, p.dv, h.state, h.y + t * p.dv);
  }
}

void chunked_head(const RetentionProblem& p, double gamma, int64_t length,
                  const HeadData& h) {
  ChunkDecay full, tail;
  full.set_constant(gamma, length);
  if (p.seq % length != 0) tail.set_constant(gamma, p.seq % length);
  ChunkWork work;
  work.reserve(length, p.dk, p.dv);
  const auto scale = static_cast<float>(p.scale);
  const ChunkScales scales{scale, 1.0f, scale};  // scale is on K
  auto rows_at = [&](int64_t c0) {
    return ChunkRows{
        h.q + c0 * p.dk, p.dk, 0, h.k + c0 * p.dk, p.dk, h.v + c0 * p.dv, p.dv,
        h.y + c0 * p.dv, p.dv, 0};
  };
  for (int64_t c0 = 0; c0 < p.seq; c0 += length) {
    const int64_t next = c0 + length;
    if (next < p.seq) {
      prefetch_chunk(rows_at(next), 1, std::min(length, p.seq - next), p.dk,
                     p.dv);
    }
    const ChunkDecay& d = p.seq - c0 >= length ? full : tail;
    chunk_step(d, 1, p.dk, p.dv, rows_at(c0), scales, h.state, work);
  }
}

Status run_retention_kernel(KernelContext& ctx) {
  return run_retention_cpu(ctx);
}

}  // namespace

Status run_retention_cpu(KernelContext& ctx, std::optional<ScanForm> forced) {
  const Tensor* past = ctx.input(In::kPastState);
  SEQRT_ASSIGN_OR_RETURN(RetentionProblem p, check_retention(ctx));
  SEQRT_ASSIGN_OR_RETURN(Tensor q, load_f32(*ctx.input(In::kQ)));
  SEQRT_ASSIGN_OR_RETURN(Tensor k, load_f32(*ctx.input(In::kK)));
  SEQRT_ASSIGN_OR_RETURN(Tensor v, load_f32(*ctx.input(In::kV)));
  SEQRT_ASSIGN_OR_RETURN(
      F32Output y, F32Output::begin(ctx, Out::kY, ctx.input(In::kQ)->dtype(),
                                    {p.batch, p.heads, p.seq, p.dv}));
  const int64_t state_size = p.dk * p.dv;
  SEQRT_ASSIGN_OR_RETURN(
      Tensor states,
      Tensor::allocate(DType::kF32, {p.batch, p.heads, p.dk, p.dv}));
  if (past) {
    SEQRT_ASSIGN_OR_RETURN(Tensor past_f32, load_f32(*past));
    std::copy_n(past_f32.data_as<float>(), past_f32.num_elements(),
                states.mutable_data_as<float>());
  }
  const ScanForm form =
      forced ? *forced : choose_scan_form(p.seq, p.chunk_size);
  const int64_t length =
      chunk_length_for(form, p.seq, p.chunk_size, p.dk, p.dv);
  const float* qd = q.data_as<float>();
  const float* kd = k.data_as<float>();
  const float* vd = v.data_as<float>();
  float* sd = states.mutable_data_as<float>();
  float* yd = y.data();
  parallel_for(p.batch * p.heads, [&](int64_t bh) {
    HeadData h{qd + bh * p.seq * p.dk, kd + bh * p.seq * p.dk,
               vd + bh * p.seq * p.dv, yd + bh * p.seq * p.dv,
               sd + bh * state_size};
    double gamma = p.gammas[bh % p.heads];
    if (form == ScanForm::kRecurrent) {
      recurrent_head(p, static_cast<float>(gamma), h);
    } else {
      chunked_head(p, gamma, length, h);
    }
  });
  SEQRT_RETURN_IF_ERROR(y.finish(ctx));
  if (ctx.num_outputs() > Out::kPresentState) {
    SEQRT_ASSIGN_OR_RETURN(Tensor present, store_as(states, p.state_dtype));
    ctx.set_output(Out::kPresentState, std::move(present));
  }
  return Status::ok();
}

void register_retention_kernels(KernelTable& table) {
  table.add(
      CpuKernel{kSeqrtDomain, "Retention", run_retention_kernel, nullptr});
}

}  // namespace seqrt::cpu
