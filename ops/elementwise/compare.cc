// Comparisons with numpy broadcasting and a bool result: Equal, Less,
// Greater, LessOrEqual, GreaterOrEqual. They differ only in the relation.
#include <string>

#include "ops/elementwise/elementwise.h"
#include "ops/registry.h"
#include "ops/symbolic_value.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

struct CompareOp {
  const char* name;
  const char* doc;
  DTypeSet dtypes;
  bool (*on_float)(double, double);
  // Integers compare in int64, so large i64 values stay exact.
  bool (*on_int)(int64_t, int64_t);
};

const CompareOp kCompareOps[] = {
    {"Equal", "a == b", kAllTypes, [](double a, double b) { return a == b; },
     [](int64_t a, int64_t b) { return a == b; }},
    {"Less", "a < b", kNumericTypes, [](double a, double b) { return a < b; },
     [](int64_t a, int64_t b) { return a < b; }},
    {"Greater", "a > b", kNumericTypes,
     [](double a, double b) { return a > b; },
     [](int64_t a, int64_t b) { return a > b; }},
    {"LessOrEqual", "a <= b", kNumericTypes,
     [](double a, double b) { return a <= b; },
     [](int64_t a, int64_t b) { return a <= b; }},
    {"GreaterOrEqual", "a >= b", kNumericTypes,
     [](double a, double b) { return a >= b; },
     [](int64_t a, int64_t b) { return a >= b; }},
};

Status check_compare_dtypes(const OpContext& ctx, DType a, DType b,
                            DTypeSet allowed) {
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'A'", a, allowed));
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'B'", b, allowed));
  return check_same_dtype(ctx, "input 'A'", a, "input 'B'", b);
}

Status infer_compare(InferContext& ctx, DTypeSet allowed) {
  SEQRT_RETURN_IF_ERROR(check_compare_dtypes(ctx, ctx.input_dtype(0),
                                             ctx.input_dtype(1), allowed));
  SEQRT_ASSIGN_OR_RETURN(std::optional<Shape> shape,
                         infer_broadcast_shape(ctx));
  ctx.set_output(0, DType::kBool, std::move(shape));
  return Status::ok();
}

Status run_compare(KernelContext& ctx, const CompareOp& op) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  SEQRT_RETURN_IF_ERROR(
      check_compare_dtypes(ctx, a.dtype(), b.dtype(), op.dtypes));
  SEQRT_ASSIGN_OR_RETURN(BroadcastLoop loop, BroadcastLoop::create(ctx));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, DType::kBool, loop.out_dims()));
  bool exact = !is_float(a.dtype());
  for (int64_t i = 0; i < loop.num_elements(); ++i) {
    int64_t ia = loop.index(0, i);
    int64_t ib = loop.index(1, i);
    bool result = exact ? op.on_int(a.element_i64(ia), b.element_i64(ib))
                        : op.on_float(a.element_f64(ia), b.element_f64(ib));
    out->set_element_i64(i, result ? 1 : 0);
  }
  return Status::ok();
}

void register_compare_op(OpRegistry& registry, const CompareOp& op) {
  OpSchema s;
  s.name = op.name;
  s.doc = std::string(op.doc) +
          ", elementwise with numpy broadcasting; bool result";
  s.inputs = {{"A"}, {"B"}};
  s.outputs = {{"C"}};
  s.infer = [dtypes = op.dtypes,
             name = std::string(op.name)](InferContext& ctx) {
    SEQRT_RETURN_IF_ERROR(infer_compare(ctx, dtypes));
    if (name == "Equal") equal_symbolic(ctx);
    return Status::ok();
  };
  s.reference = [op](KernelContext& ctx) { return run_compare(ctx, op); };
  register_or_die(registry, std::move(s));
}

}  // namespace

void register_compare_ops(OpRegistry& registry) {
  for (const CompareOp& op : kCompareOps) register_compare_op(registry, op);
}

}  // namespace seqrt
