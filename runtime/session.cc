#include "runtime/session.h"

#include <exception>
#include <new>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "backends/host/interpreter.h"
#include "compiler/infer/infer_graph.h"
#include "compiler/passes/pass.h"
#include "graph/verifier.h"
#include "runtime/backend_registry.h"
#include "runtime/model_loader.h"

namespace seqrt {
namespace {

std::string input_names(const Graph& graph) {
  std::vector<std::string> names;
  for (ValueId id : graph.inputs) names.push_back(graph.value(id).name);
  return fmt::format("{}", fmt::join(names, ", "));
}

const StatePair* state_pair_of(const Graph& graph, ValueId input) {
  for (const StatePair& pair : graph.state_pairs) {
    if (pair.input == input) return &pair;
  }
  return nullptr;
}

}  // namespace

Session::Session(Graph graph, SessionOptions options,
                 std::unique_ptr<Backend> backend,
                 std::unique_ptr<Executable> executable)
    : graph_(std::move(graph)),
      options_(std::move(options)),
      backend_(std::move(backend)),
      executable_(std::move(executable)),
      budget_(std::make_unique<MemoryBudget>(
          graph_, options_.limits.memory_budget_bytes)) {}

Result<std::unique_ptr<Session>> Session::create(Graph graph,
                                                 SessionOptions options) {
  std::string context = fmt::format("graph '{}'", graph.name);
  report_progress(options.progress, "checking types");
  Status status = verify_graph(graph);
  if (status.is_ok()) status = infer_graph(graph);
  if (!status.is_ok()) return status.with_context(context);
  SEQRT_RETURN_IF_ERROR(check_graph_limits(graph, options.limits, context));
  // A graph optimised ahead (seqrt convert --optimize) was verified and
  // typed above like any other; only the passes are skipped.
  if (options.optimize && !is_optimized(graph)) {
    report_progress(options.progress, "optimising");
    status = optimize_graph(graph).status();
  }
  if (!status.is_ok()) return status.with_context(context);

  SEQRT_ASSIGN_OR_RETURN(
      std::unique_ptr<Backend> backend,
      create_backend(options.backend, options.backend_options));
  report_progress(options.progress,
                  fmt::format("compiling for {}", options.backend));
  Result<std::unique_ptr<Executable>> executable =
      backend->compile(graph, options.compile);
  if (!executable.is_ok()) {
    return executable.status().with_context(
        fmt::format("compiling {} for backend '{}'", context, options.backend));
  }
  const int64_t capacity = options.kv_cache_capacity;
  std::unique_ptr<Session> session(
      new Session(std::move(graph), std::move(options), std::move(backend),
                  std::move(executable).value()));
  SEQRT_RETURN_IF_ERROR(
      session->budget_->check_compile(session->options_.compile.dim_bindings));
  if (capacity > 0) {
    SEQRT_RETURN_IF_ERROR(session->create_kv_cache_session());
  }
  return session;
}

Status Session::create_kv_cache_session() {
  report_progress(options_.progress, "fixed-capacity KV cache");
  SEQRT_ASSIGN_OR_RETURN(
      kv_cache_, fixed_capacity_kv_cache(graph_, options_.kv_cache_capacity));
  SessionOptions options = options_;
  options.kv_cache_capacity = 0;
  // Built from the optimised graph: the passes must not run again.
  kv_cache_.graph.metadata[kOptimizedByKey] = default_pipeline_id();
  Result<std::unique_ptr<Session>> session =
      create(std::move(kv_cache_.graph), std::move(options));
  if (!session.is_ok()) {
    return session.status().with_context(fmt::format(
        "the fixed-capacity KV cache form of graph '{}' (kv_cache_capacity "
        "{})",
        graph_.name, options_.kv_cache_capacity));
  }
  kv_cache_session_ = std::move(session).value();
  return Status::ok();
}

Result<std::unique_ptr<Session>> Session::load(const std::string& path,
                                               SessionOptions options) {
  Result<Graph> graph = [&] {
    // The tensor limits hold for the weights the file declares, before
    // they are allocated (graph/run_control.h).
    RunControl control(options.limits);
    RunControl::Scope scope(&control);
    return load_model(path, options.progress);
  }();
  if (!graph.is_ok()) return graph.status();
  return create(std::move(graph).value(), std::move(options));
}

Status Session::check_feed_names(
    const std::map<std::string, Tensor>& feeds) const {
  std::vector<std::string> unknown;
  for (const auto& [name, tensor] : feeds) {
    bool found = false;
    for (ValueId id : graph_.inputs) found |= graph_.value(id).name == name;
    if (!found) unknown.push_back("'" + name + "'");
  }
  if (unknown.empty()) return Status::ok();
  return invalid_argument("graph '{}' has no input {}; its inputs are: {}",
                          graph_.name, fmt::join(unknown, ", "),
                          input_names(graph_));
}

std::map<std::string, int64_t> symbols_from_feeds(
    const Graph& graph, const std::map<std::string, Tensor>& feeds) {
  std::map<std::string, int64_t> symbols;
  for (ValueId id : graph.inputs) {
    const Value& value = graph.value(id);
    auto fed = feeds.find(value.name);
    if (fed == feeds.end() || !value.shape) continue;
    // A rank mismatch is reported by the executable's input check.
    if (value.shape->rank() != fed->second.rank()) continue;
    for (size_t d = 0; d < value.shape->rank(); ++d) {
      const Dim& dim = (*value.shape)[d];
      if (dim.is_symbol())
        symbols.emplace(dim.symbol_name(), fed->second.dim(d));
    }
  }
  return symbols;
}

std::map<std::string, int64_t> Session::bind_symbols(
    const std::map<std::string, Tensor>& feeds) const {
  std::map<std::string, int64_t> symbols = options_.compile.dim_bindings;
  symbols.merge(symbols_from_feeds(graph_, feeds));
  return symbols;
}

Result<Tensor> Session::initial_state(
    const StatePair& pair,
    const std::map<std::string, int64_t>& symbols) const {
  if (pair.initial) return *pair.initial;
  const Value& value = graph_.value(pair.input);
  if (!value.shape) {
    return invalid_argument(
        "state input '{}' of graph '{}' is not fed and its rank is unknown, "
        "so its zero state cannot be made; feed it",
        value.name, graph_.name);
  }
  std::vector<int64_t> dims;
  for (const Dim& dim : value.shape->dims()) {
    if (dim.is_fixed()) {
      dims.push_back(dim.value());
      continue;
    }
    if (!dim.is_symbol()) {
      return invalid_argument(
          "state input '{}' of graph '{}' is not fed and its shape {} has an "
          "unnamed dim, so its zero state cannot be made; feed it",
          value.name, graph_.name, value.shape->to_string());
    }
    // A symbol nothing determines is a length the state grows along (a
    // concatenated KV cache's past length): a sequence starts empty.
    auto bound = symbols.find(dim.symbol_name());
    dims.push_back(bound == symbols.end() ? 0 : bound->second);
  }
  Result<Tensor> zeros = Tensor::allocate(value.dtype, dims);
  if (!zeros.is_ok()) {
    return zeros.status().with_context(
        fmt::format("zero state for input '{}'", value.name));
  }
  return zeros;
}

void Session::prepare_run(RunControl& control,
                          const SessionRunOptions& run_options) const {
  if (run_options.timeout_ms >= 0) {
    control.set_timeout_ms(run_options.timeout_ms);
  }
  control.watch_cancel(&cancel_generation_);
}

Result<std::map<std::string, Tensor>> Session::run(
    std::map<std::string, Tensor> feeds,
    const SessionRunOptions& run_options) const {
  RunControl control(options_.limits);
  prepare_run(control, run_options);
  RunControl::Scope scope(&control);
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                         bind_inputs(std::move(feeds), control));
  return run_bound(std::move(inputs));
}

Result<std::map<std::string, Tensor>> Session::run_bound(
    std::vector<Tensor> inputs) const {
  // Kernels and containers report exhausted memory as bad_alloc; a caller
  // of run() gets it as a value, and the session stays usable.
  try {
    return run_checked(std::move(inputs));
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kOutOfMemory,
                      "graph '{}' on backend '{}': out of host memory",
                      graph_.name, options_.backend);
  } catch (const std::exception& error) {
    return internal_error(
        "graph '{}' on backend '{}': unexpected exception: {}", graph_.name,
        options_.backend, error.what());
  }
}

Result<std::vector<Tensor>> Session::bind_inputs(
    std::map<std::string, Tensor> feeds, RunControl& control) const {
  SEQRT_RETURN_IF_ERROR(check_feed_names(feeds));
  std::map<std::string, int64_t> symbols = bind_symbols(feeds);
  // Before the zero states and the run allocate anything.
  int64_t fed_bytes = 0;
  for (const auto& [name, tensor] : feeds) {
    fed_bytes += static_cast<int64_t>(tensor.byte_size());
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t planned,
                         budget_->check_run(symbols, fed_bytes));
  control.set_planned_bytes(planned);
  std::vector<Tensor> inputs;
  std::vector<std::string> missing;
  for (ValueId id : graph_.inputs) {
    const std::string& name = graph_.value(id).name;
    auto fed = feeds.find(name);
    if (fed != feeds.end()) {
      inputs.push_back(std::move(fed->second));
    } else if (const StatePair* pair = state_pair_of(graph_, id)) {
      SEQRT_ASSIGN_OR_RETURN(Tensor state, initial_state(*pair, symbols));
      inputs.push_back(std::move(state));
    } else {
      missing.push_back("'" + name + "'");
    }
  }
  if (!missing.empty()) {
    return invalid_argument("graph '{}': no tensor fed for input {}",
                            graph_.name, fmt::join(missing, ", "));
  }
  SEQRT_RETURN_IF_ERROR(check_graph_inputs(graph_, inputs));
  return inputs;
}

Result<std::map<std::string, Tensor>> Session::run_checked(
    std::vector<Tensor> inputs) const {
  // A backend that records the whole graph (Vulkan) checks nothing while
  // it runs: stop before it starts.
  SEQRT_RETURN_IF_ERROR(check_run_stop(
      [&] { return fmt::format("before graph '{}' ran", graph_.name); }));
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> results,
                         executable_->run(std::move(inputs)));
  if (results.size() != graph_.outputs.size()) {
    return internal_error(
        "backend '{}' returned {} outputs for graph '{}', "
        "which has {}",
        options_.backend, results.size(), graph_.name, graph_.outputs.size());
  }
  std::map<std::string, Tensor> outputs;
  for (size_t i = 0; i < results.size(); ++i) {
    outputs[graph_.value(graph_.outputs[i]).name] = std::move(results[i]);
  }
  return outputs;
}

}  // namespace seqrt
