// Mod (opset 13): the remainder of a / b with numpy broadcasting. With
// fmod=0 (integers only) the remainder takes the divisor's sign, as in
// Python; with fmod=1 it takes the dividend's, as C's fmod and %. It lives
// apart from the binary fold ops since the attribute picks the function and
// restricts the dtypes.
#include <cmath>

#include "ops/elementwise/elementwise.h"
#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

Status check_mod(const OpContext& ctx, DType a, DType b) {
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'A'", a, kNumericTypes));
  SEQRT_RETURN_IF_ERROR(check_same_dtype(ctx, "input 'A'", a, "input 'B'", b));
  int64_t fmod = ctx.attr_int("fmod");
  if (fmod != 0 && fmod != 1) {
    return ctx.error("attribute 'fmod' must be 0 or 1, got {}", fmod);
  }
  if (fmod == 0 && is_float(a)) {
    return ctx.error("{} inputs need fmod=1 (fmod=0 is for integers only)",
                     dtype_name(a));
  }
  return Status::ok();
}

// The remainder with the dividend's sign; lowest % -1 is 0, which C++
// leaves undefined.
int64_t c_remainder(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }

// The remainder with the divisor's sign.
int64_t floor_remainder(int64_t a, int64_t b) {
  int64_t r = c_remainder(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

Status infer_mod(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(check_mod(ctx, ctx.input_dtype(0), ctx.input_dtype(1)));
  SEQRT_ASSIGN_OR_RETURN(std::optional<Shape> shape,
                         infer_broadcast_shape(ctx));
  ctx.set_output(0, ctx.input_dtype(0), std::move(shape));
  return Status::ok();
}

Status run_mod(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  SEQRT_RETURN_IF_ERROR(check_mod(ctx, a.dtype(), b.dtype()));
  SEQRT_ASSIGN_OR_RETURN(BroadcastLoop loop, BroadcastLoop::create(ctx));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, a.dtype(), loop.out_dims()));
  if (is_float(a.dtype())) {
    for (int64_t i = 0; i < loop.num_elements(); ++i) {
      out->set_element_f64(i, std::fmod(a.element_f64(loop.index(0, i)),
                                        b.element_f64(loop.index(1, i))));
    }
    return Status::ok();
  }
  bool c_style = ctx.attr_int("fmod") == 1;
  for (int64_t i = 0; i < loop.num_elements(); ++i) {
    int64_t x = a.element_i64(loop.index(0, i));
    int64_t y = b.element_i64(loop.index(1, i));
    if (y == 0) {
      return ctx.error("integer modulo by zero at output element {}", i);
    }
    out->set_element_i64(i,
                         c_style ? c_remainder(x, y) : floor_remainder(x, y));
  }
  return Status::ok();
}

}  // namespace

void register_mod(OpRegistry& registry) {
  OpSchema s;
  s.name = "Mod";
  s.doc =
      "remainder of a / b, elementwise with numpy broadcasting (sign of b, "
      "or of a with fmod=1)";
  s.inputs = {{"A"}, {"B"}};
  s.outputs = {{"C"}};
  s.attrs = {{"fmod", AttrType::kInt, Attribute(0)}};
  s.infer = infer_mod;
  s.reference = run_mod;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
