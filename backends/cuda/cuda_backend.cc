#include "backends/cuda/cuda_backend.h"

#include <fmt/format.h>

#include "backends/cuda/cuda_context.h"
#include "backends/cuda/kernel_plan.h"
#include "backends/cuda/kernel_table.h"
#include "backends/host/interpreter.h"

namespace seqrt::cuda {
namespace {

Status node_supported(const Graph& graph, const Node& node) {
  return cuda_node_supported(graph, node);
}

// The graph's schedule with each node's kernel bound to the context; runs
// node by node, one at a time per context.
class CudaExecutable : public Executable {
 public:
  CudaExecutable(Graph graph, std::shared_ptr<CudaContext> context)
      : graph_(std::move(graph)), context_(std::move(context)) {}

  Status prepare() {
    SEQRT_ASSIGN_OR_RETURN(schedule_, schedule_graph(graph_));
    for (const Node& node : graph_.nodes) {
      const CudaKernel* kernel = find_cuda_kernel(node.domain, node.op);
      CudaContext* context = context_.get();
      kernels_.push_back([kernel, context](KernelContext& ctx) {
        return kernel->run(ctx, *context);
      });
    }
    return Status::ok();
  }

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const override {
    std::lock_guard<std::mutex> lock(context_->mutex());
    SEQRT_RETURN_IF_ERROR(context_->activate());
    InterpretOptions options;
    options.schedule = &schedule_;
    options.kernels = &kernels_;
    // RungeKutta bodies (the only subgraphs supported) run node by node
    // on the CUDA kernels.
    CudaContext* context = context_.get();
    auto body_kernel = [context](const Node& node,
                                 const OpSchema&) -> Result<KernelFn> {
      const CudaKernel* kernel = find_cuda_kernel(node.domain, node.op);
      if (kernel == nullptr) {
        return unsupported("{}: the cuda backend has no kernel for this op",
                           node.label());
      }
      return KernelFn([kernel, context](KernelContext& ctx) {
        return kernel->run(ctx, *context);
      });
    };
    return interpret_graph(graph_, std::move(inputs), body_kernel, nullptr,
                           options);
  }

  // The tilings the kernels will choose on this device (tiling.h).
  Result<std::vector<KernelPlanEntry>> kernel_plan(
      const std::map<std::string, int64_t>& bindings) const override {
    return plan_cuda_kernels(graph_, context_->limits(), bindings);
  }

 private:
  Graph graph_;
  std::shared_ptr<CudaContext> context_;
  Schedule schedule_;
  std::vector<KernelFn> kernels_;
};

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(std::shared_ptr<CudaContext> context)
      : context_(std::move(context)) {}

  const DeviceInfo& device_info() const override { return context_->info(); }

  Status kernel_supports(const Graph& graph, const Node& node) const override {
    for (const std::vector<ValueId>* ids : {&node.inputs, &node.outputs}) {
      for (ValueId id : *ids) {
        if (id == kNoValue || !is_storage_only(graph.value(id).dtype)) {
          continue;
        }
        return unsupported(
            "{}: '{}' is {}; the CUDA backend has no i4/u4/f4e2m1/float8 "
            "kernels",
            node.label(), graph.value(id).name,
            dtype_name(graph.value(id).dtype));
      }
    }
    SEQRT_RETURN_IF_ERROR(node_supported(graph, node));
    return check_plannable(graph, node, context_->limits());
  }

 protected:
  Result<std::unique_ptr<Executable>> compile_lowered(
      const Graph& graph, const CompileOptions&) override {
    auto executable = std::make_unique<CudaExecutable>(graph, context_);
    SEQRT_RETURN_IF_ERROR(executable->prepare());
    return std::unique_ptr<Executable>(std::move(executable));
  }

 private:
  std::shared_ptr<CudaContext> context_;
};

}  // namespace

Result<std::unique_ptr<Backend>> create_cuda_backend(int device) {
  SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<CudaContext> context,
                         CudaContext::create(device));
  return std::unique_ptr<Backend>(new CudaBackend(std::move(context)));
}

}  // namespace seqrt::cuda
