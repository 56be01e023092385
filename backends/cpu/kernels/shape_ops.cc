// CPU kernels of the metadata ops and Cast. Shape, Size and Constant give
// values that depend only on shapes and attributes: their own inference
// computes them (it records them for constant folding), so the kernel takes
// that value. ConstantOfShape and Range take their dims from inference and
// fill; Cast converts every element (any dtype pair) in parallel chunks.
#include <cstring>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
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

// Any dtype pair, with the element conversions the reference uses (floats
// through double, integers and bools exactly through int64).
Status run_cast(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(DType to,
                         dtype_from_onnx_code(ctx, "to", ctx.attr_int("to")));
  if (to == x.dtype()) {
    ctx.set_output(0, x);
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to, x.dims()));
  const bool from_float = is_float(x.dtype());
  parallel_chunks(x.num_elements(), 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (from_float) {
        y->set_element_f64(i, x.element_f64(i));
      } else {
        y->set_element_i64(i, x.element_i64(i));
      }
    }
  });
  return Status::ok();
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
}

}  // namespace seqrt::cpu
