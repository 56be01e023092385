#include "backends/cpu/kernels/chunked_state.h"

#include <algorithm>
#include <cmath>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernels/chunk_gemm.h"
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

int64_t chunk_length_for(ScanForm form, int64_t seq, int64_t chunk_size,
                         int64_t dk, int64_t dv) {
  if (form == ScanForm::kParallel) return std::max<int64_t>(seq, 1);
  const int64_t cap =
      std::max(kMinChunk, dk * dv / std::max<int64_t>(2 * (dk + dv), 1));
  return std::max<int64_t>(std::min({seq, chunk_size, cap}), 1);
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

void ChunkWork::reserve(int64_t length, int64_t dk, int64_t dv) {
  scores.resize(length * length);
  qd.resize(length * dk);
  vd.resize(length * dv);
  kt.resize(dk * length);
}

namespace {

// dst (rows × cols, contiguous) = diag(f)·src (row stride ld).
void scale_rows(const float* f, const float* src, int64_t ld, int64_t rows,
                int64_t cols, float* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const float s = f[r];
    const float* in = src + r * ld;
    float* out = dst + r * cols;
    for (int64_t i = 0; i < cols; ++i) out[i] = s * in[i];
  }
}

// One query head of a chunk: y = α_qk (Q Kᵀ ⊙ D) V + α_qs diag(e^{c}) Q R.
// Both products over the chunk are causal: the tiles above the diagonal of
// Q Kᵀ are skipped, and so are the zeros of the masked scores in P V.
void head_outputs(const ChunkDecay& decay, int64_t dk, int64_t dv,
                  const float* q, int64_t ldq, const ChunkRows& rows,
                  const ChunkScales& scales, const float* state, float* y,
                  ChunkWork& work) {
  const int64_t l = decay.length;
  float* scores = work.scores.data();
  chunk_gemm(l, l, dk, scales.qk, {q, ldq}, work.kt.data(), l, 0.0f, scores, l,
             Triangle::kLowerC);
  for (int64_t j = 0; j < l; ++j) {
    float* row = scores + j * l;
    const float* mask = decay.intra.data() + j * l;
    for (int64_t s = 0; s <= j; ++s) row[s] *= mask[s];
    std::fill(row + j + 1, row + l, 0.0f);
  }
  chunk_gemm(l, dv, l, 1.0f, {scores, l}, rows.v, rows.ldv, 0.0f, y, rows.ldy,
             Triangle::kLowerA);
  GemmOperand q_read{q, ldq};
  if (!decay.all_ones) {
    scale_rows(decay.query.data(), q, ldq, l, dk, work.qd.data());
    q_read = {work.qd.data(), dk};
  }
  chunk_gemm(l, dv, dk, scales.qs, q_read, state, dv, 1.0f, y, rows.ldy);
}

// Every cache line of rows × cols floats with row stride ld.
void prefetch_rows(const float* data, int64_t rows, int64_t cols, int64_t ld,
                   bool for_write) {
  constexpr int64_t kLineFloats = 16;  // 64-byte lines
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = data + r * ld;
    for (int64_t c = 0; c < cols; c += kLineFloats) {
      if (for_write) {
        __builtin_prefetch(row + c, 1, 2);
      } else {
        __builtin_prefetch(row + c, 0, 2);
      }
    }
  }
}

}  // namespace

void prefetch_chunk(const ChunkRows& rows, int64_t groups, int64_t length,
                    int64_t dk, int64_t dv) {
  for (int64_t h = 0; h < groups; ++h) {
    prefetch_rows(rows.q + h * rows.q_head, length, dk, rows.ldq, false);
    prefetch_rows(rows.y + h * rows.y_head, length, dv, rows.ldy, true);
  }
  prefetch_rows(rows.k, length, dk, rows.ldk, false);
  prefetch_rows(rows.v, length, dv, rows.ldv, false);
}

void chunk_step(const ChunkDecay& decay, int64_t groups, int64_t dk, int64_t dv,
                const ChunkRows& rows, const ChunkScales& scales, float* state,
                ChunkWork& work) {
  const int64_t l = decay.length;
  transpose_block(rows.k, l, dk, rows.ldk, work.kt.data(), l);
  for (int64_t h = 0; h < groups; ++h) {
    head_outputs(decay, dk, dv, rows.q + h * rows.q_head, rows.ldq, rows,
                 scales, state, rows.y + h * rows.y_head, work);
  }
  // Carry the state past the chunk: R' = e^{c_{L−1}} R + c·Kᵀ(V ⊙ ζ).
  const float* v_write = rows.v;
  int64_t ldv = rows.ldv;
  if (!decay.all_ones) {
    scale_rows(decay.value.data(), rows.v, rows.ldv, l, dv, work.vd.data());
    v_write = work.vd.data();
    ldv = dv;
  }
  chunk_gemm(dk, dv, l, scales.kv, {rows.k, rows.ldk, true}, v_write, ldv,
             decay.state, state, dv);
}

void delta_values(const ChunkDecay& decay, int64_t dk, int64_t dv,
                  const float* k, int64_t ldk, const float* v, int64_t ldv,
                  const float* beta, const float* state, float* delta,
                  ChunkWork& work) {
  const int64_t l = decay.length;
  float* ks = work.vd.data();      // K S, L×dv
  float* kk = work.scores.data();  // K Kᵀ, L×L (strictly lower part used)
  float* kt = work.kt.data();
  chunk_gemm(l, dv, dk, 1.0f, {k, ldk}, state, dv, 0.0f, ks, dv);
  transpose_block(k, l, dk, ldk, kt, l);
  chunk_gemm(l, l, dk, 1.0f, {k, ldk}, kt, l, 0.0f, kk, l, Triangle::kLowerC);
  for (int64_t j = 0; j < l; ++j) {
    float* dj = delta + j * dv;
    const float* vj = v + j * ldv;
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
