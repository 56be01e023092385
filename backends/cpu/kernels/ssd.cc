// SSD (Mamba-2) on the CPU. Two forms, chosen by shape, with equal results:
// - recurrent (decode, short inputs): per head and state row the N-dim row
//   stays in registers for the whole pass over time (scan_simd.h);
// - chunked (prefill): per chunk of Q tokens, intra-chunk products as GEMMs
//   (sgemm), the state passed from chunk to chunk; heads that share B and
//   C run together, their products with the state as one GEMM over the
//   group (ssd_group.cc), other heads one by one (ssd_chunked.cc).
// Threads take parts of groups (several heads each, run with no
// synchronisation between chunks) and single heads.
#include <algorithm>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/scan_simd.h"
#include "backends/cpu/kernels/ssd_kernel.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/simd/vec.h"

namespace seqrt::cpu {
namespace {

using In = SsdInput;

// State updates (p × n × step) per task at least; see selective_scan.cc.
constexpr int64_t kMinTaskWork = int64_t{1} << 18;
// Heads per part of a group run together: each part's state products are
// GEMMs kMinGroupHeads·P or more wide.
constexpr int64_t kMinGroupHeads = 4;

Result<Tensor> load_optional(const Tensor* tensor) {
  if (tensor == nullptr) return Tensor();
  return load_f32(*tensor);
}

const float* data_or_null(const Tensor& tensor) {
  return tensor.empty() ? nullptr : tensor.data_as<float>();
}

// Bm/Cm rows (B, L, G, N) zero-padded to padded_n, for the recurrent form.
std::vector<float> pad_rows(const float* m, int64_t rows, int64_t n,
                            int64_t padded_n) {
  std::vector<float> out(static_cast<size_t>(rows * padded_n), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    std::copy_n(m + r * n, n, out.data() + r * padded_n);
  }
  return out;
}

// One head over the whole sequence, token by token.
void recurrent_head(const SsdHead& head, const float* b_rows,
                    const float* c_rows, int64_t padded_n, float* state) {
  const SsdDims& d = head.dims;
  std::vector<float> decay(head.dt, head.dt + d.length);
  scale(head.a, decay.data(), decay.size());
  exp_inplace(decay.data(), decay.size());
  std::vector<float> h(static_cast<size_t>(padded_n));
  const int64_t x_stride = d.heads * d.head_dim;
  for (int64_t p = 0; p < d.head_dim; ++p) {
    std::fill(h.begin(), h.end(), 0.0f);
    std::copy_n(state + p * d.state, d.state, h.data());
    ScanRow r;
    r.length = static_cast<size_t>(d.length);
    r.padded_n = static_cast<size_t>(padded_n);
    r.dt = head.dt;
    r.x = head.x + p;
    r.x_stride = x_stride;
    r.decay = decay.data();
    r.b = b_rows + head.group * padded_n;
    r.c = c_rows + head.group * padded_n;
    r.bc_stride = static_cast<size_t>(d.groups * padded_n);
    r.h = h.data();
    r.y = head.y + p;
    r.y_stride = x_stride;
    scan_row(r);
    std::copy_n(h.data(), d.state, state + p * d.state);
  }
}

// Everything the forms read and write for one call.
struct SsdCall {
  const SsdDims& dims;
  int64_t chunk;
  const float *x, *a, *b, *c;
  const float *b_rows, *c_rows;  // padded to padded_n for the recurrence
  int64_t padded_n;
  const float* dt;  // (B·H, L), after softplus and clamping
  float *y, *states;

  int64_t heads_per_group() const { return dims.heads / dims.groups; }
  int64_t state_size() const { return dims.head_dim * dims.state; }
  SsdHead head(int64_t bh) const {
    const int64_t batch = bh / dims.heads;
    const int64_t h = bh % dims.heads;
    const int64_t offset =
        batch * dims.length * dims.heads * dims.head_dim + h * dims.head_dim;
    const int64_t bc = batch * dims.length * dims.groups * dims.state;
    return SsdHead{dims,
                   a[h],
                   h / heads_per_group(),
                   dt + bh * dims.length,
                   x + offset,
                   b + bc,
                   c + bc,
                   y + offset};
  }
};

// Δ of every (batch, head), a row of L each; heads split into tasks of at
// least kMinTaskWork/N tokens (a decode step on one thread).
std::vector<float> step_sizes(const SsdDims& dims, const float* dt,
                              const float* dt_bias, const StepRule& rule) {
  const int64_t num_heads = dims.batch * dims.heads;
  std::vector<float> out(static_cast<size_t>(num_heads * dims.length));
  const int64_t grain = std::max<int64_t>(
      1, kMinTaskWork / std::max<int64_t>(1, dims.length * dims.state));
  parallel_chunks(num_heads, grain, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / dims.heads;
      const int64_t h = bh % dims.heads;
      float* row = out.data() + bh * dims.length;
      for (int64_t t = 0; t < dims.length; ++t) {
        row[t] = dt[(b * dims.length + t) * dims.heads + h];
      }
      delta_row(row, dt_bias ? dt_bias[h] : 0.0f, rule.softplus, rule.dt_min,
                rule.dt_max, row, static_cast<size_t>(dims.length));
    }
  });
  return out;
}

// Groups of several heads whose decays are all bounded run together
// (ssd_group.cc), cut into parts of at least kMinGroupHeads heads so
// threads take parts with no synchronisation between chunks. Returns which
// heads were done.
std::vector<char> run_groups(const SsdCall& call) {
  const SsdDims& dims = call.dims;
  const int64_t per_group = call.heads_per_group();
  std::vector<char> done(static_cast<size_t>(dims.batch * dims.heads), 0);
  if (call.chunk == 0 || per_group < 2) return done;
  std::vector<int64_t> firsts;
  for (int64_t bg = 0; bg < dims.batch * dims.groups; ++bg) {
    const int64_t first =
        bg / dims.groups * dims.heads + bg % dims.groups * per_group;
    bool bounded = true;
    for (int64_t i = 0; i < per_group && bounded; ++i) {
      bounded = decays_bounded(call.head(first + i));
    }
    if (!bounded) continue;
    firsts.push_back(first);
    std::fill_n(done.begin() + first, per_group, 1);
  }
  const int64_t parts = std::clamp<int64_t>(
      std::min<int64_t>(2 * max_threads(), per_group / kMinGroupHeads), 1,
      per_group);
  parallel_for(static_cast<int64_t>(firsts.size()) * parts, [&](int64_t i) {
    const int64_t part = i % parts;
    const int64_t begin = per_group * part / parts;
    const int64_t end = per_group * (part + 1) / parts;
    const int64_t first = firsts[i / parts] + begin;
    const SsdHead lead = call.head(first);
    const SsdGroup group{dims,
                         end - begin,
                         call.a + first % dims.heads,
                         lead.dt,
                         lead.x,
                         lead.b + lead.group * dims.state,
                         lead.c + lead.group * dims.state,
                         lead.y};
    chunked_group(group, call.chunk, call.states + first * call.state_size());
  });
  return done;
}

// The heads not `done`, one by one: chunked when their decays are
// bounded, else recurrent. Heads per task: enough state updates
// (p × n × step) to be worth a thread; a decode step runs on one.
void run_heads(const SsdCall& call, const std::vector<char>& done) {
  const SsdDims& dims = call.dims;
  const int64_t num_heads = dims.batch * dims.heads;
  const int64_t work = std::max<int64_t>(1, call.state_size() * dims.length);
  const int64_t per_task = std::max<int64_t>(1, kMinTaskWork / work);
  const int64_t tasks = (num_heads + per_task - 1) / per_task;
  parallel_for(tasks, [&](int64_t task) {
    const int64_t end = std::min(num_heads, (task + 1) * per_task);
    for (int64_t bh = task * per_task; bh < end; ++bh) {
      if (done[bh]) continue;
      const SsdHead head = call.head(bh);
      float* s = call.states + bh * call.state_size();
      if (call.chunk > 0 && decays_bounded(head)) {
        chunked_head(head, call.chunk, s);
      } else {
        const int64_t bc =
            bh / dims.heads * dims.length * dims.groups * call.padded_n;
        recurrent_head(head, call.b_rows + bc, call.c_rows + bc, call.padded_n,
                       s);
      }
    }
  });
}

// The D-skip and gate token by token, all heads of a token together: x, z
// and y are read in order (per head, rows H·P apart defeat the
// prefetcher).
void skip_and_gate_tokens(const SsdCall& call, const float* d_skip,
                          const float* z) {
  const SsdDims& dims = call.dims;
  const int64_t row = dims.heads * dims.head_dim;
  const int64_t tokens = dims.batch * dims.length;
  const int64_t block = 64;
  parallel_for((tokens + block - 1) / block, [&](int64_t task) {
    const int64_t end = std::min(tokens, (task + 1) * block);
    for (int64_t t = task * block; t < end; ++t) {
      for (int64_t h = 0; h < dims.heads; ++h) {
        const int64_t offset = t * row + h * dims.head_dim;
        skip_and_gate(call.y + offset, call.x + offset, d_skip != nullptr,
                      d_skip ? d_skip[h] : 0.0f, z ? z + offset : nullptr,
                      static_cast<size_t>(dims.head_dim));
      }
    }
  });
}

Status run_ssd(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(SsdDims dims, check_ssd(ctx));
  SEQRT_ASSIGN_OR_RETURN(SsdAttrs attrs, SsdAttrs::from(ctx.node()));
  Tensor in[In::kCount];
  for (size_t i = 0; i < In::kCount; ++i) {
    SEQRT_ASSIGN_OR_RETURN(in[i], load_optional(ctx.input(i)));
  }
  SEQRT_ASSIGN_OR_RETURN(
      Tensor y, f32_output(ctx, SsdOutput::kY, ctx.input(In::kX)->dtype(),
                           in[In::kX].dims()));
  SEQRT_ASSIGN_OR_RETURN(
      Tensor state, Tensor::allocate(DType::kF32, {dims.batch, dims.heads,
                                                   dims.head_dim, dims.state}));
  const int64_t lanes = static_cast<int64_t>(scan_lanes());
  const int64_t padded_n = (dims.state + lanes - 1) / lanes * lanes;
  // The recurrent form reads padded rows; inputs already padded are used
  // in place.
  const int64_t bc_rows = dims.batch * dims.length * dims.groups;
  std::vector<float> b_pad, c_pad;
  if (padded_n != dims.state) {
    b_pad =
        pad_rows(in[In::kBm].data_as<float>(), bc_rows, dims.state, padded_n);
    c_pad =
        pad_rows(in[In::kCm].data_as<float>(), bc_rows, dims.state, padded_n);
  }
  const StepRule rule{attrs.dt_softplus, attrs.dt_min, attrs.dt_max};
  const std::vector<float> dt = step_sizes(dims, in[In::kDt].data_as<float>(),
                                           data_or_null(in[In::kDtBias]), rule);
  float* states = state.mutable_data_as<float>();
  if (const float* past = data_or_null(in[In::kPastState])) {
    std::copy_n(past, state.num_elements(), states);
  }
  const SsdCall call{
      dims,
      ssd_chunk_length(dims, attrs.chunk_size),
      in[In::kX].data_as<float>(),
      in[In::kA].data_as<float>(),
      in[In::kBm].data_as<float>(),
      in[In::kCm].data_as<float>(),
      b_pad.empty() ? in[In::kBm].data_as<float>() : b_pad.data(),
      c_pad.empty() ? in[In::kCm].data_as<float>() : c_pad.data(),
      padded_n,
      dt.data(),
      y.mutable_data_as<float>(),
      states};
  run_heads(call, run_groups(call));
  skip_and_gate_tokens(call, data_or_null(in[In::kD]),
                       data_or_null(in[In::kZ]));

  SEQRT_RETURN_IF_ERROR(
      set_output_as(ctx, SsdOutput::kY, y, ctx.input(In::kX)->dtype()));
  if (ctx.num_outputs() > SsdOutput::kPresentState) {
    const Tensor* past_in = ctx.input(In::kPastState);
    SEQRT_RETURN_IF_ERROR(set_output_as(
        ctx, SsdOutput::kPresentState, state,
        state_dtype(past_in ? past_in->dtype() : DType::kUndefined)));
  }
  return Status::ok();
}

Status supports_ssd(const Graph& graph, const Node& node) {
  return require_all_f32_family(graph, node);
}

}  // namespace

void register_ssd_kernels(KernelTable& table) {
  table.add(CpuKernel{kSeqrtDomain, "SSD", run_ssd, supports_ssd});
}

}  // namespace seqrt::cpu
