// seqrt::RungeKutta (OPS.md): euler y + F(y); rk2 (Heun) y + (F1 + F2)/2;
// rk2_gated y + g·F1 + (1 − g)·F2 with a learned per-position gate
// g = σ(concat(F1, F2)·gate_weight + gate_bias); classic rk4. The body F is
// a graph with one input and one output of y's type, shared by all stages.
#include "ops/sequence/runge_kutta.h"

#include <cmath>
#include <string>
#include <vector>

#include "ops/control/subgraph.h"
#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

Result<RungeKuttaMethod> parse_method(const OpContext& ctx) {
  const std::string& method = ctx.attr_string("method");
  if (method == "euler") return RungeKuttaMethod::kEuler;
  if (method == "rk2") return RungeKuttaMethod::kRk2;
  if (method == "rk2_gated") return RungeKuttaMethod::kRk2Gated;
  if (method == "rk4") return RungeKuttaMethod::kRk4;
  return ctx.error(
      "method must be \"euler\", \"rk2\", \"rk2_gated\" or \"rk4\", got "
      "\"{}\"",
      method);
}

// The gate inputs are present exactly for rk2_gated, with y's dtype.
Status check_gate_presence(const OpContext& ctx, RungeKuttaMethod method,
                           bool has_weight, bool has_bias) {
  bool gated = method == RungeKuttaMethod::kRk2Gated;
  if (gated && (!has_weight || !has_bias)) {
    return ctx.error("method \"rk2_gated\" needs gate_weight and gate_bias");
  }
  if (!gated && (has_weight || has_bias)) {
    return ctx.error(
        "gate_weight and gate_bias are only read by method \"rk2_gated\", "
        "not \"{}\"",
        ctx.attr_string("method"));
  }
  return Status::ok();
}

Status check_gate_shapes(const OpContext& ctx, const Shape& y,
                         const Shape& weight, const Shape& bias) {
  if (y.rank() == 0) return ctx.error("rk2_gated needs y of rank >= 1");
  const Dim& d = y[y.rank() - 1];
  bool weight_ok =
      weight.rank() == 1 && (!d.is_fixed() || !weight[0].is_fixed() ||
                             weight[0].value() == 2 * d.value());
  if (!weight_ok) {
    return ctx.error("gate_weight must be (2d) = ({}), got {}",
                     d.is_fixed() ? std::to_string(2 * d.value()) : "2d",
                     weight.to_string());
  }
  bool bias_ok =
      bias.rank() == 1 && (!bias[0].is_fixed() || bias[0].value() == 1);
  if (!bias_ok)
    return ctx.error("gate_bias must be (1), got {}", bias.to_string());
  return Status::ok();
}

Status check_gate_dtypes(const OpContext& ctx, DType y, DType weight,
                         DType bias) {
  SEQRT_RETURN_IF_ERROR(
      check_same_dtype(ctx, "input 'y'", y, "input 'gate_weight'", weight));
  return check_same_dtype(ctx, "input 'y'", y, "input 'gate_bias'", bias);
}

// The body's declared input must accept y, and its output must have y's
// type where both are known.
Status check_body_types(const InferContext& ctx, const Graph& body) {
  DType y = ctx.input_dtype(0);
  const Value& in = body.value(body.inputs[0]);
  if (in.dtype != DType::kUndefined) {
    SEQRT_RETURN_IF_ERROR(
        check_same_type(ctx, "the body's input", y, in.dtype));
  }
  SEQRT_ASSIGN_OR_RETURN(ValueInfo out,
                         subgraph_output_type(ctx, "body", body, 0));
  SEQRT_RETURN_IF_ERROR(
      check_same_type(ctx, "the body's output", y, out.dtype));
  const std::optional<Shape>& y_shape = ctx.input_shape(0);
  if (!y_shape.has_value() || !out.shape.has_value()) return Status::ok();
  bool same = out.shape->rank() == y_shape->rank();
  for (size_t i = 0; same && i < y_shape->rank(); ++i) {
    const Dim& a = (*y_shape)[i];
    const Dim& b = (*out.shape)[i];
    if (a.is_fixed() && b.is_fixed() && a.value() != b.value()) same = false;
  }
  if (!same) {
    return ctx.error("the body must keep y's shape {}, it gives {}",
                     y_shape->to_string(), out.shape->to_string());
  }
  return Status::ok();
}

Status infer_runge_kutta(InferContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(RungeKuttaMethod method, parse_method(ctx));
  SEQRT_ASSIGN_OR_RETURN(const Graph* body, subgraph_attr(ctx, "body", 1, 1));
  DType y = ctx.input_dtype(0);
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'y'", y, kFloatTypes));
  bool has_weight = ctx.has_input(1);
  bool has_bias = ctx.has_input(2);
  SEQRT_RETURN_IF_ERROR(check_gate_presence(ctx, method, has_weight, has_bias));
  if (has_weight) {
    SEQRT_RETURN_IF_ERROR(
        check_gate_dtypes(ctx, y, ctx.input_dtype(1), ctx.input_dtype(2)));
    const auto& ys = ctx.input_shape(0);
    const auto& ws = ctx.input_shape(1);
    const auto& bs = ctx.input_shape(2);
    if (ys.has_value() && ws.has_value() && bs.has_value()) {
      SEQRT_RETURN_IF_ERROR(check_gate_shapes(ctx, *ys, *ws, *bs));
    }
  }
  SEQRT_RETURN_IF_ERROR(check_body_types(ctx, *body));
  ctx.set_output(0, y, ctx.input_shape(0));
  return Status::ok();
}

// Runs the body on `input` and checks the stage it gives.
Result<Tensor> run_stage(const KernelContext& ctx, const Graph& body, int stage,
                         const Tensor& input, const Tensor& y) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                         run_body(ctx, "body", body, {input}));
  SEQRT_RETURN_IF_ERROR(check_stage_output(ctx, stage, out[0], y));
  return out[0];
}

// y + coefficient·f, in y's dtype, as the input of the next stage.
Result<Tensor> stage_input(const Tensor& y, const Tensor& f,
                           double coefficient) {
  SEQRT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(y.dtype(), y.dims()));
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    out.set_element_f64(i, y.element_f64(i) + coefficient * f.element_f64(i));
  }
  return out;
}

void accumulate(std::vector<double>& acc, const Tensor& f, double weight) {
  for (size_t i = 0; i < acc.size(); ++i) {
    acc[i] += weight * f.element_f64(static_cast<int64_t>(i));
  }
}

// g·F1 + (1 − g)·F2 added to acc, one gate per row of `width`.
void accumulate_gated(const KernelContext& ctx, std::vector<double>& acc,
                      const Tensor& f1, const Tensor& f2, int64_t width) {
  const Tensor& weight = *ctx.input(1);
  double bias = ctx.input(2)->element_f64(0);
  int64_t rows = width == 0 ? 0 : static_cast<int64_t>(acc.size()) / width;
  for (int64_t r = 0; r < rows; ++r) {
    double logit = bias;
    for (int64_t j = 0; j < width; ++j) {
      logit += f1.element_f64(r * width + j) * weight.element_f64(j);
      logit += f2.element_f64(r * width + j) * weight.element_f64(width + j);
    }
    double g = 1.0 / (1.0 + std::exp(-logit));
    for (int64_t j = 0; j < width; ++j) {
      int64_t i = r * width + j;
      acc[i] += g * f1.element_f64(i) + (1.0 - g) * f2.element_f64(i);
    }
  }
}

Status run_runge_kutta(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(RungeKuttaSetup setup, check_runge_kutta(ctx));
  const Tensor& y = *ctx.input(0);
  const Graph& body = *setup.body;
  std::vector<double> acc(static_cast<size_t>(y.num_elements()));
  for (size_t i = 0; i < acc.size(); ++i) {
    acc[i] = y.element_f64(static_cast<int64_t>(i));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor f1, run_stage(ctx, body, 1, y, y));
  switch (setup.method) {
    case RungeKuttaMethod::kEuler:
      accumulate(acc, f1, 1.0);
      break;
    case RungeKuttaMethod::kRk2:
    case RungeKuttaMethod::kRk2Gated: {
      SEQRT_ASSIGN_OR_RETURN(Tensor in2, stage_input(y, f1, 1.0));
      SEQRT_ASSIGN_OR_RETURN(Tensor f2, run_stage(ctx, body, 2, in2, y));
      if (setup.method == RungeKuttaMethod::kRk2) {
        accumulate(acc, f1, 0.5);
        accumulate(acc, f2, 0.5);
      } else {
        accumulate_gated(ctx, acc, f1, f2, setup.width);
      }
      break;
    }
    case RungeKuttaMethod::kRk4: {
      // Butcher tableau of the classic method: c = (0, ½, ½, 1),
      // b = (1, 2, 2, 1)/6.
      const double c[] = {0.5, 0.5, 1.0};
      const double b[] = {1.0 / 6, 2.0 / 6, 2.0 / 6, 1.0 / 6};
      Tensor f = f1;
      for (int stage = 2; stage <= 4; ++stage) {
        accumulate(acc, f, b[stage - 2]);
        SEQRT_ASSIGN_OR_RETURN(Tensor in, stage_input(y, f, c[stage - 2]));
        SEQRT_ASSIGN_OR_RETURN(f, run_stage(ctx, body, stage, in, y));
      }
      accumulate(acc, f, b[3]);
      break;
    }
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, y.dtype(), y.dims()));
  for (size_t i = 0; i < acc.size(); ++i) {
    out->set_element_f64(static_cast<int64_t>(i), acc[i]);
  }
  return Status::ok();
}

}  // namespace

int runge_kutta_stages(RungeKuttaMethod method) {
  switch (method) {
    case RungeKuttaMethod::kEuler:
      return 1;
    case RungeKuttaMethod::kRk2:
    case RungeKuttaMethod::kRk2Gated:
      return 2;
    case RungeKuttaMethod::kRk4:
      return 4;
  }
  return 0;
}

Result<RungeKuttaSetup> check_runge_kutta(const KernelContext& ctx) {
  RungeKuttaSetup setup;
  SEQRT_ASSIGN_OR_RETURN(setup.method, parse_method(ctx));
  SEQRT_ASSIGN_OR_RETURN(setup.body, subgraph_attr(ctx, "body", 1, 1));
  const Tensor& y = *ctx.input(0);
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'y'", y.dtype(), kFloatTypes));
  const Tensor* weight = ctx.input(1);
  const Tensor* bias = ctx.input(2);
  SEQRT_RETURN_IF_ERROR(check_gate_presence(
      ctx, setup.method, weight != nullptr, bias != nullptr));
  if (weight != nullptr) {
    SEQRT_RETURN_IF_ERROR(
        check_gate_dtypes(ctx, y.dtype(), weight->dtype(), bias->dtype()));
    SEQRT_RETURN_IF_ERROR(
        check_gate_shapes(ctx, y.shape(), weight->shape(), bias->shape()));
  }
  setup.width = y.rank() == 0 ? 1 : y.dims().back();
  setup.positions = setup.width == 0 ? 0 : y.num_elements() / setup.width;
  return setup;
}

Status check_stage_output(const KernelContext& ctx, int stage, const Tensor& f,
                          const Tensor& y) {
  if (f.dtype() != y.dtype() || f.dims() != y.dims()) {
    return ctx.error("the body must keep y's type {}{}, stage {} gave {}{}",
                     dtype_name(y.dtype()), dims_to_string(y.dims()), stage,
                     dtype_name(f.dtype()), dims_to_string(f.dims()));
  }
  return Status::ok();
}

void register_runge_kutta(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "RungeKutta";
  s.doc = "one explicit Runge-Kutta step y + Σ b_i·F_i of a body graph F";
  s.inputs = {{"y"}, {"gate_weight", true}, {"gate_bias", true}};
  s.outputs = {{"y_next"}};
  s.attrs = {
      AttrSpec{"body", AttrType::kGraph, std::nullopt, true, {}},
      AttrSpec{"method",
               AttrType::kString,
               std::nullopt,
               true,
               {"euler", "rk2", "rk2_gated", "rk4"}},
  };
  s.infer = infer_runge_kutta;
  s.reference = run_runge_kutta;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
