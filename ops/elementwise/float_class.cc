// IsNaN and IsInf (opset 20): bool masks of a float tensor's NaNs and
// infinities; IsInf's detect_negative / detect_positive (default 1) choose
// which infinities count. f16 and bf16 keep NaN and infinity when widened,
// so the reference reads every float dtype as double.
#include <cmath>

#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

Status infer_float_class(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'X'", ctx.input_dtype(0), kFloatTypes));
  ctx.set_output(0, DType::kBool, ctx.input_shape(0));
  return Status::ok();
}

template <typename Predicate>
Status run_float_class(KernelContext& ctx, Predicate is_member) {
  const Tensor& x = *ctx.input(0);
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'X'", x.dtype(), kFloatTypes));
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, DType::kBool, x.dims()));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    y->set_element_i64(i, is_member(x.element_f64(i)) ? 1 : 0);
  }
  return Status::ok();
}

void register_is_nan(OpRegistry& registry) {
  OpSchema s;
  s.name = "IsNaN";
  s.doc = "whether x is NaN, elementwise; bool result";
  s.inputs = {{"X"}};
  s.outputs = {{"Y"}};
  s.infer = infer_float_class;
  s.reference = [](KernelContext& ctx) {
    return run_float_class(ctx, [](double x) { return std::isnan(x); });
  };
  register_or_die(registry, std::move(s));
}

void register_is_inf(OpRegistry& registry) {
  OpSchema s;
  s.name = "IsInf";
  s.doc =
      "whether x is an infinity of a detected sign, elementwise; bool "
      "result";
  s.inputs = {{"X"}};
  s.outputs = {{"Y"}};
  s.attrs = {{"detect_negative", AttrType::kInt, Attribute(1)},
             {"detect_positive", AttrType::kInt, Attribute(1)}};
  s.infer = infer_float_class;
  s.reference = [](KernelContext& ctx) {
    const bool negative = ctx.attr_int("detect_negative") != 0;
    const bool positive = ctx.attr_int("detect_positive") != 0;
    return run_float_class(ctx, [=](double x) {
      return std::isinf(x) && (x < 0 ? negative : positive);
    });
  };
  register_or_die(registry, std::move(s));
}

}  // namespace

void register_float_class_ops(OpRegistry& registry) {
  register_is_nan(registry);
  register_is_inf(registry);
}

}  // namespace seqrt
