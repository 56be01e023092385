#include "ops/symbolic_value.h"

namespace seqrt {
namespace {

bool output_is_small_int(const InferContext& ctx) {
  const ValueInfo& out = ctx.outputs()[0];
  return (out.dtype == DType::kI64 || out.dtype == DType::kI32) && out.shape &&
         out.shape->rank() <= 1;
}

DimExpr apply(const std::string& op, const DimExpr& a, const DimExpr& b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return floor_div(a, b);
  if (op == "Max") return max(a, b);
  if (op == "Min") return min(a, b);
  return DimExpr::unknown();
}

}  // namespace

void forward_symbolic(InferContext& ctx) {
  if (!output_is_small_int(ctx)) return;
  std::optional<std::vector<DimExpr>> in = ctx.input_symbolic(0);
  if (in) ctx.set_output_symbolic(0, std::move(*in));
}

void fold_symbolic(InferContext& ctx, const std::string& op) {
  if (!output_is_small_int(ctx) || ctx.num_inputs() == 0) return;
  std::optional<std::vector<DimExpr>> acc = ctx.input_symbolic(0);
  for (size_t k = 1; acc && k < ctx.num_inputs(); ++k) {
    std::optional<std::vector<DimExpr>> next = ctx.input_symbolic(k);
    if (!next) return;
    if (acc->size() != next->size() && acc->size() != 1 && next->size() != 1) {
      return;
    }
    size_t n = std::max(acc->size(), next->size());
    std::vector<DimExpr> out;
    for (size_t j = 0; j < n; ++j) {
      out.push_back(apply(op, (*acc)[acc->size() == 1 ? 0 : j],
                          (*next)[next->size() == 1 ? 0 : j]));
    }
    acc = std::move(out);
  }
  if (acc) ctx.set_output_symbolic(0, std::move(*acc));
}

std::optional<std::vector<Dim>> symbolic_shape_input(const InferContext& ctx,
                                                     size_t i) {
  std::optional<std::vector<DimExpr>> elements = ctx.input_symbolic(i);
  if (!elements) return std::nullopt;
  std::vector<Dim> out;
  for (const DimExpr& element : *elements) out.push_back(element.to_dim());
  return out;
}

DimExpr symbolic_scalar_input(const InferContext& ctx, size_t i) {
  std::optional<std::vector<DimExpr>> elements = ctx.input_symbolic(i);
  if (!elements || elements->size() != 1) return DimExpr::unknown();
  return (*elements)[0];
}

}  // namespace seqrt
