// The unary elementwise ops: one table row each, since they differ only in
// the scalar function and the dtypes ONNX allows.
#include <cmath>
#include <string>

#include "ops/elementwise/elementwise.h"
#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

using FloatFn = double (*)(double);
using IntFn = int64_t (*)(int64_t);

struct UnaryOp {
  const char* name;
  const char* doc;
  DTypeSet dtypes;  // the ONNX type constraint
  FloatFn on_float;
  // Exact int64 form for integer and bool inputs; without it they go
  // through on_float and the result is truncated toward zero.
  IntFn on_int;
};

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;

double sigmoid(double x) {
  // Two forms so that exp never overflows.
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

double softplus(double x) {
  // log(1 + exp(x)) without overflow for large x.
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

double gelu_exact(double x) { return 0.5 * x * (1.0 + std::erf(x / kSqrt2)); }

double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

// NaN fails both comparisons and is returned as it is, as is 0.
double sign_f(double x) {
  if (x > 0) return 1.0;
  return x < 0 ? -1.0 : x;
}

int64_t sign_i(int64_t x) { return (x > 0) - (x < 0); }

const UnaryOp kUnaryOps[] = {
    {"Sqrt", "square root", kFloatTypes, [](double x) { return std::sqrt(x); },
     nullptr},
    {"Exp", "e to the power x", kFloatTypes,
     [](double x) { return std::exp(x); }, nullptr},
    {"Log", "natural logarithm", kFloatTypes,
     [](double x) { return std::log(x); }, nullptr},
    {"Neg", "-x", kSignedNumericTypes, [](double x) { return -x; },
     wrapping_neg},
    {"Abs", "|x|", kNumericTypes, [](double x) { return std::fabs(x); },
     [](int64_t x) { return x < 0 ? wrapping_neg(x) : x; }},
    {"Sign", "-1, 0 or 1 by the sign of x (NaN stays NaN)", kNumericTypes,
     sign_f, sign_i},
    {"Reciprocal", "1 / x", kFloatTypes, [](double x) { return 1.0 / x; },
     nullptr},
    {"Erf", "the error function", kNumericTypes,
     [](double x) { return std::erf(x); }, nullptr},
    {"Tanh", "hyperbolic tangent", kFloatTypes,
     [](double x) { return std::tanh(x); }, nullptr},
    {"Sigmoid", "1 / (1 + exp(-x))", kFloatTypes, sigmoid, nullptr},
    {"Relu", "max(x, 0)", kSignedNumericTypes,
     [](double x) { return x > 0 ? x : 0.0; },
     [](int64_t x) { return x > 0 ? x : int64_t{0}; }},
    {"Softplus", "log(exp(x) + 1)", kFloatTypes, softplus, nullptr},
    {"Sin", "sine", kFloatTypes, [](double x) { return std::sin(x); }, nullptr},
    {"Cos", "cosine", kFloatTypes, [](double x) { return std::cos(x); },
     nullptr},
    {"Floor", "largest integer <= x", kFloatTypes,
     [](double x) { return std::floor(x); }, nullptr},
    {"Ceil", "smallest integer >= x", kFloatTypes,
     [](double x) { return std::ceil(x); }, nullptr},
    {"Not", "logical not", kBoolTypes, nullptr,
     [](int64_t x) { return x == 0 ? int64_t{1} : int64_t{0}; }},
};

Status infer_unary(InferContext& ctx, DTypeSet dtypes) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'X'", ctx.input_dtype(0), dtypes));
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

Status run_unary(KernelContext& ctx, DTypeSet dtypes, FloatFn on_float,
                 IntFn on_int) {
  const Tensor& x = *ctx.input(0);
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'X'", x.dtype(), dtypes));
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, x.dtype(), x.dims()));
  if (on_int != nullptr && !is_float(x.dtype())) {
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      y->set_element_i64(i, on_int(x.element_i64(i)));
    }
    return Status::ok();
  }
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    y->set_element_f64(i, on_float(x.element_f64(i)));
  }
  return Status::ok();
}

void register_table_op(OpRegistry& registry, const UnaryOp& op) {
  OpSchema s;
  s.name = op.name;
  s.doc = std::string(op.doc) + ", elementwise";
  s.inputs = {{"X"}};
  s.outputs = {{"Y"}};
  s.infer = [dtypes = op.dtypes](InferContext& ctx) {
    return infer_unary(ctx, dtypes);
  };
  s.reference = [op](KernelContext& ctx) {
    return run_unary(ctx, op.dtypes, op.on_float, op.on_int);
  };
  register_or_die(registry, std::move(s));
}

// Gelu (opset 20) is the one unary op with an attribute.
void register_gelu(OpRegistry& registry) {
  OpSchema s;
  s.name = "Gelu";
  s.doc = "Gaussian error linear unit, exact or with the tanh approximation";
  s.inputs = {{"X"}};
  s.outputs = {{"Y"}};
  s.attrs = {AttrSpec{"approximate",
                      AttrType::kString,
                      Attribute("none"),
                      false,
                      {"none", "tanh"}}};
  s.infer = [](InferContext& ctx) { return infer_unary(ctx, kFloatTypes); };
  s.reference = [](KernelContext& ctx) -> Status {
    const std::string& approximate = ctx.attr_string("approximate");
    if (approximate != "none" && approximate != "tanh") {
      return ctx.error("approximate must be \"none\" or \"tanh\", got \"{}\"",
                       approximate);
    }
    FloatFn fn = approximate == "tanh" ? gelu_tanh : gelu_exact;
    return run_unary(ctx, kFloatTypes, fn, nullptr);
  };
  register_or_die(registry, std::move(s));
}

}  // namespace

void register_unary_ops(OpRegistry& registry) {
  for (const UnaryOp& op : kUnaryOps) register_table_op(registry, op);
  register_gelu(registry);
}

}  // namespace seqrt
