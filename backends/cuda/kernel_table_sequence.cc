// The CUDA kernel table's sequence ops beyond SelectiveScan and Attention:
// CausalConvWithState, NeuralMemory (kernels/neural_memory.cu), and the
// matrix-state ops (Retention, LinearAttention,
// SSD) that share kernels/column_scan.cu (the recurrence, every rule) and
// kernels/chunkwise.cu (the chunkwise prefill of Retention, SSD and the
// linear and per-head gated LinearAttention). Each entry validates the node
// with the op's own check (the reference kernel's messages), plans the
// tiling from the device's limits and describes its tensors' layouts to
// the kernel as strided views.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_status.h"
#include "backends/cuda/kernel_plan.h"
#include "backends/cuda/kernel_support.h"
#include "backends/cuda/kernels/causal_conv.h"
#include "backends/cuda/kernels/chunkwise.h"
#include "backends/cuda/kernels/column_scan.h"
#include "backends/cuda/kernels/neural_memory.h"
#include "backends/cuda/node_io.h"
#include "ops/sequence/causal_conv_with_state.h"
#include "ops/sequence/linear_attention.h"
#include "ops/sequence/neural_memory.h"
#include "ops/sequence/retention.h"
#include "ops/sequence/ssd.h"

namespace seqrt::cuda {
namespace {

Status run_causal_conv(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(CausalConvDims dims, check_causal_conv(ctx));
  SEQRT_ASSIGN_OR_RETURN(CausalConvAttrs attrs,
                         CausalConvAttrs::from(ctx.node()));
  std::vector<std::vector<int64_t>> outputs = {
      {dims.batch, dims.channels, dims.length}};
  const bool want_state = wants_output(ctx, CausalConvOutput::kPresentState);
  if (want_state)
    outputs.push_back({dims.batch, dims.channels, dims.kernel - 1});
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(outputs));
  CausalConvArgs args;
  args.input = io.input(CausalConvInput::kInput);
  args.weight = io.input(CausalConvInput::kWeight);
  args.bias = io.input(CausalConvInput::kBias);
  args.past_state = io.input(CausalConvInput::kPastState);
  args.output = io.output(CausalConvOutput::kOutput);
  args.present_state =
      want_state ? io.output(CausalConvOutput::kPresentState) : nullptr;
  args.batch = dims.batch;
  args.channels = dims.channels;
  args.length = dims.length;
  args.kernel = dims.kernel;
  args.silu = attrs.silu;
  const std::string what = ctx.node().label();
  return io.finish(launch_causal_conv(args, cuda.stream()), what.c_str());
}

// Stages the node's inputs (and `extra` floats into the scratch block),
// runs `launch` on the staged tensors and brings the outputs back.
Status stage_and_run(KernelContext& ctx, CudaContext& cuda,
                     const std::vector<std::vector<int64_t>>& outputs,
                     const std::vector<float>& extra,
                     const std::function<cudaError_t(const NodeIo&)>& launch) {
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(outputs, static_cast<int64_t>(extra.size())));
  const std::string what = ctx.node().label();
  if (!extra.empty()) {
    // Pageable memory: the call returns once `extra` has been staged.
    SEQRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(io.scratch(), extra.data(),
                        sizeof(float) * extra.size(), cudaMemcpyHostToDevice,
                        cuda.stream()),
        what);
  }
  return io.finish(launch(io), what.c_str());
}

// Y is output 0, the state (when wanted) output 1, for every op bound here.
static_assert(RetentionOutput::kY == 0 && RetentionOutput::kPresentState == 1);
static_assert(LinearAttentionOutput::kOutput == 0 &&
              LinearAttentionOutput::kPresentState == 1);
static_assert(SsdOutput::kY == 0 && SsdOutput::kPresentState == 1);
template <typename Args>
void bind_outputs(const NodeIo& io, size_t outputs, Args& args) {
  args.out = io.output(0);
  args.present_state = outputs > 1 ? io.output(1) : nullptr;
}

// A row-major (B, heads, T, width) tensor read per (b, head).
ScanView per_head_view(int64_t heads, int64_t steps, int64_t width) {
  ScanView view;
  view.batch = heads * steps * width;
  view.head = steps * width;
  view.step = width;
  return view;
}

// A packed (B, T, heads·width) tensor read per (b, head).
ScanView packed_view(int64_t heads, int64_t steps, int64_t width) {
  ScanView view;
  view.batch = steps * heads * width;
  view.head = width;
  view.step = heads * width;
  return view;
}

// Retention's layouts, shared by both forms' arguments.
template <typename Args>
void retention_layout(const RetentionProblem& p, Args& a) {
  a.batch = p.batch;
  a.heads = p.heads;
  a.steps = p.seq;
  a.rows = p.dk;
  a.cols = p.dv;
  a.key = a.query = per_head_view(p.heads, p.seq, p.dk);
  a.value = per_head_view(p.heads, p.seq, p.dv);
  a.key_scale = static_cast<float>(p.scale);
  a.out_batch = p.heads * p.seq * p.dv;
  a.out_head = p.seq * p.dv;
  a.out_step = p.dv;
  a.state_row = p.dv;
}

template <typename Args>
void bind_retention(const NodeIo& io, size_t outputs, Args& a) {
  a.query.data = io.input(RetentionInput::kQ);
  a.key.data = io.input(RetentionInput::kK);
  a.value.data = io.input(RetentionInput::kV);
  a.past_state = io.input(RetentionInput::kPastState);
  bind_outputs(io, outputs, a);
}

// Chunkwise for prefill, the recurrence for decode steps (tiling.h). γ_h
// (or log γ_h) per head travels in the scratch block.
Status run_retention(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(RetentionProblem p, check_retention(ctx));
  std::vector<std::vector<int64_t>> outputs = {{p.batch, p.heads, p.seq, p.dv}};
  if (wants_output(ctx, RetentionOutput::kPresentState)) {
    outputs.push_back({p.batch, p.heads, p.dk, p.dv});
  }
  cudaStream_t stream = cuda.stream();
  if (prefer_chunkwise(p.seq)) {
    Result<ChunkedStateTiling> tiling =
        plan_chunked_state(cuda.limits(), p.dk, p.dv, 1, p.chunk_size);
    if (!tiling.is_ok()) return plan_error(ctx, tiling.status());
    ChunkwiseArgs args;
    retention_layout(p, args);
    args.log_decay.head = 1;
    args.log_decay.step = 0;
    // γ = 0 as a large finite negative log, so in-chunk differences stay
    // finite: e^(cs_t − cs_s) is 1 on the diagonal and 0 below it.
    std::vector<float> logs;
    for (double gamma : p.gammas) {
      logs.push_back(gamma > 0 ? static_cast<float>(std::log(gamma)) : -1e30f);
    }
    return stage_and_run(ctx, cuda, outputs, logs, [&](const NodeIo& io) {
      bind_retention(io, outputs.size(), args);
      args.log_decay.data = io.scratch();
      return launch_chunkwise(args, *tiling, stream);
    });
  }
  Result<ColumnScanTiling> tiling =
      plan_column_scan(cuda.limits(), p.dk, p.dv, 1, p.chunk_size);
  if (!tiling.is_ok()) return plan_error(ctx, tiling.status());
  ColumnScanArgs args;
  retention_layout(p, args);
  args.decay.head = 1;
  args.decay.step = 0;
  args.decay_kind = ScanDecay::kMultiply;
  std::vector<float> gammas(p.gammas.begin(), p.gammas.end());
  return stage_and_run(ctx, cuda, outputs, gammas, [&](const NodeIo& io) {
    bind_retention(io, outputs.size(), args);
    args.decay.data = io.scratch();
    return launch_column_scan(args, *tiling, stream);
  });
}

template <typename Args>
void linear_attention_layout(const LinearAttentionProblem& p, Args& a) {
  a.batch = p.batch;
  a.heads = p.kv_heads;
  a.steps = p.seq;
  a.rows = p.dk;
  a.cols = p.dv;
  a.queries = p.group;
  a.query = packed_view(p.q_heads, p.seq, p.dk);
  a.key = packed_view(p.kv_heads, p.seq, p.dk);
  a.value = packed_view(p.kv_heads, p.seq, p.dv);
  a.out_scale = static_cast<float>(p.scale);
  a.out_batch = p.seq * p.q_heads * p.dv;
  a.out_head = p.dv;
  a.out_step = p.q_heads * p.dv;
  a.state_row = p.dv;
}

template <typename Args>
void bind_linear_attention(const NodeIo& io, size_t outputs, Args& a) {
  a.query.data = io.input(LinearAttentionInput::kQuery);
  a.key.data = io.input(LinearAttentionInput::kKey);
  a.value.data = io.input(LinearAttentionInput::kValue);
  a.past_state = io.input(LinearAttentionInput::kPastState);
  bind_outputs(io, outputs, a);
}

// The linear rule and the gated rule with one decay per head run
// chunkwise for prefill; per-key decays, the delta rules and decode steps
// run the recurrence, which covers every rule.
Status run_linear_attention(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(LinearAttentionProblem p, check_linear_attention(ctx));
  std::vector<std::vector<int64_t>> outputs = {
      {p.batch, p.seq, p.q_heads * p.dv}};
  if (wants_output(ctx, LinearAttentionOutput::kPresentState)) {
    outputs.push_back({p.batch, p.kv_heads, p.dk, p.dv});
  }
  const bool decay = rule_uses_decay(p.rule);
  const bool beta = rule_uses_beta(p.rule);
  // decay (B,T,H_kv) per head, or (B,T,H_kv·dk) per key.
  ScanView decay_view =
      packed_view(p.kv_heads, p.seq, p.decay_per_key ? p.dk : 1);
  decay_view.index = p.decay_per_key ? 1 : 0;
  cudaStream_t stream = cuda.stream();
  if (linear_attention_chunkwise(beta, decay && p.decay_per_key, p.seq)) {
    Result<ChunkedStateTiling> tiling =
        plan_chunked_state(cuda.limits(), p.dk, p.dv, p.group, p.chunk_size);
    if (!tiling.is_ok()) return plan_error(ctx, tiling.status());
    ChunkwiseArgs args;
    linear_attention_layout(p, args);
    if (decay) args.log_decay = decay_view;
    return stage_and_run(ctx, cuda, outputs, {}, [&](const NodeIo& io) {
      bind_linear_attention(io, outputs.size(), args);
      if (decay) {
        args.log_decay.data = io.input(LinearAttentionInput::kDecay);
      }
      return launch_chunkwise(args, *tiling, stream);
    });
  }
  Result<ColumnScanTiling> tiling =
      plan_column_scan(cuda.limits(), p.dk, p.dv, p.group, p.chunk_size);
  if (!tiling.is_ok()) return plan_error(ctx, tiling.status());
  ColumnScanArgs args;
  linear_attention_layout(p, args);
  if (decay) {
    args.decay = decay_view;
    args.decay_kind = p.decay_per_key ? ScanDecay::kExpPerRow : ScanDecay::kExp;
  }
  if (beta) {
    // beta (B,T,H_kv) per head, or (B,T,1) shared by the heads.
    args.beta = packed_view(p.beta_per_head ? p.kv_heads : 1, p.seq, 1);
    args.beta.head = p.beta_per_head ? 1 : 0;
    args.delta_rule = true;
  }
  return stage_and_run(ctx, cuda, outputs, {}, [&](const NodeIo& io) {
    bind_linear_attention(io, outputs.size(), args);
    // Gates the rule does not read stay null, as the reference ignores them.
    if (decay) args.decay.data = io.input(LinearAttentionInput::kDecay);
    if (beta) args.beta.data = io.input(LinearAttentionInput::kBeta);
    return launch_column_scan(args, *tiling, stream);
  });
}

// SSD's layouts, shared by both forms' arguments: state row n, column p;
// head h reads group h / (H / G) of Bm and Cm (B, L, G, N).
template <typename Args>
void ssd_layout(const SsdAttrs& attrs, const SsdDims& dims, Args& a) {
  a.batch = dims.batch;
  a.heads = dims.heads;
  a.steps = dims.length;
  a.rows = dims.state;
  a.cols = dims.head_dim;
  a.key = packed_view(dims.groups, dims.length, dims.state);
  a.key.head_divisor = dims.heads / dims.groups;
  a.query = a.key;
  a.value = packed_view(dims.heads, dims.length, dims.head_dim);
  a.dt_softplus = attrs.dt_softplus;
  a.dt_min = attrs.dt_min;
  a.dt_max = attrs.dt_max;
  a.out_batch = dims.length * dims.heads * dims.head_dim;
  a.out_head = dims.head_dim;
  a.out_step = dims.heads * dims.head_dim;
  // State (B, H, P, N).
  a.state_row = 1;
  a.state_col = dims.state;
}

template <typename Args>
void bind_ssd(const NodeIo& io, size_t outputs, Args& a) {
  a.value.data = io.input(SsdInput::kX);
  a.ssd_a = io.input(SsdInput::kA);
  a.key.data = io.input(SsdInput::kBm);
  a.query.data = io.input(SsdInput::kCm);
  a.skip = io.input(SsdInput::kD);
  a.gate = io.input(SsdInput::kZ);
  a.dt_bias = io.input(SsdInput::kDtBias);
  a.past_state = io.input(SsdInput::kPastState);
  bind_outputs(io, outputs, a);
}

// Chunkwise for prefill, the recurrence for steps; dt (B, L, H) is read
// per (b, h) as the decay view of either form.
Status run_ssd(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(SsdDims dims, check_ssd(ctx));
  SEQRT_ASSIGN_OR_RETURN(SsdAttrs attrs, SsdAttrs::from(ctx.node()));
  std::vector<std::vector<int64_t>> outputs = {
      {dims.batch, dims.length, dims.heads, dims.head_dim}};
  if (wants_output(ctx, SsdOutput::kPresentState)) {
    outputs.push_back({dims.batch, dims.heads, dims.head_dim, dims.state});
  }
  ScanView dt = packed_view(dims.heads, dims.length, 1);
  dt.index = 0;
  const int64_t chunk = attrs.chunk_size;
  cudaStream_t stream = cuda.stream();
  if (prefer_chunkwise(dims.length)) {
    Result<ChunkedStateTiling> tiling =
        plan_chunked_state(cuda.limits(), dims.state, dims.head_dim, 1, chunk);
    if (!tiling.is_ok()) return plan_error(ctx, tiling.status());
    ChunkwiseArgs args;
    ssd_layout(attrs, dims, args);
    args.log_decay = dt;
    args.ssd = true;
    return stage_and_run(ctx, cuda, outputs, {}, [&](const NodeIo& io) {
      bind_ssd(io, outputs.size(), args);
      args.log_decay.data = io.input(SsdInput::kDt);
      return launch_chunkwise(args, *tiling, stream);
    });
  }
  Result<ColumnScanTiling> tiling =
      plan_column_scan(cuda.limits(), dims.state, dims.head_dim, 1, chunk);
  if (!tiling.is_ok()) return plan_error(ctx, tiling.status());
  ColumnScanArgs args;
  ssd_layout(attrs, dims, args);
  args.decay = dt;
  args.decay_kind = ScanDecay::kSsd;
  return stage_and_run(ctx, cuda, outputs, {}, [&](const NodeIo& io) {
    bind_ssd(io, outputs.size(), args);
    args.decay.data = io.input(SsdInput::kDt);
    return launch_column_scan(args, *tiling, stream);
  });
}

// Every tensor f32 except position (int64, read by the kernel as is).
Status neural_memory_dtypes(const Graph& graph, const Node& node) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId id = node.inputs[i];
    if (id == kNoValue) continue;
    const DType want = i == kNmPosition ? DType::kI64 : DType::kF32;
    const DType got = graph.value(id).dtype;
    if (got != want) {
      return unsupported("{}: the cuda backend needs '{}' as {}, got {}",
                         node.label(), graph.value(id).name, dtype_name(want),
                         dtype_name(got));
    }
  }
  for (ValueId id : node.outputs) {
    if (id != kNoValue && graph.value(id).dtype != DType::kF32) {
      return unsupported("{}: the cuda backend runs this op in f32 only",
                         node.label());
    }
  }
  return Status::ok();
}

// The token loop, one block per (b, h); check_neural_memory (the
// reference's checks) has validated shapes and position >= 0 on the host.
Status run_neural_memory(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(NeuralMemoryDims n, check_neural_memory(ctx));
  Result<NeuralMemoryTiling> tiling =
      plan_neural_memory(cuda.limits(), n.d, n.m, n.depth, n.chunk);
  if (!tiling.is_ok()) return plan_error(ctx, tiling.status());
  std::vector<std::vector<int64_t>> outputs = {{n.batch, n.heads, n.seq, n.d}};
  if (wants_output(ctx, kNmPresentState)) {
    outputs.push_back({n.batch, n.heads, 3 * n.params()});
  }
  NeuralMemoryArgs args;
  args.batch = n.batch;
  args.heads = n.heads;
  args.steps = n.seq;
  args.d = n.d;
  args.m = n.m;
  args.depth = n.depth;
  args.chunk = n.chunk;
  args.gelu = n.gelu;
  args.retrieve_before = n.retrieve_before;
  cudaStream_t stream = cuda.stream();
  return stage_and_run(ctx, cuda, outputs, {}, [&](const NodeIo& io) {
    args.q = io.input(kNmQ);
    args.k = io.input(kNmK);
    args.v = io.input(kNmV);
    args.theta = io.input(kNmTheta);
    args.eta = io.input(kNmEta);
    args.alpha = io.input(kNmAlpha);
    args.w1 = io.input(kNmW1);
    args.w2 = io.input(kNmW2);
    args.past_state = io.input(kNmPastState);
    args.position = static_cast<const int64_t*>(io.raw_input(kNmPosition));
    args.out = io.output(kNmY);
    args.present_state =
        outputs.size() > kNmPresentState ? io.output(kNmPresentState) : nullptr;
    return launch_neural_memory(args, *tiling, stream);
  });
}

}  // namespace

void add_sequence_kernels(std::vector<CudaKernel>& kernels) {
  kernels.push_back(
      {kOnnxDomain, "CausalConvWithState", all_f32, run_causal_conv});
  kernels.push_back({kSeqrtDomain, "Retention", all_f32, run_retention});
  kernels.push_back(
      {kOnnxDomain, "LinearAttention", all_f32, run_linear_attention});
  kernels.push_back({kSeqrtDomain, "SSD", all_f32, run_ssd});
  kernels.push_back(
      {kSeqrtDomain, "NeuralMemory", neural_memory_dtypes, run_neural_memory});
}

}  // namespace seqrt::cuda
