// SelectiveScan (Mamba-1) on the CPU: one pass over time per channel with
// its N-dim state in registers (scan_simd.h), softplus, exp, D-skip and the
// z-gate fused, and only the final state written. Threads take batch ×
// channel blocks. Bm and Cm are transposed once to (L, N) rows per group so
// each step reads one contiguous, zero-padded row.
#include <algorithm>
#include <limits>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/scan_simd.h"
#include "backends/cpu/parallel.h"
#include "ops/sequence/scan_common.h"

namespace seqrt::cpu {
namespace {

enum Input { kU, kDelta, kA, kB, kC, kDskip, kZ, kDeltaBias, kPastState };

// Channels per task: at least 16, and at least kMinTaskWork state updates
// (channel × step × n), so a decode step is not split into tasks smaller
// than the cost of waking a thread (measured: a 1536-channel step took
// 0.24 ms on one thread, 12 ms split 96 ways on a loaded 2-core machine).
constexpr int64_t kMinChannelBlock = 16;
constexpr int64_t kMinTaskWork = int64_t{1} << 18;

struct Loaded {
  Tensor u, delta, a, b, c, dskip, z, bias, past;
};

Result<Tensor> load_optional(const Tensor* tensor) {
  if (tensor == nullptr) return Tensor();
  return load_f32(*tensor);
}

Result<Loaded> load_inputs(const KernelContext& ctx) {
  Loaded in;
  Tensor* slots[] = {&in.u,     &in.delta, &in.a,    &in.b,   &in.c,
                     &in.dskip, &in.z,     &in.bias, &in.past};
  for (size_t i = 0; i <= kPastState; ++i) {
    SEQRT_ASSIGN_OR_RETURN(*slots[i], load_optional(ctx.input(i)));
  }
  return in;
}

// (B, G, N, L) -> (B, G, L, padded_n), zero-padded.
std::vector<float> transpose_bc(const Tensor& m, const SelectiveScanDims& s,
                                size_t padded_n) {
  const int64_t np = static_cast<int64_t>(padded_n);
  std::vector<float> out(
      static_cast<size_t>(s.batch * s.groups * s.length * np), 0.0f);
  const float* src = m.data_as<float>();
  parallel_for(s.batch * s.groups, [&](int64_t bg) {
    const float* from = src + bg * s.state * s.length;
    float* to = out.data() + bg * s.length * np;
    for (int64_t n = 0; n < s.state; ++n) {
      for (int64_t t = 0; t < s.length; ++t) {
        to[t * np + n] = from[n * s.length + t];
      }
    }
  });
  return out;
}

Status run_selective_scan(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(SelectiveScanDims s, check_selective_scan(ctx));
  SEQRT_ASSIGN_OR_RETURN(Loaded in, load_inputs(ctx));
  const size_t lanes = scan_lanes();
  const size_t padded_n =
      (static_cast<size_t>(s.state) + lanes - 1) / lanes * lanes;
  const int64_t np = static_cast<int64_t>(padded_n);
  const std::vector<float> bt = transpose_bc(in.b, s, padded_n);
  const std::vector<float> ct = transpose_bc(in.c, s, padded_n);
  std::vector<float> a(static_cast<size_t>(s.channels * np), 0.0f);
  for (int64_t d = 0; d < s.channels; ++d) {
    std::copy_n(in.a.data_as<float>() + d * s.state, s.state,
                a.data() + d * np);
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor y, Tensor::allocate(DType::kF32, in.u.dims()));
  SEQRT_ASSIGN_OR_RETURN(
      Tensor state,
      Tensor::allocate(DType::kF32, {s.batch, s.channels, s.state}));

  const bool softplus = ctx.attr_int("delta_softplus") != 0;
  const float inf = std::numeric_limits<float>::infinity();
  const float* u = in.u.data_as<float>();
  const float* delta = in.delta.data_as<float>();
  const float* z = in.z.empty() ? nullptr : in.z.data_as<float>();
  const float* dskip = in.dskip.empty() ? nullptr : in.dskip.data_as<float>();
  const float* bias = in.bias.empty() ? nullptr : in.bias.data_as<float>();
  const float* past = in.past.empty() ? nullptr : in.past.data_as<float>();
  float* y_data = y.mutable_data_as<float>();
  float* state_data = state.mutable_data_as<float>();
  const int64_t work = std::max<int64_t>(1, s.length * np);
  const int64_t block = std::max(kMinChannelBlock, kMinTaskWork / work);
  const int64_t blocks = (s.channels + block - 1) / block;
  const int64_t group_size = s.groups > 0 ? s.channels / s.groups : 1;

  parallel_for(s.batch * blocks, [&](int64_t task) {
    const int64_t b = task / blocks;
    const int64_t d_begin = (task % blocks) * block;
    const int64_t d_end = std::min(d_begin + block, s.channels);
    std::vector<float> dt(static_cast<size_t>(s.length));
    std::vector<float> h(padded_n);
    for (int64_t d = d_begin; d < d_end; ++d) {
      const int64_t row = (b * s.channels + d) * s.length;
      const int64_t state_row = (b * s.channels + d) * s.state;
      const int64_t bg = b * s.groups + d / group_size;
      delta_row(delta + row, bias ? bias[d] : 0.0f, softplus, -inf, inf,
                dt.data(), dt.size());
      std::fill(h.begin(), h.end(), 0.0f);
      if (past) std::copy_n(past + state_row, s.state, h.data());
      ScanRow r;
      r.length = static_cast<size_t>(s.length);
      r.padded_n = padded_n;
      r.dt = dt.data();
      r.x = u + row;
      r.a = a.data() + d * np;
      r.b = bt.data() + bg * s.length * np;
      r.c = ct.data() + bg * s.length * np;
      r.bc_stride = padded_n;
      r.h = h.data();
      r.y = y_data + row;
      scan_row(r);
      skip_and_gate(y_data + row, u + row, dskip != nullptr,
                    dskip ? dskip[d] : 0.0f, z ? z + row : nullptr,
                    static_cast<size_t>(s.length));
      std::copy_n(h.data(), s.state, state_data + state_row);
    }
  });

  SEQRT_RETURN_IF_ERROR(set_output_as(ctx, 0, y, ctx.input(kU)->dtype()));
  if (ctx.num_outputs() > 1) {
    const Tensor* past_in = ctx.input(kPastState);
    SEQRT_RETURN_IF_ERROR(set_output_as(
        ctx, 1, state,
        state_dtype(past_in ? past_in->dtype() : DType::kUndefined)));
  }
  return Status::ok();
}

Status supports_selective_scan(const Graph& graph, const Node& node) {
  return require_all_f32_family(graph, node);
}

}  // namespace

void register_selective_scan_kernels(KernelTable& table) {
  table.add(CpuKernel{kSeqrtDomain, "SelectiveScan", run_selective_scan,
                      supports_selective_scan});
}

}  // namespace seqrt::cpu
