// RotaryEmbedding (opset 23): rotates pairs of each head's first
// rotary_embedding_dim channels by position-dependent angles.
//
// X is (batch, seq, hidden) with hidden = num_heads * head_size, or
// (batch, num_heads, seq, head_size). With position_ids (batch, seq) the
// caches are (max_position + 1, rotary_dim / 2) and indexed by position;
// without, they are (batch, seq, rotary_dim / 2). Pair i is channels
// (i, i + rotary_dim / 2), or (2i, 2i + 1) when interleaved; it becomes
// (x1 cos - x2 sin, x1 sin + x2 cos). Channels past rotary_dim pass through.
#include <algorithm>
#include <string>

#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

Status check_dtypes(const OpContext& ctx, DType x, DType cos, DType sin,
                    DType positions) {
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'X'", x, kFloatTypes));
  SEQRT_RETURN_IF_ERROR(
      check_same_dtype(ctx, "input 'X'", x, "input 'cos_cache'", cos));
  SEQRT_RETURN_IF_ERROR(
      check_same_dtype(ctx, "input 'X'", x, "input 'sin_cache'", sin));
  if (positions == DType::kUndefined) return Status::ok();
  return check_input_dtype(ctx, "input 'position_ids'", positions,
                           DTypeSet{DType::kI64});
}

// False only when both dims are fixed and differ.
bool may_equal(const Dim& a, const Dim& b) {
  return !(a.is_fixed() && b.is_fixed() && a != b);
}

// What the attributes and X's shape say about one head.
struct HeadInfo {
  Dim batch, seq;
  Dim head_size;   // unknown when X's last dim or num_heads is unknown
  Dim rotary_dim;  // the rotated channels, <= head_size
};

Result<HeadInfo> head_info(const OpContext& ctx, const Shape& x) {
  if (x.rank() != 3 && x.rank() != 4) {
    return ctx.error(
        "input 'X' must be (batch, seq, hidden) or (batch, num_heads, seq, "
        "head_size), got shape {}",
        x.to_string());
  }
  int64_t num_heads = ctx.attr_int("num_heads");
  int64_t rotary = ctx.attr_int("rotary_embedding_dim");
  if (num_heads < 0 || rotary < 0) {
    return ctx.error(
        "num_heads ({}) and rotary_embedding_dim ({}) must not be negative",
        num_heads, rotary);
  }
  HeadInfo info{x[0], x[x.rank() == 3 ? 1 : 2], x[x.rank() - 1], Dim()};
  if (x.rank() == 3) {
    if (num_heads == 0) {
      return ctx.error("num_heads is required when X is 3-D, got shape {}",
                       x.to_string());
    }
    const Dim& hidden = x[2];
    if (hidden.is_fixed() && hidden.value() % num_heads != 0) {
      return ctx.error("hidden size {} is not a multiple of num_heads {}",
                       hidden.value(), num_heads);
    }
    info.head_size =
        hidden.is_fixed() ? Dim(hidden.value() / num_heads) : Dim::unknown();
  }
  info.rotary_dim = rotary != 0 ? Dim(rotary) : info.head_size;
  if (!info.rotary_dim.is_fixed()) return info;
  int64_t rot = info.rotary_dim.value();
  if (rot % 2 != 0 || rot == 0 ||
      (info.head_size.is_fixed() && rot > info.head_size.value())) {
    return ctx.error(
        "rotary_embedding_dim {} must be even, positive and at most the head "
        "size {}",
        rot, info.head_size.to_string());
  }
  return info;
}

Status check_caches(const OpContext& ctx, const HeadInfo& info,
                    const Shape& cos, const Shape& sin,
                    const Shape* positions) {
  if (cos != sin && (cos.rank() != sin.rank() ||
                     !std::equal(cos.dims().begin(), cos.dims().end(),
                                 sin.dims().begin(), may_equal))) {
    return ctx.error("cos_cache {} and sin_cache {} must have one shape",
                     cos.to_string(), sin.to_string());
  }
  Dim half = info.rotary_dim.is_fixed() ? Dim(info.rotary_dim.value() / 2)
                                        : Dim::unknown();
  if (positions != nullptr) {
    if (positions->rank() != 2 || !may_equal((*positions)[0], info.batch) ||
        !may_equal((*positions)[1], info.seq)) {
      return ctx.error("position_ids must be (batch, seq) = ({},{}), got {}",
                       info.batch.to_string(), info.seq.to_string(),
                       positions->to_string());
    }
    if (cos.rank() != 2 || !may_equal(cos[1], half)) {
      return ctx.error(
          "with position_ids, the caches must be (max_position + 1, rotary_dim "
          "/ 2 = {}), got {}",
          half.to_string(), cos.to_string());
    }
    return Status::ok();
  }
  if (cos.rank() != 3 || !may_equal(cos[0], info.batch) ||
      !may_equal(cos[1], info.seq) || !may_equal(cos[2], half)) {
    return ctx.error(
        "without position_ids, the caches must be (batch, seq, rotary_dim / 2) "
        "= ({},{},{}), got {}",
        info.batch.to_string(), info.seq.to_string(), half.to_string(),
        cos.to_string());
  }
  return Status::ok();
}

Status infer_rotary(InferContext& ctx) {
  bool has_positions = ctx.has_input(3);
  SEQRT_RETURN_IF_ERROR(check_dtypes(
      ctx, ctx.input_dtype(0), ctx.input_dtype(1), ctx.input_dtype(2),
      has_positions ? ctx.input_dtype(3) : DType::kUndefined));
  const std::optional<Shape>& x = ctx.input_shape(0);
  if (x.has_value()) {
    SEQRT_ASSIGN_OR_RETURN(HeadInfo info, head_info(ctx, *x));
    const auto& cos = ctx.input_shape(1);
    const auto& sin = ctx.input_shape(2);
    bool positions_known = !has_positions || ctx.input_shape(3).has_value();
    if (cos.has_value() && sin.has_value() && positions_known) {
      SEQRT_RETURN_IF_ERROR(
          check_caches(ctx, info, *cos, *sin,
                       has_positions ? &*ctx.input_shape(3) : nullptr));
    }
  }
  ctx.set_output(0, ctx.input_dtype(0), x);
  return Status::ok();
}

// Rotates one head vector of X (channel c at x_base + c) into Y.
void rotate_head(const Tensor& x, const Tensor& cos, const Tensor& sin,
                 int64_t x_base, int64_t cache_base, int64_t head_size,
                 int64_t rotary_dim, bool interleaved, Tensor& y) {
  int64_t half = rotary_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    int64_t first = interleaved ? 2 * i : i;
    int64_t second = interleaved ? 2 * i + 1 : i + half;
    double x1 = x.element_f64(x_base + first);
    double x2 = x.element_f64(x_base + second);
    double c = cos.element_f64(cache_base + i);
    double s = sin.element_f64(cache_base + i);
    y.set_element_f64(x_base + first, x1 * c - x2 * s);
    y.set_element_f64(x_base + second, x1 * s + x2 * c);
  }
  for (int64_t ch = rotary_dim; ch < head_size; ++ch) {
    y.set_element_f64(x_base + ch, x.element_f64(x_base + ch));
  }
}

Status run_rotary(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& cos = *ctx.input(1);
  const Tensor& sin = *ctx.input(2);
  const Tensor* positions = ctx.input(3);
  SEQRT_RETURN_IF_ERROR(
      check_dtypes(ctx, x.dtype(), cos.dtype(), sin.dtype(),
                   positions ? positions->dtype() : DType::kUndefined));
  SEQRT_ASSIGN_OR_RETURN(HeadInfo info, head_info(ctx, x.shape()));
  Shape positions_shape = positions ? positions->shape() : Shape();
  SEQRT_RETURN_IF_ERROR(check_caches(ctx, info, cos.shape(), sin.shape(),
                                     positions ? &positions_shape : nullptr));
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, x.dtype(), x.dims()));
  int64_t batch = info.batch.value(), seq = info.seq.value();
  int64_t head_size = info.head_size.value();
  int64_t rotary_dim = info.rotary_dim.value();
  int64_t heads = x.rank() == 4 ? x.dim(1) : ctx.attr_int("num_heads");
  int64_t half = rotary_dim / 2;
  bool interleaved = ctx.attr_int("interleaved") != 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < seq; ++s) {
      int64_t row = b * seq + s;  // cache row without position_ids
      if (positions != nullptr) {
        row = positions->element_i64(b * seq + s);
        if (row < 0 || row >= cos.dim(0)) {
          return ctx.error(
              "position_ids[{},{}] = {} is outside the caches' [0, {})", b, s,
              row, cos.dim(0));
        }
      }
      for (int64_t h = 0; h < heads; ++h) {
        int64_t x_base = x.rank() == 4
                             ? ((b * heads + h) * seq + s) * head_size
                             : ((b * seq + s) * heads + h) * head_size;
        rotate_head(x, cos, sin, x_base, row * half, head_size, rotary_dim,
                    interleaved, *y);
      }
    }
  }
  return Status::ok();
}

}  // namespace

void register_rotary_embedding(OpRegistry& registry) {
  OpSchema s;
  s.name = "RotaryEmbedding";
  s.doc = "rotary position embedding (RoPE) of X";
  s.inputs = {{"X"}, {"cos_cache"}, {"sin_cache"}, {"position_ids", true}};
  s.outputs = {{"Y"}};
  s.attrs = {
      AttrSpec{"interleaved", AttrType::kInt, Attribute(0), false, {}},
      AttrSpec{"num_heads", AttrType::kInt, Attribute(0), false, {}},
      AttrSpec{"rotary_embedding_dim", AttrType::kInt, Attribute(0), false, {}},
  };
  s.infer = infer_rotary;
  s.reference = run_rotary;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
