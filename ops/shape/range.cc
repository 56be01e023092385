// Range: start, start + delta, ... up to (not including) limit; the three
// inputs are scalars of one numeric dtype, which the output takes.
// Length: max(ceil((limit - start) / delta), 0).
#include <cmath>
#include <cstdint>

#include "ops/registry.h"
#include "ops/symbolic_value.h"

namespace seqrt {
namespace {

const char* const kInputNames[] = {"start", "limit", "delta"};

Status check_dtypes(const OpContext& ctx, DType start, DType limit,
                    DType delta) {
  if (start == DType::kBool || !(start == limit && start == delta)) {
    return ctx.error(
        "start, limit and delta must share one numeric dtype, got {}, {}, {}",
        dtype_name(start), dtype_name(limit), dtype_name(delta));
  }
  return Status::ok();
}

// Integer ranges are counted exactly; float ones in double, as specified.
Result<int64_t> range_length(const OpContext& ctx, const Tensor& start,
                             const Tensor& limit, const Tensor& delta) {
  if (is_integer(start.dtype())) {
    int64_t s = start.element_i64(0), l = limit.element_i64(0);
    int64_t d = delta.element_i64(0);
    if (d == 0) return ctx.error("delta must not be 0");
    if (d > 0 ? l <= s : l >= s) return int64_t{0};
    // Unsigned arithmetic keeps |limit - start| and |delta| exact for every
    // int64 value (INT64_MIN included).
    uint64_t span = d > 0 ? static_cast<uint64_t>(l) - static_cast<uint64_t>(s)
                          : static_cast<uint64_t>(s) - static_cast<uint64_t>(l);
    uint64_t step = d > 0 ? static_cast<uint64_t>(d)
                          : uint64_t{0} - static_cast<uint64_t>(d);
    uint64_t n = span / step + (span % step != 0 ? 1 : 0);
    if (n > static_cast<uint64_t>(kMaxElements)) {
      return ctx.error("range of {} to {} by {} is too long", s, l, d);
    }
    return static_cast<int64_t>(n);
  }
  double s = start.element_f64(0), l = limit.element_f64(0);
  double d = delta.element_f64(0);
  if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) {
    return ctx.error(
        "start, limit and delta must be finite and delta non-zero, got {}, {}, "
        "{}",
        s, l, d);
  }
  double n = std::ceil((l - s) / d);
  if (n > static_cast<double>(kMaxElements)) {
    return ctx.error("range of {} to {} by {} is too long", s, l, d);
  }
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

Status check_scalars(const OpContext& ctx,
                     const std::vector<const Tensor*>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->num_elements() != 1 || inputs[i]->rank() > 1) {
      return ctx.error("{} must be a scalar, got shape {}", kInputNames[i],
                       dims_to_string(inputs[i]->dims()));
    }
  }
  return Status::ok();
}

// The length (limit - start) / delta when start, limit and delta are
// integers known symbolically and the division is exact:
// Range(past, past + seq, 1) has seq elements. Otherwise unknown.
Dim symbolic_length(const InferContext& ctx) {
  if (!is_integer(ctx.input_dtype(0))) return Dim::unknown();
  DimExpr start = symbolic_scalar_input(ctx, 0);
  DimExpr limit = symbolic_scalar_input(ctx, 1);
  std::optional<int64_t> delta = symbolic_scalar_input(ctx, 2).constant();
  if (!delta || *delta <= 0) return Dim::unknown();
  return exact_div(limit - start, DimExpr(*delta)).to_dim();
}

Status infer_range(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  SEQRT_RETURN_IF_ERROR(
      check_dtypes(ctx, dtype, ctx.input_dtype(1), ctx.input_dtype(2)));
  std::vector<const Tensor*> values = {ctx.input_value(0), ctx.input_value(1),
                                       ctx.input_value(2)};
  for (const Tensor* value : values) {
    if (value == nullptr) {
      ctx.set_output(0, dtype, Shape({symbolic_length(ctx)}));
      return Status::ok();
    }
  }
  SEQRT_RETURN_IF_ERROR(check_scalars(ctx, values));
  SEQRT_ASSIGN_OR_RETURN(int64_t n,
                         range_length(ctx, *values[0], *values[1], *values[2]));
  ctx.set_output(0, dtype, Shape({n}));
  return Status::ok();
}

Status run_range(KernelContext& ctx) {
  const Tensor& start = *ctx.input(0);
  const Tensor& delta = *ctx.input(2);
  SEQRT_RETURN_IF_ERROR(
      check_dtypes(ctx, start.dtype(), ctx.input(1)->dtype(), delta.dtype()));
  SEQRT_RETURN_IF_ERROR(
      check_scalars(ctx, {ctx.input(0), ctx.input(1), ctx.input(2)}));
  SEQRT_ASSIGN_OR_RETURN(int64_t n,
                         range_length(ctx, start, *ctx.input(1), delta));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, start.dtype(), {n}));
  if (is_integer(start.dtype())) {
    // Every element lies between start and limit, so stepping never
    // overflows; only the step past the last element could, and is skipped.
    int64_t value = start.element_i64(0);
    for (int64_t i = 0; i < n; ++i) {
      out->set_element_i64(i, value);
      if (i + 1 < n) value += delta.element_i64(0);
    }
    return Status::ok();
  }
  for (int64_t i = 0; i < n; ++i) {
    out->set_element_f64(i, start.element_f64(0) +
                                static_cast<double>(i) * delta.element_f64(0));
  }
  return Status::ok();
}

}  // namespace

void register_range(OpRegistry& registry) {
  OpSchema s;
  s.name = "Range";
  s.doc = "start, start + delta, ... below limit (above, for delta < 0)";
  s.inputs = {{"start"}, {"limit"}, {"delta"}};
  s.outputs = {{"output"}};
  s.infer = infer_range;
  s.reference = run_range;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
