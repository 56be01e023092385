// seqrt inspect FILE [--graph] [--passes] [--dot OUT]
//   [--plan [--backend NAME] [--bind NAME=SIZE ...]]: what a model takes,
// returns and contains; the graph, its optimisation, its memory plan, a
// backend's kernel plan and a Graphviz picture of it.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "graph/dot.h"
#include "graph/printer.h"
#include "runtime/model_loader.h"
#include "tools/backend_option_flags.h"
#include "tools/command.h"
#include "tools/human_bytes.h"
#include "tools/inspect_kernels.h"
#include "tools/inspect_passes.h"
#include "tools/inspect_plan.h"
#include "tools/model_flags.h"

namespace seqrt {
namespace {

struct InspectOptions {
  std::string model;
  bool print_graph = false;
  bool print_passes = false;
  bool print_plan = false;
  std::vector<std::string> bindings;  // NAME=SIZE, for --plan
  std::string backend;                // --plan --backend: its kernel plan
  std::vector<std::string> backend_options;  // --backend-option KEY=VALUE
  std::string dot_path;  // --dot: where to write the DOT text
  bool no_mmap = false;
};

std::string type_text(const Value& value) {
  return fmt::format("{} {}", dtype_name(value.dtype),
                     value.shape ? value.shape->to_string() : "(rank unknown)");
}

void print_values(const Graph& graph, const char* title,
                  const std::vector<ValueId>& ids) {
  fmt::print("{} ({}):\n", title, ids.size());
  for (ValueId id : ids) {
    fmt::print("  {}: {}\n", graph.value(id).name, type_text(graph.value(id)));
  }
}

// Most frequent first, then by name, so the output is stable.
void print_op_counts(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const Node& node : graph.nodes) {
    ++counts[node.domain.empty() ? node.op : node.domain + "::" + node.op];
  }
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  fmt::print("ops ({} nodes):\n", graph.nodes.size());
  for (const auto& [op, count] : sorted) fmt::print("  {:<24} {}\n", op, count);
}

void print_parameters(const Graph& graph) {
  uint64_t elements = 0;
  uint64_t bytes = 0;
  for (const auto& [id, tensor] : graph.constants) {
    elements += static_cast<uint64_t>(tensor.num_elements());
    bytes += tensor.byte_size();
  }
  fmt::print("parameters: {} in {} constants, {} bytes ({})\n", elements,
             graph.constants.size(), bytes,
             human_bytes(static_cast<int64_t>(bytes)));
}

void print_state_pairs(const Graph& graph) {
  fmt::print("state pairs ({}):\n", graph.state_pairs.size());
  for (const StatePair& pair : graph.state_pairs) {
    fmt::print("  {} -> {}: {} (initial: {})\n", graph.value(pair.input).name,
               graph.value(pair.output).name,
               type_text(graph.value(pair.input)),
               pair.initial ? "given" : "zeros");
  }
}

void print_metadata(const Graph& graph) {
  fmt::print("metadata ({}):\n", graph.metadata.size());
  for (const auto& [key, value] : graph.metadata) {
    fmt::print("  {}: {}\n", key, value);
  }
}

Status write_dot_file(const std::string& path, const std::string& text) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) {
    return io_error("cannot write '{}': {}", path, std::strerror(errno));
  }
  bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (std::fclose(file) != 0 || !written) {
    return io_error("cannot write '{}': {}", path, std::strerror(errno));
  }
  return Status::ok();
}

Status run_inspect(const InspectOptions& options) {
  SEQRT_ASSIGN_OR_RETURN(
      Graph graph, load_model(options.model, {}, file_access(options.no_mmap)));
  fmt::print("model: {}\n", options.model);
  fmt::print("graph: {}\n", graph.name);
  print_values(graph, "inputs", graph.inputs);
  print_values(graph, "outputs", graph.outputs);
  print_op_counts(graph);
  print_parameters(graph);
  print_state_pairs(graph);
  print_metadata(graph);
  if (options.print_graph) fmt::print("\n{}", print_graph(graph));
  if (options.print_passes) SEQRT_RETURN_IF_ERROR(print_passes(graph));
  if (options.print_plan) {
    SEQRT_RETURN_IF_ERROR(print_memory_plan(graph, options.bindings));
    if (!options.backend.empty()) {
      SEQRT_ASSIGN_OR_RETURN(
          BackendOptions backend_options,
          parse_backend_option_flags(options.backend_options));
      SEQRT_RETURN_IF_ERROR(print_kernel_plan(
          graph, options.backend, backend_options, options.bindings));
    }
  }
  if (!options.dot_path.empty()) {
    SEQRT_RETURN_IF_ERROR(
        write_dot_file(options.dot_path, graph_to_dot(graph)));
    fmt::print("graph picture: {} (render: dot -Tsvg {} -o graph.svg)\n",
               options.dot_path, options.dot_path);
  }
  return Status::ok();
}

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand(
      "inspect",
      "Show a model's inputs, outputs, op counts, parameters, state pairs and "
      "metadata");
  sub->add_option("FILE", options->model, "Model file (.seqrt)")->required();
  sub->add_flag("--graph", options->print_graph,
                "Also print every node of the graph");
  sub->add_flag("--passes", options->print_passes,
                "Also print the graph before and after the optimisation "
                "passes, with what each pass did");
  CLI::Option* plan = sub->add_flag(
      "--plan", options->print_plan,
      "Also print the memory plan: each value's kind, arena offset and size, "
      "and the peak arena next to the naive sum");
  sub->add_option("--bind", options->bindings,
                  "Size of a symbolic dim for --plan, as NAME=SIZE "
                  "(repeatable)")
      ->needs(plan);
  CLI::Option* backend =
      sub->add_option("--backend", options->backend,
                      "With --plan: also compile on this backend and print "
                      "its kernel-level plan (per node: tiling, where the "
                      "running state lives, shared memory per workgroup and "
                      "the limit); a list such as vulkan,cpu also prints the "
                      "segments, which node went where and why, and the "
                      "bytes crossing per run")
          ->needs(plan);
  add_backend_option_flag(*sub, options->backend_options)->needs(backend);
  sub->add_option("--dot", options->dot_path,
                  "Write the graph as Graphviz DOT to this file (render it "
                  "with 'dot -Tsvg FILE -o graph.svg')");
  add_no_mmap_flag(*sub, options->no_mmap);
  return {sub, [options] { return run_inspect(*options); }};
}

}  // namespace seqrt
