// CausalConvWithState (ONNX 27) on the CPU, bias and SiLU fused. Prefill
// slides the k taps over [past_state, input] one vectorised axpy per tap;
// a decode step (a few tokens) is a short dot per channel, no window copy.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/simd/vec.h"
#include "ops/sequence/causal_conv_with_state.h"

namespace seqrt::cpu {
namespace {

using In = CausalConvInput;

// Rows (batch × channel) per task.
constexpr int64_t kRowBlock = 32;
// At most this many tokens go through the per-token step path.
constexpr int64_t kStepTokens = 4;

struct ConvArgs {
  const float* x;
  const float* w;
  const float* bias;  // null when absent
  const float* past;  // null when absent
  float* y;
  float* state;
  int64_t channels, length, k;
  bool silu;
};

float silu(float v) { return v / (1.0f + std::exp(-v)); }

// One row of a few tokens: out[t] = bias + Σ w[i]·window[t + i], the window
// being the state shifted by each token.
void step_row(const ConvArgs& a, int64_t row) {
  const int64_t c = row % a.channels;
  const int64_t km1 = a.k - 1;
  const float* w = a.w + c * a.k;
  float window[64];  // km1 + 1 <= 64 on this path (checked by the caller)
  for (int64_t i = 0; i < km1; ++i) {
    window[i] = a.past ? a.past[row * km1 + i] : 0.0f;
  }
  for (int64_t t = 0; t < a.length; ++t) {
    window[km1] = a.x[row * a.length + t];
    float out = a.bias ? a.bias[c] : 0.0f;
    for (int64_t i = 0; i < a.k; ++i) out += w[i] * window[i];
    a.y[row * a.length + t] = a.silu ? silu(out) : out;
    for (int64_t i = 0; i < km1; ++i) window[i] = window[i + 1];
  }
  // After the last shift the window's first k-1 entries are the state.
  std::copy_n(window, km1, a.state + row * km1);
}

// One row of a long sequence: each tap is an axpy over the whole row.
void sequence_row(const ConvArgs& a, int64_t row, std::vector<float>& ext) {
  const int64_t c = row % a.channels;
  const int64_t km1 = a.k - 1;
  const float* x = a.x + row * a.length;
  float* y = a.y + row * a.length;
  for (int64_t i = 0; i < km1; ++i) {
    ext[i] = a.past ? a.past[row * km1 + i] : 0.0f;
  }
  std::copy_n(x, a.length, ext.data() + km1);
  std::fill_n(y, a.length, a.bias ? a.bias[c] : 0.0f);
  const size_t n = static_cast<size_t>(a.length);
  for (int64_t i = 0; i < a.k; ++i)
    axpy(a.w[c * a.k + i], ext.data() + i, y, n);
  if (a.silu) silu_inplace(y, n);
  std::copy_n(ext.data() + a.length, km1, a.state + row * km1);
}

Status run_causal_conv(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(CausalConvDims dims, check_causal_conv(ctx));
  SEQRT_ASSIGN_OR_RETURN(CausalConvAttrs attrs,
                         CausalConvAttrs::from(ctx.node()));
  const DType dtype = ctx.input(In::kInput)->dtype();
  SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(*ctx.input(In::kInput)));
  SEQRT_ASSIGN_OR_RETURN(Tensor w, load_f32(*ctx.input(In::kWeight)));
  Tensor bias, past;
  if (ctx.input(In::kBias)) {
    SEQRT_ASSIGN_OR_RETURN(bias, load_f32(*ctx.input(In::kBias)));
  }
  if (ctx.input(In::kPastState)) {
    SEQRT_ASSIGN_OR_RETURN(past, load_f32(*ctx.input(In::kPastState)));
  }
  SEQRT_ASSIGN_OR_RETURN(
      Tensor y, f32_output(ctx, CausalConvOutput::kOutput, dtype, x.dims()));
  SEQRT_ASSIGN_OR_RETURN(
      Tensor state, Tensor::allocate(DType::kF32, {dims.batch, dims.channels,
                                                   dims.kernel - 1}));
  ConvArgs args{x.data_as<float>(),
                w.data_as<float>(),
                bias.empty() ? nullptr : bias.data_as<float>(),
                past.empty() ? nullptr : past.data_as<float>(),
                y.mutable_data_as<float>(),
                state.mutable_data_as<float>(),
                dims.channels,
                dims.length,
                dims.kernel,
                attrs.silu};
  const int64_t rows = dims.batch * dims.channels;
  const int64_t tasks = (rows + kRowBlock - 1) / kRowBlock;
  const bool step = dims.length <= kStepTokens && dims.kernel <= 63;
  parallel_for(tasks, [&](int64_t task) {
    const int64_t begin = task * kRowBlock;
    const int64_t end = std::min(begin + kRowBlock, rows);
    if (step) {
      for (int64_t row = begin; row < end; ++row) step_row(args, row);
      return;
    }
    std::vector<float> ext(static_cast<size_t>(dims.kernel - 1 + dims.length));
    for (int64_t row = begin; row < end; ++row) sequence_row(args, row, ext);
  });
  SEQRT_RETURN_IF_ERROR(
      set_output_as(ctx, CausalConvOutput::kOutput, y, dtype));
  if (ctx.num_outputs() > CausalConvOutput::kPresentState) {
    SEQRT_RETURN_IF_ERROR(
        set_output_as(ctx, CausalConvOutput::kPresentState, state, dtype));
  }
  return Status::ok();
}

Status supports_causal_conv(const Graph& graph, const Node& node) {
  return require_all_f32_family(graph, node);
}

}  // namespace

void register_causal_conv_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "CausalConvWithState", run_causal_conv,
                      supports_causal_conv});
}

}  // namespace seqrt::cpu
