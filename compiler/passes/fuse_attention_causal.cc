#include "compiler/passes/fuse_attention_causal.h"

#include <algorithm>
#include <map>
#include <optional>

namespace seqrt {
namespace {

// A slice bound as the causal pattern uses it: a constant, the key or the
// query length, or the key length minus the query length.
struct Term {
  enum Kind { kConstant, kKeys, kQueries, kKeysMinusQueries, kOther };
  Kind kind = kOther;
  int64_t constant = 0;
};

bool contains(const std::vector<ValueId>& values, ValueId id) {
  return std::find(values.begin(), values.end(), id) != values.end();
}

// A length read from axis 2 of Q or of K/V (rank 4).
Term length_term(const Matcher& m, ValueId id,
                 const AttentionLengths& lengths) {
  const std::optional<ShapeDim> dim = shape_dim(m, id);
  if (!dim || dim->axis != 2 || m.shape(dim->value)->rank() != 4) return {};
  if (contains(lengths.keys, dim->value)) return {Term::kKeys};
  if (contains(lengths.queries, dim->value)) return {Term::kQueries};
  return {};
}

// One scalar bound: a constant, a length, or Sub(key length, query length).
Term scalar_term(const Matcher& m, ValueId id,
                 const AttentionLengths& lengths) {
  if (const std::optional<double> value = m.scalar(id)) {
    if (m.dtype(id) != DType::kI64 && m.dtype(id) != DType::kI32) return {};
    return {Term::kConstant, static_cast<int64_t>(*value)};
  }
  const int sub = m.producer(id, "Sub");
  if (sub >= 0) {
    const Node& node = m.node(sub);
    if (length_term(m, node.inputs[0], lengths).kind == Term::kKeys &&
        length_term(m, node.inputs[1], lengths).kind == Term::kQueries) {
      return {Term::kKeysMinusQueries};
    }
    return {};
  }
  return length_term(m, id, lengths);
}

// A 1-D list of bounds: a constant, Unsqueeze(scalar, [0]), or a Concat on
// axis 0 of such lists (as exporters build starts and ends).
std::optional<std::vector<Term>> list_terms(const Matcher& m, ValueId id,
                                            const AttentionLengths& lengths) {
  if (const auto ints = m.ints(id)) {
    std::vector<Term> terms;
    for (int64_t value : *ints) terms.push_back({Term::kConstant, value});
    return terms;
  }
  if (const int n = m.producer(id, "Unsqueeze"); n >= 0) {
    const Node& node = m.node(n);
    const Shape* scalar = m.shape(node.inputs[0]);
    if (node.inputs.size() != 2 || scalar == nullptr || scalar->rank() != 0 ||
        m.ints(node.inputs[1]) != std::vector<int64_t>{0}) {
      return std::nullopt;
    }
    return std::vector<Term>{scalar_term(m, node.inputs[0], lengths)};
  }
  if (const int n = m.producer(id, "Concat"); n >= 0) {
    const Node& node = m.node(n);
    if (int_attr(node, "axis", -1) != 0) return std::nullopt;
    std::vector<Term> terms;
    for (ValueId part : node.inputs) {
      const auto more = list_terms(m, part, lengths);
      if (!more) return std::nullopt;
      terms.insert(terms.end(), more->begin(), more->end());
    }
    return terms;
  }
  return std::nullopt;
}

struct AxisSlice {
  Term start, end;
};

// Adds the axes one Slice node takes to `axes` (by axis of a rank-`rank`
// input); false when a bound is not understood, a step is not 1 or an axis
// is sliced twice.
bool add_slice(const Matcher& m, const Node& slice, int64_t rank,
               const AttentionLengths& lengths,
               std::map<int64_t, AxisSlice>& axes) {
  const auto starts = list_terms(m, slice.inputs[1], lengths);
  const auto ends = list_terms(m, slice.inputs[2], lengths);
  if (!starts || !ends || starts->size() != ends->size()) return false;
  std::vector<int64_t> which(starts->size());
  for (size_t i = 0; i < which.size(); ++i) which[i] = static_cast<int64_t>(i);
  if (slice.inputs.size() > 3 && slice.inputs[3] != kNoValue) {
    const auto given = m.ints(slice.inputs[3]);
    if (!given || given->size() != which.size()) return false;
    which = *given;
  }
  if (slice.inputs.size() > 4 && slice.inputs[4] != kNoValue) {
    const auto steps = m.ints(slice.inputs[4]);
    if (!steps || steps->size() != which.size() ||
        std::any_of(steps->begin(), steps->end(),
                    [](int64_t step) { return step != 1; })) {
      return false;
    }
  }
  for (size_t i = 0; i < which.size(); ++i) {
    const auto axis = normalize_axis(which[i], static_cast<size_t>(rank));
    if (!axis || axes.count(*axis) != 0) return false;
    axes[*axis] = {(*starts)[i], (*ends)[i]};
  }
  return true;
}

// A constant bool (1, .., 1, M, M) tensor, M >= 2, true exactly on and
// below the diagonal.
bool is_lower_triangle(const Tensor* tensor) {
  if (tensor == nullptr || tensor->dtype() != DType::kBool ||
      tensor->rank() < 2) {
    return false;
  }
  const size_t rank = tensor->rank();
  const int64_t size = tensor->dim(rank - 1);
  if (size < 2 || tensor->dim(rank - 2) != size ||
      tensor->num_elements() != size * size) {
    return false;
  }
  const bool* data = tensor->data_as<bool>();
  for (int64_t i = 0; i < size; ++i) {
    for (int64_t j = 0; j < size; ++j) {
      if (data[i * size + j] != (j <= i)) return false;
    }
  }
  return true;
}

bool is_constant(const Term& term, int64_t value) {
  return term.kind == Term::kConstant && term.constant == value;
}

}  // namespace

bool is_end_aligned_causal_mask(const Matcher& m, ValueId mask,
                                const AttentionLengths& lengths) {
  // Tk >= Tq: the keys appended this run are as many as the queries.
  if (lengths.query_len.is_unknown() ||
      lengths.query_len != lengths.new_key_len) {
    return false;
  }
  std::vector<int> slices;
  ValueId source = mask;
  for (int n = m.producer(source, "Slice"); n >= 0;
       n = m.producer(source, "Slice")) {
    slices.push_back(n);
    source = m.node(n).inputs[0];
  }
  const Tensor* tril = m.graph().constant(source);
  if (slices.empty() || !is_lower_triangle(tril)) return false;
  const int64_t rank = static_cast<int64_t>(tril->rank());
  std::map<int64_t, AxisSlice> axes;
  for (int n : slices) {
    if (m.node(n).inputs.size() < 3 ||
        !add_slice(m, m.node(n), rank, lengths, axes)) {
      return false;
    }
  }
  const auto rows = axes.find(rank - 2);
  const auto cols = axes.find(rank - 1);
  if (rows == axes.end() || cols == axes.end() ||
      rows->second.start.kind != Term::kKeysMinusQueries ||
      rows->second.end.kind != Term::kKeys ||
      !is_constant(cols->second.start, 0) ||
      cols->second.end.kind != Term::kKeys) {
    return false;
  }
  // Leading axes of one element: sliced whole or not at all.
  for (const auto& [axis, slice] : axes) {
    if (axis >= rank - 2) continue;
    if (!is_constant(slice.start, 0) || slice.end.kind != Term::kConstant ||
        slice.end.constant < 1) {
      return false;
    }
  }
  return true;
}

}  // namespace seqrt
