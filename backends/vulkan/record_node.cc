#include "backends/vulkan/record_node.h"

namespace seqrt::vulkan {
namespace {

const Tensor* known_value(const Graph& graph, const MemoryPlan& plan,
                          ValueId id) {
  if (id == kNoValue) return nullptr;
  if (const Tensor* tensor = graph.constant(id)) return tensor;
  for (const auto& [value, tensor] : plan.precomputed) {
    if (value == id) return &tensor;
  }
  return nullptr;
}

}  // namespace

Status record_node(const Graph& graph, int index, const MemoryPlan& plan,
                   const std::vector<BufferSlice>& places,
                   const std::set<ValueId>& half_weights,
                   const DeviceLimits& limits, Recorder& recorder,
                   KernelTiling& tiling, bool& planned) {
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
    args.known_inputs.push_back(known_value(graph, plan, id));
  }
  for (ValueId id : node.outputs) {
    args.outputs.push_back(id == kNoValue ? BufferSlice{} : places[id]);
    args.output_dims.push_back(id == kNoValue ? std::vector<int64_t>{}
                                              : plan.values[id].dims);
    args.output_dtypes.push_back(id == kNoValue ? DType::kUndefined
                                                : graph.values[id].dtype);
  }
  tiling = KernelTiling{};
  planned = static_cast<bool>(kernel->plan);
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
