// Einsum (numpy semantics): "ij,jk->ik". Letters label dims; a letter
// repeated within one operand takes its diagonal; letters missing from the
// output are summed; "..." stands for broadcast dims. Without "->" the
// output is "..." followed by the letters used exactly once, sorted.
#include <algorithm>
#include <cctype>
#include <map>

#include "ops/linalg/einsum.h"
#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

constexpr int kEllipsis = kEinsumEllipsis;
// In a parsed term (before ranks are known), the ellipsis as a whole.
constexpr int kWholeEllipsis = -1;

using Term = EinsumTerm;

struct Parsed {
  std::vector<Term> inputs;
  std::optional<Term> output;  // nullopt: implicit
};

Result<Term> parse_term(const OpContext& ctx, const std::string& text) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (std::isalpha(static_cast<unsigned char>(ch))) {
      term.push_back(ch);
    } else if (text.compare(i, 3, "...") == 0 &&
               std::count(term.begin(), term.end(), kWholeEllipsis) == 0) {
      term.push_back(kWholeEllipsis);
      i += 2;
    } else {
      return ctx.error(
          "equation term '{}' must hold letters and at most one '...'", text);
    }
  }
  return term;
}

Result<Parsed> parse_equation(const OpContext& ctx, size_t num_inputs) {
  std::string equation;
  for (char ch : ctx.attr_string("equation")) {
    if (ch != ' ') equation += ch;
  }
  Parsed parsed;
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  if (arrow != std::string::npos) {
    SEQRT_ASSIGN_OR_RETURN(parsed.output,
                           parse_term(ctx, equation.substr(arrow + 2)));
  }
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    SEQRT_ASSIGN_OR_RETURN(Term term,
                           parse_term(ctx, lhs.substr(start, comma - start)));
    parsed.inputs.push_back(std::move(term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (parsed.inputs.size() != num_inputs) {
    return ctx.error("equation '{}' has {} operands but the node has {} inputs",
                     ctx.attr_string("equation"), parsed.inputs.size(),
                     num_inputs);
  }
  return parsed;
}

// Terms with each ellipsis expanded into per-dim labels.
using Resolved = EinsumLabels;

Term expand_ellipsis(const Term& term, size_t dims, size_t ellipsis_rank) {
  Term out;
  for (int label : term) {
    if (label != kWholeEllipsis) {
      out.push_back(label);
      continue;
    }
    for (size_t i = ellipsis_rank - dims; i < ellipsis_rank; ++i) {
      out.push_back(kEllipsis + static_cast<int>(i));
    }
  }
  return out;
}

Result<Term> implicit_or_checked_output(const OpContext& ctx,
                                        const Parsed& parsed,
                                        const std::map<int, int>& counts,
                                        bool any_ellipsis,
                                        size_t ellipsis_rank) {
  if (!parsed.output) {
    Term out;
    if (any_ellipsis) out.push_back(kWholeEllipsis);
    for (const auto& [label, count] : counts) {
      if (count == 1) out.push_back(label);  // std::map: sorted letters
    }
    return expand_ellipsis(out, ellipsis_rank, ellipsis_rank);
  }
  const Term& out = *parsed.output;
  bool has_ellipsis = false;
  for (size_t i = 0; i < out.size(); ++i) {
    has_ellipsis = has_ellipsis || out[i] == kWholeEllipsis;
    bool known =
        out[i] == kWholeEllipsis ? any_ellipsis : counts.count(out[i]) > 0;
    if (!known || std::count(out.begin(), out.end(), out[i]) > 1) {
      return ctx.error("output of '{}' must use each input label at most once",
                       ctx.attr_string("equation"));
    }
  }
  if (ellipsis_rank > 0 && !has_ellipsis) {
    return ctx.error("equation '{}' has '...' dims but its output has no '...'",
                     ctx.attr_string("equation"));
  }
  return expand_ellipsis(out, ellipsis_rank, ellipsis_rank);
}

Result<Resolved> resolve(const OpContext& ctx, const Parsed& parsed,
                         const std::vector<size_t>& ranks) {
  size_t ellipsis_rank = 0;
  bool any_ellipsis = false;
  std::vector<size_t> ellipsis_dims(ranks.size(), 0);
  std::map<int, int> counts;
  for (size_t k = 0; k < ranks.size(); ++k) {
    const Term& term = parsed.inputs[k];
    bool has = std::count(term.begin(), term.end(), kWholeEllipsis) > 0;
    size_t letters = term.size() - (has ? 1 : 0);
    if (has ? ranks[k] < letters : ranks[k] != letters) {
      return ctx.error(
          "operand {} has rank {} but its term in '{}' has {} letters{}", k,
          ranks[k], ctx.attr_string("equation"), letters,
          has ? " and '...'" : "");
    }
    any_ellipsis = any_ellipsis || has;
    ellipsis_dims[k] = ranks[k] - letters;
    ellipsis_rank = std::max(ellipsis_rank, ellipsis_dims[k]);
    for (int label : term) {
      if (label != kWholeEllipsis) ++counts[label];
    }
  }
  Resolved resolved;
  for (size_t k = 0; k < ranks.size(); ++k) {
    resolved.inputs.push_back(
        expand_ellipsis(parsed.inputs[k], ellipsis_dims[k], ellipsis_rank));
  }
  SEQRT_ASSIGN_OR_RETURN(
      resolved.output, implicit_or_checked_output(ctx, parsed, counts,
                                                  any_ellipsis, ellipsis_rank));
  return resolved;
}

// The size of every label. Letters must agree exactly; ellipsis dims
// broadcast (a size 1 gives way).
Result<std::map<int, Dim>> label_dims(const OpContext& ctx,
                                      const Resolved& resolved,
                                      const std::vector<Shape>& shapes) {
  std::map<int, Dim> dims;
  for (size_t k = 0; k < shapes.size(); ++k) {
    for (size_t d = 0; d < shapes[k].rank(); ++d) {
      int label = resolved.inputs[k][d];
      const Dim& dim = shapes[k][d];
      auto [it, inserted] = dims.emplace(label, dim);
      if (inserted) continue;
      Dim& have = it->second;
      bool broadcast = label >= kEllipsis;
      if (broadcast && dim == Dim(1)) continue;
      if (broadcast && have == Dim(1)) {
        have = dim;
      } else if (have.is_fixed() && dim.is_fixed() && have != dim) {
        return ctx.error("label '{}' of '{}' has sizes {} and {}",
                         broadcast ? std::string("...")
                                   : std::string(1, static_cast<char>(label)),
                         ctx.attr_string("equation"), have.value(),
                         dim.value());
      } else if (!have.is_fixed() && !dim.is_unknown()) {
        have = dim;
      }
    }
  }
  return dims;
}

Status check_dtypes(const OpContext& ctx, const std::vector<DType>& dtypes) {
  for (DType dtype : dtypes) {
    if (dtype != dtypes[0] || dtype == DType::kBool) {
      return ctx.error("operands must share one numeric dtype, got {} and {}",
                       dtype_name(dtypes[0]), dtype_name(dtype));
    }
  }
  return Status::ok();
}

Status infer_einsum(InferContext& ctx) {
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    dtypes.push_back(ctx.input_dtype(k));
    if (ctx.input_shape(k)) shapes.push_back(*ctx.input_shape(k));
  }
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, dtypes));
  SEQRT_ASSIGN_OR_RETURN(Parsed parsed, parse_equation(ctx, ctx.num_inputs()));
  if (shapes.size() != ctx.num_inputs()) {
    std::optional<Shape> out;
    if (parsed.output &&
        std::count(parsed.output->begin(), parsed.output->end(),
                   kWholeEllipsis) == 0) {
      out = unknown_shape(parsed.output->size());
    }
    ctx.set_output(0, dtypes[0], out);
    return Status::ok();
  }
  std::vector<size_t> ranks;
  for (const Shape& shape : shapes) ranks.push_back(shape.rank());
  SEQRT_ASSIGN_OR_RETURN(Resolved resolved, resolve(ctx, parsed, ranks));
  SEQRT_ASSIGN_OR_RETURN(auto dims, label_dims(ctx, resolved, shapes));
  std::vector<Dim> out;
  for (int label : resolved.output) out.push_back(dims.at(label));
  ctx.set_output(0, dtypes[0], Shape(std::move(out)));
  return Status::ok();
}

// Per operand, the stride of every label (summed over a repeated letter,
// which walks the diagonal; 0 where an ellipsis dim broadcasts).
std::vector<int64_t> label_strides(const Tensor& operand, const Term& labels,
                                   const std::vector<int>& order) {
  std::vector<int64_t> own = strides_of(operand.dims());
  std::vector<int64_t> out(order.size(), 0);
  for (size_t d = 0; d < labels.size(); ++d) {
    if (operand.dim(d) == 1) continue;
    size_t at =
        std::find(order.begin(), order.end(), labels[d]) - order.begin();
    out[at] += own[d];
  }
  return out;
}

Status run_einsum(KernelContext& ctx) {
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;
  std::vector<size_t> ranks;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    dtypes.push_back(ctx.input(k)->dtype());
    shapes.push_back(ctx.input(k)->shape());
    ranks.push_back(ctx.input(k)->rank());
  }
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, dtypes));
  SEQRT_ASSIGN_OR_RETURN(Parsed parsed, parse_equation(ctx, ctx.num_inputs()));
  SEQRT_ASSIGN_OR_RETURN(Resolved resolved, resolve(ctx, parsed, ranks));
  SEQRT_ASSIGN_OR_RETURN(auto dims, label_dims(ctx, resolved, shapes));
  // Loop order: the output labels, then the summed ones.
  std::vector<int> order = resolved.output;
  for (const auto& [label, dim] : dims) {
    if (std::find(order.begin(), order.end(), label) == order.end()) {
      order.push_back(label);
    }
  }
  std::vector<int64_t> sizes, out_dims;
  for (int label : order) sizes.push_back(dims.at(label).value());
  out_dims.assign(sizes.begin(), sizes.begin() + resolved.output.size());
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, dtypes[0], out_dims));
  SEQRT_RETURN_IF_ERROR(checked_num_elements(sizes).status());
  std::vector<std::vector<int64_t>> strides;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    strides.push_back(label_strides(*ctx.input(k), resolved.inputs[k], order));
  }
  std::vector<double> sums(static_cast<size_t>(out->num_elements()), 0.0);
  std::vector<int64_t> out_strides = strides_of(out_dims);
  for (CoordinateCounter c(sizes); !c.done(); c.next()) {
    double product = 1.0;
    for (size_t k = 0; k < strides.size(); ++k) {
      int64_t index = 0;
      for (size_t l = 0; l < order.size(); ++l) {
        index += c.coords()[l] * strides[k][l];
      }
      product *= ctx.input(k)->element_f64(index);
    }
    int64_t at = 0;
    for (size_t l = 0; l < out_dims.size(); ++l) {
      at += c.coords()[l] * out_strides[l];
    }
    sums[at] += product;
  }
  for (size_t i = 0; i < sums.size(); ++i) out->set_element_f64(i, sums[i]);
  return Status::ok();
}

}  // namespace

void register_einsum(OpRegistry& registry) {
  OpSchema s;
  s.name = "Einsum";
  s.doc = "Einstein summation over labelled dims (numpy semantics)";
  s.inputs = {{"Inputs", false, true}};
  s.outputs = {{"Output"}};
  s.attrs = {{"equation", AttrType::kString, std::nullopt, true}};
  s.infer = infer_einsum;
  s.reference = run_einsum;
  register_or_die(registry, std::move(s));
}

Result<EinsumLabels> resolve_einsum(const OpContext& ctx,
                                    const std::vector<size_t>& ranks) {
  SEQRT_ASSIGN_OR_RETURN(Parsed parsed, parse_equation(ctx, ranks.size()));
  return resolve(ctx, parsed, ranks);
}

}  // namespace seqrt
