// ONNX TensorScatter (opset 24): writes `update` into a copy of the
// fixed-capacity cache `past_cache` along the sequence axis `axis` (default
// -2, never the batch axis 0), starting for batch b at write_indices[b]
// (zeros when omitted). mode "linear" requires the write to fit
// (write_indices[b] + sequence_length <= max_sequence_length); "circular"
// wraps positions modulo max_sequence_length. It is how a KV cache of fixed
// capacity is updated in place; present_cache has past_cache's shape.
#include "ops/sequence/tensor_scatter.h"

#include <cstring>

#include "ops/registry.h"
#include "ops/type_support.h"
#include "ops/util.h"

namespace seqrt {
namespace {

// The sequence axis, checked against a rank that must be at least 2.
Result<int64_t> sequence_axis(const OpContext& ctx, int64_t rank) {
  if (rank < 2) {
    return ctx.error(
        "past_cache must have rank >= 2 (batch, ..., sequence, "
        "...), got rank {}",
        rank);
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"), rank));
  if (axis == 0) {
    return ctx.error(
        "axis {} is the batch axis; the sequence axis must be "
        "1..{}",
        ctx.attr_int("axis"), rank - 1);
  }
  return axis;
}

Status check_dtypes(const OpContext& ctx, DType cache, DType update,
                    DType indices) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'past_cache'", cache, kAllTypes));
  SEQRT_RETURN_IF_ERROR(check_same_dtype(ctx, "input 'past_cache'", cache,
                                         "input 'update'", update));
  if (indices == DType::kUndefined) return Status::ok();
  return check_input_dtype(ctx, "input 'write_indices'", indices,
                           DTypeSet{DType::kI64});
}

// Shapes: update equals past_cache except on the axis, where it is not
// longer; write_indices is (batch). Unknown and symbolic dims pass.
Status check_shapes(const OpContext& ctx, const Shape& cache,
                    const Shape& update, const std::optional<Shape>& indices) {
  SEQRT_ASSIGN_OR_RETURN(
      int64_t axis, sequence_axis(ctx, static_cast<int64_t>(cache.rank())));
  if (update.rank() != cache.rank()) {
    return ctx.error("update {} must have the rank of past_cache {}",
                     update.to_string(), cache.to_string());
  }
  for (size_t a = 0; a < cache.rank(); ++a) {
    const Dim& c = cache[a];
    const Dim& u = update[a];
    if (!c.is_fixed() || !u.is_fixed()) continue;
    bool on_axis = static_cast<int64_t>(a) == axis;
    if (on_axis ? u.value() > c.value() : u.value() != c.value()) {
      return ctx.error(
          "update {} must match past_cache {} except on axis {}, where it "
          "may be shorter",
          update.to_string(), cache.to_string(), axis);
    }
  }
  if (indices.has_value()) {
    bool bad_batch = indices->rank() == 1 && (*indices)[0].is_fixed() &&
                     cache[0].is_fixed() &&
                     (*indices)[0].value() != cache[0].value();
    if (indices->rank() != 1 || bad_batch) {
      return ctx.error("write_indices must be (batch) = ({}), got {}",
                       cache[0].to_string(), indices->to_string());
    }
  }
  return Status::ok();
}

Status infer_tensor_scatter(InferContext& ctx) {
  DType indices = ctx.has_input(2) ? ctx.input_dtype(2) : DType::kUndefined;
  SEQRT_RETURN_IF_ERROR(
      check_dtypes(ctx, ctx.input_dtype(0), ctx.input_dtype(1), indices));
  const std::optional<Shape>& cache = ctx.input_shape(0);
  const std::optional<Shape>& update = ctx.input_shape(1);
  if (cache.has_value() && update.has_value()) {
    SEQRT_RETURN_IF_ERROR(check_shapes(
        ctx, *cache, *update,
        ctx.has_input(2) ? ctx.input_shape(2) : std::optional<Shape>()));
  }
  ctx.set_output(0, ctx.input_dtype(0), cache);
  return Status::ok();
}

Status run_tensor_scatter(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(TensorScatterSpec s, tensor_scatter_spec(ctx));
  const Tensor& cache = *ctx.input(0);
  const Tensor& update = *ctx.input(1);
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, cache.dtype(), cache.dims()));
  auto* dst = static_cast<uint8_t*>(out->mutable_data());
  const auto* src = static_cast<const uint8_t*>(update.data());
  std::memcpy(dst, cache.data(), cache.byte_size());
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t p = 0; p < s.prefix; ++p) {
      int64_t slab = b * s.prefix + p;
      for (int64_t t = 0; t < s.seq_len; ++t) {
        int64_t to = slab * s.max_len + s.position(b, t);
        int64_t from = slab * s.seq_len + t;
        std::memcpy(dst + to * s.row_bytes, src + from * s.row_bytes,
                    static_cast<size_t>(s.row_bytes));
      }
    }
  }
  return Status::ok();
}

}  // namespace

Result<TensorScatterSpec> tensor_scatter_spec(const KernelContext& ctx) {
  const Tensor& cache = *ctx.input(0);
  const Tensor& update = *ctx.input(1);
  const Tensor* indices = ctx.input(2);
  SEQRT_RETURN_IF_ERROR(
      check_dtypes(ctx, cache.dtype(), update.dtype(),
                   indices != nullptr ? indices->dtype() : DType::kUndefined));
  SEQRT_RETURN_IF_ERROR(
      check_shapes(ctx, cache.shape(), update.shape(),
                   indices != nullptr ? std::optional<Shape>(indices->shape())
                                      : std::optional<Shape>()));
  int64_t axis = sequence_axis(ctx, static_cast<int64_t>(cache.rank())).value();
  TensorScatterSpec s;
  s.batch = cache.dim(0);
  s.prefix = 1;
  for (int64_t a = 1; a < axis; ++a) s.prefix *= cache.dim(a);
  s.max_len = cache.dim(axis);
  s.seq_len = update.dim(axis);
  s.row_bytes = static_cast<int64_t>(dtype_size(cache.dtype()));
  for (size_t a = static_cast<size_t>(axis) + 1; a < cache.rank(); ++a) {
    s.row_bytes *= cache.dim(a);
  }
  s.circular = ctx.attr_string("mode") == "circular";
  for (int64_t b = 0; b < s.batch; ++b) {
    int64_t start = indices != nullptr ? indices->element_i64(b) : 0;
    if (start < 0) {
      return ctx.error("write_indices[{}] = {} must be >= 0", b, start);
    }
    if (!s.circular && start + s.seq_len > s.max_len) {
      return ctx.error(
          "write_indices[{}] = {} plus the update length {} exceeds the "
          "cache length {} (mode 'linear'; use 'circular' to wrap)",
          b, start, s.seq_len, s.max_len);
    }
    s.write_indices.push_back(start);
  }
  return s;
}

void register_tensor_scatter(OpRegistry& registry) {
  OpSchema s;
  s.domain = kOnnxDomain;
  s.name = "TensorScatter";
  s.doc = "writes an update into a fixed-capacity cache along one axis";
  s.inputs = {{"past_cache"}, {"update"}, {"write_indices", true}};
  s.outputs = {{"present_cache"}};
  s.attrs = {
      AttrSpec{"axis", AttrType::kInt, Attribute(-2), false, {}},
      AttrSpec{"mode",
               AttrType::kString,
               Attribute("linear"),
               false,
               {"linear", "circular"}},
  };
  s.infer = infer_tensor_scatter;
  s.reference = run_tensor_scatter;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
