#include "backends/cpu/cpu_backend.h"

#include <fmt/format.h>

#include "backends/cpu/arena_run.h"
#include "backends/cpu/available_cores.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/node_threads.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/thread_governor.h"
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

// Subgraph nodes (If branches, Loop/Scan/RungeKutta bodies) pick their
// kernels as they run.
Result<KernelFn> choose_kernel(const Node& node, const OpSchema&) {
  SEQRT_ASSIGN_OR_RETURN(const CpuKernel* kernel, find_kernel(node));
  return kernel->run;
}

// The compiled form: the graph's fixed schedule, each node's kernel chosen
// (and prepared) once, and the arena runner holding one memory plan per
// dim binding met.
class CpuExecutable : public Executable {
 public:
  static Result<std::unique_ptr<Executable>> create(
      Graph graph, const CompileOptions& options) {
    std::unique_ptr<CpuExecutable> executable(
        new CpuExecutable(std::move(graph), options));
    SEQRT_RETURN_IF_ERROR(executable->prepare());
    return std::unique_ptr<Executable>(std::move(executable));
  }

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const override {
    cpu::GovernedRun governed(
        num_threads_ > 0 ? num_threads_ : cpu::default_threads(),
        fastest_team_run_);
    InterpretOptions options;
    options.schedule = &schedule_;
    options.kernels = &kernels_;
    options.profiler = profiler_.get();
    // Loop and Scan bodies are prepared once, not per iteration, and kept
    // for the node's later runs (ops/control/loop_body.h).
    options.prepare_subgraphs = true;
    options.node_states = &node_states_;
    if (!use_memory_plan_) {
      return interpret_graph(graph_, std::move(inputs), choose_kernel, nullptr,
                             options);
    }
    return arena_.run(std::move(inputs), choose_kernel, std::move(options));
  }

  std::vector<NodeProfile> profile() const override {
    return profiler_ ? profiler_->report() : std::vector<NodeProfile>();
  }

 private:
  CpuExecutable(Graph graph, const CompileOptions& options)
      : graph_(std::move(graph)),
        num_threads_(options.num_threads),
        use_memory_plan_(options.use_memory_plan),
        profiler_(options.profile ? std::make_unique<NodeProfiler>(graph_)
                                  : nullptr),
        arena_(graph_) {}

  Status prepare() {
    SEQRT_ASSIGN_OR_RETURN(schedule_, schedule_graph(graph_));
    node_states_ = node_states(graph_);
    kernels_.resize(graph_.nodes.size());
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const Node& node = graph_.nodes[i];
      SEQRT_ASSIGN_OR_RETURN(const CpuKernel* kernel, find_kernel(node));
      KernelFn chosen = kernel->run;
      if (kernel->prepare) {
        Result<KernelFn> prepared = kernel->prepare(graph_, node);
        if (!prepared.is_ok()) {
          return prepared.status().with_context("preparing " + node.label());
        }
        chosen = std::move(prepared).value();
      }
      kernels_[i] = cpu::with_node_threads(graph_, node, std::move(chosen));
    }
    return Status::ok();
  }

  Graph graph_;
  int num_threads_;
  bool use_memory_plan_;
  Schedule schedule_;
  std::vector<KernelFn> kernels_;  // by node index
  // By node index: the prepared Loop and Scan bodies kept between runs.
  std::vector<std::shared_ptr<NodeStateCache>> node_states_;
  std::unique_ptr<NodeProfiler> profiler_;  // when compiled to profile
  mutable cpu::FastestRun fastest_team_run_{cpu::kNoRunYet};
  cpu::ArenaRunner arena_;  // reads graph_, declared after it
};

class CpuBackend : public Backend {
 public:
  CpuBackend() {
    info_.backend = "cpu";
    info_.name = fmt::format("host CPU ({} threads)", cpu::default_threads());
    info_.is_host_memory = true;
  }

  const DeviceInfo& device_info() const override { return info_; }

  // Subgraphs run as they are, through the host executor and these kernels.
  LoweringNeeds lowering_needs() const override {
    LoweringNeeds needs;
    needs.kernels_run_subgraphs = true;
    return needs;
  }

  Status kernel_supports(const Graph& graph, const Node& node) const override {
    return node_supported(graph, node);
  }

 protected:
  Result<std::unique_ptr<Executable>> compile_lowered(
      const Graph& graph, const CompileOptions& options) override {
    return CpuExecutable::create(graph, options);
  }

 private:
  DeviceInfo info_;
};

}  // namespace

std::unique_ptr<Backend> create_cpu_backend() {
  return std::make_unique<CpuBackend>();
}

const std::vector<BackendOptionSpec>& cpu_backend_option_specs() {
  static const std::vector<BackendOptionSpec> specs = {
      {"device", "0, the host's one device; threads are num_threads"}};
  return specs;
}

Result<std::unique_ptr<Backend>> create_cpu_backend(
    const BackendOptions& options) {
  SEQRT_RETURN_IF_ERROR(
      check_backend_option_keys("cpu", options, cpu_backend_option_specs()));
  SEQRT_RETURN_IF_ERROR(check_single_device("cpu", options));
  return create_cpu_backend();
}

}  // namespace seqrt
