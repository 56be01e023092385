// seqrt quantize IN OUT --weights int8|int4 [--block N] [--symmetric]
// [--skip NAME...] [--output-layer keep|int8|int4] [--embedding keep|int8|int4]
// [--activations f32|int8] [--input NAME=PATH...]: optimises the model, rewrites its matmul weights
// as weight-only quantized seqrt::Linear nodes and, when asked, its
// embedding tables as seqrt::QuantizedGather
// (compiler/quantize/quantize_weights.h) and writes a
// .seqrt file; prints the sizes and, given inputs, each output's error
// against the f32 model on the CPU backend.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/pass.h"
#include "compiler/quantize/quantize_weights.h"
#include "graph/verifier.h"
#include "importers/native/writer.h"
#include "runtime/model_loader.h"
#include "runtime/session.h"
#include "tools/command.h"
#include "tools/human_bytes.h"
#include "tools/input_files.h"
#include "tools/model_flags.h"

namespace seqrt {
namespace {

struct QuantizeCommandOptions {
  std::string input, output, weights = "int8", output_layer = "keep",
                             embedding = "keep", activations = "f32";
  int64_t block = 32;
  bool symmetric = false, no_mmap = false;
  std::vector<std::string> skip, inputs;
};

Result<int> bits_of(const std::string& flag, const std::string& value) {
  if (value == "int8") return 8;
  if (value == "int4") return 4;
  const bool may_keep = flag != "--weights";
  if (value == "keep" && may_keep) return 0;
  return invalid_argument("{} '{}': expected {}", flag, value,
                          may_keep ? "keep, int8 or int4" : "int8 or int4");
}

// The outputs of `graph` on the CPU backend for `feeds`.
Result<std::map<std::string, Tensor>> run_on_cpu(
    Graph graph, const std::map<std::string, Tensor>& feeds) {
  SessionOptions options;
  options.backend = "cpu";
  options.optimize = false;  // both graphs are optimised already
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                         Session::create(std::move(graph), options));
  return session->run(feeds);
}

// Each output's largest difference, absolute and relative to the output's
// largest magnitude.
Status print_errors(const Graph& f32, const Graph& quantized,
                    const std::vector<std::string>& specs) {
  SEQRT_ASSIGN_OR_RETURN(auto feeds, read_feeds(specs));
  SEQRT_ASSIGN_OR_RETURN(auto want, run_on_cpu(f32, feeds));
  SEQRT_ASSIGN_OR_RETURN(auto got, run_on_cpu(quantized, feeds));
  for (const auto& [name, reference] : want) {
    const Tensor& tensor = got.at(name);
    if (!is_float(reference.dtype())) continue;
    double worst = 0, largest = 0;
    for (int64_t i = 0; i < reference.num_elements(); ++i) {
      worst = std::max(
          worst, std::fabs(tensor.element_f64(i) - reference.element_f64(i)));
      largest = std::max(largest, std::fabs(reference.element_f64(i)));
    }
    fmt::print(
        "error of '{}' against f32: max abs {:.3g}, relative to its largest "
        "value {:.3g}\n",
        name, worst, largest > 0 ? worst / largest : 0.0);
  }
  return Status::ok();
}

Status quantize_model(const QuantizeCommandOptions& options) {
  if (std::filesystem::path(options.output).extension() != ".seqrt") {
    return unsupported("'{}': quantize writes .seqrt files only",
                       options.output);
  }
  QuantizeOptions quantize;
  SEQRT_ASSIGN_OR_RETURN(quantize.bits, bits_of("--weights", options.weights));
  SEQRT_ASSIGN_OR_RETURN(quantize.output_layer_bits,
                         bits_of("--output-layer", options.output_layer));
  SEQRT_ASSIGN_OR_RETURN(quantize.embedding_bits,
                         bits_of("--embedding", options.embedding));
  if (options.activations != "f32" && options.activations != "int8") {
    return invalid_argument("--activations '{}': expected f32 or int8",
                            options.activations);
  }
  quantize.activation_bits = options.activations == "int8" ? 8 : 0;
  quantize.block_size = options.block;
  quantize.symmetric = options.symmetric;
  quantize.skip.insert(options.skip.begin(), options.skip.end());

  SEQRT_ASSIGN_OR_RETURN(Graph graph, load_model(options.input, nullptr,
                                                 file_access(options.no_mmap)));
  Status ready = verify_graph(graph);
  if (ready.is_ok()) ready = infer_graph(graph);
  if (ready.is_ok() && !is_optimized(graph)) {
    ready = optimize_graph(graph).status();
  }
  if (!ready.is_ok())
    return ready.with_context(fmt::format("'{}'", options.input));
  const Graph f32 = graph;
  SEQRT_ASSIGN_OR_RETURN(QuantizeReport report,
                         quantize_weights(graph, quantize));
  Status typed = infer_graph(graph);
  if (!typed.is_ok()) return typed.with_context("the quantized graph");

  for (const QuantizedWeight& q : report.quantized) {
    fmt::print("  {}: {} x {} -> int{} ({} -> {})\n", q.node, q.k, q.n, q.bits,
               human_bytes(q.bytes_before), human_bytes(q.bytes_after));
  }
  for (const std::string& kept : report.kept) fmt::print("  kept: {}\n", kept);
  fmt::print("quantized {} weight(s); parameters {} -> {} ({:.1f}% of f32)\n",
             report.quantized.size(),
             human_bytes(report.parameter_bytes_before),
             human_bytes(report.parameter_bytes_after),
             100.0 * report.parameter_bytes_after /
                 std::max<uint64_t>(1, report.parameter_bytes_before));
  if (!options.inputs.empty()) {
    SEQRT_RETURN_IF_ERROR(print_errors(f32, graph, options.inputs));
  }
  SEQRT_RETURN_IF_ERROR(write_seqrt_file(graph, options.output));
  fmt::print("wrote {}\n", options.output);
  return Status::ok();
}

}  // namespace

Command add_quantize_command(CLI::App& app) {
  auto options = std::make_shared<QuantizeCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "quantize",
      "Write a .seqrt whose matmul weights are 8- or 4-bit (f32 "
      "activations and accumulation, or int8 activations on request)");
  sub->add_option("IN", options->input, "Model to read (.seqrt or .onnx)")
      ->required();
  sub->add_option("OUT", options->output, "File to write (.seqrt)")->required();
  sub->add_option("--weights", options->weights, "int8 or int4 (default int8)");
  sub->add_option("--block", options->block,
                  "Weights per scale along the inner dim: a power of two "
                  "of at least 16 (default 32)");
  sub->add_flag("--symmetric", options->symmetric,
                "No zero points: each block's scale from its largest "
                "magnitude (default: each block's range, with a zero point)");
  sub->add_option("--skip", options->skip,
                  "Node or weight name to leave in f32 (repeatable)");
  sub->add_option("--output-layer", options->output_layer,
                  "The layer writing a graph output (a vocabulary "
                  "projection): keep (f32, the default), int8 or int4");
  sub->add_option("--embedding", options->embedding,
                  "Embedding tables (a Gather of rows of a constant "
                  "matrix): keep (f32, the default), int8 or int4");
  sub->add_option("--activations", options->activations,
                  "f32 (the default) or int8: the quantized matmuls quantize "
                  "their input per block and compute in integers, as "
                  "MatMulNBits' accuracy_level 4 (faster, less exact)");
  sub->add_option("--input", options->inputs,
                  "NAME=PATH (.npy or .pb): with inputs, print each output's "
                  "error against the f32 model on the CPU backend");
  add_no_mmap_flag(*sub, options->no_mmap);
  return {sub, [options] { return quantize_model(*options); }};
}

}  // namespace seqrt
