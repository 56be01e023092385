// seqrt run FILE --input NAME=PATH ... [--output-dir DIR [--pb]]
// [--backend NAME] [--repeat N]: runs a model on tensors from .npy or ONNX
// TensorProto (.pb) files.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "importers/onnx/tensor_proto.h"
#include "importers/tensor/npy.h"
#include "runtime/backend_registry.h"
#include "runtime/model_loader.h"
#include "runtime/session.h"
#include "tools/backend_option_flags.h"
#include "tools/command.h"
#include "tools/input_files.h"
#include "tools/limit_flags.h"
#include "tools/model_flags.h"
#include "tools/progress_display.h"

namespace seqrt {
namespace {

// Values shown per output in the summary printed without --output-dir.
constexpr int64_t kSummaryValues = 8;
constexpr int kMaxRepeat = 1000000;

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;  // NAME=PATH
  std::string output_dir;
  bool write_pb = false;  // also DIR/<name>.pb
  std::string backend = default_backend();
  int repeat = 1;
  bool no_optimize = false;
  bool no_mmap = false;
  LimitFlags limits;
  std::vector<std::string> backend_options;  // --backend-option KEY=VALUE
};

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid]
                                : (values[mid - 1] + values[mid]) / 2;
}

// DESIGN.md §8: characters outside [A-Za-z0-9_.-] become '_'.
std::string output_file_stem(const std::string& output_name) {
  std::string file = output_name;
  for (char& c : file) {
    bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!keep) c = '_';
  }
  return file;
}

Status write_outputs(const std::map<std::string, Tensor>& outputs,
                     const std::string& dir, bool write_pb) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return io_error("cannot create output directory '{}': {}", dir,
                    error.message());
  }
  std::set<std::string> files;
  for (const auto& [name, tensor] : outputs) {
    std::string stem = output_file_stem(name);
    if (!files.insert(stem).second) {
      return invalid_argument(
          "outputs '{}' and another output both map to file '{}.npy'", name,
          stem);
    }
    std::string path = (std::filesystem::path(dir) / stem).string();
    SEQRT_RETURN_IF_ERROR(write_npy_file(tensor, path + ".npy"));
    fmt::print("wrote {}.npy: {} {}\n", path, dtype_name(tensor.dtype()),
               dims_to_string(tensor.dims()));
    if (write_pb) {
      SEQRT_RETURN_IF_ERROR(write_tensor_pb_file(tensor, name, path + ".pb"));
      fmt::print("wrote {}.pb\n", path);
    }
  }
  return Status::ok();
}

std::string element_text(const Tensor& tensor, int64_t i) {
  if (is_float(tensor.dtype()))
    return fmt::format("{:.6g}", tensor.element_f64(i));
  return fmt::format("{}", tensor.element_i64(i));
}

void print_summary(const std::string& name, const Tensor& tensor) {
  fmt::print("{}: {} {}", name, dtype_name(tensor.dtype()),
             dims_to_string(tensor.dims()));
  double min = INFINITY, max = -INFINITY, sum = 0;
  int64_t nans = 0;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    double value = tensor.element_f64(i);
    if (std::isnan(value)) {
      ++nans;
      continue;
    }
    min = std::min(min, value);
    max = std::max(max, value);
    sum += value;
  }
  int64_t counted = tensor.num_elements() - nans;
  if (counted > 0) {
    fmt::print("  min {:.6g} max {:.6g} mean {:.6g}", min, max,
               sum / static_cast<double>(counted));
  }
  if (nans > 0) fmt::print("  nan {}", nans);
  std::vector<std::string> first;
  int64_t shown = std::min(tensor.num_elements(), kSummaryValues);
  for (int64_t i = 0; i < shown; ++i) first.push_back(element_text(tensor, i));
  fmt::print("  [{}{}]\n", fmt::join(first, ", "),
             shown < tensor.num_elements() ? ", ..." : "");
}

Status run_model(const RunOptions& options) {
  if (options.write_pb && options.output_dir.empty()) {
    return invalid_argument("--pb needs --output-dir");
  }
  ProgressDisplay progress;
  Clock::time_point start = Clock::now();
  SEQRT_ASSIGN_OR_RETURN(Graph graph,
                         load_model(options.model, progress.callback(),
                                    file_access(options.no_mmap)));
  double load_ms = elapsed_ms(start);

  SessionOptions session_options;
  session_options.backend = options.backend;
  SEQRT_ASSIGN_OR_RETURN(session_options.backend_options,
                         parse_backend_option_flags(options.backend_options));
  session_options.optimize = !options.no_optimize;
  SEQRT_RETURN_IF_ERROR(
      apply_limit_flags(options.limits, session_options.limits));
  session_options.progress = progress.callback();
  // One run's inputs: compiled for their sizes (the Vulkan backend writes
  // out a Scan only over a length it knows at compile).
  SEQRT_ASSIGN_OR_RETURN(auto feeds, read_feeds(options.inputs));
  // .npy has no i4/u4/f4e2m1/float8: such inputs come as i8/u8/f32 arrays.
  SEQRT_RETURN_IF_ERROR(feeds_from_npy_compatible(graph, feeds));
  session_options.compile.dim_bindings = symbols_from_feeds(graph, feeds);
  start = Clock::now();
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                         Session::create(std::move(graph), session_options));
  double compile_ms = elapsed_ms(start);
  progress.finish();

  std::map<std::string, Tensor> outputs;
  std::vector<double> run_ms;
  for (int i = 0; i < options.repeat; ++i) {
    start = Clock::now();
    SEQRT_ASSIGN_OR_RETURN(outputs, session->run(feeds));
    run_ms.push_back(elapsed_ms(start));
  }

  if (options.output_dir.empty()) {
    for (const auto& [name, tensor] : outputs) print_summary(name, tensor);
  } else {
    SEQRT_RETURN_IF_ERROR(
        write_outputs(outputs, options.output_dir, options.write_pb));
  }
  fmt::print(
      "time: load {:.3f} ms, compile {:.3f} ms, run {:.3f} ms (median "
      "of {} on backend '{}')\n",
      load_ms, compile_ms, median(run_ms), options.repeat, options.backend);
  if (run_ms.size() > 1) {
    // The median hides a slow tail (a busy machine, a page fault); the mean
    // is what a stream of runs costs.
    std::vector<double> sorted = run_ms;
    std::sort(sorted.begin(), sorted.end());
    double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) /
                  static_cast<double>(sorted.size());
    fmt::print("runs: mean {:.3f} ms, p90 {:.3f} ms, max {:.3f} ms\n", mean,
               sorted[(sorted.size() * 9) / 10], sorted.back());
  }
  return Status::ok();
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run",
      "Run a model on inputs from .npy or .pb files and report its outputs");
  sub->add_option("FILE", options->model, "Model file (.seqrt or .onnx)")
      ->required();
  sub->add_option("-i,--input", options->inputs,
                  "Graph input NAME=PATH (.npy, or .pb: ONNX TensorProto); "
                  "repeat for each input")
      ->allow_extra_args(false);
  sub->add_option("-o,--output-dir", options->output_dir,
                  "Write each output as DIR/<output name>.npy instead of "
                  "printing a summary");
  sub->add_flag("--pb", options->write_pb,
                "With --output-dir, also write DIR/<output name>.pb (ONNX "
                "TensorProto)");
  sub->add_option("-b,--backend", options->backend,
                  fmt::format("Backend to run on ({}), or a list such as "
                              "vulkan,cpu: each node on the first that runs it",
                              fmt::join(compiled_backends(), ", ")))
      ->capture_default_str();
  sub->add_option("-r,--repeat", options->repeat,
                  "Run N times; the run time reported is the median")
      ->check(CLI::Range(1, kMaxRepeat))
      ->capture_default_str();
  sub->add_flag("--no-optimize", options->no_optimize,
                "Run the graph as given, without the fusion passes");
  add_no_mmap_flag(*sub, options->no_mmap);
  add_limit_flags(*sub, options->limits);
  add_backend_option_flag(*sub, options->backend_options);
  return {sub, [options] { return run_model(*options); }};
}

}  // namespace seqrt
