#include "backends/vulkan/record_node.h"

#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

const Tensor* known_value(const Graph& graph, const MemoryPlan& plan,
                          const std::map<ValueId, Tensor>* host_values,
                          ValueId id) {
  if (id == kNoValue) return nullptr;
  if (const Tensor* tensor = graph.constant(id)) return tensor;
  if (host_values != nullptr) {
    auto found = host_values->find(id);
    if (found != host_values->end()) return &found->second;
  }
  for (const auto& [value, tensor] : plan.precomputed) {
    if (value == id) return &tensor;
  }
  return nullptr;
}

// A parameter input that is a graph input must have its value here: else
// the kernel would record without it.
Status check_parameters_known(const Graph& graph, const Node& node,
                              const NodeArgs& args) {
  const std::vector<int> producers = graph.producers();
  for (size_t index : parameter_inputs(node)) {
    if (index >= node.inputs.size() || node.inputs[index] == kNoValue ||
        args.known_inputs[index] != nullptr ||
        producers[node.inputs[index]] >= 0) {
      continue;
    }
    return unsupported(
        "{}: parameter input '{}' is not known when recording (only the "
        "top-level graph's inputs are read on the host)",
        node.label(), graph.value(node.inputs[index]).name);
  }
  return Status::ok();
}

}  // namespace

Status record_node(const Graph& graph, int index, const MemoryPlan& plan,
                   const std::vector<BufferSlice>& places,
                   const std::set<ValueId>& half_weights,
                   const DeviceLimits& limits, Recorder& recorder,
                   KernelTiling& tiling, bool& planned,
                   const std::map<ValueId, Tensor>* host_values) {
  const Node& node = graph.nodes[index];
  const VulkanKernel* kernel = kernel_table().find(node.domain, node.op);
  if (kernel == nullptr) {
    return unsupported("{}: the Vulkan backend has no kernel for this op",
                       node.label());
  }
  NodeArgs args;
  args.graph = &graph;
  args.node = &node;
  for (ValueId id : node.inputs) {
    args.inputs.push_back(id == kNoValue ? BufferSlice{} : places[id]);
    args.input_dims.push_back(id == kNoValue ? std::vector<int64_t>{}
                                             : plan.values[id].dims);
    args.input_dtypes.push_back(id == kNoValue ? DType::kUndefined
                                : half_weights.count(id)
                                    ? DType::kF16
                                    : graph.values[id].dtype);
    args.known_inputs.push_back(known_value(graph, plan, host_values, id));
  }
  SEQRT_RETURN_IF_ERROR(check_parameters_known(graph, node, args));
  for (ValueId id : node.outputs) {
    args.outputs.push_back(id == kNoValue ? BufferSlice{} : places[id]);
    args.output_dims.push_back(id == kNoValue ? std::vector<int64_t>{}
                                              : plan.values[id].dims);
    args.output_dtypes.push_back(id == kNoValue ? DType::kUndefined
                                                : graph.values[id].dtype);
  }
  tiling = KernelTiling{};
  planned = static_cast<bool>(kernel->plan);
  // Outputs of no elements (an Abs of a 2x0x4 tensor): nothing to compute,
  // and a shader may not bind their empty buffers.
  bool any_bytes = false;
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    any_bytes |= node.outputs[k] != kNoValue && args.outputs[k].bytes > 0;
  }
  if (!node.outputs.empty() && !any_bytes && !planned) return Status::ok();
  if (planned) {
    Result<KernelTiling> made = kernel->plan(args, limits);
    if (!made.is_ok()) {
      return made.status().with_context("planning " + node.label());
    }
    tiling = std::move(made).value();
  }
  Status status = kernel->record(args, tiling, recorder);
  if (!status.is_ok()) {
    return status.with_context("recording " + node.label());
  }
  return Status::ok();
}

}  // namespace seqrt::vulkan
