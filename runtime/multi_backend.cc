#include "runtime/multi_backend.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <set>

#include "compiler/infer/infer_graph.h"
#include "compiler/partition/partition.h"
#include "runtime/backend_registry.h"
#include "runtime/deferred_executable.h"
#include "runtime/if_on_host.h"
#include "runtime/loop_on_host.h"
#include "runtime/partitioned_executable.h"

namespace seqrt {
namespace {

class MultiBackend : public Backend {
 public:
  explicit MultiBackend(std::vector<std::unique_ptr<Backend>> backends)
      : backends_(std::move(backends)) {
    info_ = backends_.front()->device_info();
    std::vector<std::string> names;
    for (const auto& b : backends_) names.push_back(b->device_info().backend);
    info_.backend = fmt::format("{}", fmt::join(names, ","));
    info_.name = fmt::format("{} (then {})", info_.name,
                             fmt::join(names.begin() + 1, names.end(), ", "));
  }

  const DeviceInfo& device_info() const override { return info_; }

  Status kernel_supports(const Graph& graph, const Node& node) const override {
    std::vector<std::string> reasons;
    for (const auto& backend : backends_) {
      Status ok = backend->supports(graph, node);
      if (ok.is_ok()) return ok;
      reasons.push_back(ok.message());
    }
    return unsupported("{}", fmt::join(reasons, "; "));
  }

  Result<std::unique_ptr<Executable>> compile(
      const Graph& graph, const CompileOptions& options) override {
    std::vector<PartitionTarget> targets;
    for (const auto& backend : backends_) {
      const Backend* b = backend.get();
      targets.push_back(PartitionTarget{
          b->device_info().backend,
          [b](const Graph& g, const Node& n) { return b->supports(g, n); },
          b->device_info().is_host_memory,
          [b](const Graph& g, const Node& n) { return b->host_inputs(g, n); }});
    }
    SEQRT_ASSIGN_OR_RETURN(Partition partition,
                           partition_graph(graph, targets));
    std::vector<PartitionedExecutable::Part> parts;
    for (size_t s = 0; s < partition.segments.size(); ++s) {
      const Segment& segment = partition.segments[s];
      PartitionedExecutable::Part part;
      part.label =
          fmt::format("segment {} ({})", s, partition.targets[segment.target]);
      Backend& backend = *backends_[segment.target];
      if (segment.control) {
        Result<std::unique_ptr<Executable>> compiled =
            segment.graph.nodes.at(0).op == "Loop"
                ? compile_loop_on_host(segment.graph, *this, options)
                : compile_if_on_host(segment.graph, *this, options);
        if (!compiled.is_ok()) {
          return compiled.status().with_context(part.label);
        }
        part.executable = std::move(compiled).value();
      } else if (has_input_of_unknown_rank(segment.graph)) {
        part.executable = std::make_unique<DeferredExecutable>(
            segment.graph, backend, options);
      } else {
        Result<std::unique_ptr<Executable>> compiled =
            backend.compile(segment.graph, options);
        if (!compiled.is_ok()) {
          return compiled.status().with_context(part.label);
        }
        part.executable = std::move(compiled).value();
      }
      for (ValueId id : segment.graph.inputs) {
        part.inputs.push_back(segment.graph.value(id).name);
      }
      for (ValueId id : segment.graph.outputs) {
        part.outputs.push_back(segment.graph.value(id).name);
      }
      part.held = segment.held_states;
      parts.push_back(std::move(part));
    }
    return std::unique_ptr<Executable>(new PartitionedExecutable(
        graph, std::move(partition), std::move(targets), std::move(parts)));
  }

 protected:
  Result<std::unique_ptr<Executable>> compile_lowered(
      const Graph&, const CompileOptions&) override {
    return internal_error("a backend list compiles each segment on its own");
  }

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
  DeviceInfo info_;
};

}  // namespace

Result<std::vector<std::string>> parse_backend_list(const std::string& list) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  size_t start = 0;
  for (;;) {
    const size_t comma = list.find(',', start);
    std::string name = list.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (name.empty()) {
      return invalid_argument(
          "backend list '{}' has an empty name; give names separated by "
          "commas, e.g. vulkan,cpu",
          list);
    }
    if (!seen.insert(name).second) {
      return invalid_argument("backend list '{}' names '{}' twice", list, name);
    }
    names.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return names;
}

Result<std::unique_ptr<Backend>> create_multi_backend(
    const std::string& list, const BackendOptions& options) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         parse_backend_list(list));
  std::vector<std::unique_ptr<Backend>> backends;
  for (size_t i = 0; i < names.size(); ++i) {
    Result<BackendOptions> own = options_for_backend(options, names, i);
    if (!own.is_ok()) {
      return own.status().with_context(fmt::format("backend list '{}'", list));
    }
    Result<std::unique_ptr<Backend>> backend = create_backend(names[i], *own);
    if (!backend.is_ok()) {
      return backend.status().with_context(
          fmt::format("backend list '{}'", list));
    }
    backends.push_back(std::move(backend).value());
  }
  if (backends.size() == 1) return std::move(backends.front());
  return std::unique_ptr<Backend>(new MultiBackend(std::move(backends)));
}

}  // namespace seqrt
