// Reshape: the same elements in a new shape given by a 1-D integer input.
// In the shape, -1 (at most once) is inferred from the element count and
// 0 copies the input's dim at that index, unless allowzero=1, where 0 is a
// zero-sized dim (and then -1 may not appear with it).
#include <algorithm>
#include <map>
#include <optional>

#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/symbolic_value.h"

namespace seqrt {
namespace {

// Checks the requested shape's entries against the rules above.
Status check_request(const OpContext& ctx, const std::vector<int64_t>& shape,
                     size_t input_rank) {
  bool allow_zero = ctx.attr_int("allowzero") != 0;
  int64_t infer_count = std::count(shape.begin(), shape.end(), -1);
  int64_t zero_count = std::count(shape.begin(), shape.end(), 0);
  if (infer_count > 1) {
    return ctx.error("shape {} has more than one -1", dims_to_string(shape));
  }
  if (allow_zero && infer_count > 0 && zero_count > 0) {
    return ctx.error("shape {} has both 0 and -1 with allowzero=1",
                     dims_to_string(shape));
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < -1) {
      return ctx.error("shape {} has a negative dim {}", dims_to_string(shape),
                       shape[i]);
    }
    if (shape[i] == 0 && !allow_zero && i >= input_rank) {
      return ctx.error(
          "shape {} copies dim {} with 0 but the input has rank {}",
          dims_to_string(shape), i, input_rank);
    }
  }
  return Status::ok();
}

Result<std::vector<int64_t>> output_dims(const OpContext& ctx,
                                         const std::vector<int64_t>& in,
                                         std::vector<int64_t> shape) {
  SEQRT_RETURN_IF_ERROR(check_request(ctx, shape, in.size()));
  bool allow_zero = ctx.attr_int("allowzero") != 0;
  int64_t known = 1;
  int64_t infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allow_zero) shape[i] = in[i];
    if (shape[i] == -1) {
      infer_at = static_cast<int64_t>(i);
    } else {
      if (shape[i] != 0 && known > kMaxElements / shape[i]) {
        return ctx.error("shape {} has more than 2^48 elements",
                         dims_to_string(shape));
      }
      known *= shape[i];
    }
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t count, checked_num_elements(in));
  if (infer_at >= 0) {
    if (known == 0 || count % known != 0) {
      return ctx.error("cannot reshape {} to {}: -1 cannot be inferred",
                       dims_to_string(in), dims_to_string(shape));
    }
    shape[infer_at] = count / known;
  } else if (known != count) {
    return ctx.error("cannot reshape {} ({} elements) to {}",
                     dims_to_string(in), count, dims_to_string(shape));
  }
  return shape;
}

// Symbolic inference of a -1: the input's element count divided by the
// other output dims, when that division is exact (graph/dim_expr.h):
// (batch,seq) to (-1,seq) gives batch; (batch,seq) to (-1,4) stays unknown.
Dim infer_minus_one(const Shape& in, const std::vector<Dim>& out) {
  return exact_div(dims_product(in.dims()), dims_product(out)).to_dim();
}

// The output when the input has symbolic or unknown dims, or the request
// is known only symbolically: 0 copies the input's dim, -1 is inferred
// where the dims allow it.
Result<Shape> symbolic_output(const OpContext& ctx,
                              const std::optional<Shape>& in,
                              const std::vector<DimExpr>& request) {
  // Symbolic entries are dims (>= 0 and not 0 to copy); check the rest.
  std::vector<int64_t> constants;
  for (const DimExpr& want : request) {
    constants.push_back(want.constant().value_or(1));
  }
  SEQRT_RETURN_IF_ERROR(
      check_request(ctx, constants, in ? in->rank() : request.size()));
  bool allow_zero = ctx.attr_int("allowzero") != 0;
  std::vector<Dim> out;
  std::optional<size_t> minus_one;
  for (size_t i = 0; i < request.size(); ++i) {
    std::optional<int64_t> want = request[i].constant();
    if (want == 0 && !allow_zero) {
      out.push_back(in ? (*in)[i] : Dim::unknown());
    } else if (want == -1) {
      minus_one = i;
      out.push_back(Dim::unknown());
    } else {
      out.push_back(request[i].to_dim());
    }
  }
  if (in && minus_one) {
    std::vector<Dim> others = out;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(*minus_one));
    out[*minus_one] = infer_minus_one(*in, others);
  }
  return Shape(std::move(out));
}

// The output shape from a shape input known element by element.
Status infer_from_request(InferContext& ctx, DType dtype,
                          const std::optional<Shape>& in,
                          const std::vector<int64_t>& request) {
  if (in && in->is_fixed()) {
    SEQRT_ASSIGN_OR_RETURN(auto dims,
                           output_dims(ctx, in->fixed_dims(), request));
    ctx.set_output(0, dtype, Shape::from_dims(dims));
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(
      Shape out,
      symbolic_output(ctx, in,
                      std::vector<DimExpr>(request.begin(), request.end())));
  ctx.set_output(0, dtype, std::move(out));
  return Status::ok();
}

Status infer_reshape_shape(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  const std::optional<Shape>& in = ctx.input_shape(0);
  SEQRT_ASSIGN_OR_RETURN(auto request, known_int_list(ctx, 1, "shape"));
  if (request) return infer_from_request(ctx, dtype, in, *request);
  std::optional<std::vector<DimExpr>> symbolic = ctx.input_symbolic(1);
  if (symbolic) {
    SEQRT_ASSIGN_OR_RETURN(Shape out, symbolic_output(ctx, in, *symbolic));
    ctx.set_output(0, dtype, std::move(out));
    return Status::ok();
  }
  std::optional<int64_t> rank = known_length(ctx, 1);
  ctx.set_output(
      0, dtype,
      rank ? std::optional<Shape>(unknown_shape(*rank)) : std::nullopt);
  return Status::ok();
}

// A 1-D shape tensor reshaped to [n] (or a scalar) keeps its elements.
Status infer_reshape(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(infer_reshape_shape(ctx));
  forward_symbolic(ctx);
  return Status::ok();
}

Status run_reshape(KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> request,
                         read_int_list(ctx, *ctx.input(1), "shape"));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                         output_dims(ctx, data.dims(), std::move(request)));
  SEQRT_ASSIGN_OR_RETURN(Tensor out, data.clone().reshaped(std::move(dims)));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_reshape(OpRegistry& registry) {
  OpSchema s;
  s.name = "Reshape";
  s.doc = "the same elements in the shape given by input 'shape'";
  s.inputs = {{"data"}, {"shape"}};
  s.outputs = {{"reshaped"}};
  s.attrs = {{"allowzero", AttrType::kInt, Attribute(0)}};
  s.infer = infer_reshape;
  s.reference = run_reshape;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
