// What VulkanExecutable shows of its recording without running it: the
// kernel-level plan (seqrt inspect --plan) and the recording's size.
#include <algorithm>

#include <fmt/format.h>

#include "backends/vulkan/executable.h"
#include "backends/vulkan/executable_recording.h"

namespace seqrt::vulkan {

Result<std::unique_ptr<VulkanExecutable::Recorded>>
VulkanExecutable::record_for_inspection(
    const std::map<std::string, int64_t>& bindings) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, int64_t> all = dim_bindings_;
  for (const auto& [name, size] : bindings) all[name] = size;
  Result<std::shared_ptr<Prepared>> prepared = build(all);
  if (!prepared.is_ok() && !host_parameters_.empty()) {
    // Sizes that the values of host parameters give are not known here.
    std::vector<std::string> names;
    for (size_t i : host_parameters_) {
      names.push_back(graph_.value(graph_.inputs[i]).name);
    }
    return unsupported(
        "graph '{}': its plan depends on the values of host parameters {}, "
        "known only at run time ({})",
        graph_.name, fmt::join(names, ", "), prepared.status().message());
  }
  SEQRT_RETURN_IF_ERROR(prepared.status());
  return record(**prepared, {});
}

Result<std::vector<VulkanExecutable::NodeTiling>> VulkanExecutable::tilings(
    const std::map<std::string, int64_t>& bindings) const {
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Recorded> recorded,
                         record_for_inspection(bindings));
  return recorded->tilings;
}

Result<std::vector<KernelPlanEntry>> VulkanExecutable::kernel_plan(
    const std::map<std::string, int64_t>& bindings) const {
  SEQRT_ASSIGN_OR_RETURN(std::vector<NodeTiling> nodes, tilings(bindings));
  std::vector<KernelPlanEntry> entries;
  for (const NodeTiling& node : nodes) {
    const KernelTiling& tiling = node.tiling;
    const Node& graph_node = graph_.nodes[node.node];
    entries.push_back({graph_node.name, graph_node.op, tiling.summary,
                       tiling.state_place, tiling.shared_bytes,
                       tiling.shared_limit});
  }
  return entries;
}

Result<VulkanExecutable::RecordingStats> VulkanExecutable::recording_stats(
    const std::map<std::string, int64_t>& bindings) const {
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Recorded> recorded,
                         record_for_inspection(bindings));
  RecordingStats stats;
  stats.nodes = static_cast<int>(graph_.nodes.size());
  for (const auto& program : recorded->programs) {
    stats.dispatches += program->dispatches();
  }
  for (const auto& scan : recorded->scans) {
    ++stats.loop_scans;
    stats.nodes += scan->body_nodes;
    for (const auto& body : scan->bodies)
      stats.dispatches += body->dispatches();
  }
  stats.submitted = recorded->submission.size();
  return stats;
}

int VulkanExecutable::programs_recorded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(std::count_if(
      prepared_.begin(), prepared_.end(),
      [](const auto& entry) { return entry.second->recorded != nullptr; }));
}

}  // namespace seqrt::vulkan
