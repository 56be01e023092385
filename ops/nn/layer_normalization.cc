// LayerNormalization (opset 17): Y = (X - mean) / sqrt(var + epsilon) * Scale
// + B, with mean and variance over the axes [axis, rank). The optional
// outputs Mean and InvStdDev have X's shape with those axes set to 1 and the
// dtype named by stash_type.
#include <cmath>

#include "ops/nn/normalization.h"
#include "ops/registry.h"
#include "ops/type_support.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Status check_dtypes(const OpContext& ctx, DType x, DType scale, DType bias) {
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'X'", x, kFloatTypes));
  SEQRT_RETURN_IF_ERROR(
      check_same_dtype(ctx, "input 'X'", x, "input 'Scale'", scale));
  if (bias == DType::kUndefined) return Status::ok();
  return check_same_dtype(ctx, "input 'X'", x, "input 'B'", bias);
}

// X's shape with the normalised axes set to 1.
Shape stats_shape(const Shape& x, int64_t axis) {
  Shape out = x;
  for (size_t d = static_cast<size_t>(axis); d < out.rank(); ++d) out[d] = 1;
  return out;
}

Status infer_layer_norm(InferContext& ctx) {
  DType bias = ctx.has_input(2) ? ctx.input_dtype(2) : DType::kUndefined;
  SEQRT_RETURN_IF_ERROR(
      check_dtypes(ctx, ctx.input_dtype(0), ctx.input_dtype(1), bias));
  SEQRT_ASSIGN_OR_RETURN(DType stash, stash_dtype(ctx));
  const std::optional<Shape>& x = ctx.input_shape(0);
  std::optional<Shape> stats;
  if (x.has_value()) {
    SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                           normalize_axis(ctx, ctx.attr_int("axis"),
                                          static_cast<int64_t>(x->rank())));
    const char* names[] = {"X", "Scale", "B"};
    for (size_t i = 1; i < 3; ++i) {
      if (!ctx.has_input(i) || !ctx.input_shape(i).has_value()) continue;
      SEQRT_RETURN_IF_ERROR(
          check_broadcast_to(ctx, std::string("input '") + names[i] + "'",
                             *ctx.input_shape(i), *x));
    }
    stats = stats_shape(*x, axis);
  }
  ctx.set_output(0, ctx.input_dtype(0), x);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    ctx.set_output(i, stash, stats);
  }
  return Status::ok();
}

Status run_layer_norm(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  const Tensor* bias = ctx.input(2);
  SEQRT_RETURN_IF_ERROR(
      check_dtypes(ctx, x.dtype(), scale.dtype(),
                   bias != nullptr ? bias->dtype() : DType::kUndefined));
  SEQRT_ASSIGN_OR_RETURN(DType stash, stash_dtype(ctx));
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(x.rank())));
  SEQRT_RETURN_IF_ERROR(
      check_broadcast_to(ctx, "input 'Scale'", scale.shape(), x.shape()));
  std::vector<std::vector<int64_t>> param_dims = {scale.dims()};
  if (bias != nullptr) {
    SEQRT_RETURN_IF_ERROR(
        check_broadcast_to(ctx, "input 'B'", bias->shape(), x.shape()));
    param_dims.push_back(bias->dims());
  }
  BroadcastIndexer params(x.dims(), param_dims);

  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, x.dtype(), x.dims()));
  std::vector<int64_t> stats_dims = stats_shape(x.shape(), axis).fixed_dims();
  Tensor* stats[2] = {nullptr, nullptr};
  for (size_t i = 1; i < ctx.num_outputs() && i < 3; ++i) {
    SEQRT_ASSIGN_OR_RETURN(stats[i - 1],
                           ctx.allocate_output(i, stash, stats_dims));
  }

  double epsilon = ctx.attr_float("epsilon");
  NormalizedRows split = split_rows(x.dims(), axis);
  for (int64_t row = 0; row < split.rows; ++row) {
    int64_t begin = row * split.cols;
    double mean = 0.0;
    for (int64_t c = 0; c < split.cols; ++c) mean += x.element_f64(begin + c);
    mean /= static_cast<double>(split.cols);
    double variance = 0.0;
    for (int64_t c = 0; c < split.cols; ++c) {
      double diff = x.element_f64(begin + c) - mean;
      variance += diff * diff;
    }
    variance /= static_cast<double>(split.cols);
    double inv_std = 1.0 / std::sqrt(variance + epsilon);
    for (int64_t c = 0; c < split.cols; ++c) {
      int64_t i = begin + c;
      double value = (x.element_f64(i) - mean) * inv_std *
                     scale.element_f64(params.input_index(0, i));
      if (bias != nullptr) value += bias->element_f64(params.input_index(1, i));
      y->set_element_f64(i, value);
    }
    if (stats[0] != nullptr) stats[0]->set_element_f64(row, mean);
    if (stats[1] != nullptr) stats[1]->set_element_f64(row, inv_std);
  }
  return Status::ok();
}

}  // namespace

void register_layer_normalization(OpRegistry& registry) {
  OpSchema s;
  s.name = "LayerNormalization";
  s.doc = "normalises over the axes [axis, rank), then scales and shifts";
  s.inputs = {{"X"}, {"Scale"}, {"B", true}};
  s.outputs = {{"Y"}, {"Mean", true}, {"InvStdDev", true}};
  s.attrs = {
      AttrSpec{"axis", AttrType::kInt, Attribute(-1), false, {}},
      AttrSpec{"epsilon", AttrType::kFloat, Attribute(1e-5f), false, {}},
      AttrSpec{"stash_type", AttrType::kInt, Attribute(1), false, {}},
  };
  s.infer = infer_layer_norm;
  s.reference = run_layer_norm;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
