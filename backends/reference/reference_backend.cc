#include "backends/reference/reference_backend.h"

#include "backends/host_memory.h"
#include "graph/verifier.h"
#include "ops/infer_graph.h"
#include "ops/interpreter.h"
#include "ops/registry.h"

namespace seqrt {
namespace {

class ReferenceExecutable : public Executable {
 public:
  explicit ReferenceExecutable(Graph graph) : graph_(std::move(graph)) {}

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const override {
    return run_reference_graph(graph_, std::move(inputs));
  }

 private:
  Graph graph_;
};

class ReferenceBackend : public HostMemoryBackend {
 public:
  ReferenceBackend() {
    info_.backend = "reference";
    info_.name = "host CPU (reference kernels)";
    info_.is_host_memory = true;
  }

  const DeviceInfo& device_info() const override { return info_; }

  Status supports(const Graph& graph, const Node& node) const override {
    (void)graph;
    if (OpRegistry::global().find(node.domain, node.op) == nullptr) {
      return unsupported("{}: no such op in the registry", node.label());
    }
    return Status::ok();
  }

  Result<std::unique_ptr<Executable>> compile(
      const Graph& graph, const CompileOptions& options) override {
    (void)options;  // the reference backend binds every dim at run time
    SEQRT_RETURN_IF_ERROR(verify_graph(graph));
    SEQRT_RETURN_IF_ERROR(check_ops(graph));
    return std::unique_ptr<Executable>(new ReferenceExecutable(graph));
  }

 private:
  DeviceInfo info_;
};

}  // namespace

Result<std::vector<Tensor>> run_reference_graph(
    const Graph& graph, std::vector<Tensor> inputs,
    const std::map<std::string, Tensor>* outer) {
  static const KernelChooser reference = [](const Node&,
                                            const OpSchema& schema) {
    return Result<KernelFn>(schema.reference);
  };
  return interpret_graph(graph, std::move(inputs), reference, outer);
}

std::unique_ptr<Backend> create_reference_backend() {
  return std::make_unique<ReferenceBackend>();
}

}  // namespace seqrt
