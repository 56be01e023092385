// Cast (opset 25): converts every element to the dtype named by `to`, an
// ONNX TensorProto data-type code. CastLike (opset 25) converts to the
// dtype of its second input instead.
#include "ops/elementwise/cast.h"

#include <string>
#include <vector>

#include "ops/registry.h"
#include "ops/symbolic_value.h"
#include "ops/type_support.h"

namespace seqrt {

StorageCastOptions storage_cast_options(const OpContext& ctx) {
  StorageCastOptions options;
  options.saturate = ctx.attr_int("saturate") != 0;
  const std::string& mode = ctx.attr_string("round_mode");
  if (mode == "down") options.e8m0_rounding = E8M0Rounding::kDown;
  if (mode == "nearest") options.e8m0_rounding = E8M0Rounding::kNearest;
  return options;
}

void cast_storage_only(const Tensor& x, const StorageCastOptions& options,
                       Tensor& y) {
  const DType to = y.dtype();
  auto* bytes = static_cast<uint8_t*>(y.mutable_data());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (to == DType::kF8E8M0) {
      bytes[i] = f64_to_e8m0(x.element_f64(i), options.saturate,
                             options.e8m0_rounding);
    } else if (is_float8(to)) {
      bytes[i] = f64_to_f8(to, x.element_f64(i), options.saturate);
    } else if (is_float(to) || to == DType::kBool || to == DType::kF4E2M1) {
      y.set_element_f64(i, x.element_f64(i));
    } else {
      y.set_element_i64(i, x.element_i64(i));
    }
  }
}

namespace {

// Cast takes every dtype, the storage-only ones included.
constexpr DTypeSet kCastTypes = kAllTypes | kStorageOnlyTypes;

Status infer_cast(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'input'", ctx.input_dtype(0), kCastTypes));
  SEQRT_ASSIGN_OR_RETURN(DType to,
                         dtype_from_onnx_code(ctx, "to", ctx.attr_int("to")));
  ctx.set_output(0, to, ctx.input_shape(0));
  // Shape arithmetic casts between i64 and i32 (values assumed in range).
  if (is_integer(ctx.input_dtype(0))) forward_symbolic(ctx);
  return Status::ok();
}

// Integers and bools convert exactly through int64 (wrapping into narrower
// integers); floats through double: truncated toward zero into integers
// (NaN gives 0, out-of-range values are undefined in ONNX and saturate at
// the int64 range before wrapping here), != 0 into bool.
Status convert_into(KernelContext& ctx, const Tensor& x, DType to) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'input'", x.dtype(), kCastTypes));
  SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to, x.dims()));
  if (is_storage_only(x.dtype()) || is_storage_only(to)) {
    cast_storage_only(x, storage_cast_options(ctx), *y);
  } else if (is_float(x.dtype())) {
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      y->set_element_f64(i, x.element_f64(i));
    }
  } else {
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      y->set_element_i64(i, x.element_i64(i));
    }
  }
  return Status::ok();
}

Status run_cast(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(DType to,
                         dtype_from_onnx_code(ctx, "to", ctx.attr_int("to")));
  return convert_into(ctx, *ctx.input(0), to);
}

Status infer_cast_like(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'input'", ctx.input_dtype(0), kCastTypes));
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'target_type'",
                                          ctx.input_dtype(1), kCastTypes));
  ctx.set_output(0, ctx.input_dtype(1), ctx.input_shape(0));
  return Status::ok();
}

Status run_cast_like(KernelContext& ctx) {
  DType to = ctx.input(1)->dtype();
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'target_type'", to, kCastTypes));
  return convert_into(ctx, *ctx.input(0), to);
}

// `saturate` matters for float8 targets only, `round_mode` for f8e8m0 only.
std::vector<AttrSpec> float8_attrs() {
  return {
      AttrSpec{"saturate", AttrType::kInt, Attribute(1), false, {}},
      AttrSpec{"round_mode",
               AttrType::kString,
               Attribute("up"),
               false,
               {"up", "down", "nearest"}},
  };
}

}  // namespace

void register_cast(OpRegistry& registry) {
  OpSchema s;
  s.name = "Cast";
  s.doc = "converts elements to the dtype of attribute `to` (ONNX code)";
  s.inputs = {{"input"}};
  s.outputs = {{"output"}};
  s.attrs = {AttrSpec{"to", AttrType::kInt, std::nullopt, true, {}}};
  for (AttrSpec& spec : float8_attrs()) s.attrs.push_back(std::move(spec));
  s.infer = infer_cast;
  s.reference = run_cast;
  s.storage_only_types = true;
  register_or_die(registry, std::move(s));

  OpSchema like;
  like.name = "CastLike";
  like.doc = "converts elements to the dtype of input 'target_type'";
  like.inputs = {{"input"}, {"target_type"}};
  like.outputs = {{"output"}};
  like.attrs = float8_attrs();
  like.infer = infer_cast_like;
  like.reference = run_cast_like;
  like.storage_only_types = true;
  register_or_die(registry, std::move(like));
}

}  // namespace seqrt
