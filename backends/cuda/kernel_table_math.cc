// The CUDA kernel table's standard math ops beyond elementwise, rows and
// MatMul: Gemm, Conv (1-D/2-D), Cast, the comparisons, IsNaN and IsInf,
// ReduceSum/Mean/Max/Min, CumSum, RotaryEmbedding and the weight-only
// quantized seqrt::Linear. Shapes and input
// checks come from each op's own shape inference; axes, positions and other
// steering inputs are read and checked on the host.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cuda/copy_plan.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/kernel_support.h"
#include "backends/cuda/kernels/conv.h"
#include "backends/cuda/kernels/convert.h"
#include "backends/cuda/kernels/copy.h"
#include "backends/cuda/kernels/gemm.h"
#include "backends/cuda/kernels/quantized_linear.h"
#include "backends/cuda/kernels/reduce.h"
#include "backends/cuda/kernels/rotary.h"
#include "backends/cuda/node_io.h"
#include "ops/linalg/quantized_linear.h"
#include "ops/reduce/reduce.h"
#include "ops/shape/shape_util.h"

namespace seqrt::cuda {
namespace {

Status run_cast(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const Tensor& x = *ctx.input(0);
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
  const std::string what = ctx.node().label();
  return io.finish(launch_cast(io.raw_input(0), x.dtype(), io.raw_output(0),
                               out.dtypes[0], x.num_elements(), cuda.stream()),
                   what.c_str());
}

CudaKernel compare(const char* op, CompareOp kind) {
  return {kOnnxDomain, op, any_dtype,
          [kind](KernelContext& ctx, CudaContext& cuda) -> Status {
            SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
            std::vector<int64_t> dims;
            SEQRT_ASSIGN_OR_RETURN(
                BroadcastIndex index,
                broadcast(ctx.node(), *ctx.input(0), *ctx.input(1), dims));
            NodeIo io(ctx, cuda);
            SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
            const std::string what = ctx.node().label();
            return io.finish(
                launch_compare(kind, io.raw_input(0), io.raw_input(1),
                               ctx.input(0)->dtype(),
                               static_cast<uint8_t*>(io.raw_output(0)), index,
                               element_count(dims), cuda.stream()),
                what.c_str());
          }};
}

// IsNaN and IsInf, every float dtype (the op's inference refuses others).
CudaKernel float_class(const char* op, bool nan) {
  return {kOnnxDomain, op, any_dtype,
          [nan](KernelContext& ctx, CudaContext& cuda) -> Status {
            SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
            const Tensor& x = *ctx.input(0);
            FloatClassQuery query;
            query.nan = nan;
            if (!nan) {
              query.negative = ctx.attr_int("detect_negative") != 0;
              query.positive = ctx.attr_int("detect_positive") != 0;
            }
            NodeIo io(ctx, cuda);
            SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
            const std::string what = ctx.node().label();
            return io.finish(
                launch_float_class(query, io.raw_input(0), x.dtype(),
                                   static_cast<uint8_t*>(io.raw_output(0)),
                                   x.num_elements(), cuda.stream()),
                what.c_str());
          }};
}

// Which axes the node reduces, as the reference decides: the `axes`
// input, none of it meaning all (or none with noop_with_empty_axes).
Result<std::vector<bool>> reduced_axes(const KernelContext& ctx, int64_t rank) {
  std::vector<int64_t> axes;
  if (ctx.input(1) != nullptr) {
    SEQRT_ASSIGN_OR_RETURN(axes, read_int_list(ctx, *ctx.input(1), "axes"));
  }
  if (axes.empty()) {
    return std::vector<bool>(rank, ctx.attr_int("noop_with_empty_axes") == 0);
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> normal,
                         normalize_axes(ctx, axes, rank));
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : normal) reduced[axis] = true;
  return reduced;
}

CudaKernel reduce(const char* op, ReduceOp kind, ReduceKind reference_kind) {
  return {
      kOnnxDomain, op, data_f32,
      [kind, reference_kind](KernelContext& ctx, CudaContext& cuda) -> Status {
        SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
        const Tensor& x = *ctx.input(0);
        SEQRT_ASSIGN_OR_RETURN(
            std::vector<bool> reduced,
            reduced_axes(ctx, static_cast<int64_t>(x.rank())));
        Result<ReduceIndex> index = reduce_index(x.dims(), reduced);
        if (!index.is_ok()) return plan_error(ctx, index.status());
        float empty_value = 0.0f;
        if (index->count == 0) {
          SEQRT_ASSIGN_OR_RETURN(
              double value, reduce_empty_value(ctx, reference_kind, x.dtype()));
          empty_value = static_cast<float>(value);
        }
        NodeIo io(ctx, cuda);
        SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
        const std::string what = ctx.node().label();
        return io.finish(launch_reduce(kind, io.input(0), io.output(0), *index,
                                       empty_value, cuda.stream()),
                         what.c_str());
      }};
}

Status run_cumsum(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const Tensor& x = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         read_int_scalar(ctx, *ctx.input(1), "axis"));
  SEQRT_ASSIGN_OR_RETURN(
      std::vector<int64_t> normal,
      normalize_axes(ctx, {axis}, static_cast<int64_t>(x.rank())));
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < normal[0]; ++a) outer *= x.dim(a);
  for (int64_t a = normal[0] + 1; a < static_cast<int64_t>(x.rank()); ++a) {
    inner *= x.dim(a);
  }
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
  const std::string what = ctx.node().label();
  return io.finish(
      launch_cumsum(io.input(0), io.output(0), outer, x.dim(normal[0]), inner,
                    ctx.attr_int("exclusive") != 0,
                    ctx.attr_int("reverse") != 0, cuda.stream()),
      what.c_str());
}

Status rotary_supported(const Graph& graph, const Node& node) {
  SEQRT_RETURN_IF_ERROR(data_f32(graph, node));
  for (size_t i : {1, 2}) {
    if (i < node.inputs.size() &&
        graph.value(node.inputs[i]).dtype != DType::kF32) {
      return unsupported("{}: the cuda backend needs f32 caches", node.label());
    }
  }
  return Status::ok();
}

Status run_rotary(KernelContext& ctx, CudaContext& cuda) {
  // Inference checks X, the caches and position_ids' shapes.
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const Tensor& x = *ctx.input(0);
  const Tensor& cos = *ctx.input(1);
  const Tensor* positions = ctx.input(3);
  RotaryArgs args;
  args.heads_first = x.rank() == 4;
  args.batch = x.dim(0);
  args.seq = x.dim(args.heads_first ? 2 : 1);
  args.heads = args.heads_first ? x.dim(1) : ctx.attr_int("num_heads");
  args.head_size = args.heads_first ? x.dim(3) : x.dim(2) / args.heads;
  const int64_t rotary = ctx.attr_int("rotary_embedding_dim");
  args.rotary_dim = rotary != 0 ? rotary : args.head_size;
  args.interleaved = ctx.attr_int("interleaved") != 0;
  if (positions != nullptr) {
    // Checked here: the kernel would read past the caches otherwise.
    for (int64_t i = 0; i < positions->num_elements(); ++i) {
      const int64_t row = positions->element_i64(i);
      if (row < 0 || row >= cos.dim(0)) {
        return ctx.error(
            "position_ids[{},{}] = {} is outside the caches' [0, {})",
            i / args.seq, i % args.seq, row, cos.dim(0));
      }
    }
  }
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims, 0, out.dtypes));
  args.x = io.input(0);
  args.cos = io.input(1);
  args.sin = io.input(2);
  args.positions = static_cast<const int64_t*>(io.raw_input(3));
  args.y = io.output(0);
  const std::string what = ctx.node().label();
  return io.finish(launch_rotary(args, cuda.stream()), what.c_str());
}

// seqrt::Linear in its weight-only quantized form (bits 4/8) with f32 X,
// B and Y; the float form is left to the CPU (no CUDA kernel).
Status quantized_linear_supported(const Graph& graph, const Node& node) {
  const int64_t bits = int_attr(node, "bits", 0);
  if (bits != 4 && bits != 8) {
    return unsupported(
        "{}: the cuda backend runs seqrt::Linear only with weight-only "
        "quantized W (bits 4 or 8), bits is {}",
        node.label(), bits);
  }
  if (int_attr(node, "activation_bits", 0) != 0) {
    return unsupported(
        "{}: int8 activations (activation_bits 8) run on the CPU; the cuda "
        "quantized Linear keeps X in f32",
        node.label());
  }
  for (size_t i : {kLinearX, kLinearB, kLinearWScale}) {
    if (i < node.inputs.size() && node.inputs[i] != kNoValue &&
        graph.value(node.inputs[i]).dtype != DType::kF32) {
      return unsupported("{}: the cuda backend needs f32 X, B and W_scale",
                         node.label());
    }
  }
  return Status::ok();
}

int linear_activation_code(const std::string& name) {
  static const char* const kNames[] = {"none",      "relu",    "gelu",
                                       "gelu_tanh", "sigmoid", "silu"};
  for (int i = 0; i < 6; ++i) {
    if (name == kNames[i]) return i;
  }
  return -1;
}

Status run_quantized_linear(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(QuantizedLinearDims q, check_quantized_linear(ctx));
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  QuantizedLinearArgs args;
  args.activation = linear_activation_code(ctx.attr_string("activation"));
  if (args.activation < 0) {
    return ctx.error("unknown activation '{}'", ctx.attr_string("activation"));
  }
  args.m = ctx.input(kLinearX)->num_elements() / q.k;
  args.n = q.n;
  args.k = q.k;
  args.bits = static_cast<int>(q.bits);
  args.block_size = q.block_size;
  args.n_blocks = q.n_blocks;
  args.row_bytes = q.row_bytes;
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims));
  args.x = io.input(kLinearX);
  args.w = static_cast<const uint8_t*>(io.raw_input(kLinearW));
  args.bias = io.input(kLinearB);
  args.scale = io.input(kLinearWScale);
  args.zero_point =
      static_cast<const uint8_t*>(io.raw_input(kLinearWZeroPoint));
  args.y = io.output(0);
  const std::string what = ctx.node().label();
  return io.finish(launch_quantized_linear(args, cuda.stream()), what.c_str());
}

// ONNX Gemm: C (any unidirectional broadcast, checked by the op's shape
// inference) is expanded into Y by the strided copy, then cuBLASLt adds
// alpha·op(A)·op(B) to beta·Y in place.
Status run_gemm(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  const std::vector<int64_t>& dims = out.dims[0];
  const bool trans_a = ctx.attr_int("transA") != 0;
  const bool trans_b = ctx.attr_int("transB") != 0;
  const float alpha = static_cast<float>(ctx.attr_float("alpha"));
  const float beta = static_cast<float>(ctx.attr_float("beta"));
  const Tensor& a = *ctx.input(0);
  const int64_t m = dims[0], n = dims[1];
  const int64_t k = trans_a ? a.dim(0) : a.dim(1);
  const Tensor* c = ctx.input(2);
  StridedCopy spread;
  if (c != nullptr) {
    Result<StridedCopy> copy = broadcast_copy(c->dims(), dims);
    if (!copy.is_ok()) return plan_error(ctx, copy.status());
    spread = *copy;
  }
  if (k == 0) {
    // An empty sum: Y = beta·C, from the same index plan on the host.
    SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.allocate_output(0, DType::kF32, dims));
    float* py = y->mutable_data_as<float>();
    std::fill(py, py + m * n, 0.0f);
    for (int64_t i = 0; c != nullptr && i < spread.elements(); ++i) {
      int64_t src = 0, dst = 0;
      copy_offsets(spread, i, &src, &dst);
      py[dst] = beta * c->data_as<float>()[src];
    }
    return Status::ok();
  }
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims));
  cudaError_t launch = cudaSuccess;
  if (c != nullptr) {
    launch = launch_strided_copy(io.input(2), io.output(0), sizeof(float),
                                 spread, cuda.stream());
  }
  const std::string what = ctx.node().label();
  SEQRT_CUDA_RETURN_IF_ERROR(launch, what);
  SEQRT_RETURN_IF_ERROR(gemm_ex_f32(cuda.cublas(), cuda.stream(), io.input(0),
                                    io.input(1), io.output(0), m, n, k, trans_a,
                                    trans_b, alpha, c != nullptr ? beta : 0.0f)
                            .with_context(what));
  return io.finish(cudaGetLastError(), what.c_str());
}

Status conv_supported(const Graph& graph, const Node& node) {
  SEQRT_RETURN_IF_ERROR(all_f32(graph, node));
  const std::optional<Shape>& x = graph.value(node.inputs[0]).shape;
  if (!x.has_value() || (x->rank() != 3 && x->rank() != 4)) {
    return unsupported(
        "{}: the cuda backend runs 1-D and 2-D convolutions (X of known rank "
        "3 or 4)",
        node.label());
  }
  return Status::ok();
}

std::vector<int64_t> ints_attr(const KernelContext& ctx, const char* name) {
  const Attribute* attr = ctx.node().attr(name);
  return attr != nullptr ? attr->as_ints() : std::vector<int64_t>{};
}

// Direct convolution; shapes and attributes checked by the op's shape
// inference (the reference's messages), the geometry by conv_shape.
Status run_conv(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(OutputTypes out, infer_outputs(ctx));
  Result<ConvShape> shape =
      conv_shape(ctx.input(0)->dims(), ctx.input(1)->dims(), out.dims[0],
                 ctx.attr_int("group"), ints_attr(ctx, "strides"),
                 ints_attr(ctx, "dilations"), ints_attr(ctx, "pads"),
                 ctx.attr_string("auto_pad"));
  if (!shape.is_ok()) return plan_error(ctx, shape.status());
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(out.dims));
  const std::string what = ctx.node().label();
  return io.finish(launch_conv(io.input(0), io.input(1), io.input(2),
                               io.output(0), *shape, cuda.stream()),
                   what.c_str());
}

}  // namespace

void add_math_kernels(std::vector<CudaKernel>& kernels) {
  kernels.push_back({kOnnxDomain, "Gemm", all_f32, run_gemm});
  kernels.push_back({kOnnxDomain, "Conv", conv_supported, run_conv});
  kernels.push_back({kOnnxDomain, "Cast", any_dtype, run_cast});
  kernels.push_back(compare("Equal", CompareOp::kEqual));
  kernels.push_back(compare("Less", CompareOp::kLess));
  kernels.push_back(compare("Greater", CompareOp::kGreater));
  kernels.push_back(compare("LessOrEqual", CompareOp::kLessOrEqual));
  kernels.push_back(compare("GreaterOrEqual", CompareOp::kGreaterOrEqual));
  kernels.push_back(float_class("IsNaN", true));
  kernels.push_back(float_class("IsInf", false));
  kernels.push_back(reduce("ReduceSum", ReduceOp::kSum, ReduceKind::kSum));
  kernels.push_back(reduce("ReduceMean", ReduceOp::kMean, ReduceKind::kMean));
  kernels.push_back(reduce("ReduceMax", ReduceOp::kMax, ReduceKind::kMax));
  kernels.push_back(reduce("ReduceMin", ReduceOp::kMin, ReduceKind::kMin));
  kernels.push_back({kOnnxDomain, "CumSum", data_f32, run_cumsum});
  kernels.push_back(
      {kOnnxDomain, "RotaryEmbedding", rotary_supported, run_rotary});
  kernels.push_back({kSeqrtDomain, "Linear", quantized_linear_supported,
                     run_quantized_linear});
}

}  // namespace seqrt::cuda
