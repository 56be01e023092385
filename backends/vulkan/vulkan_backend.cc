#include "backends/vulkan/vulkan_backend.h"

#include <fmt/format.h>

#include "backends/vulkan/executable.h"
#include "backends/vulkan/kernels/kernel_util.h"
#include "compiler/admit.h"
#include "compiler/passes/compute_f16_in_f32.h"
#include "compiler/passes/expand_einsum.h"
#include "compiler/passes/expand_runge_kutta.h"
#include "compiler/passes/expand_variadic.h"
#include "compiler/passes/rewrite.h"
#include "compiler/passes/unroll_control_flow.h"
#include "graph/verifier.h"
#include "ops/infer_graph.h"

namespace seqrt {
namespace {

using vulkan::DeviceContext;
using vulkan::VulkanKernel;

// Block size of the sub-allocator: large enough that a model needs a few.
constexpr VkDeviceSize kBlockBytes = 64ull << 20;

Status node_supported(const Graph& graph, const Node& node,
                      const vulkan::DeviceLimits& limits);

// The Constant node of `graph` that produces `id`, or nullptr.
const Node* constant_node_of(const Graph& graph, ValueId id) {
  for (const Node& node : graph.nodes) {
    if (node.op == "Constant" && node.outputs.size() == 1 &&
        node.outputs[0] == id) {
      return &node;
    }
  }
  return nullptr;
}

// `node` alone in a graph of its own: its inputs and the values its
// subgraphs capture as graph inputs (constants stay constants, and values
// of Constant nodes keep their Constant node), its outputs as graph
// outputs.
Graph node_alone(const Graph& graph, const Node& node) {
  Graph part;
  Node alone = node;
  auto copy_of = [&](ValueId id) {
    ValueId copy = part.add_value(graph.value(id));
    const Tensor* constant = graph.constant(id);
    const Node* producer = constant_node_of(graph, id);
    if (constant != nullptr) {
      part.constants[copy] = *constant;
    } else if (producer != nullptr) {
      Node made = *producer;
      made.outputs = {copy};
      part.nodes.push_back(std::move(made));
    } else {
      part.inputs.push_back(copy);
    }
    return copy;
  };
  for (ValueId& id : alone.inputs) {
    if (id != kNoValue) id = copy_of(id);
  }
  for (const auto& [name, attr] : node.attrs) {
    if (attr.type() != AttrType::kGraph) continue;
    for (const std::string& read : captured_names(*attr.as_graph())) {
      ValueId id = graph.find_value(read);
      if (id != kNoValue && part.find_value(read) == kNoValue) copy_of(id);
    }
  }
  for (ValueId& id : alone.outputs) {
    if (id == kNoValue) continue;
    id = part.add_value(graph.value(id));
    part.outputs.push_back(id);
  }
  part.nodes.push_back(std::move(alone));  // after the Constant nodes
  return part;
}

// RungeKutta runs written out as its stages (expand_runge_kutta at
// compile): each body node and the stage combinations on their own kernels.
Status runge_kutta_supported(const Graph& graph, const Node& node,
                             const vulkan::DeviceLimits& limits) {
  std::string blocker = runge_kutta_expansion_blocker(graph, node);
  if (!blocker.empty()) {
    return unsupported("{}: cannot be written out as its stages: {}",
                       node.label(), blocker);
  }
  SEQRT_RETURN_IF_ERROR(vulkan::require_all_f32(graph, node));
  const Graph& body = *node.attr("body")->as_graph();
  for (const Node& inner : body.nodes) {
    Status status = node_supported(body, inner, limits);
    if (!status.is_ok()) {
      return unsupported("{}: its body: {}", node.label(), status.message());
    }
  }
  return Status::ok();
}

// Variadic Sum/Max/Min run as chains of two-input nodes (expand_variadic
// at compile): each pair must be supported.
Status variadic_supported(const Graph& graph, const Node& node,
                          const vulkan::DeviceLimits& limits) {
  Node part = node;
  if (node.inputs.size() == 1) {
    part.op = "Identity";
    return node_supported(graph, part, limits);
  }
  if (node.op == "Sum") part.op = "Add";
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    part.inputs = {node.inputs[0], node.inputs[i]};
    SEQRT_RETURN_IF_ERROR(node_supported(graph, part, limits));
  }
  return Status::ok();
}

// Einsum of three or more operands runs as a chain of two-operand Einsums
// (expand_einsum at compile): the node alone, with its inputs' types, is
// written out and every step checked.
Status einsum_chain_supported(const Graph& graph, const Node& node,
                              const vulkan::DeviceLimits& limits) {
  Graph part = node_alone(graph, node);
  SEQRT_ASSIGN_OR_RETURN(bool expanded, expand_einsum(part));
  if (!expanded) {
    return unsupported(
        "{}: its equation cannot be split into two-operand "
        "steps",
        node.label());
  }
  Status typed = infer_graph(part);
  if (!typed.is_ok()) {
    return unsupported("{}: as two-operand steps: {}", node.label(),
                       typed.message());
  }
  for (const Node& step : part.nodes) {
    Status status = node_supported(part, step, limits);
    if (!status.is_ok()) {
      return unsupported("{}: as two-operand steps: {}", node.label(),
                         status.message());
    }
  }
  return Status::ok();
}

// If, Scan and Loop run written out (unroll_control_flow at compile): the
// node alone is written out and every node of the result checked.
Status control_flow_supported(const Graph& graph, const Node& node,
                              const vulkan::DeviceLimits& limits) {
  const std::string blocker = unroll_blocker(graph, node, {});
  if (!blocker.empty()) {
    return unsupported(
        "{}: the Vulkan backend records fixed command buffers and runs "
        "control flow only written out, and this node cannot be: {}",
        node.label(), blocker);
  }
  Graph part = node_alone(graph, node);
  SEQRT_RETURN_IF_ERROR(unroll_control_flow(part, {}).status());
  Status typed = infer_graph(part);
  if (!typed.is_ok()) {
    return unsupported("{}: written out: {}", node.label(), typed.message());
  }
  for (const Node& step : part.nodes) {
    Status status = node_supported(part, step, limits);
    if (!status.is_ok()) {
      return unsupported("{}: written out: {}", node.label(), status.message());
    }
  }
  return Status::ok();
}

Status kernel_supported(const Graph& graph, const Node& node,
                        const vulkan::DeviceLimits& limits) {
  if (is_control_flow(node)) {
    return control_flow_supported(graph, node, limits);
  }
  if (is_einsum_to_expand(node)) {
    return einsum_chain_supported(graph, node, limits);
  }
  if (node.domain == kSeqrtDomain && node.op == "RungeKutta") {
    return runge_kutta_supported(graph, node, limits);
  }
  if (is_variadic_to_expand(node)) {
    return variadic_supported(graph, node, limits);
  }
  // FusedElementwise's body is compiled into its kernel's program.
  bool body_compiled =
      node.domain == kSeqrtDomain && node.op == "FusedElementwise";
  for (const auto& [name, attr] : node.attrs) {
    if (attr.type() == AttrType::kGraph && !body_compiled) {
      return unsupported(
          "{}: ops with subgraphs (control flow) run on the host; the Vulkan "
          "backend records fixed command buffers",
          node.label());
    }
  }
  const VulkanKernel* kernel =
      vulkan::kernel_table().find(node.domain, node.op);
  if (kernel == nullptr) {
    return unsupported("{}: the Vulkan backend has no kernel for this op",
                       node.label());
  }
  if (kernel->supports) return kernel->supports(graph, node, limits);
  return vulkan::require_all_f32(graph, node);
}

bool touches_f16(const Graph& graph, const Node& node) {
  for (const auto* ids : {&node.inputs, &node.outputs}) {
    for (ValueId id : *ids) {
      if (id != kNoValue && graph.value(id).dtype == DType::kF16) return true;
    }
  }
  return false;
}

// A node the kernels take as it is, or, when it has f16 tensors, as
// compute_f16_in_f32 makes it at compile: in f32 between Casts.
Status node_supported(const Graph& graph, const Node& node,
                      const vulkan::DeviceLimits& limits) {
  Status as_is = kernel_supported(graph, node, limits);
  if (as_is.is_ok() || !touches_f16(graph, node)) return as_is;
  Graph part = node_alone(graph, node);
  Status rewritten = compute_f16_in_f32(part).status();
  if (rewritten.is_ok()) rewritten = infer_graph(part);
  if (!rewritten.is_ok()) {
    return unsupported("{}: in f32: {}", node.label(), rewritten.message());
  }
  for (const Node& step : part.nodes) {
    Status status = kernel_supported(part, step, limits);
    if (!status.is_ok()) {
      return unsupported("{}: in f32: {}", node.label(), status.message());
    }
  }
  return Status::ok();
}

// The graph with the nodes that run as other ops written out: control flow
// as copies of its branch or body (an If on a condition known at compile,
// a Scan over a length known at compile or bound in `options`, a Loop with
// a constant trip count), RungeKutta as its stages, variadic elementwise ops as
// two-input chains, Einsums of three or more operands as two-operand steps;
// then, when some node with f16 tensors has no f16 kernel, the f16 tensors
// computed in f32 between Casts at the graph's edges (a graph the f16-moving
// kernels take as it is keeps its exact f16 rounding).
Result<Graph> lower_for_vulkan(const Graph& given,
                               const vulkan::DeviceLimits& limits,
                               const CompileOptions& options) {
  Graph graph = given;
  UnrollOptions unroll;
  unroll.dim_bindings = options.dim_bindings;
  SEQRT_ASSIGN_OR_RETURN(bool unrolled, unroll_control_flow(graph, unroll));
  if (unrolled) SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  SEQRT_ASSIGN_OR_RETURN(bool stages, expand_runge_kutta(graph));
  SEQRT_ASSIGN_OR_RETURN(bool chains, expand_variadic(graph));
  SEQRT_ASSIGN_OR_RETURN(bool steps, expand_einsum(graph));
  if (stages || chains || steps) SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  bool needs_f32 = false;
  for (const Node& node : graph.nodes) {
    needs_f32 |= touches_f16(graph, node) &&
                 !kernel_supported(graph, node, limits).is_ok();
  }
  if (needs_f32) {
    SEQRT_RETURN_IF_ERROR(compute_f16_in_f32(graph).status());
    SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  }
  return graph;
}

class VulkanBackend : public Backend {
 public:
  explicit VulkanBackend(DeviceContext context)
      : context_(std::move(context)) {}

  const DeviceInfo& device_info() const override {
    return context_.device->info();
  }

  Status supports(const Graph& graph, const Node& node) const override {
    return node_supported(graph, node, context_.device->limits());
  }

  Result<std::unique_ptr<Executable>> compile(
      const Graph& given, const CompileOptions& options) override {
    SEQRT_RETURN_IF_ERROR(verify_graph(given));
    SEQRT_RETURN_IF_ERROR(check_ops(given));
    SEQRT_ASSIGN_OR_RETURN(
        Graph graph,
        lower_for_vulkan(given, context_.device->limits(), options));
    SEQRT_RETURN_IF_ERROR(require_supported(
        graph, "the Vulkan backend",
        [&](const Graph& g, const Node& n) { return supports(g, n); },
        Subgraphs::kSkip));
    SEQRT_ASSIGN_OR_RETURN(
        std::unique_ptr<vulkan::VulkanExecutable> executable,
        vulkan::VulkanExecutable::create(context_, graph, options));
    return std::unique_ptr<Executable>(std::move(executable));
  }

  const DeviceContext& context() const { return context_; }

 private:
  DeviceContext context_;
};

}  // namespace

Result<std::unique_ptr<Backend>> create_vulkan_backend(
    const vulkan::VulkanOptions& options) {
  DeviceContext context;
  SEQRT_ASSIGN_OR_RETURN(context.device, vulkan::Device::open(options));
  context.allocator =
      std::make_shared<vulkan::Allocator>(context.device, kBlockBytes);
  context.pipelines = std::make_shared<vulkan::Pipelines>(context.device);
  return std::unique_ptr<Backend>(new VulkanBackend(std::move(context)));
}

Result<std::unique_ptr<Backend>> create_vulkan_backend(
    const BackendOptions& options) {
  SEQRT_ASSIGN_OR_RETURN(vulkan::VulkanOptions vulkan_options,
                         vulkan::vulkan_options_from(options));
  return create_vulkan_backend(vulkan_options);
}

namespace vulkan {
std::shared_ptr<Device> device_of(Backend& backend) {
  auto* vulkan = dynamic_cast<VulkanBackend*>(&backend);
  return vulkan == nullptr ? nullptr : vulkan->context().device;
}
}  // namespace vulkan

}  // namespace seqrt
