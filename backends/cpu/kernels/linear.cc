// CPU kernel of seqrt::Linear on oneDNN's matmul primitive: X's leading
// dims fold into the rows, the bias and the activation are post-ops. With a
// constant W, prepare() packs it once at compile time into the primitive's
// preferred layout; otherwise W is read in place. Weight-only quantized W
// (bits 4/8) runs on quantized_linear.h instead.
#include <memory>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/linear_matmul.h"
#include "backends/cpu/kernels/quantized_linear.h"
#include "ops/linalg/quantized_linear.h"
#include "ops/node_attrs.h"
#include "ops/registry.h"

namespace seqrt::cpu {
namespace {

struct LinearShape {
  int64_t rows = 1, k = 0, n = 0;
  std::vector<int64_t> out_dims;
};

Result<LinearShape> check_linear(const KernelContext& ctx, const Tensor& x,
                                 const Tensor& w, const Tensor* b) {
  DType b_dtype = b ? b->dtype() : x.dtype();
  if (!is_f32_family(x.dtype()) || w.dtype() != x.dtype() ||
      b_dtype != x.dtype()) {
    return ctx.error(
        "X, W and B must share one dtype of f32/f16/bf16, got {}, {}, {}",
        dtype_name(x.dtype()), dtype_name(w.dtype()),
        dtype_name(b ? b->dtype() : DType::kUndefined));
  }
  if (x.rank() < 1 || w.rank() != 2 || w.dim(0) != x.dim(x.rank() - 1)) {
    return ctx.error("X (..., K) and W (K, N) disagree: X is {}, W is {}",
                     dims_to_string(x.dims()), dims_to_string(w.dims()));
  }
  LinearShape s;
  s.k = w.dim(0);
  s.n = w.dim(1);
  if (b && (b->rank() != 1 || b->dim(0) != s.n)) {
    return ctx.error("B must be (N) = ({}), got {}", s.n,
                     dims_to_string(b->dims()));
  }
  s.out_dims = x.dims();
  s.out_dims.back() = s.n;
  for (size_t i = 0; i + 1 < x.rank(); ++i) s.rows *= x.dim(i);
  return s;
}

// The quantized form, checked by the op's own contract.
Status run_quantized(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(QuantizedLinearDims q, check_quantized_linear(ctx));
  std::optional<onednn::Activation> activation =
      onednn::parse_activation(ctx.attr_string("activation"));
  if (!activation) {
    return ctx.error("unknown activation '{}'", ctx.attr_string("activation"));
  }
  const Tensor& x_in = *ctx.input(kLinearX);
  const Tensor* b_in = ctx.input(kLinearB);
  std::vector<int64_t> y_dims = x_in.dims();
  y_dims.back() = q.n;
  SEQRT_ASSIGN_OR_RETURN(Tensor y, f32_output(ctx, 0, x_in.dtype(), y_dims));
  if (y.num_elements() > 0) {
    SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(x_in));
    Tensor b;
    if (b_in) {
      SEQRT_ASSIGN_OR_RETURN(b, load_f32(*b_in));
    }
    const Tensor* zp = ctx.input(kLinearWZeroPoint);
    QuantizedWeights w;
    w.codes = ctx.input(kLinearW)->data_as<uint8_t>();
    w.scales = ctx.input(kLinearWScale)->data_as<float>();
    w.zero_points = zp ? zp->data_as<uint8_t>() : nullptr;
    w.n = q.n;
    w.k = q.k;
    w.bits = q.bits;
    w.block_size = q.block_size;
    w.n_blocks = q.n_blocks;
    w.row_bytes = q.row_bytes;
    quantized_linear(x.data_as<float>(), x.num_elements() / q.k, w,
                     b_in ? b.data_as<float>() : nullptr, *activation,
                     q.activation_bits, y.mutable_data_as<float>());
  }
  return set_output_as(ctx, 0, y, x_in.dtype());
}

// `packed`: W prepared at compile time, or null to read W as it is.
Status run_linear_with(KernelContext& ctx, onednn::PackedWeights* packed) {
  if (linear_bits(ctx) != 0) return run_quantized(ctx);
  const Tensor& x_in = *ctx.input(0);
  const Tensor& w_in = *ctx.input(1);
  const Tensor* b_in = ctx.input(2);
  SEQRT_ASSIGN_OR_RETURN(LinearShape s, check_linear(ctx, x_in, w_in, b_in));
  if (s.k == 0) {  // act(B) on every row: no product to run
    return OpRegistry::global().find(kSeqrtDomain, "Linear")->reference(ctx);
  }
  std::optional<onednn::Activation> activation =
      onednn::parse_activation(ctx.attr_string("activation"));
  if (!activation) {
    return ctx.error("unknown activation '{}'", ctx.attr_string("activation"));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor y,
                         f32_output(ctx, 0, x_in.dtype(), s.out_dims));
  if (y.num_elements() > 0) {
    SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(x_in));
    Tensor w, b;
    if (packed == nullptr) {
      SEQRT_ASSIGN_OR_RETURN(w, load_f32(w_in));
    }
    if (b_in) {
      SEQRT_ASSIGN_OR_RETURN(b, load_f32(*b_in));
    }
    MatmulWeights weights{packed, packed ? nullptr : w.data_as<float>()};
    MatmulEpilogue epilogue;
    epilogue.bias = b_in ? b.data_as<float>() : nullptr;
    epilogue.activation = *activation;
    SEQRT_RETURN_IF_ERROR(run_linear_matmul(
        ctx.node().label(), x.data_as<float>(), false, s.rows, s.k, s.n,
        weights, epilogue, y.mutable_data_as<float>()));
  }
  return set_output_as(ctx, 0, y, x_in.dtype());
}

Status run_linear(KernelContext& ctx) { return run_linear_with(ctx, nullptr); }

Result<KernelFn> prepare_linear(const Graph& graph, const Node& node) {
  const Tensor* w = graph.constant(node.inputs[1]);
  auto attr = node.attrs.find("activation");
  std::optional<onednn::Activation> activation = onednn::Activation::kNone;
  if (attr != node.attrs.end()) {
    activation = attr->second.type() == AttrType::kString
                     ? onednn::parse_activation(attr->second.as_string())
                     : std::nullopt;
  }
  if (w == nullptr || w->rank() != 2 || !is_f32_family(w->dtype()) ||
      !activation) {
    return KernelFn(run_linear);  // run() reports what is wrong, if anything
  }
  bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<onednn::PackedWeights> packed,
                         pack_constant_weights(node.label(), *w, false,
                                               rows_hint(graph, node.inputs[0]),
                                               has_bias, *activation));
  return KernelFn([packed](KernelContext& ctx) {
    return run_linear_with(ctx, packed.get());
  });
}

Status supports_linear(const Graph& graph, const Node& node) {
  if (node_attr_int(node, "bits") == 0) {
    return require_f32_family(graph, node, {0, 1, 2});
  }
  // Quantized: X and B float, the weight inputs as the contract says (run
  // checks the rest and reports it).
  SEQRT_RETURN_IF_ERROR(require_f32_family(graph, node, {0, 2}));
  const DType want[] = {DType::kU8, DType::kF32, DType::kU8};
  for (size_t i = kLinearW; i < node.inputs.size(); ++i) {
    if (i == kLinearB || node.inputs[i] == kNoValue) continue;
    DType dtype = graph.value(node.inputs[i]).dtype;
    DType expected = want[i == kLinearW ? 0 : i - kLinearB];
    if (dtype != expected) {
      return unsupported("{}: quantized Linear input {} is {}, not {}",
                         node.label(), i, dtype_name(dtype),
                         dtype_name(expected));
    }
  }
  return Status::ok();
}

}  // namespace

void register_linear_kernels(KernelTable& table) {
  table.add(CpuKernel{kSeqrtDomain, "Linear", run_linear, supports_linear,
                      prepare_linear});
}

}  // namespace seqrt::cpu
