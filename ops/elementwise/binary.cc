// Binary and variadic elementwise ops with numpy broadcasting: Add, Sub,
// Mul, Div, Max, Min, Sum, And, Or, Xor share one kernel that folds the
// inputs left to right with a scalar function; Pow has its own kernel since
// its exponent may have another dtype than its base.
#include <cctype>
#include <cmath>
#include <limits>
#include <string>

#include "ops/elementwise/elementwise.h"
#include "ops/registry.h"
#include "ops/symbolic_value.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

using FloatFn = double (*)(double, double);
// Writes a op b to *out; false when it is undefined (division by zero).
using IntFn = bool (*)(int64_t, int64_t, int64_t*);

struct FoldOp {
  const char* name;
  const char* doc;
  DTypeSet dtypes;   // the ONNX type constraint, shared by every input
  bool variadic;     // one or more inputs instead of exactly two
  FloatFn on_float;  // for float dtypes, in double
  IntFn on_int;      // for integer and bool dtypes, exact in int64
};

double max_f(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  return a > b ? a : b;
}

double min_f(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  return a < b ? a : b;
}

// Integer division truncates toward zero (C, ONNX Runtime); the one
// overflowing quotient, lowest / -1, wraps.
bool div_i(int64_t a, int64_t b, int64_t* out) {
  if (b == 0) return false;
  *out = b == -1 ? wrapping_neg(a) : a / b;
  return true;
}

const FoldOp kFoldOps[] = {
    {"Add", "a + b", kNumericTypes, false,
     [](double a, double b) { return a + b; },
     [](int64_t a, int64_t b, int64_t* out) {
       *out = wrapping_add(a, b);
       return true;
     }},
    {"Sub", "a - b", kNumericTypes, false,
     [](double a, double b) { return a - b; },
     [](int64_t a, int64_t b, int64_t* out) {
       *out = wrapping_sub(a, b);
       return true;
     }},
    {"Mul", "a * b", kNumericTypes, false,
     [](double a, double b) { return a * b; },
     [](int64_t a, int64_t b, int64_t* out) {
       *out = wrapping_mul(a, b);
       return true;
     }},
    {"Div", "a / b (integers truncate toward zero)", kNumericTypes, false,
     [](double a, double b) { return a / b; }, div_i},
    {"Max", "maximum of one or more inputs", kNumericTypes, true, max_f,
     [](int64_t a, int64_t b, int64_t* out) {
       *out = a > b ? a : b;
       return true;
     }},
    {"Min", "minimum of one or more inputs", kNumericTypes, true, min_f,
     [](int64_t a, int64_t b, int64_t* out) {
       *out = a < b ? a : b;
       return true;
     }},
    {"Sum", "sum of one or more inputs", kFloatTypes, true,
     [](double a, double b) { return a + b; }, nullptr},
    {"And", "logical and", kBoolTypes, false, nullptr,
     [](int64_t a, int64_t b, int64_t* out) {
       *out = (a != 0) && (b != 0);
       return true;
     }},
    {"Or", "logical or", kBoolTypes, false, nullptr,
     [](int64_t a, int64_t b, int64_t* out) {
       *out = (a != 0) || (b != 0);
       return true;
     }},
    {"Xor", "logical exclusive or", kBoolTypes, false, nullptr,
     [](int64_t a, int64_t b, int64_t* out) {
       *out = (a != 0) != (b != 0);
       return true;
     }},
};

std::string input_label(size_t i) { return "input " + std::to_string(i); }

// Every input has an allowed dtype, the same as input 0.
Status check_fold_dtypes(const OpContext& ctx, const std::vector<DType>& dtypes,
                         DTypeSet allowed) {
  for (size_t i = 0; i < dtypes.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(
        check_input_dtype(ctx, input_label(i), dtypes[i], allowed));
    SEQRT_RETURN_IF_ERROR(check_same_dtype(ctx, input_label(0), dtypes[0],
                                           input_label(i), dtypes[i]));
  }
  return Status::ok();
}

Status infer_fold(InferContext& ctx, DTypeSet allowed) {
  std::vector<DType> dtypes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    dtypes.push_back(ctx.input_dtype(i));
  }
  SEQRT_RETURN_IF_ERROR(check_fold_dtypes(ctx, dtypes, allowed));
  SEQRT_ASSIGN_OR_RETURN(std::optional<Shape> shape,
                         infer_broadcast_shape(ctx));
  ctx.set_output(0, dtypes[0], std::move(shape));
  return Status::ok();
}

Status run_fold_int(KernelContext& ctx, const FoldOp& op,
                    const BroadcastLoop& loop, Tensor& out) {
  for (int64_t i = 0; i < loop.num_elements(); ++i) {
    int64_t acc = ctx.input(0)->element_i64(loop.index(0, i));
    for (size_t k = 1; k < ctx.num_inputs(); ++k) {
      int64_t b = ctx.input(k)->element_i64(loop.index(k, i));
      if (!op.on_int(acc, b, &acc)) {
        return ctx.error("integer division by zero at output element {}", i);
      }
    }
    out.set_element_i64(i, acc);
  }
  return Status::ok();
}

Status run_fold(KernelContext& ctx, const FoldOp& op) {
  std::vector<DType> dtypes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("{} is missing", input_label(i));
    dtypes.push_back(ctx.input(i)->dtype());
  }
  SEQRT_RETURN_IF_ERROR(check_fold_dtypes(ctx, dtypes, op.dtypes));
  SEQRT_ASSIGN_OR_RETURN(BroadcastLoop loop, BroadcastLoop::create(ctx));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, dtypes[0], loop.out_dims()));
  if (!is_float(dtypes[0])) return run_fold_int(ctx, op, loop, *out);
  for (int64_t i = 0; i < loop.num_elements(); ++i) {
    double acc = ctx.input(0)->element_f64(loop.index(0, i));
    for (size_t k = 1; k < ctx.num_inputs(); ++k) {
      acc = op.on_float(acc, ctx.input(k)->element_f64(loop.index(k, i)));
    }
    out->set_element_f64(i, acc);
  }
  return Status::ok();
}

void register_fold_op(OpRegistry& registry, const FoldOp& op) {
  OpSchema s;
  s.name = op.name;
  s.doc = std::string(op.doc) + ", elementwise with numpy broadcasting";
  if (op.variadic) {
    s.inputs = {{"data_0", false, true}};
    std::string output = op.name;  // ONNX calls it "max", "min", "sum"
    for (char& ch : output) ch = static_cast<char>(std::tolower(ch));
    s.outputs = {{output}};
  } else {
    s.inputs = {{"A"}, {"B"}};
    s.outputs = {{"C"}};
  }
  s.infer = [dtypes = op.dtypes,
             name = std::string(op.name)](InferContext& ctx) {
    SEQRT_RETURN_IF_ERROR(infer_fold(ctx, dtypes));
    fold_symbolic(ctx, name);
    return Status::ok();
  };
  s.reference = [op](KernelContext& ctx) { return run_fold(ctx, op); };
  register_or_die(registry, std::move(s));
}

// Pow (opset 15): the base is float, i32 or i64, the exponent any numeric
// dtype; the result has the base's dtype.
constexpr DTypeSet kPowBaseTypes =
    kFloatTypes | DTypeSet{DType::kI32, DType::kI64};

Status check_pow_dtypes(const OpContext& ctx, DType base, DType exponent) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "base 'X'", base, kPowBaseTypes));
  return check_input_dtype(ctx, "exponent 'Y'", exponent, kNumericTypes);
}

// An integer power, exact (wrapping) for non-negative exponents; negative
// exponents give what truncating the real result gives.
bool int_pow(int64_t base, int64_t exponent, int64_t* out) {
  if (exponent < 0) {
    if (base == 0) return false;
    bool odd = exponent % 2 != 0;
    *out = base == 1 ? 1 : base == -1 ? (odd ? -1 : 1) : 0;
    return true;
  }
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    exponent >>= 1;
  }
  *out = result;
  return true;
}

Status infer_pow(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(
      check_pow_dtypes(ctx, ctx.input_dtype(0), ctx.input_dtype(1)));
  SEQRT_ASSIGN_OR_RETURN(std::optional<Shape> shape,
                         infer_broadcast_shape(ctx));
  ctx.set_output(0, ctx.input_dtype(0), std::move(shape));
  return Status::ok();
}

Status run_pow(KernelContext& ctx) {
  const Tensor& base = *ctx.input(0);
  const Tensor& exponent = *ctx.input(1);
  SEQRT_RETURN_IF_ERROR(check_pow_dtypes(ctx, base.dtype(), exponent.dtype()));
  SEQRT_ASSIGN_OR_RETURN(BroadcastLoop loop, BroadcastLoop::create(ctx));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, base.dtype(), loop.out_dims()));
  bool exact = is_integer(base.dtype()) && is_integer(exponent.dtype());
  for (int64_t i = 0; i < loop.num_elements(); ++i) {
    int64_t a = loop.index(0, i);
    int64_t b = loop.index(1, i);
    if (!exact) {
      out->set_element_f64(
          i, std::pow(base.element_f64(a), exponent.element_f64(b)));
      continue;
    }
    int64_t result = 0;
    if (!int_pow(base.element_i64(a), exponent.element_i64(b), &result)) {
      return ctx.error(
          "integer 0 raised to a negative power at output element {}", i);
    }
    out->set_element_i64(i, result);
  }
  return Status::ok();
}

void register_pow(OpRegistry& registry) {
  OpSchema s;
  s.name = "Pow";
  s.doc = "x to the power y, elementwise with numpy broadcasting";
  s.inputs = {{"X"}, {"Y"}};
  s.outputs = {{"Z"}};
  s.infer = infer_pow;
  s.reference = run_pow;
  register_or_die(registry, std::move(s));
}

}  // namespace

void register_binary_ops(OpRegistry& registry) {
  for (const FoldOp& op : kFoldOps) register_fold_op(registry, op);
  register_pow(registry);
}

}  // namespace seqrt
