#include "backends/cpu/kernels/chunked_state.h"

#include <algorithm>
#include <cmath>

#include "backends/cpu/float_io.h"
#include "backends/cpu/simd/gemm.h"
#include "backends/cpu/simd/vec.h"

namespace seqrt::cpu {
namespace {

// log 0 = −inf would turn c_j − c_s into NaN; e^(−1e4·m) is exactly 0 in
// double for m ≥ 1 and e^0 = 1 for m = 0, so this stands in for it exactly.
constexpr double kLogZero = -1.0e4;

}  // namespace

const char* scan_form_name(ScanForm form) {
  switch (form) {
    case ScanForm::kRecurrent:
      return "recurrent";
    case ScanForm::kParallel:
      return "parallel";
    case ScanForm::kChunkwise:
      return "chunkwise";
  }
  return "?";
}

ScanForm choose_scan_form(int64_t seq, int64_t chunk_size) {
  if (seq < kRecurrentMaxSeq) return ScanForm::kRecurrent;
  if (seq <= chunk_size) return ScanForm::kParallel;
  return ScanForm::kChunkwise;
}

int64_t chunk_length_for(ScanForm form, int64_t seq, int64_t chunk_size) {
  if (form == ScanForm::kParallel) return std::max<int64_t>(seq, 1);
  return std::max<int64_t>(std::min(seq, chunk_size), 1);
}

void ChunkDecay::set(const double* cum_log, int64_t l) {
  length = l;
  intra.assign(l * l, 0.0f);
  query.resize(l);
  value.resize(l);
  all_ones = true;
  // Row j of D from row j − 1: e^{c_j − c_s} = a_j e^{c_{j−1} − c_s}, so each
  // factor is a product of per-token decays (L² multiplies, not exps).
  std::vector<double> row(l, 0.0);
  double from_start = 1.0;  // e^{c_j}
  for (int64_t j = 0; j < l; ++j) {
    double a = std::exp(cum_log[j] - (j > 0 ? cum_log[j - 1] : 0.0));
    if (a != 1.0) all_ones = false;
    for (int64_t s = 0; s < j; ++s) row[s] *= a;
    row[j] = 1.0;
    from_start *= a;
    for (int64_t s = 0; s <= j; ++s) {
      intra[j * l + s] = static_cast<float>(row[s]);
    }
    query[j] = static_cast<float>(from_start);
  }
  for (int64_t s = 0; s < l; ++s) value[s] = static_cast<float>(row[s]);
  state = static_cast<float>(from_start);
}

void ChunkDecay::set_constant(double gamma, int64_t l) {
  double log_gamma = gamma > 0.0 ? std::log(gamma) : kLogZero;
  std::vector<double> cum(l);
  for (int64_t j = 0; j < l; ++j)
    cum[j] = static_cast<double>(j + 1) * log_gamma;
  set(cum.data(), l);
}

void ChunkWork::reserve(int64_t groups, int64_t length, int64_t dk,
                        int64_t dv) {
  scores.resize(groups * length * length);
  qd.resize(groups * length * dk);
  vd.resize(length * dv);
}

void chunk_step(const ChunkDecay& decay, int64_t groups, int64_t dk, int64_t dv,
                const float* q, const float* k, const float* v,
                const ChunkScales& scales, float* state, float* y,
                ChunkWork& work) {
  const int64_t l = decay.length;
  const int64_t rows = groups * l;
  float* scores = work.scores.data();
  // Intra-chunk: causal, decayed scores, then their product with V.
  sgemm(false, true, rows, l, dk, scales.qk, q, dk, k, dk, 0.0f, scores, l);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t j = r % l;
    float* row = scores + r * l;
    const float* mask = decay.intra.data() + j * l;
    for (int64_t s = 0; s <= j; ++s) row[s] *= mask[s];
    std::fill(row + j + 1, row + l, 0.0f);
  }
  sgemm(false, false, rows, dv, l, 1.0f, scores, l, v, dv, 0.0f, y, dv);
  // Inter-chunk: what the carried state contributes to each token.
  const float* q_read = q;
  if (!decay.all_ones) {
    for (int64_t r = 0; r < rows; ++r) {
      float f = decay.query[r % l];
      const float* src = q + r * dk;
      float* dst = work.qd.data() + r * dk;
      for (int64_t i = 0; i < dk; ++i) dst[i] = f * src[i];
    }
    q_read = work.qd.data();
  }
  sgemm(false, false, rows, dv, dk, scales.qs, q_read, dk, state, dv, 1.0f, y,
        dv);
  // Carry the state past the chunk: R' = e^{c_{L−1}} R + c·Kᵀ(V ⊙ ζ).
  const float* v_write = v;
  if (!decay.all_ones) {
    for (int64_t s = 0; s < l; ++s) {
      float f = decay.value[s];
      const float* src = v + s * dv;
      float* dst = work.vd.data() + s * dv;
      for (int64_t j = 0; j < dv; ++j) dst[j] = f * src[j];
    }
    v_write = work.vd.data();
  }
  sgemm(true, false, dk, dv, l, scales.kv, k, dk, v_write, dv, decay.state,
        state, dv);
}

void delta_values(const ChunkDecay& decay, int64_t dk, int64_t dv,
                  const float* k, const float* v, const float* beta,
                  const float* state, float* delta, ChunkWork& work) {
  const int64_t l = decay.length;
  float* ks = work.vd.data();      // K S, L×dv
  float* kk = work.scores.data();  // K Kᵀ, L×L
  sgemm(false, false, l, dv, dk, 1.0f, k, dk, state, dv, 0.0f, ks, dv);
  sgemm(false, true, l, l, dk, 1.0f, k, dk, k, dk, 0.0f, kk, l);
  for (int64_t j = 0; j < l; ++j) {
    float* dj = delta + j * dv;
    const float* vj = v + j * dv;
    const float* ksj = ks + j * dv;
    const float read = decay.query[j];  // e^{c_j}: S as token j sees it
    for (int64_t c = 0; c < dv; ++c) dj[c] = beta[j] * (vj[c] - read * ksj[c]);
    const float* mask = decay.intra.data() + j * l;
    for (int64_t s = 0; s < j; ++s) {
      float m = beta[j] * mask[s] * kk[j * l + s];
      if (m != 0.0f) axpy(-m, delta + s * dv, dj, dv);
    }
  }
}

void read_state(float alpha, const float* q, const float* state, int64_t dk,
                int64_t dv, float* y) {
  std::fill(y, y + dv, 0.0f);
  for (int64_t i = 0; i < dk; ++i) axpy(alpha * q[i], state + i * dv, y, dv);
}

Result<F32Output> F32Output::begin(KernelContext& ctx, size_t index,
                                   DType dtype, std::vector<int64_t> dims) {
  F32Output out;
  out.dtype_ = dtype;
  out.index_ = index;
  if (dtype == DType::kF32) {
    SEQRT_ASSIGN_OR_RETURN(Tensor * t,
                           ctx.allocate_output(index, dtype, std::move(dims)));
    out.data_ = t->mutable_data_as<float>();
  } else {
    SEQRT_ASSIGN_OR_RETURN(out.scratch_,
                           Tensor::allocate(DType::kF32, std::move(dims)));
    out.data_ = out.scratch_.mutable_data_as<float>();
  }
  return out;
}

Status F32Output::finish(KernelContext& ctx) {
  if (dtype_ == DType::kF32) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(Tensor converted, store_as(scratch_, dtype_));
  ctx.set_output(index_, std::move(converted));
  return Status::ok();
}

}  // namespace seqrt::cpu
