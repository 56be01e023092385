// Einsum (ONNX, one or two f32 operands) as one generic contraction shader
// (shaders/einsum.comp): the equation is resolved at record time into the
// output's and the contracted labels' sizes and per-operand strides. It is
// a plain loop per output element, not a tiled GEMM: the models seqrt
// targets use Einsum for small head-wise products, and MatMul-shaped ones
// are better written as MatMul.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "backends/vulkan/kernels/kernel_util.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

// A label: a letter's code, or kEllipsis + k for the k-th dim of "..."
// counted from the right (so operands with fewer ellipsis dims broadcast).
constexpr int kEllipsis = 1000;

struct Term {
  std::vector<int> labels;  // one per dim of its operand
};

// The labels of one side of the equation for an operand of `rank` dims.
Result<Term> parse_term(const std::string& text, size_t rank,
                        const std::string& label) {
  std::vector<int> letters_before;
  std::vector<int> letters_after;
  bool ellipsis = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (ellipsis || text.compare(i, 3, "...") != 0) {
        return invalid_argument("{}: bad ellipsis in einsum term '{}'", label,
                                text);
      }
      ellipsis = true;
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      (ellipsis ? letters_after : letters_before).push_back(c);
    } else {
      return invalid_argument("{}: '{}' in einsum term '{}' is not a letter",
                              label, c, text);
    }
  }
  size_t letters = letters_before.size() + letters_after.size();
  if (letters > rank || (!ellipsis && letters != rank)) {
    return invalid_argument(
        "{}: einsum term '{}' names {} dims, its operand has rank {}", label,
        text, letters, rank);
  }
  Term term;
  term.labels = letters_before;
  size_t spread = ellipsis ? rank - letters : 0;
  for (size_t k = spread; k > 0; --k) {
    term.labels.push_back(kEllipsis + static_cast<int>(k - 1));
  }
  term.labels.insert(term.labels.end(), letters_after.begin(),
                     letters_after.end());
  return term;
}

// Sizes and strides the shader takes.
struct EinsumPlan {
  std::vector<int64_t> out_dims, out_a, out_b;
  std::vector<int64_t> sum_dims, sum_a, sum_b;
};

std::string without_spaces(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  return text;
}

Result<EinsumPlan> plan_einsum(const std::string& equation,
                               const std::vector<std::vector<int64_t>>& dims,
                               const std::string& label) {
  const std::string eq = without_spaces(equation);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> texts;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    texts.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (texts.size() != dims.size()) {
    return invalid_argument(
        "{}: equation '{}' has {} operand terms for {} "
        "inputs",
        label, equation, texts.size(), dims.size());
  }
  std::vector<Term> terms;
  std::map<int, int64_t> size;
  std::map<int, int> uses;
  size_t ellipsis_rank = 0;
  for (size_t t = 0; t < texts.size(); ++t) {
    SEQRT_ASSIGN_OR_RETURN(Term term,
                           parse_term(texts[t], dims[t].size(), label));
    for (size_t d = 0; d < term.labels.size(); ++d) {
      int l = term.labels[d];
      ++uses[l];
      if (l >= kEllipsis) {
        ellipsis_rank = std::max<size_t>(ellipsis_rank, l - kEllipsis + 1);
      }
      auto [it, fresh] = size.emplace(l, dims[t][d]);
      if (fresh || it->second == dims[t][d]) continue;
      // Only "..." dims broadcast (numpy's einsum rule).
      if (l >= kEllipsis && (it->second == 1 || dims[t][d] == 1)) {
        it->second = std::max(it->second, dims[t][d]);
        continue;
      }
      return invalid_argument("{}: einsum label '{}' has sizes {} and {}",
                              label, static_cast<char>(l), it->second,
                              dims[t][d]);
    }
    terms.push_back(std::move(term));
  }
  std::vector<int> out;
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    bool has_ellipsis = rhs.find("...") != std::string::npos;
    SEQRT_ASSIGN_OR_RETURN(Term term,
                           parse_term(rhs,
                                      rhs.size() - (has_ellipsis ? 3 : 0) +
                                          (has_ellipsis ? ellipsis_rank : 0),
                                      label));
    out = term.labels;
  } else {
    // Implicit output: the "..." dims, then letters used once, sorted.
    for (size_t k = ellipsis_rank; k > 0; --k) {
      out.push_back(kEllipsis + static_cast<int>(k - 1));
    }
    for (const auto& [l, n] : uses) {
      if (l < kEllipsis && n == 1) out.push_back(l);
    }
  }
  for (int l : out) {
    if (size.count(l) == 0) {
      return invalid_argument("{}: output label '{}' of '{}' is on no input",
                              label, static_cast<char>(l), equation);
    }
  }
  // Per operand, each label's stride: a repeated label (a diagonal) adds
  // the strides of its dims; a broadcast dim of size 1 adds none.
  std::vector<std::map<int, int64_t>> strides(terms.size());
  for (size_t t = 0; t < terms.size(); ++t) {
    std::vector<int64_t> row = row_major_strides(dims[t]);
    for (size_t d = 0; d < terms[t].labels.size(); ++d) {
      int l = terms[t].labels[d];
      if (dims[t][d] != 1 || size[l] == 1) strides[t][l] += row[d];
    }
  }
  auto stride = [&](size_t t, int l) -> int64_t {
    if (t >= strides.size()) return 0;
    auto it = strides[t].find(l);
    return it == strides[t].end() ? 0 : it->second;
  };
  EinsumPlan plan;
  for (int l : out) {
    plan.out_dims.push_back(size[l]);
    plan.out_a.push_back(stride(0, l));
    plan.out_b.push_back(stride(1, l));
  }
  for (const auto& [l, n] : size) {
    if (std::find(out.begin(), out.end(), l) != out.end()) continue;
    plan.sum_dims.push_back(n);
    plan.sum_a.push_back(stride(0, l));
    plan.sum_b.push_back(stride(1, l));
  }
  if (plan.out_dims.size() > kMaxRank || plan.sum_dims.size() > kMaxRank) {
    return unsupported(
        "{}: '{}' has {} output and {} contracted labels; the Vulkan einsum "
        "takes at most {} of each",
        label, equation, plan.out_dims.size(), plan.sum_dims.size(), kMaxRank);
  }
  return plan;
}

Status record_einsum(const NodeArgs& args, Recorder& recorder) {
  const std::string label = args.node->label();
  const Attribute* equation = args.node->attr("equation");
  if (equation == nullptr) {
    return invalid_argument("{}: Einsum needs an 'equation'", label);
  }
  SEQRT_ASSIGN_OR_RETURN(EinsumPlan plan, plan_einsum(equation->as_string(),
                                                      args.input_dims, label));
  if (plan.out_dims != args.output_dims[0]) {
    return internal_error("{}: einsum gives dims {}, inference said {}", label,
                          dims_to_string(plan.out_dims),
                          dims_to_string(args.output_dims[0]));
  }
  const int64_t count = element_count(plan.out_dims);
  if (count == 0) return Status::ok();
  const int64_t sum_count = element_count(plan.sum_dims);
  if (count > UINT32_MAX || sum_count > UINT32_MAX) {
    return unsupported("{}: the Vulkan einsum indexes with 32 bits", label);
  }
  std::vector<uint32_t> spec = {kLocalSize,
                                static_cast<uint32_t>(args.inputs.size()),
                                static_cast<uint32_t>(plan.out_dims.size())};
  append_padded(spec, plan.out_dims, 1);
  append_padded(spec, plan.out_a, 0);
  append_padded(spec, plan.out_b, 0);
  spec.push_back(static_cast<uint32_t>(plan.sum_dims.size()));
  append_padded(spec, plan.sum_dims, 1);
  append_padded(spec, plan.sum_a, 0);
  append_padded(spec, plan.sum_b, 0);
  // Each contracted element costs its index loop too (lavapipe's loop
  // budget, tiling.h); an empty contraction still writes zeros once.
  const int64_t per_dispatch =
      std::max<int64_t>(1, static_cast<int64_t>(kMaxLoopIterations) /
                               static_cast<int64_t>(plan.sum_dims.size() + 1));
  int64_t begin = 0;
  do {
    const int64_t end = std::min(sum_count, begin + per_dispatch);
    Dispatch dispatch;
    dispatch.shader = "einsum";
    dispatch.specialization = spec;
    dispatch.push_constants =
        push_bytes({static_cast<uint32_t>(count), static_cast<uint32_t>(begin),
                    static_cast<uint32_t>(end), begin > 0 ? 1u : 0u});
    const BufferSlice& b =
        args.inputs.size() > 1 ? args.inputs[1] : args.inputs[0];
    dispatch.reads = {args.inputs[0], b};
    dispatch.writes = {args.outputs[0]};
    dispatch.groups = groups_for(count, recorder.limits());
    SEQRT_RETURN_IF_ERROR(recorder.dispatch(dispatch));
    begin = end;
  } while (begin < sum_count);
  return Status::ok();
}

Status supports_einsum(const Graph& graph, const Node& node,
                       const DeviceLimits&) {
  if (node.inputs.empty() || node.inputs.size() > 2) {
    return unsupported(
        "{}: the Vulkan einsum takes one or two operands, "
        "this node has {}",
        node.label(), node.inputs.size());
  }
  return require_f32(graph, node);
}

}  // namespace

void register_einsum_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Einsum", supports_einsum, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_einsum(args, r);
             }});
}

}  // namespace seqrt::vulkan
