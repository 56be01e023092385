#include "backends/reference/reference_backend.h"

#include "backends/host/interpreter.h"
#include "ops/registry.h"

namespace seqrt {
namespace {

const KernelChooser& reference_kernels() {
  static const KernelChooser reference = [](const Node&,
                                            const OpSchema& schema) {
    return Result<KernelFn>(schema.reference);
  };
  return reference;
}

class ReferenceExecutable : public Executable {
 public:
  ReferenceExecutable(Graph graph, bool profile)
      : graph_(std::move(graph)),
        profiler_(profile ? std::make_unique<NodeProfiler>(graph_) : nullptr) {}

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const override {
    if (!profiler_) return run_reference_graph(graph_, std::move(inputs));
    InterpretOptions options;
    options.profiler = profiler_.get();
    return interpret_graph(graph_, std::move(inputs), reference_kernels(),
                           nullptr, options);
  }

  std::vector<NodeProfile> profile() const override {
    return profiler_ ? profiler_->report() : std::vector<NodeProfile>();
  }

 private:
  Graph graph_;
  std::unique_ptr<NodeProfiler> profiler_;  // when compiled to profile
};

class ReferenceBackend : public Backend {
 public:
  ReferenceBackend() {
    info_.backend = "reference";
    info_.name = "host CPU (reference kernels)";
    info_.is_host_memory = true;
  }

  const DeviceInfo& device_info() const override { return info_; }

  Status kernel_supports(const Graph& graph, const Node& node) const override {
    (void)graph;
    if (OpRegistry::global().find(node.domain, node.op) == nullptr) {
      return unsupported("{}: no such op in the registry", node.label());
    }
    return Status::ok();
  }

 protected:
  // Its subgraphs run on the same reference kernels (check_ops has checked
  // their ops); every dim is bound at run time.
  Result<std::unique_ptr<Executable>> compile_lowered(
      const Graph& graph, const CompileOptions& options) override {
    return std::unique_ptr<Executable>(
        new ReferenceExecutable(graph, options.profile));
  }

 private:
  DeviceInfo info_;
};

}  // namespace

Result<std::vector<Tensor>> run_reference_graph(
    const Graph& graph, std::vector<Tensor> inputs,
    const std::map<std::string, Tensor>* outer) {
  return interpret_graph(graph, std::move(inputs), reference_kernels(), outer);
}

std::unique_ptr<Backend> create_reference_backend() {
  return std::make_unique<ReferenceBackend>();
}

const std::vector<BackendOptionSpec>& reference_backend_option_specs() {
  static const std::vector<BackendOptionSpec> specs = {
      {"device", "0, the host's one device"}};
  return specs;
}

Result<std::unique_ptr<Backend>> create_reference_backend(
    const BackendOptions& options) {
  SEQRT_RETURN_IF_ERROR(check_backend_option_keys(
      "reference", options, reference_backend_option_specs()));
  SEQRT_RETURN_IF_ERROR(check_single_device("reference", options));
  return create_reference_backend();
}

}  // namespace seqrt
