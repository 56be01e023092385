#include "runtime/if_on_host.h"

#include <fmt/format.h>

#include <algorithm>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/rewrite.h"
#include "runtime/deferred_executable.h"

namespace seqrt {
namespace {

struct Branch {
  std::unique_ptr<Executable> executable;
  std::vector<size_t> inputs;  // per branch input: its segment input
};

}  // namespace

Result<Graph> standalone_subgraph(const Graph& segment, const Graph& branch,
                                  const std::string& name,
                                  std::vector<size_t>& fed) {
  Graph graph = branch;
  graph.name = name;
  const std::unordered_map<std::string, ValueId> outer = segment.value_index();
  std::unordered_map<std::string, ValueId> own = graph.value_index();
  for (const std::string& captured : captured_names(branch)) {
    auto at = outer.find(captured);
    if (at == outer.end()) {
      return internal_error("{} reads '{}', which its If's segment lacks", name,
                            captured);
    }
    auto it = own.find(captured);
    ValueId id = it != own.end() ? it->second
                                 : graph.add_value(segment.value(at->second));
    graph.value(id).dtype = segment.value(at->second).dtype;
    graph.value(id).shape = segment.value(at->second).shape;
    if (const Tensor* tensor = segment.constant(at->second)) {
      graph.constants[id] = *tensor;
      continue;
    }
    const auto& in = segment.inputs;
    fed.push_back(static_cast<size_t>(
        std::find(in.begin(), in.end(), at->second) - in.begin()));
    graph.inputs.push_back(id);
  }
  graph.captures.clear();
  return graph;
}

std::string nested_report(const std::string& what, std::string inner) {
  if (inner.empty()) inner = "on one backend, or compiled at its first run\n";
  std::string indented;
  for (size_t at = 0; at < inner.size();) {
    size_t end = inner.find('\n', at);
    if (end == std::string::npos) end = inner.size() - 1;
    indented += (at == 0 ? "" : "        ") + inner.substr(at, end - at + 1);
    at = end + 1;
  }
  return fmt::format("      {}: {}", what, indented);
}

namespace {

class IfOnHost : public Executable {
 public:
  IfOnHost(std::string label, size_t condition, Branch then_branch,
           Branch else_branch)
      : label_(std::move(label)), condition_(condition) {
    branches_[0] = std::move(else_branch);
    branches_[1] = std::move(then_branch);
  }

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const override {
    const Tensor& cond = inputs.at(condition_);
    if (cond.dtype() != DType::kBool || cond.num_elements() != 1) {
      return invalid_argument("{}: the condition must be one bool, got {} {}",
                              label_, dtype_name(cond.dtype()),
                              dims_to_string(cond.dims()));
    }
    const Branch& taken = branches_[cond.element_f64(0) != 0 ? 1 : 0];
    std::vector<Tensor> fed;
    for (size_t i : taken.inputs) fed.push_back(inputs.at(i));
    Result<std::vector<Tensor>> out = taken.executable->run(std::move(fed));
    if (!out.is_ok()) return out.status().with_context(label_);
    return out;
  }

  std::vector<NodeProfile> profile() const override {
    std::vector<NodeProfile> all;
    for (const Branch& branch : branches_) {
      std::vector<NodeProfile> p = branch.executable->profile();
      all.insert(all.end(), p.begin(), p.end());
    }
    return all;
  }

  Result<std::vector<KernelPlanEntry>> kernel_plan(
      const std::map<std::string, int64_t>& bindings) const override {
    std::vector<KernelPlanEntry> all;
    for (int b : {1, 0}) {
      Result<std::vector<KernelPlanEntry>> p =
          branches_[b].executable->kernel_plan(bindings);
      if (p.status().code() == StatusCode::kUnsupported) continue;
      if (!p.is_ok()) return p.status().with_context(label_);
      all.insert(all.end(), p->begin(), p->end());
    }
    return all;
  }

  std::string placement_report(
      const std::map<std::string, int64_t>& bindings) const override {
    std::string text;
    const char* names[] = {"else", "then"};
    for (int b : {1, 0}) {
      text +=
          nested_report(fmt::format("{} branch", names[b]),
                        branches_[b].executable->placement_report(bindings));
    }
    return text;
  }

 private:
  std::string label_;
  size_t condition_;
  Branch branches_[2];  // else, then
};

}  // namespace

Result<std::unique_ptr<Executable>> compile_if_on_host(
    const Graph& segment, Backend& list, const CompileOptions& options) {
  if (segment.nodes.size() != 1 || segment.nodes[0].op != "If") {
    return internal_error("graph '{}' is not one If node", segment.name);
  }
  const Node& node = segment.nodes[0];
  const auto& in = segment.inputs;
  const size_t condition = static_cast<size_t>(
      std::find(in.begin(), in.end(), node.inputs.at(0)) - in.begin());
  if (condition >= in.size()) {
    return internal_error("{}: its condition is not an input of its segment",
                          node.label());
  }
  Branch made[2];
  const char* attrs[] = {"then_branch", "else_branch"};
  for (int b = 0; b < 2; ++b) {
    const Attribute* attr = node.attr(attrs[b]);
    if (attr == nullptr || attr->type() != AttrType::kGraph) {
      return invalid_argument("{}: no {} graph", node.label(), attrs[b]);
    }
    SEQRT_ASSIGN_OR_RETURN(
        Graph branch,
        standalone_subgraph(segment, *attr->as_graph(),
                            fmt::format("{}/{}", segment.name, attrs[b]),
                            made[b].inputs));
    if (has_input_of_unknown_rank(branch) || !infer_graph(branch).is_ok()) {
      made[b].executable = std::make_unique<DeferredExecutable>(
          std::move(branch), list, options);
      continue;
    }
    Result<std::unique_ptr<Executable>> compiled =
        list.compile(branch, options);
    if (!compiled.is_ok()) {
      return compiled.status().with_context(
          fmt::format("{} {}", node.label(), attrs[b]));
    }
    made[b].executable = std::move(compiled).value();
  }
  return std::unique_ptr<Executable>(new IfOnHost(
      node.label(), condition, std::move(made[0]), std::move(made[1])));
}

}  // namespace seqrt
