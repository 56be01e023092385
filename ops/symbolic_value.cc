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

namespace {

// 1 or 0 when a == b is decided, -1 when not.
int decide_equal(const DimExpr& a, const DimExpr& b) {
  if (a.is_unknown() || b.is_unknown()) return -1;
  if (std::optional<int64_t> difference = (a - b).constant()) {
    return *difference == 0 ? 1 : 0;
  }
  std::optional<int64_t> ca = a.constant();
  std::optional<int64_t> cb = b.constant();
  if ((cb && *cb < 0 && a.is_nonnegative()) ||
      (ca && *ca < 0 && b.is_nonnegative())) {
    return 0;
  }
  return -1;
}

// Broadcasts two element lists of rank <= 1; 0 when they do not match.
size_t broadcast_length(size_t a, size_t b) {
  if (a == b || b == 1) return a;
  return a == 1 ? b : 0;
}

}  // namespace

void equal_symbolic(InferContext& ctx) {
  const ValueInfo& out = ctx.outputs()[0];
  if (!out.shape || out.shape->rank() > 1) return;
  std::optional<std::vector<DimExpr>> a = ctx.input_symbolic(0);
  std::optional<std::vector<DimExpr>> b = ctx.input_symbolic(1);
  if (!a || !b || (ctx.input_value(0) && ctx.input_value(1))) return;
  size_t n = broadcast_length(a->size(), b->size());
  if (n == 0) return;
  std::vector<bool> decided;
  for (size_t j = 0; j < n; ++j) {
    int equal = decide_equal((*a)[a->size() == 1 ? 0 : j],
                             (*b)[b->size() == 1 ? 0 : j]);
    if (equal < 0) return;
    decided.push_back(equal == 1);
  }
  std::vector<int64_t> dims;
  if (out.shape->rank() == 1) dims.push_back(static_cast<int64_t>(n));
  if (out.shape->rank() == 0 && n != 1) return;
  ctx.set_output_value(0, Tensor::from_vector<bool>(dims, decided));
}

void where_symbolic(InferContext& ctx) {
  if (!output_is_small_int(ctx)) return;
  const Tensor* cond = ctx.input_value(0);
  std::optional<std::vector<DimExpr>> x = ctx.input_symbolic(1);
  std::optional<std::vector<DimExpr>> y = ctx.input_symbolic(2);
  if (cond == nullptr || cond->dtype() != DType::kBool || cond->rank() > 1 ||
      !x || !y) {
    return;
  }
  size_t c = static_cast<size_t>(cond->num_elements());
  size_t n = broadcast_length(broadcast_length(c, x->size()), y->size());
  if (n == 0) return;
  const bool* flags = cond->data_as<bool>();
  std::vector<DimExpr> out;
  for (size_t j = 0; j < n; ++j) {
    out.push_back(flags[c == 1 ? 0 : j] ? (*x)[x->size() == 1 ? 0 : j]
                                        : (*y)[y->size() == 1 ? 0 : j]);
  }
  ctx.set_output_symbolic(0, std::move(out));
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
