#include "backends/cpu/cpu_backend.h"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
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

  Result<std::vector<Tensor>> run(
      const std::vector<Tensor>& inputs) const override {
    cpu::set_threads_for_this_thread(num_threads_);
    static const KernelChooser choose =
        [](const Node& node, const OpSchema&) -> Result<KernelFn> {
      SEQRT_ASSIGN_OR_RETURN(const CpuKernel* kernel, find_kernel(node));
      return kernel->run;
    };
    return interpret_graph(graph_, inputs, choose);
  }

 private:
  Graph graph_;
  int num_threads_;
};

class CpuBackend : public Backend {
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

  Result<DeviceBuffer> allocate(size_t bytes) override {
    void* data = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (data == nullptr) {
      return make_error(StatusCode::kOutOfMemory,
                        "CPU backend: cannot allocate {} bytes", bytes);
    }
    return DeviceBuffer{data, bytes};
  }

  void release(DeviceBuffer& buffer) override {
    std::free(buffer.data);
    buffer = DeviceBuffer{};
  }

  Status copy_to_device(DeviceBuffer& dst, const void* src,
                        size_t bytes) override {
    if (bytes > dst.bytes) {
      return invalid_argument("copy of {} bytes into a {}-byte buffer", bytes,
                              dst.bytes);
    }
    if (bytes > 0) std::memcpy(dst.data, src, bytes);
    return Status::ok();
  }

  Status copy_to_host(void* dst, const DeviceBuffer& src,
                      size_t bytes) override {
    if (bytes > src.bytes) {
      return invalid_argument("copy of {} bytes from a {}-byte buffer", bytes,
                              src.bytes);
    }
    if (bytes > 0) std::memcpy(dst, src.data, bytes);
    return Status::ok();
  }

  Status synchronize() override { return Status::ok(); }

 private:
  DeviceInfo info_;
};

}  // namespace

std::unique_ptr<Backend> create_cpu_backend() {
  return std::make_unique<CpuBackend>();
}

}  // namespace seqrt
