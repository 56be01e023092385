#include "backends/cpu/cpu_backend.h"

#include <fmt/format.h>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/host_memory.h"
#include "graph/verifier.h"
#include "ops/infer_graph.h"
#include "ops/registry.h"

namespace seqrt {
namespace {

using cpu::CpuKernel;

Result<const CpuKernel*> find_kernel(const Node& node) {
  const CpuKernel* kernel = cpu::kernel_table().find(node.domain, node.op);
  if (kernel == nullptr) {
    return unsupported("{}: the CPU backend has no kernel for this op",
                       node.label());
  }
  return kernel;
}

Status node_supported(const Graph& graph, const Node& node) {
  SEQRT_ASSIGN_OR_RETURN(const CpuKernel* kernel, find_kernel(node));
  if (kernel->supports) SEQRT_RETURN_IF_ERROR(kernel->supports(graph, node));
  return Status::ok();
}

// Every node of `graph` and of its subgraphs that the backend cannot run,
// one line each.
void collect_unsupported(const Graph& graph, std::vector<std::string>& lines) {
  for (const Node& node : graph.nodes) {
    Status status = node_supported(graph, node);
    if (!status.is_ok()) lines.push_back(status.message());
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() == AttrType::kGraph) {
        collect_unsupported(*attr.as_graph(), lines);
      }
    }
  }
}

class CpuExecutable : public Executable {
 public:
  CpuExecutable(Graph graph, int num_threads)
      : graph_(std::move(graph)), num_threads_(num_threads) {}

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const override {
    cpu::set_threads_for_this_thread(num_threads_);
    static const KernelChooser choose =
        [](const Node& node, const OpSchema&) -> Result<KernelFn> {
      SEQRT_ASSIGN_OR_RETURN(const CpuKernel* kernel, find_kernel(node));
      return kernel->run;
    };
    return interpret_graph(graph_, std::move(inputs), choose);
  }

 private:
  Graph graph_;
  int num_threads_;
};

class CpuBackend : public HostMemoryBackend {
 public:
  CpuBackend() {
    info_.backend = "cpu";
    info_.name = fmt::format("host CPU ({} threads)", cpu::max_threads());
    info_.is_host_memory = true;
  }

  const DeviceInfo& device_info() const override { return info_; }

  Status supports(const Graph& graph, const Node& node) const override {
    std::vector<std::string> lines;
    Status status = node_supported(graph, node);
    if (!status.is_ok()) return status;
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() == AttrType::kGraph) {
        collect_unsupported(*attr.as_graph(), lines);
      }
    }
    if (lines.empty()) return Status::ok();
    return unsupported("{}: its subgraphs use ops the CPU backend lacks: {}",
                       node.label(), fmt::join(lines, "; "));
  }

  Result<std::unique_ptr<Executable>> compile(
      const Graph& graph, const CompileOptions& options) override {
    SEQRT_RETURN_IF_ERROR(verify_graph(graph));
    SEQRT_RETURN_IF_ERROR(check_ops(graph));
    std::vector<std::string> lines;
    collect_unsupported(graph, lines);
    if (!lines.empty()) {
      return unsupported("the CPU backend cannot run {} node(s): {}",
                         lines.size(), fmt::join(lines, "; "));
    }
    return std::unique_ptr<Executable>(
        new CpuExecutable(graph, options.num_threads));
  }

 private:
  DeviceInfo info_;
};

}  // namespace

std::unique_ptr<Backend> create_cpu_backend() {
  return std::make_unique<CpuBackend>();
}

}  // namespace seqrt
