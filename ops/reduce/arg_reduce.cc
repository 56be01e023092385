// ArgMax and ArgMin (opset 13): the i64 index of the largest (smallest)
// element along `axis`, the first one on ties unless select_last_index=1.
// NaN counts as beyond every number, as numpy's argmax and argmin treat it.
#include <cmath>
#include <type_traits>
#include <vector>

#include "ops/registry.h"
#include "ops/type_support.h"
#include "ops/util.h"

namespace seqrt {
namespace {

struct ArgOp {
  const char* name;
  const char* doc;
  bool is_max;
};

const ArgOp kArgOps[] = {
    {"ArgMax", "index of the largest element along `axis`", true},
    {"ArgMin", "index of the smallest element along `axis`", false},
};

// Whether `x`, met after `best`, takes its place. Values arrive as double
// for float dtypes and as int64 (exact) for integer dtypes.
template <typename T>
bool replaces(T x, T best, bool is_max, bool last) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(best)) return last && std::isnan(x);
    if (std::isnan(x)) return true;
  }
  if (x == best) return last;
  return is_max ? x > best : x < best;
}

template <typename T>
T load(const Tensor& x, int64_t i) {
  if constexpr (std::is_floating_point_v<T>) {
    return x.element_f64(i);
  } else {
    return x.element_i64(i);
  }
}

template <typename T>
void arg_reduce_into(const Tensor& x, const AxisSplit& s, bool is_max,
                     bool last, Tensor& out) {
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      int64_t base = o * s.n * s.inner + i;
      int64_t best_at = 0;
      T best = load<T>(x, base);
      for (int64_t k = 1; k < s.n; ++k) {
        T value = load<T>(x, base + k * s.inner);
        if (replaces(value, best, is_max, last)) {
          best = value;
          best_at = k;
        }
      }
      out.set_element_i64(o * s.inner + i, best_at);
    }
  }
}

Status infer_arg(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'data'",
                                          ctx.input_dtype(0), kNumericTypes));
  const std::optional<Shape>& in = ctx.input_shape(0);
  if (!in.has_value()) {
    ctx.set_output(0, DType::kI64, std::nullopt);
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(in->rank())));
  if ((*in)[axis] == Dim(0)) {
    return ctx.error("axis {} has size 0, so there is no element to pick",
                     axis);
  }
  std::vector<Dim> dims = in->dims();
  if (ctx.attr_int("keepdims") != 0) {
    dims[axis] = Dim(1);
  } else {
    dims.erase(dims.begin() + axis);
  }
  ctx.set_output(0, DType::kI64, Shape(std::move(dims)));
  return Status::ok();
}

Status run_arg(KernelContext& ctx, bool is_max) {
  const Tensor& x = *ctx.input(0);
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'data'", x.dtype(), kNumericTypes));
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(x.rank())));
  if (x.dim(axis) == 0) {
    return ctx.error("axis {} has size 0, so there is no element to pick",
                     axis);
  }
  std::vector<int64_t> dims = x.dims();
  if (ctx.attr_int("keepdims") != 0) {
    dims[axis] = 1;
  } else {
    dims.erase(dims.begin() + axis);
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, DType::kI64, dims));
  AxisSplit split = split_around_axis(x.dims(), axis);
  bool last = ctx.attr_int("select_last_index") != 0;
  if (is_float(x.dtype())) {
    arg_reduce_into<double>(x, split, is_max, last, *out);
  } else {
    arg_reduce_into<int64_t>(x, split, is_max, last, *out);
  }
  return Status::ok();
}

void register_arg_op(OpRegistry& registry, const ArgOp& op) {
  OpSchema s;
  s.name = op.name;
  s.doc = op.doc;
  s.inputs = {{"data"}};
  s.outputs = {{"reduced"}};
  s.attrs = {{"axis", AttrType::kInt, Attribute(0)},
             {"keepdims", AttrType::kInt, Attribute(1)},
             {"select_last_index", AttrType::kInt, Attribute(0)}};
  s.infer = infer_arg;
  s.reference = [is_max = op.is_max](KernelContext& ctx) {
    return run_arg(ctx, is_max);
  };
  register_or_die(registry, std::move(s));
}

}  // namespace

void register_arg_reduce_ops(OpRegistry& registry) {
  for (const ArgOp& op : kArgOps) register_arg_op(registry, op);
}

}  // namespace seqrt
