// CPU kernels of the metadata ops and Cast. Shape, Size and Constant give
// values that depend only on shapes and attributes: their own inference
// computes them (it records them for constant folding), so the kernel takes
// that value. ConstantOfShape and Range take their dims from inference and
// fill; Cast and CastLike convert every element (any dtype pair) in
// parallel chunks.
#include <cstring>
#include <type_traits>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/typed_support.h"
#include "ops/op_schema.h"
#include "ops/type_support.h"

namespace seqrt::cpu {
namespace {

// Runs the op's inference on the node's concrete inputs (shapes and values).
Result<InferContext> infer_concrete(const KernelContext& ctx) {
  std::vector<ValueInfo> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    inputs.push_back(t ? ValueInfo{t->dtype(), t->shape(), t} : ValueInfo{});
  }
  InferContext infer(ctx.node(), ctx.schema(), std::move(inputs));
  SEQRT_RETURN_IF_ERROR(ctx.schema().infer(infer));
  return infer;
}

Result<std::vector<int64_t>> concrete_dims(const KernelContext& ctx,
                                           const InferContext& infer) {
  const std::optional<Shape>& shape = infer.outputs()[0].shape;
  if (!shape.has_value() || !shape->is_fixed()) {
    return internal_error("{}: inference left the output shape unknown",
                          ctx.node().label());
  }
  return shape->fixed_dims();
}

Status run_from_inferred_value(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(InferContext infer, infer_concrete(ctx));
  const std::vector<Tensor>& values = infer.output_values();
  if (values.empty() || values[0].empty()) {
    return internal_error("{}: inference gave no value for the output",
                          ctx.node().label());
  }
  // Inference's tensors may be views of attributes: outputs get their own.
  ctx.set_output(0, values[0].clone());
  return Status::ok();
}

Status run_constant_of_shape(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(InferContext infer, infer_concrete(ctx));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, concrete_dims(ctx, infer));
  const Tensor& value = ctx.attr_tensor("value");
  if (value.num_elements() != 1) {
    return ctx.error("attribute 'value' must hold one element, got {}",
                     value.num_elements());
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, value.dtype(), dims));
  const size_t element = dtype_size(value.dtype());
  char* dst = static_cast<char*>(out->mutable_data());
  parallel_chunks(out->num_elements(), 65536, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      std::memcpy(dst + i * element, value.data(), element);
    }
  });
  return Status::ok();
}

Status run_range(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(InferContext infer, infer_concrete(ctx));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, concrete_dims(ctx, infer));
  const Tensor& start = *ctx.input(0);
  const Tensor& delta = *ctx.input(2);
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, start.dtype(), dims));
  const int64_t n = out->num_elements();
  if (is_integer(start.dtype())) {
    // start + i·delta stays between start and limit, so it never overflows.
    const int64_t first = start.element_i64(0);
    const int64_t step = delta.element_i64(0);
    for (int64_t i = 0; i < n; ++i) out->set_element_i64(i, first + i * step);
    return Status::ok();
  }
  const double first = start.element_f64(0);
  const double step = delta.element_f64(0);
  for (int64_t i = 0; i < n; ++i) {
    out->set_element_f64(i, first + static_cast<double>(i) * step);
  }
  return Status::ok();
}

// One element of S as D, the way the reference converts: floats through
// double (saturating, truncating into integers, NaN to 0), integers and
// bools exactly (wrapping into narrower integers, through double into
// floats).
template <typename D, typename S>
D convert_element(S x) {
  if constexpr (std::is_floating_point_v<S>) {
    return from_f64<D>(static_cast<double>(x));
  } else if constexpr (std::is_floating_point_v<D>) {
    return static_cast<D>(static_cast<double>(x));
  } else if constexpr (std::is_same_v<D, bool>) {
    return x != 0;
  } else {
    return static_cast<D>(static_cast<int64_t>(x));
  }
}

// Any dtype pair. f16/bf16 go through f32 at the edges (exact on load; on
// store the rounding the reference does); the rest is one typed loop per
// pair, in parallel chunks.
Status convert(KernelContext& ctx, const Tensor& x, DType to) {
  if (to == x.dtype()) {
    ctx.set_output(0, x);
    return Status::ok();
  }
  Tensor src = x;
  if (is_f32_family(x.dtype())) {
    SEQRT_ASSIGN_OR_RETURN(src, load_f32(x));
  }
  const DType direct = is_f32_family(to) ? DType::kF32 : to;
  SEQRT_ASSIGN_OR_RETURN(Tensor dst, Tensor::allocate(direct, x.dims()));
  auto visit = [](DType dtype, auto&& fn) {
    if (dtype == DType::kF32) return fn(float{}), true;
    return visit_exact_dtype(dtype, fn);
  };
  bool handled = visit(src.dtype(), [&](auto s_tag) {
    using S = decltype(s_tag);
    visit(dst.dtype(), [&](auto d_tag) {
      using D = decltype(d_tag);
      const S* in = src.data_as<S>();
      D* out = dst.mutable_data_as<D>();
      parallel_chunks(x.num_elements(), 65536, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          out[i] = convert_element<D, S>(in[i]);
        }
      });
    });
  });
  if (!handled) {
    return ctx.unsupported_error("cast from {} to {}", dtype_name(x.dtype()),
                                 dtype_name(to));
  }
  return set_output_as(ctx, 0, dst, to);
}

Status run_cast(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(DType to,
                         dtype_from_onnx_code(ctx, "to", ctx.attr_int("to")));
  return convert(ctx, *ctx.input(0), to);
}

// CastLike: the dtype of input 'target_type'.
Status run_cast_like(KernelContext& ctx) {
  if (!ctx.has_input(1)) return ctx.error("input 'target_type' is missing");
  return convert(ctx, *ctx.input(0), ctx.input(1)->dtype());
}

}  // namespace

void register_shape_op_kernels(KernelTable& table) {
  for (const char* op : {"Shape", "Size", "Constant"}) {
    table.add(CpuKernel{kOnnxDomain, op, run_from_inferred_value, nullptr});
  }
  table.add(CpuKernel{kOnnxDomain, "ConstantOfShape", run_constant_of_shape,
                      nullptr});
  table.add(CpuKernel{kOnnxDomain, "Range", run_range, nullptr});
  table.add(CpuKernel{kOnnxDomain, "Cast", run_cast, nullptr});
  table.add(CpuKernel{kOnnxDomain, "CastLike", run_cast_like, nullptr});
}

}  // namespace seqrt::cpu
