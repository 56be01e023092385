// seqrt bench MODEL [--backend NAME] [--input NAME=PATH ...]
// [--bind NAME=SIZE ...] [--warmup N] [--runs N] [--min-time S] [--profile
// [--top N]]: latency percentiles, throughput and peak memory of a model's
// runs, and with --profile the kernel time per op and per node.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/planner/bind_dims.h"
#include "compiler/planner/memory_plan.h"
#include "importers/tensor/npy.h"
#include "runtime/backend_registry.h"
#include "runtime/model_loader.h"
#include "runtime/session.h"
#include "tools/backend_option_flags.h"
#include "tools/bench_report.h"
#include "tools/command.h"
#include "tools/input_files.h"
#include "tools/limit_flags.h"
#include "tools/model_flags.h"
#include "tools/progress_display.h"

namespace seqrt {
namespace {

constexpr int kMaxRuns = 1000000;
constexpr uint32_t kInputSeed = 1;

struct BenchOptions {
  std::string model;
  std::string backend = default_backend();
  std::vector<std::string> inputs;    // NAME=PATH
  std::vector<std::string> bindings;  // NAME=SIZE for generated inputs
  int warmup = 3;
  int runs = 20;
  double min_time = 0;  // seconds; runs go on until both are reached
  bool profile = false;
  int top = 15;
  bool no_optimize = false;
  bool no_mmap = false;
  LimitFlags limits;
  std::vector<std::string> backend_options;  // --backend-option KEY=VALUE
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool is_state_input(const Graph& graph, ValueId id) {
  return std::any_of(graph.state_pairs.begin(), graph.state_pairs.end(),
                     [id](const StatePair& pair) { return pair.input == id; });
}

// The fed tensors in graph-input order; state inputs not fed start from
// their initial value inside the run and stay empty here.
std::vector<Tensor> in_graph_order(const Graph& graph,
                                   const std::map<std::string, Tensor>& feeds) {
  std::vector<Tensor> inputs;
  for (ValueId id : graph.inputs) {
    auto it = feeds.find(graph.value(id).name);
    inputs.push_back(it == feeds.end() ? Tensor() : it->second);
  }
  return inputs;
}

// A state input is generated only when --bind sizes its growing dims (a
// KV cache's past length, to time a decode step over a filled cache);
// otherwise it starts from its initial value.
bool state_sized_by(const Value& value,
                    const std::map<std::string, int64_t>& bindings) {
  if (!value.shape) return false;
  bool symbolic = false;
  for (const Dim& dim : value.shape->dims()) {
    if (dim.is_unknown()) return false;
    if (!dim.is_symbol()) continue;
    symbolic = true;
    if (bindings.count(dim.symbol_name()) == 0) return false;
  }
  return symbolic;
}

// Files first; every other input is generated, but for state inputs that
// --bind does not size.
Result<std::map<std::string, Tensor>> bench_feeds(const Graph& graph,
                                                  const BenchOptions& options) {
  SEQRT_ASSIGN_OR_RETURN(auto feeds, read_feeds(options.inputs));
  SEQRT_RETURN_IF_ERROR(feeds_from_npy_compatible(graph, feeds));
  SEQRT_ASSIGN_OR_RETURN(auto bindings, parse_bindings(options.bindings));
  for (ValueId id : graph.inputs) {
    const Value& value = graph.value(id);
    if (feeds.count(value.name) != 0) continue;
    if (is_state_input(graph, id) && !state_sized_by(value, bindings)) {
      continue;
    }
    SEQRT_ASSIGN_OR_RETURN(Tensor tensor,
                           generated_input(value, bindings, kInputSeed + id));
    feeds.emplace(value.name, std::move(tensor));
  }
  return feeds;
}

// The CPU-side memory plan of the compiled graph for this run's shapes.
void print_memory_plan_figures(const Session& session,
                               const std::map<std::string, Tensor>& feeds) {
  const Graph& graph = session.graph();
  auto bindings = bindings_from_inputs(graph, in_graph_order(graph, feeds));
  Result<MemoryPlan> plan = plan_memory(graph, bindings);
  if (!plan.is_ok()) {
    fmt::print("memory plan: not available for these shapes ({})\n",
               plan.status().message());
    return;
  }
  fmt::print("memory plan {}: peak arena {} (naive sum {}, {:.1f}%)\n",
             bindings_to_string(bindings), human_bytes(plan->peak_arena_bytes),
             human_bytes(plan->naive_arena_bytes),
             plan->naive_arena_bytes == 0
                 ? 100.0
                 : 100.0 * static_cast<double>(plan->peak_arena_bytes) /
                       static_cast<double>(plan->naive_arena_bytes));
}

Status run_bench(const BenchOptions& options) {
  if (options.runs < 1 || options.runs > kMaxRuns || options.warmup < 0 ||
      options.min_time < 0) {
    return invalid_argument(
        "--runs must be in [1, {}], --warmup and --min-time >= 0", kMaxRuns);
  }
  int64_t rss_start = peak_rss_bytes();
  ProgressDisplay progress;
  Clock::time_point start = Clock::now();
  SEQRT_ASSIGN_OR_RETURN(Graph graph,
                         load_model(options.model, progress.callback(),
                                    file_access(options.no_mmap)));
  double load_s = seconds_since(start);

  SessionOptions session_options;
  session_options.backend = options.backend;
  SEQRT_ASSIGN_OR_RETURN(session_options.backend_options,
                         parse_backend_option_flags(options.backend_options));
  session_options.optimize = !options.no_optimize;
  SEQRT_RETURN_IF_ERROR(
      apply_limit_flags(options.limits, session_options.limits));
  session_options.compile.profile = options.profile;
  session_options.progress = progress.callback();
  start = Clock::now();
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                         Session::create(std::move(graph), session_options));
  double compile_s = seconds_since(start);
  progress.finish();
  int64_t rss_loaded = peak_rss_bytes();

  SEQRT_ASSIGN_OR_RETURN(auto feeds, bench_feeds(session->graph(), options));
  fmt::print("model: {}\nbackend: {} ({})\n", options.model, options.backend,
             session->device_info().name);
  fmt::print("load {:.1f} ms, compile {:.1f} ms\n", 1e3 * load_s,
             1e3 * compile_s);
  print_feeds(session->graph(), feeds, options.inputs);

  start = Clock::now();
  for (int i = 0; i < options.warmup; ++i) {
    SEQRT_RETURN_IF_ERROR(session->run(feeds).status());
  }
  double first_s = seconds_since(start);
  // The profile of the timed runs only: the warm-up's part is subtracted.
  std::vector<NodeProfile> warmup_profile = session->profile();
  std::vector<double> latencies;
  Clock::time_point timed = Clock::now();
  while (static_cast<int>(latencies.size()) < options.runs ||
         (seconds_since(timed) < options.min_time &&
          static_cast<int>(latencies.size()) < kMaxRuns)) {
    start = Clock::now();
    SEQRT_RETURN_IF_ERROR(session->run(feeds).status());
    latencies.push_back(seconds_since(start));
  }
  double total_s = seconds_since(timed);

  if (options.warmup > 0) {
    fmt::print("warm-up: {} run(s), {:.3f} ms\n", options.warmup,
               1e3 * first_s);
  }
  print_latency(latencies);
  print_throughput(session->graph(), feeds, latencies.size(), total_s);
  fmt::print("peak RSS: {} (model loaded and compiled: {}, at start: {})\n",
             human_bytes(peak_rss_bytes()), human_bytes(rss_loaded),
             human_bytes(rss_start));
  print_memory_plan_figures(*session, feeds);
  if (options.profile) {
    std::vector<NodeProfile> profile = session->profile();
    if (profile.empty()) {
      // Not "kernels 0.0 %": the backend times no node.
      fmt::print(
          "\nprofile: none; backend '{}' has no per-node profiler "
          "(the cpu and reference backends have one)\n",
          options.backend);
    } else {
      print_profile(profile_difference(std::move(profile), warmup_profile),
                    total_s, options.top);
    }
  }
  return Status::ok();
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Time a model's runs: latency percentiles, throughput, peak memory, "
      "and a per-op profile with --profile");
  sub->add_option("FILE", options->model, "Model file (.seqrt or .onnx)")
      ->required();
  sub->add_option("--backend", options->backend,
                  "Backend to run on, or a list such as vulkan,cpu: each node "
                  "on the first that runs it")
      ->capture_default_str();
  sub->add_option("--input", options->inputs,
                  "An input from a file, as NAME=PATH (.npy or .pb); inputs "
                  "not given are generated (floats uniform in [-1, 1), "
                  "integers 0, booleans false; state inputs start from "
                  "their initial value unless --bind sizes their symbolic "
                  "dims)");
  sub->add_option("--bind", options->bindings,
                  "Size of a symbolic dim of the generated inputs, as "
                  "NAME=SIZE (repeatable), e.g. --bind seq=128");
  sub->add_option("--warmup", options->warmup, "Untimed runs first")
      ->capture_default_str();
  sub->add_option("--runs", options->runs, "Timed runs (at least)")
      ->capture_default_str();
  sub->add_option("--min-time", options->min_time,
                  "Go on timing runs until this many seconds have passed")
      ->capture_default_str();
  sub->add_flag("--profile", options->profile,
                "Time every node's kernel and print the time per op and the "
                "slowest nodes");
  sub->add_option("--top", options->top,
                  "Nodes listed by --profile, slowest first")
      ->capture_default_str();
  sub->add_flag("--no-optimize", options->no_optimize,
                "Run the graph as given, without the optimisation passes");
  add_no_mmap_flag(*sub, options->no_mmap);
  add_limit_flags(*sub, options->limits);
  add_backend_option_flag(*sub, options->backend_options);
  return {sub, [options] { return run_bench(*options); }};
}

}  // namespace seqrt
