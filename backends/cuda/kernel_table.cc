#include "backends/cuda/kernel_table.h"

#include <map>
#include <utility>
#include <vector>

#include <cmath>

#include "backends/cuda/cuda_status.h"
#include "backends/cuda/kernel_support.h"
#include "backends/cuda/kernels/attention.h"
#include "backends/cuda/kernels/copy.h"
#include "backends/cuda/kernels/elementwise.h"
#include "backends/cuda/kernels/gemm.h"
#include "backends/cuda/kernels/rows.h"
#include "backends/cuda/kernels/selective_scan.h"
#include "backends/cuda/node_io.h"
#include "backends/kernel_table.h"
#include "ops/sequence/attention.h"
#include "ops/sequence/selective_scan.h"
#include "ops/shape/shape_util.h"

namespace seqrt::cuda {

// ONNX broadcasting: align ranks at the right; a dim of 1 repeats.
Result<BroadcastIndex> broadcast(const Node& node, const Tensor& a,
                                 const Tensor& b,
                                 std::vector<int64_t>& out_dims) {
  size_t rank = std::max(a.rank(), b.rank());
  if (rank > kMaxBroadcastRank) {
    return unsupported("{}: the cuda backend broadcasts up to rank {}, got {}",
                       node.label(), kMaxBroadcastRank, rank);
  }
  BroadcastIndex index;
  index.rank = static_cast<int>(rank);
  out_dims.assign(rank, 1);
  int64_t stride_a = 1;
  int64_t stride_b = 1;
  for (size_t r = 0; r < rank; ++r) {
    size_t axis = rank - 1 - r;
    int64_t da = r < a.rank() ? a.dim(a.rank() - 1 - r) : 1;
    int64_t db = r < b.rank() ? b.dim(b.rank() - 1 - r) : 1;
    if (da != db && da != 1 && db != 1) {
      return invalid_argument("{}: cannot broadcast dims {} and {}",
                              node.label(), da, db);
    }
    out_dims[axis] = da == 1 ? db : da;
    index.dims[axis] = out_dims[axis];
    index.a_strides[axis] = da == 1 ? 0 : stride_a;
    index.b_strides[axis] = db == 1 ? 0 : stride_b;
    stride_a *= da;
    stride_b *= db;
  }
  return index;
}

namespace {

// Ok when `axis` (attribute, default -1) is the last axis of input 0.
Status last_axis_only(const Graph& graph, const Node& node) {
  const std::optional<Shape>& shape = graph.value(node.inputs[0]).shape;
  if (!shape) {
    return unsupported("{}: the cuda backend needs the input's rank",
                       node.label());
  }
  int64_t rank = static_cast<int64_t>(shape->rank());
  int64_t axis = int_attr(node, "axis", -1);
  if (axis != -1 && axis != rank - 1) {
    return unsupported(
        "{}: the cuda backend reduces the last axis only, "
        "axis is {}",
        node.label(), axis);
  }
  return Status::ok();
}

Status f32_last_axis(const Graph& graph, const Node& node) {
  SEQRT_RETURN_IF_ERROR(all_f32(graph, node));
  return last_axis_only(graph, node);
}

// Rows and columns of input 0 seen as (rows, last axis).
std::pair<int64_t, int64_t> rows_cols(const Tensor& x) {
  int64_t cols = x.rank() == 0 ? 1 : x.dims().back();
  return {cols == 0 ? 0 : x.num_elements() / cols, cols};
}

CudaKernel unary(const char* op, UnaryOp kind) {
  return {kOnnxDomain, op, all_f32,
          [kind](KernelContext& ctx, CudaContext& cuda) -> Status {
            const Tensor& x = *ctx.input(0);
            NodeIo io(ctx, cuda);
            SEQRT_RETURN_IF_ERROR(io.begin({x.dims()}));
            return io.finish(launch_unary(kind, io.input(0), io.output(0),
                                          x.num_elements(), cuda.stream()),
                             ctx.node().label().c_str());
          }};
}

CudaKernel binary(const char* op, BinaryOp kind) {
  return {kOnnxDomain, op, all_f32,
          [kind](KernelContext& ctx, CudaContext& cuda) -> Status {
            std::vector<int64_t> dims;
            SEQRT_ASSIGN_OR_RETURN(
                BroadcastIndex index,
                broadcast(ctx.node(), *ctx.input(0), *ctx.input(1), dims));
            NodeIo io(ctx, cuda);
            SEQRT_RETURN_IF_ERROR(io.begin({dims}));
            return io.finish(
                launch_binary(kind, io.input(0), io.input(1), io.output(0),
                              index, element_count(dims), cuda.stream()),
                ctx.node().label().c_str());
          }};
}

CudaKernel softmax(const char* op, bool log_softmax) {
  return {kOnnxDomain, op, f32_last_axis,
          [log_softmax](KernelContext& ctx, CudaContext& cuda) -> Status {
            const Tensor& x = *ctx.input(0);
            auto [rows, cols] = rows_cols(x);
            NodeIo io(ctx, cuda);
            SEQRT_RETURN_IF_ERROR(io.begin({x.dims()}));
            return io.finish(
                launch_softmax_rows(io.input(0), io.output(0), rows, cols,
                                    log_softmax, cuda.stream()),
                ctx.node().label().c_str());
          }};
}

// Only Y: the optional Mean and InvStdDev outputs are not produced.
Status one_output(const Graph& graph, const Node& node) {
  SEQRT_RETURN_IF_ERROR(all_f32(graph, node));
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != kNoValue) {
      return unsupported("{}: the cuda backend produces output Y only",
                         node.label());
    }
  }
  return Status::ok();
}

// LayerNormalization (layer) or RMSNormalization over the axes [axis,
// rank). Scale (and B) shared by all rows are read in place; any other
// broadcast to X is first expanded to X's shape in the scratch block.
Status run_norm(KernelContext& ctx, CudaContext& cuda, bool layer) {
  // Shape inference checks that Scale and B broadcast to X.
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const Tensor& x = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> axis,
                         normalize_axes(ctx, {ctx.attr_int("axis")},
                                        static_cast<int64_t>(x.rank())));
  int64_t cols = 1;
  for (size_t a = axis[0]; a < x.rank(); ++a) cols *= x.dim(a);
  const int64_t rows = cols == 0 ? 0 : x.num_elements() / cols;
  std::vector<size_t> params = {1};
  if (layer && ctx.has_input(2)) params.push_back(2);
  bool shared = true;
  for (size_t i : params) {
    shared = shared && affine_shared_by_rows(ctx.input(i)->dims(), x.dims(),
                                             static_cast<size_t>(axis[0]));
  }
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(
      out.dims, shared ? 0 : x.num_elements() * int64_t(params.size())));
  const float* affine[3] = {nullptr, io.input(1), io.input(2)};
  cudaError_t launch = cudaSuccess;
  for (size_t k = 0; k < params.size() && !shared; ++k) {
    Result<StridedCopy> copy =
        broadcast_copy(ctx.input(params[k])->dims(), x.dims());
    if (!copy.is_ok()) return plan_error(ctx, copy.status());
    float* expanded = io.scratch() + k * x.num_elements();
    cudaError_t error = launch_strided_copy(
        io.input(params[k]), expanded, sizeof(float), *copy, cuda.stream());
    if (launch == cudaSuccess) launch = error;
    affine[params[k]] = expanded;
  }
  const int64_t stride = shared ? 0 : cols;
  const float epsilon = ctx.attr_float("epsilon");
  cudaError_t error =
      layer ? launch_layer_norm_rows(io.input(0), affine[1], affine[2],
                                     io.output(0), rows, cols, epsilon,
                                     cuda.stream(), stride)
            : launch_rms_norm_rows(io.input(0), affine[1], io.output(0), rows,
                                   cols, epsilon, cuda.stream(), stride);
  if (launch == cudaSuccess) launch = error;
  const std::string what = ctx.node().label();
  return io.finish(launch, what.c_str());
}

Status run_layer_norm(KernelContext& ctx, CudaContext& cuda) {
  return run_norm(ctx, cuda, true);
}

Status run_rms_norm(KernelContext& ctx, CudaContext& cuda) {
  return run_norm(ctx, cuda, false);
}

Status matmul_supported(const Graph& graph, const Node& node) {
  SEQRT_RETURN_IF_ERROR(all_f32(graph, node));
  for (size_t i = 0; i < 2; ++i) {
    const std::optional<Shape>& shape = graph.value(node.inputs[i]).shape;
    if (!shape || shape->rank() < 2) {
      return unsupported(
          "{}: the cuda backend needs operands of known rank "
          ">= 2",
          node.label());
    }
  }
  return Status::ok();
}

// MatMul of rank >= 2 operands whose batch dims are equal, or whose second
// operand is one matrix (its batch folds into the rows of the first).
Status run_matmul(KernelContext& ctx, CudaContext& cuda) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  if (a.rank() < 2 || b.rank() < 2) {
    return ctx.unsupported_error("the cuda backend needs rank >= 2 operands");
  }
  int64_t m = a.dim(a.rank() - 2);
  int64_t k = a.dim(a.rank() - 1);
  int64_t n = b.dim(b.rank() - 1);
  if (b.dim(b.rank() - 2) != k) {
    return ctx.error("inner dims differ: {} and {}", k, b.dim(b.rank() - 2));
  }
  std::vector<int64_t> batch_a(a.dims().begin(), a.dims().end() - 2);
  std::vector<int64_t> batch_b(b.dims().begin(), b.dims().end() - 2);
  bool shared_b = batch_b.empty() || element_count(batch_b) == 1;
  if (!shared_b && batch_a != batch_b) {
    return ctx.unsupported_error(
        "the cuda backend needs equal batch dims or one right-hand matrix");
  }
  std::vector<int64_t> out_dims =
      batch_a.size() >= batch_b.size() ? batch_a : batch_b;
  out_dims.push_back(m);
  out_dims.push_back(n);
  int64_t batch = element_count(batch_a);
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin({out_dims}));
  Status status =
      shared_b
          ? gemm_f32(cuda.cublas(), cuda.stream(), io.input(0), io.input(1),
                     io.output(0), batch * m, n, k, 1, 0, 0, 0)
          : gemm_f32(cuda.cublas(), cuda.stream(), io.input(0), io.input(1),
                     io.output(0), m, n, k, batch, m * k, k * n, m * n);
  SEQRT_RETURN_IF_ERROR(status.with_context(ctx.node().label()));
  return io.finish(cudaGetLastError(), ctx.node().label().c_str());
}

// SelectiveScan with the state in registers across the whole sequence;
// the tiling comes from the device's limits (tiling.h).
Status run_selective_scan(KernelContext& ctx, CudaContext& cuda) {
  using In = SelectiveScanInput;
  using Out = SelectiveScanOutput;
  SEQRT_ASSIGN_OR_RETURN(SelectiveScanDims dims, check_selective_scan(ctx));
  SelectiveScanArgs args;
  args.batch = dims.batch;
  args.channels = dims.channels;
  args.length = dims.length;
  args.groups = dims.groups;
  args.state_size = dims.state;
  args.delta_softplus = SelectiveScanAttrs::from(ctx.node()).delta_softplus;
  SEQRT_ASSIGN_OR_RETURN(
      ScanTiling tiling,
      plan_selective_scan(cuda.limits(), args.channels / args.groups,
                          args.state_size));
  std::vector<std::vector<int64_t>> outputs = {
      {dims.batch, dims.channels, dims.length}};
  bool want_state = ctx.num_outputs() > Out::kPresentState &&
                    ctx.node().outputs[Out::kPresentState] != kNoValue;
  if (want_state)
    outputs.push_back({args.batch, args.channels, args.state_size});
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(outputs));
  args.u = io.input(In::kU);
  args.delta = io.input(In::kDelta);
  args.a = io.input(In::kA);
  args.b = io.input(In::kBm);
  args.c = io.input(In::kCm);
  args.d_skip = io.input(In::kDskip);
  args.z = io.input(In::kZ);
  args.delta_bias = io.input(In::kDeltaBias);
  args.past_state = io.input(In::kPastState);
  args.y = io.output(Out::kY);
  args.present_state = want_state ? io.output(Out::kPresentState) : nullptr;
  return io.finish(launch_selective_scan(args, tiling, cuda.stream()),
                   ctx.node().label().c_str());
}

// seqrt::Attention without attn_mask or nonpad_kv_seqlen (not yet read by
// the kernel), with past keys and values both given or both absent.
Status attention_supported(const Graph& graph, const Node& node) {
  SEQRT_RETURN_IF_ERROR(all_f32(graph, node));
  auto present = [&](size_t i) {
    return i < node.inputs.size() && node.inputs[i] != kNoValue;
  };
  if (present(kAttnMask) || present(kAttnNonpadKvSeqlen)) {
    return unsupported(
        "{}: the cuda backend takes no attn_mask or "
        "nonpad_kv_seqlen yet",
        node.label());
  }
  if (present(kAttnPastKey) != present(kAttnPastValue)) {
    return unsupported(
        "{}: the cuda backend needs past_key and past_value "
        "together",
        node.label());
  }
  return Status::ok();
}

// present = concat(past, new) on the T axis: two strided copies.
Status concat_cache(const float* past, const float* fresh, float* present,
                    int64_t pairs, int64_t past_floats, int64_t new_floats,
                    cudaStream_t stream) {
  size_t row = sizeof(float) * (past_floats + new_floats);
  if (past_floats > 0) {
    SEQRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpy2DAsync(present, row, past, sizeof(float) * past_floats,
                          sizeof(float) * past_floats, pairs,
                          cudaMemcpyDeviceToDevice, stream),
        "Attention present cache");
  }
  if (new_floats > 0) {
    SEQRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpy2DAsync(present + past_floats, row, fresh,
                          sizeof(float) * new_floats,
                          sizeof(float) * new_floats, pairs,
                          cudaMemcpyDeviceToDevice, stream),
        "Attention present cache");
  }
  return Status::ok();
}

Status run_attention(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(AttentionSpec s, attention_spec(ctx));
  AttentionArgs args;
  args.batch = s.batch;
  args.q_heads = s.q_heads;
  args.q_length = s.q_len;
  args.head_size = s.head_dim;
  args.kv_heads = s.kv_heads;
  args.new_length = s.new_len;
  args.value_head_size = s.value_dim;
  args.past_length = s.past_len;
  args.scale = s.scale;
  args.softcap = s.softcap;
  args.sigmoid = s.sigmoid;
  args.sigmoid_bias = s.sigmoid_bias;
  args.causal = s.causal;
  args.window_left = s.window_left;
  args.window_right = s.window_right;
  int64_t total = args.past_length + args.new_length;
  SEQRT_ASSIGN_OR_RETURN(
      AttentionTiling tiling,
      plan_attention(cuda.limits(), args.head_size, args.value_head_size,
                     args.q_length, total, args.batch * args.q_heads));
  int64_t pairs = args.batch * args.kv_heads;
  std::vector<std::vector<int64_t>> outputs = {
      {args.batch, args.q_heads, args.q_length, args.value_head_size}};
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    int64_t size = i == 1 ? args.head_size : args.value_head_size;
    outputs.push_back({args.batch, args.kv_heads, total, size});
  }
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(outputs));
  args.q = io.input(kAttnQ);
  args.k = io.input(kAttnK);
  args.v = io.input(kAttnV);
  args.past_key = io.input(kAttnPastKey);
  args.past_value = io.input(kAttnPastValue);
  args.y = io.output(kAttnY);
  cudaError_t launch = launch_attention(args, tiling, cuda.stream());
  for (size_t i = 1; i < outputs.size(); ++i) {
    int64_t size = i == 1 ? args.head_size : args.value_head_size;
    SEQRT_RETURN_IF_ERROR(concat_cache(i == 1 ? args.past_key : args.past_value,
                                       i == 1 ? args.k : args.v, io.output(i),
                                       pairs, args.past_length * size,
                                       args.new_length * size, cuda.stream()));
  }
  return io.finish(launch, ctx.node().label().c_str());
}

std::vector<CudaKernel> make_kernels() {
  std::vector<CudaKernel> kernels = {
      unary("Relu", UnaryOp::kRelu),
      unary("Sigmoid", UnaryOp::kSigmoid),
      unary("Tanh", UnaryOp::kTanh),
      unary("Exp", UnaryOp::kExp),
      unary("Log", UnaryOp::kLog),
      unary("Neg", UnaryOp::kNeg),
      unary("Sqrt", UnaryOp::kSqrt),
      unary("Abs", UnaryOp::kAbs),
      unary("Erf", UnaryOp::kErf),
      binary("Add", BinaryOp::kAdd),
      binary("Sub", BinaryOp::kSub),
      binary("Mul", BinaryOp::kMul),
      binary("Div", BinaryOp::kDiv),
      binary("Pow", BinaryOp::kPow),
      softmax("Softmax", false),
      softmax("LogSoftmax", true),
      {kOnnxDomain, "LayerNormalization", one_output, run_layer_norm},
      {kOnnxDomain, "RMSNormalization", one_output, run_rms_norm},
      {kOnnxDomain, "MatMul", matmul_supported, run_matmul},
      {kSeqrtDomain, "SelectiveScan", all_f32, run_selective_scan},
      {kSeqrtDomain, "Attention", attention_supported, run_attention},
  };
  add_sequence_kernels(kernels);
  add_data_movement_kernels(kernels);
  add_math_kernels(kernels);
  add_runge_kutta_kernel(kernels);
  add_shape_kernels(kernels);
  add_recurrent_kernels(kernels);
  add_scatter_kernels(kernels);
  return kernels;
}

}  // namespace

const CudaKernel* find_cuda_kernel(const std::string& domain,
                                   const std::string& op) {
  static const KernelTable<CudaKernel> table = [] {
    KernelTable<CudaKernel> kernels("CUDA");
    for (CudaKernel& kernel : make_kernels()) kernels.add(std::move(kernel));
    return kernels;
  }();
  return table.find(domain, op);
}

Status cuda_node_supported(const Graph& graph, const Node& node) {
  const CudaKernel* kernel = find_cuda_kernel(node.domain, node.op);
  if (kernel == nullptr) {
    return unsupported("{}: the cuda backend has no kernel for this op",
                       node.label());
  }
  const bool runs_body = node.domain == kSeqrtDomain && node.op == "RungeKutta";
  for (const auto& [name, attr] : node.attrs) {
    if (attr.type() == AttrType::kGraph && !runs_body) {
      return unsupported("{}: the cuda backend runs no subgraphs",
                         node.label());
    }
  }
  return kernel->supports(graph, node);
}

}  // namespace seqrt::cuda
