// Shared pieces of the decayed linear-attention kernels (Retention,
// LinearAttention linear/gated): the three equivalent forms of
//   S_t = a_t S_{t−1} + c·k_tᵀ v_t,   y_t = α q_t S_t
// with a scalar decay a_t per token, and the rule choosing among them.
//
// Chunkwise form, chunk of L tokens with chunk-local cumulative log-decays
// c_j = Σ_{i≤j} log a_i and incoming state R:
//   Y = α((Q Kᵀ ⊙ D) V)·c + α diag(e^{c_j}) Q R,   D_js = e^{c_j − c_s} (s ≤ j)
//   R' = e^{c_{L−1}} R + c·Kᵀ diag(e^{c_{L−1} − c_s}) V
// Every exponent is a difference c_j − c_s with s ≤ j (or c_j itself), so
// for decays ≤ 1 nothing is ever formed as γ^(−m): no overflow at any T.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/tensor.h"
#include "ops/op_context.h"

namespace seqrt::cpu {

enum class ScanForm { kRecurrent, kParallel, kChunkwise };
const char* scan_form_name(ScanForm form);

// Below this many tokens the token loop wins (decode steps).
inline constexpr int64_t kRecurrentMaxSeq = 16;

// The one rule: token loop for short inputs, one chunk (the parallel form)
// when the whole input fits the chunk, else chunks of `chunk_size`.
ScanForm choose_scan_form(int64_t seq, int64_t chunk_size);
// The chunk length a form uses for `seq` tokens of d_k × d_v heads. The
// parallel form is one chunk. Chunks follow the `chunk_size` hint up to a
// cap set by the shape: per token a chunk costs 4·d_k·d_v flops in its
// state products and about C·(d_k + d_v) in its causal intra-chunk ones, so
// C is capped at d_k·d_v / (2(d_k + d_v)) (at least kMinChunk), where the
// intra-chunk work stays within an eighth of the total. Longer chunks only
// add work; on this machine (AVX2) C = 16 and 32 run alike at d = 128 and
// C = 64 is slower.
int64_t chunk_length_for(ScanForm form, int64_t seq, int64_t chunk_size,
                         int64_t dk, int64_t dv);
inline constexpr int64_t kMinChunk = 16;

// Decay factors of one chunk (see the header comment).
struct ChunkDecay {
  int64_t length = 0;
  std::vector<float> intra;  // L×L: e^{c_j − c_s} for s ≤ j, else 0
  std::vector<float> query;  // e^{c_j}: how much of R token j still sees
  std::vector<float> value;  // e^{c_{L−1} − c_s}: token s's share of R'
  float state = 1.0f;        // e^{c_{L−1}}
  bool all_ones = false;     // no decay at all: skip the masks' products

  // From chunk-local cumulative log-decays (doubles, L values).
  void set(const double* cum_log, int64_t length);
  // Constant decay γ per token (Retention): c_j = (j + 1) log γ.
  void set_constant(double gamma, int64_t length);
};

// The scalars of one problem: α_qk multiplies Q Kᵀ, α_qs the read of the
// carried state, α_kv the write of K ᵀV into the state.
struct ChunkScales {
  float qk = 1.0f;
  float qs = 1.0f;
  float kv = 1.0f;
};

// Scratch reused across chunks of one (batch, head) task; every buffer
// serves one head of the chunk at a time.
struct ChunkWork {
  std::vector<float> scores;  // L×L
  std::vector<float> qd;      // L×dk
  std::vector<float> vd;      // L×dv
  std::vector<float> kt;      // dk×L: Kᵀ, the right operand of Q Kᵀ
  void reserve(int64_t length, int64_t dk, int64_t dv);
};

// Where chunk_step reads one chunk's rows: row-major blocks with row
// strides ld*; `groups` query heads share the state, head h's rows of q and
// y start at q + h·q_head and y + h·y_head.
struct ChunkRows {
  const float* q;
  int64_t ldq;
  int64_t q_head;
  const float* k;
  int64_t ldk;
  const float* v;
  int64_t ldv;
  float* y;
  int64_t ldy;
  int64_t y_head;
};

// Asks for the rows of a coming chunk (length tokens) to be brought into
// cache while the current one computes: a chunk's inputs are read once, so
// without this each chunk starts by waiting on memory.
void prefetch_chunk(const ChunkRows& rows, int64_t groups, int64_t length,
                    int64_t dk, int64_t dv);

// One chunk (q: L×dk per head, k: L×dk, v: L×dv, y: L×dv per head) for
// `groups` query heads sharing one dk×dv `state` (contiguous), which it
// updates to the state after the chunk.
void chunk_step(const ChunkDecay& decay, int64_t groups, int64_t dk, int64_t dv,
                const ChunkRows& rows, const ChunkScales& scales, float* state,
                ChunkWork& work);

// The delta rule's chunk form (UT transform): with decay a_t and rate β_t,
//   S_t = a_t S_{t−1} + k_t δ_tᵀ,  δ_t = β_t (v_t − (a_t S_{t−1})ᵀ k_t),
// so chunk_step with V replaced by δ gives outputs and the next state.
// Unrolling the state inside the chunk makes δ the solution of the unit
// lower-triangular system (I + M) δ = β ⊙ (V − diag(e^{c}) K S), with
// M_js = β_j e^{c_j − c_s} (k_j · k_s) for s < j, solved by forward
// substitution. k is L×dk (row stride ldk), v L×dv (ldv), beta L values,
// state dk×dv; writes δ (L×dv, contiguous, must not alias work buffers).
// Uses work.scores, work.vd and work.kt.
void delta_values(const ChunkDecay& decay, int64_t dk, int64_t dv,
                  const float* k, int64_t ldk, const float* v, int64_t ldv,
                  const float* beta, const float* state, float* delta,
                  ChunkWork& work);

// y = α·q S (q: dk, S: dk×dv, y: dv).
void read_state(float alpha, const float* q, const float* state, int64_t dk,
                int64_t dv, float* y);

// An output computed in f32: written in place when its dtype is f32, else
// into an f32 scratch tensor that finish() converts (f16/bf16 outputs).
class F32Output {
 public:
  static Result<F32Output> begin(KernelContext& ctx, size_t index, DType dtype,
                                 std::vector<int64_t> dims);
  float* data() const { return data_; }
  Status finish(KernelContext& ctx);

 private:
  Tensor scratch_;
  DType dtype_ = DType::kF32;
  size_t index_ = 0;
  float* data_ = nullptr;
};

}  // namespace seqrt::cpu
