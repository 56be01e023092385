// RNN, GRU and LSTM (ops/rnn/) on the CPU, in f32. The input projection of
// every step, X·Wᵀ plus the biases, is one GEMM per direction up front.
// The recurrence then runs step by step: h·Rᵀ for all batch rows is one
// small GEMM per gate, followed by the fused gate math (recurrent_cells.h).
// Each step splits into tasks of (direction, block of hidden units), run in
// parallel when there is enough work; h is double-buffered so a block never
// reads another's new state. GRU without linear_before_reset needs r ⊙ h of
// every unit before its candidate, so its steps run in two phases.
// f64 nodes run the op's reference kernel, which computes in double.
#include <algorithm>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/recurrent_cells.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/simd/gemm.h"
#include "ops/registry.h"

namespace seqrt::cpu {
namespace {

// Hidden units per task: a block smaller than this costs more in
// synchronisation than it saves.
constexpr int64_t kMinBlock = 64;

struct Task {
  int64_t dir, j0, n;
};

// Per direction: the state (h double-buffered), h·Rᵀ of the step, and for
// GRU the update gate and r ⊙ h kept between the two phases.
struct DirectionState {
  std::vector<float> h[2];
  std::vector<float> c;
  std::vector<float> hr;
  std::vector<float> z, rh;
};

class Recurrence {
 public:
  Recurrence(const RnnConfig& config, const RnnDims& dims,
             std::vector<int64_t> lens)
      : c_(config),
        d_(dims),
        lens_(std::move(lens)),
        gh_(c_.gates * d_.hidden) {}

  // Fills xw_ with X·Wᵀ plus the biases folded into it, per direction.
  void project_inputs(const float* x, const float* w, const float* bias);
  void init_state(const float* h0, const float* c0);
  void run(const float* r, const float* bias, const float* peep, float* y);
  void store_state(float* yh, float* yc) const;

 private:
  std::vector<Task> make_tasks() const;
  // Phase 0 computes the whole step, or GRU's z and r ⊙ h; phase 1 GRU's
  // candidate and output.
  void step(const Task& task, int64_t s, int phase, std::vector<float>& tmp);
  void recurrent_product(const Task& task, int64_t gate, const float* h);
  void copy_frozen(const Task& task, int64_t b);

  const RnnConfig& c_;
  RnnDims d_;
  std::vector<int64_t> lens_;
  int64_t gh_;
  std::vector<float> xw_;  // (rows of X, directions·gh)
  std::vector<DirectionState> dirs_;
  std::vector<int> cur_;  // which h buffer holds H_{t-1}, per direction
  const float* r_ = nullptr;
  const float* rbh_ = nullptr;  // GRU with linear_before_reset: Rbh kept apart
  const float* peep_ = nullptr;
  float* y_ = nullptr;
};

bool gru_split_bias(const RnnConfig& c) {
  return c.kind == RnnKind::kGru && c.linear_before_reset;
}

void Recurrence::project_inputs(const float* x, const float* w,
                                const float* bias) {
  const int64_t rows = d_.seq * d_.batch;
  const int64_t ld = d_.directions * gh_;
  xw_.assign(static_cast<size_t>(rows * ld), 0.0f);
  if (rows == 0 || ld == 0) return;
  if (bias) {
    // Wb + Rb, but GRU's Rbh stays out when r multiplies it.
    std::vector<float> row(static_cast<size_t>(ld));
    for (int64_t dir = 0; dir < d_.directions; ++dir) {
      const float* wb = bias + dir * 2 * gh_;
      for (int64_t k = 0; k < gh_; ++k) {
        bool keep_rb = !(gru_split_bias(c_) && k >= 2 * d_.hidden);
        row[static_cast<size_t>(dir * gh_ + k)] =
            wb[k] + (keep_rb ? wb[gh_ + k] : 0.0f);
      }
    }
    for (int64_t i = 0; i < rows; ++i) {
      std::copy(row.begin(), row.end(), xw_.begin() + i * ld);
    }
  }
  if (d_.input == 0) return;  // X·Wᵀ is empty: the biases alone
  for (int64_t dir = 0; dir < d_.directions; ++dir) {
    sgemm(false, true, rows, gh_, d_.input, 1.0f, x, d_.input,
          w + dir * gh_ * d_.input, d_.input, 1.0f, xw_.data() + dir * gh_, ld);
  }
}

void Recurrence::init_state(const float* h0, const float* c0) {
  const size_t state = static_cast<size_t>(d_.batch * d_.hidden);
  dirs_.resize(static_cast<size_t>(d_.directions));
  cur_.assign(dirs_.size(), 0);
  for (int64_t dir = 0; dir < d_.directions; ++dir) {
    DirectionState& st = dirs_[static_cast<size_t>(dir)];
    st.h[0].assign(state, 0.0f);
    st.h[1].assign(state, 0.0f);
    st.c.assign(state, 0.0f);
    st.hr.assign(static_cast<size_t>(d_.batch * gh_), 0.0f);
    if (c_.kind == RnnKind::kGru) {
      st.z.assign(state, 0.0f);
      st.rh.assign(state, 0.0f);
    }
    for (int64_t b = 0; b < d_.batch; ++b) {
      const int64_t from = rnn_state_row(c_, d_, dir, b) * d_.hidden;
      if (h0)
        std::copy_n(h0 + from, d_.hidden, st.h[0].begin() + b * d_.hidden);
      if (c0) std::copy_n(c0 + from, d_.hidden, st.c.begin() + b * d_.hidden);
    }
  }
}

std::vector<Task> Recurrence::make_tasks() const {
  const int64_t per_dir =
      std::max<int64_t>(1, max_threads() / std::max<int64_t>(1, d_.directions));
  int64_t blocks = std::min(per_dir, (d_.hidden + kMinBlock - 1) / kMinBlock);
  blocks = std::max<int64_t>(1, blocks);
  const int64_t size = (d_.hidden + blocks - 1) / blocks;
  std::vector<Task> tasks;
  for (int64_t dir = 0; dir < d_.directions; ++dir) {
    for (int64_t j0 = 0; j0 < d_.hidden; j0 += size) {
      tasks.push_back({dir, j0, std::min(size, d_.hidden - j0)});
    }
  }
  return tasks;
}

// hr[:, gate block] = h · R[gate block]ᵀ for every batch row.
void Recurrence::recurrent_product(const Task& t, int64_t gate,
                                   const float* h) {
  DirectionState& st = dirs_[static_cast<size_t>(t.dir)];
  const int64_t col = gate * d_.hidden + t.j0;
  const float* r = r_ + (t.dir * gh_ + col) * d_.hidden;
  sgemm(false, true, d_.batch, t.n, d_.hidden, 1.0f, h, d_.hidden, r, d_.hidden,
        0.0f, st.hr.data() + col, gh_);
}

// A batch row past its length keeps its state.
void Recurrence::copy_frozen(const Task& t, int64_t b) {
  DirectionState& st = dirs_[static_cast<size_t>(t.dir)];
  const int cur = cur_[static_cast<size_t>(t.dir)];
  const int64_t at = b * d_.hidden + t.j0;
  std::copy_n(st.h[cur].begin() + at, t.n, st.h[1 - cur].begin() + at);
}

void Recurrence::step(const Task& t, int64_t s, int phase,
                      std::vector<float>& tmp) {
  DirectionState& st = dirs_[static_cast<size_t>(t.dir)];
  const int cur = cur_[static_cast<size_t>(t.dir)];
  const float* h_prev = st.h[cur].data();
  float* h_next = st.h[1 - cur].data();
  const int64_t H = d_.hidden, n = t.n;
  const bool gru_two_phase =
      c_.kind == RnnKind::kGru && !c_.linear_before_reset;
  if (phase == 1) {
    recurrent_product(t, 2, st.rh.data());
  } else {
    const int64_t gates = gru_two_phase ? 2 : c_.gates;
    for (int64_t k = 0; k < gates; ++k) recurrent_product(t, k, h_prev);
  }
  const size_t un = static_cast<size_t>(n);
  for (int64_t b = 0; b < d_.batch; ++b) {
    const int64_t len = lens_[static_cast<size_t>(b)];
    if (s >= len) {
      if (phase == 1 || !gru_two_phase) copy_frozen(t, b);
      continue;
    }
    const int64_t time = c_.backwards(t.dir) ? len - 1 - s : s;
    const float* xw = xw_.data() +
                      rnn_x_row(c_, d_, time, b) * d_.directions * gh_ +
                      t.dir * gh_;
    const float* hr = st.hr.data() + b * gh_;
    // Gate k's pre-activation for this block, into tmp[k·n ...].
    auto gather = [&](int64_t k) {
      float* out = tmp.data() + k * n;
      for (int64_t j = 0; j < n; ++j) {
        out[j] = xw[k * H + t.j0 + j] + hr[k * H + t.j0 + j];
      }
      return out;
    };
    const int64_t at = b * H + t.j0;
    float* h_out = h_next + at;
    if (c_.kind == RnnKind::kRnn) {
      float* a = gather(0);
      apply_rnn_activation(c_, c_.act(t.dir, 0), a, un);
      std::copy_n(a, n, h_out);
    } else if (c_.kind == RnnKind::kLstm) {
      LstmBlock block{gather(0),
                      gather(1),
                      gather(2),
                      gather(3),
                      tmp.data() + 4 * n,
                      peep_ ? peep_ + t.dir * 3 * H + t.j0 : nullptr,
                      static_cast<size_t>(H),
                      st.c.data() + at,
                      h_out};
      lstm_block(c_, t.dir, block, un);
    } else if (phase == 0) {
      float* z = gather(0);
      float* r = gather(1);
      gru_update_reset(c_, t.dir, z, r, un);
      if (gru_two_phase) {
        std::copy_n(z, n, st.z.begin() + at);
        for (int64_t j = 0; j < n; ++j) st.rh[at + j] = r[j] * h_prev[at + j];
        continue;
      }
      // linear_before_reset: cand = xw_h + r ⊙ (h·Rhᵀ + Rbh).
      float* cand = tmp.data() + 2 * n;
      const float* rbh =
          rbh_ ? rbh_ + t.dir * 2 * gh_ + gh_ + 2 * H + t.j0 : nullptr;
      for (int64_t j = 0; j < n; ++j) {
        cand[j] = xw[2 * H + t.j0 + j] +
                  r[j] * (hr[2 * H + t.j0 + j] + (rbh ? rbh[j] : 0.0f));
      }
      gru_output(c_, t.dir, z, cand, h_prev + at, h_out, un);
    } else {
      float* cand = gather(2);
      gru_output(c_, t.dir, st.z.data() + at, cand, h_prev + at, h_out, un);
    }
    if (y_ != nullptr && (phase == 1 || !gru_two_phase)) {
      std::copy_n(h_out, n, y_ + rnn_y_row(c_, d_, time, t.dir, b) * H + t.j0);
    }
  }
}

void Recurrence::run(const float* r, const float* bias, const float* peep,
                     float* y) {
  r_ = r;
  rbh_ = gru_split_bias(c_) ? bias : nullptr;
  peep_ = peep;
  y_ = y;
  if (d_.batch == 0 || d_.hidden == 0) return;  // nothing to compute
  const std::vector<Task> tasks = make_tasks();
  const int64_t block = tasks.empty() ? 0 : tasks.front().n;
  std::vector<std::vector<float>> scratch(
      tasks.size(), std::vector<float>(static_cast<size_t>(5 * block)));
  const int phases =
      c_.kind == RnnKind::kGru && !c_.linear_before_reset ? 2 : 1;
  const int64_t count = static_cast<int64_t>(tasks.size());
  for (int64_t s = 0; s < d_.seq; ++s) {
    for (int phase = 0; phase < phases; ++phase) {
      parallel_for(count, [&](int64_t i) {
        step(tasks[static_cast<size_t>(i)], s, phase,
             scratch[static_cast<size_t>(i)]);
      });
    }
    for (int& cur : cur_) cur = 1 - cur;
  }
}

void Recurrence::store_state(float* yh, float* yc) const {
  for (int64_t dir = 0; dir < d_.directions; ++dir) {
    const DirectionState& st = dirs_[static_cast<size_t>(dir)];
    const std::vector<float>& h = st.h[cur_[static_cast<size_t>(dir)]];
    for (int64_t b = 0; b < d_.batch; ++b) {
      // Outputs are zero-filled; length 0 leaves them so (rnn_common.h).
      if (lens_[static_cast<size_t>(b)] == 0) continue;
      const int64_t to = rnn_state_row(c_, d_, dir, b) * d_.hidden;
      if (yh) std::copy_n(h.begin() + b * d_.hidden, d_.hidden, yh + to);
      if (yc) std::copy_n(st.c.begin() + b * d_.hidden, d_.hidden, yc + to);
    }
  }
}

// An optional input as f32 (empty when omitted).
Result<Tensor> optional_f32(const KernelContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return Tensor();
  return load_f32(*ctx.input(i));
}

const float* data_or_null(const Tensor& t) {
  return t.empty() ? nullptr : t.data_as<float>();
}

Status run_recurrent(KernelContext& ctx, RnnKind kind) {
  const DType dtype = ctx.input(kRnnX)->dtype();
  if (dtype == DType::kF64) return ctx.schema().reference(ctx);
  SEQRT_ASSIGN_OR_RETURN(RnnConfig config, rnn_config(ctx, kind));
  SEQRT_ASSIGN_OR_RETURN(RnnDims dims, check_rnn(ctx, config));
  Tensor in[8];
  for (size_t i = 0; i < config.num_inputs(); ++i) {
    if (i == kRnnSequenceLens) continue;
    SEQRT_ASSIGN_OR_RETURN(in[i], optional_f32(ctx, i));
  }
  auto has_output = [&](size_t i) {
    return i < ctx.num_outputs() && ctx.node().outputs[i] != kNoValue;
  };
  Tensor out[3];
  for (size_t i = 0; i < 3; ++i) {
    if (!has_output(i)) continue;
    SEQRT_ASSIGN_OR_RETURN(
        out[i], f32_output(ctx, i, dtype,
                           i == kRnnY ? rnn_y_dims(config, dims)
                                      : rnn_state_dims(config, dims)));
  }
  auto out_ptr = [&](size_t i) {
    return out[i].empty() ? nullptr : out[i].mutable_data_as<float>();
  };
  Recurrence rec(config, dims, rnn_sequence_lengths(ctx, dims));
  rec.project_inputs(data_or_null(in[kRnnX]), data_or_null(in[kRnnW]),
                     data_or_null(in[kRnnB]));
  rec.init_state(data_or_null(in[kRnnInitialH]),
                 data_or_null(in[kRnnInitialC]));
  rec.run(data_or_null(in[kRnnR]), data_or_null(in[kRnnB]),
          data_or_null(in[kRnnP]), out_ptr(kRnnY));
  rec.store_state(out_ptr(kRnnYh), out_ptr(kRnnYc));
  for (size_t i = 0; i < 3; ++i) {
    if (!out[i].empty())
      SEQRT_RETURN_IF_ERROR(set_output_as(ctx, i, out[i], dtype));
  }
  return Status::ok();
}

}  // namespace

void register_recurrent_kernels(KernelTable& table) {
  table.add(CpuKernel{
      kOnnxDomain, "RNN",
      [](KernelContext& ctx) { return run_recurrent(ctx, RnnKind::kRnn); },
      nullptr});
  table.add(CpuKernel{
      kOnnxDomain, "GRU",
      [](KernelContext& ctx) { return run_recurrent(ctx, RnnKind::kGru); },
      nullptr});
  table.add(CpuKernel{
      kOnnxDomain, "LSTM",
      [](KernelContext& ctx) { return run_recurrent(ctx, RnnKind::kLstm); },
      nullptr});
}

}  // namespace seqrt::cpu
