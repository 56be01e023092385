// RMSNormalization (opset 23): Y = X / sqrt(mean(X^2) + epsilon) * scale,
// with the mean over the axes [axis, rank). X and scale may have different
// float dtypes; Y has scale's.
#include <cmath>

#include "ops/nn/normalization.h"
#include "ops/registry.h"
#include "ops/type_support.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Status check_dtypes(const OpContext& ctx, DType x, DType scale) {
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'X'", x, kFloatTypes));
  return check_input_dtype(ctx, "input 'scale'", scale, kFloatTypes);
}

Status infer_rms_norm(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(
      check_dtypes(ctx, ctx.input_dtype(0), ctx.input_dtype(1)));
  SEQRT_RETURN_IF_ERROR(stash_dtype(ctx).status());
  const std::optional<Shape>& x = ctx.input_shape(0);
  if (x.has_value()) {
    SEQRT_RETURN_IF_ERROR(normalize_axis(ctx, ctx.attr_int("axis"),
                                         static_cast<int64_t>(x->rank()))
                              .status());
    if (ctx.input_shape(1).has_value()) {
      SEQRT_RETURN_IF_ERROR(
          check_broadcast_to(ctx, "input 'scale'", *ctx.input_shape(1), *x));
    }
  }
  ctx.set_output(0, ctx.input_dtype(1), x);
  return Status::ok();
}

Status run_rms_norm(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, x.dtype(), scale.dtype()));
  SEQRT_RETURN_IF_ERROR(stash_dtype(ctx).status());
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(x.rank())));
  SEQRT_RETURN_IF_ERROR(
      check_broadcast_to(ctx, "input 'scale'", scale.shape(), x.shape()));
  BroadcastIndexer scale_index(x.dims(), {scale.dims()});
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, scale.dtype(), x.dims()));

  double epsilon = ctx.attr_float("epsilon");
  NormalizedRows split = split_rows(x.dims(), axis);
  for (int64_t row = 0; row < split.rows; ++row) {
    int64_t begin = row * split.cols;
    double mean_square = 0.0;
    for (int64_t c = 0; c < split.cols; ++c) {
      double value = x.element_f64(begin + c);
      mean_square += value * value;
    }
    mean_square /= static_cast<double>(split.cols);
    double inv_rms = 1.0 / std::sqrt(mean_square + epsilon);
    for (int64_t c = 0; c < split.cols; ++c) {
      int64_t i = begin + c;
      y->set_element_f64(i,
                         x.element_f64(i) * inv_rms *
                             scale.element_f64(scale_index.input_index(0, i)));
    }
  }
  return Status::ok();
}

}  // namespace

void register_rms_normalization(OpRegistry& registry) {
  OpSchema s;
  s.name = "RMSNormalization";
  s.doc = "divides by the root mean square over [axis, rank), then scales";
  s.inputs = {{"X"}, {"scale"}};
  s.outputs = {{"Y"}};
  s.attrs = {
      AttrSpec{"axis", AttrType::kInt, Attribute(-1), false, {}},
      AttrSpec{"epsilon", AttrType::kFloat, Attribute(1e-5f), false, {}},
      AttrSpec{"stash_type", AttrType::kInt, Attribute(1), false, {}},
  };
  s.infer = infer_rms_norm;
  s.reference = run_rms_norm;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
