// Softmax and LogSoftmax (opset 13) along one axis. They share this file as
// they differ only in the last step (divide by the sum, or subtract its log).
#include <cmath>
#include <string>

#include "ops/registry.h"
#include "ops/type_support.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Status infer_softmax(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'input'", ctx.input_dtype(0), kFloatTypes));
  if (const auto& shape = ctx.input_shape(0)) {
    SEQRT_RETURN_IF_ERROR(normalize_axis(ctx, ctx.attr_int("axis"),
                                         static_cast<int64_t>(shape->rank()))
                              .status());
  }
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

// Softmax over each line along `axis`; the line's max is subtracted first so
// that exp never overflows.
Status run_softmax(KernelContext& ctx, bool log) {
  const Tensor& x = *ctx.input(0);
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'input'", x.dtype(), kFloatTypes));
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(x.rank())));
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, x.dtype(), x.dims()));
  if (x.rank() == 0) {  // one element: softmax 1, log-softmax 0
    y->set_element_f64(0, log ? 0.0 : 1.0);
    return Status::ok();
  }
  int64_t length = x.dim(axis);
  int64_t inner = strides_of(x.dims())[axis];
  int64_t lines = length == 0 ? 0 : x.num_elements() / length;
  for (int64_t line = 0; line < lines; ++line) {
    int64_t base = (line / inner) * length * inner + line % inner;
    double max = -INFINITY;
    for (int64_t k = 0; k < length; ++k) {
      max = std::fmax(max, x.element_f64(base + k * inner));
    }
    double sum = 0.0;
    for (int64_t k = 0; k < length; ++k) {
      sum += std::exp(x.element_f64(base + k * inner) - max);
    }
    double log_sum = std::log(sum);
    for (int64_t k = 0; k < length; ++k) {
      double shifted = x.element_f64(base + k * inner) - max;
      y->set_element_f64(base + k * inner,
                         log ? shifted - log_sum : std::exp(shifted) / sum);
    }
  }
  return Status::ok();
}

void register_softmax_op(OpRegistry& registry, const char* name, bool log) {
  OpSchema s;
  s.name = name;
  s.doc = log ? "log of softmax along one axis" : "softmax along one axis";
  s.inputs = {{"input"}};
  s.outputs = {{"output"}};
  s.attrs.push_back(AttrSpec{"axis", AttrType::kInt, Attribute(-1), false, {}});
  s.infer = infer_softmax;
  s.reference = [log](KernelContext& ctx) { return run_softmax(ctx, log); };
  register_or_die(registry, std::move(s));
}

}  // namespace

void register_softmax(OpRegistry& registry) {
  register_softmax_op(registry, "Softmax", false);
  register_softmax_op(registry, "LogSoftmax", true);
}

}  // namespace seqrt
