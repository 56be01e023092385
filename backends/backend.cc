#include "backends/backend.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace seqrt {

std::string Backend::display_name() const {
  const std::string& name = device_info().backend;
  if (name == "cpu") return "the CPU backend";
  if (name == "cuda") return "the CUDA backend";
  if (name == "vulkan") return "the Vulkan backend";
  return fmt::format("the {} backend", name);
}

Status Backend::supports(const Graph& graph, const Node& node) const {
  const LoweringNeeds needs = lowering_needs();
  NodeSupport kernels = [this](const Graph& g, const Node& n) {
    return kernel_supports(g, n);
  };
  SEQRT_RETURN_IF_ERROR(supported_after_lowering(graph, node, needs, kernels));
  if (!needs.kernels_run_subgraphs) return Status::ok();
  NodeSupport inner = [&](const Graph& g, const Node& n) {
    return supported_after_lowering(g, n, needs, kernels);
  };
  std::vector<std::string> lines;
  for (const auto& [name, attr] : node.attrs) {
    if (attr.type() != AttrType::kGraph) continue;
    std::vector<std::string> inside =
        unsupported_nodes(*attr.as_graph(), inner, Subgraphs::kVisit);
    lines.insert(lines.end(), inside.begin(), inside.end());
  }
  if (lines.empty()) return Status::ok();
  return unsupported("{}: its subgraphs use ops {} lacks: {}", node.label(),
                     display_name(), fmt::join(lines, "; "));
}

Result<std::unique_ptr<Executable>> Backend::compile(
    const Graph& graph, const CompileOptions& options) {
  Graph lowered;
  SEQRT_ASSIGN_OR_RETURN(const Graph* admitted,
                         lower_and_admit(
                             graph, lowered, display_name(), lowering_needs(),
                             [this](const Graph& g, const Node& n) {
                               return kernel_supports(g, n);
                             },
                             options.dim_bindings));
  return compile_lowered(*admitted, options);
}

}  // namespace seqrt
