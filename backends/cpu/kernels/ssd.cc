// SSD (Mamba-2) on the CPU. Two forms, chosen by shape, with equal results:
// - recurrent (decode, short inputs): per head and state row the N-dim row
//   stays in registers for the whole pass over time (scan_simd.h);
// - chunked (prefill): per chunk of Q tokens, intra-chunk products as GEMMs
//   (sgemm), the state passed from chunk to chunk (ssd_chunked.cc).
// Threads take batch × heads.
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

enum Input { kX, kDt, kA, kB, kC, kD, kZ, kDtBias, kPastState };

// State updates (p × n × step) per task at least; see selective_scan.cc.
constexpr int64_t kMinTaskWork = int64_t{1} << 18;

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

Status run_ssd(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(SsdDims dims, check_ssd(ctx));
  Tensor in[kPastState + 1];
  for (size_t i = 0; i <= kPastState; ++i) {
    SEQRT_ASSIGN_OR_RETURN(in[i], load_optional(ctx.input(i)));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor y,
                         Tensor::allocate(DType::kF32, in[kX].dims()));
  SEQRT_ASSIGN_OR_RETURN(
      Tensor state, Tensor::allocate(DType::kF32, {dims.batch, dims.heads,
                                                   dims.head_dim, dims.state}));
  const int64_t chunk = ssd_chunk_length(dims, ctx.attr_int("chunk_size"));
  const int64_t lanes = static_cast<int64_t>(scan_lanes());
  const int64_t padded_n = (dims.state + lanes - 1) / lanes * lanes;
  // The recurrent form reads padded rows; inputs already padded are used
  // in place.
  const int64_t bc_rows = dims.batch * dims.length * dims.groups;
  std::vector<float> b_pad, c_pad;
  if (padded_n != dims.state) {
    b_pad = pad_rows(in[kB].data_as<float>(), bc_rows, dims.state, padded_n);
    c_pad = pad_rows(in[kC].data_as<float>(), bc_rows, dims.state, padded_n);
  }
  const float* b_rows = b_pad.empty() ? in[kB].data_as<float>() : b_pad.data();
  const float* c_rows = c_pad.empty() ? in[kC].data_as<float>() : c_pad.data();
  const StepRule rule{ctx.attr_int("dt_softplus") != 0,
                      ctx.attr_float("dt_min"), ctx.attr_float("dt_max")};
  const float* dt_bias = data_or_null(in[kDtBias]);
  const float* d_skip = data_or_null(in[kD]);
  const float* z = data_or_null(in[kZ]);
  const float* past = data_or_null(in[kPastState]);
  const int64_t state_size = dims.head_dim * dims.state;
  const int64_t row = dims.heads * dims.head_dim;

  // Heads per task: enough state updates (p × n × step) to be worth a
  // thread; a decode step runs on one.
  const int64_t work = std::max<int64_t>(1, state_size * dims.length);
  const int64_t per_task = std::max<int64_t>(1, kMinTaskWork / work);
  const int64_t num_heads = dims.batch * dims.heads;
  const int64_t tasks = (num_heads + per_task - 1) / per_task;
  auto run_head = [&](int64_t bh) {
    const int64_t b = bh / dims.heads;
    const int64_t h = bh % dims.heads;
    std::vector<float> dt(static_cast<size_t>(dims.length));
    for (int64_t t = 0; t < dims.length; ++t) {
      dt[t] = in[kDt].data_as<float>()[(b * dims.length + t) * dims.heads + h];
    }
    delta_row(dt.data(), dt_bias ? dt_bias[h] : 0.0f, rule.softplus,
              rule.dt_min, rule.dt_max, dt.data(), dt.size());
    float* s = state.mutable_data_as<float>() + bh * state_size;
    if (past) std::copy_n(past + bh * state_size, state_size, s);
    const int64_t offset = b * dims.length * row + h * dims.head_dim;
    SsdHead head{
        dims,
        in[kA].data_as<float>()[h],
        h / (dims.heads / dims.groups),
        dt.data(),
        in[kX].data_as<float>() + offset,
        in[kB].data_as<float>() + b * dims.length * dims.groups * dims.state,
        in[kC].data_as<float>() + b * dims.length * dims.groups * dims.state,
        y.mutable_data_as<float>() + offset};
    if (chunk > 0 && decays_bounded(head)) {
      chunked_head(head, chunk, s);
    } else {
      const int64_t bc = b * dims.length * dims.groups * padded_n;
      recurrent_head(head, b_rows + bc, c_rows + bc, padded_n, s);
    }
    for (int64_t t = 0; t < dims.length; ++t) {
      skip_and_gate(head.y + t * row, head.x + t * row, d_skip != nullptr,
                    d_skip ? d_skip[h] : 0.0f,
                    z ? z + offset + t * row : nullptr,
                    static_cast<size_t>(dims.head_dim));
    }
  };
  parallel_for(tasks, [&](int64_t task) {
    const int64_t end = std::min(num_heads, (task + 1) * per_task);
    for (int64_t bh = task * per_task; bh < end; ++bh) run_head(bh);
  });

  SEQRT_RETURN_IF_ERROR(set_output_as(ctx, 0, y, ctx.input(kX)->dtype()));
  if (ctx.num_outputs() > 1) {
    const Tensor* past_in = ctx.input(kPastState);
    SEQRT_RETURN_IF_ERROR(set_output_as(
        ctx, 1, state,
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
