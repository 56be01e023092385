#include "backends/vulkan/vulkan_backend.h"

#include <fmt/format.h>

#include "backends/vulkan/executable.h"
#include "backends/vulkan/kernels/kernel_util.h"
#include "backends/vulkan/scan.h"

namespace seqrt {
namespace {

using vulkan::DeviceContext;
using vulkan::VulkanKernel;

// Block size of the sub-allocator: large enough that a model needs a few.
constexpr VkDeviceSize kBlockBytes = 64ull << 20;

Status kernel_supported(const Graph& graph, const Node& node,
                        const vulkan::DeviceLimits& limits);

// A Scan the executable runs as a loop (scan.h): its layout fits and every
// body node has a kernel. Control flow inside the body is written out.
Status loop_scan_supported(const Graph& graph, const Node& node,
                           const vulkan::DeviceLimits& limits) {
  const std::string blocker = vulkan::loop_scan_blocker(graph, node);
  if (!blocker.empty()) {
    return unsupported("{}: cannot run as a loop: {}", node.label(), blocker);
  }
  const Graph& body = *node.attr("body")->as_graph();
  for (const Node& inner : body.nodes) {
    if (inner.domain == kOnnxDomain &&
        (inner.op == "Scan" || inner.op == "Loop" || inner.op == "If")) {
      return unsupported("{}: cannot run as a loop: its body holds {}",
                         node.label(), inner.label());
    }
    Status status = kernel_supported(body, inner, limits);
    if (!status.is_ok()) {
      return unsupported("{}: cannot run as a loop: {}", node.label(),
                         status.message());
    }
  }
  return Status::ok();
}

Status kernel_supported(const Graph& graph, const Node& node,
                        const vulkan::DeviceLimits& limits) {
  if (node.domain == kOnnxDomain && node.op == "Scan") {
    return loop_scan_supported(graph, node, limits);
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

class VulkanBackend : public Backend {
 public:
  explicit VulkanBackend(DeviceContext context)
      : context_(std::move(context)) {}

  const DeviceInfo& device_info() const override {
    return context_.device->info();
  }

  // Command buffers are recorded once, so control flow (but the Scans
  // kernel_supports() takes, which run as loops: scan.h), RungeKutta
  // stages, variadic ops and Einsum chains are written out first, and f16
  // tensors the f16 kernels do not take are computed in f32.
  LoweringNeeds lowering_needs() const override {
    LoweringNeeds needs;
    needs.unroll_control_flow = true;
    needs.expand_runge_kutta = true;
    needs.expand_variadic = true;
    needs.expand_einsum = true;
    needs.f16_in_f32 = true;
    return needs;
  }

  Status kernel_supports(const Graph& graph, const Node& node) const override {
    // The shaders index at most kMaxRank dims; refused here rather than
    // when recording, so that a backend list moves such a node on.
    for (const std::vector<ValueId>* ids : {&node.inputs, &node.outputs}) {
      for (ValueId id : *ids) {
        if (id == kNoValue) continue;
        if (is_storage_only(graph.value(id).dtype)) {
          return unsupported(
              "{}: '{}' is {}; the Vulkan backend has no i4/u4/f4e2m1/float8 "
              "kernels",
              node.label(), graph.value(id).name,
              dtype_name(graph.value(id).dtype));
        }
        const std::optional<Shape>& shape = graph.value(id).shape;
        if (shape && shape->rank() > static_cast<size_t>(vulkan::kMaxRank)) {
          return unsupported(
              "{}: '{}' has rank {}; the Vulkan kernels take "
              "at most {}",
              node.label(), graph.value(id).name, shape->rank(),
              vulkan::kMaxRank);
        }
      }
    }
    return kernel_supported(graph, node, context_.device->limits());
  }

  // Host parameters (kernels/kernel_util.h): recorded per value.
  std::vector<size_t> host_inputs(const Graph&,
                                  const Node& node) const override {
    return vulkan::parameter_inputs(node);
  }

  const DeviceContext& context() const { return context_; }

 protected:
  Result<std::unique_ptr<Executable>> compile_lowered(
      const Graph& graph, const CompileOptions& options) override {
    SEQRT_ASSIGN_OR_RETURN(
        std::unique_ptr<vulkan::VulkanExecutable> executable,
        vulkan::VulkanExecutable::create(context_, graph, options));
    return std::unique_ptr<Executable>(std::move(executable));
  }

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
