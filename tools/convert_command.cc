// seqrt convert IN OUT [--optimize]: reads a model, verifies it and writes
// it as .seqrt, optimised by the default passes when asked. IN is a .seqrt
// or an ONNX file.
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/pass.h"
#include "graph/verifier.h"
#include "importers/native/writer.h"
#include "runtime/model_loader.h"
#include "tools/command.h"
#include "tools/model_flags.h"
#include "tools/progress_display.h"

namespace seqrt {
namespace {

struct ConvertOptions {
  std::string input;
  std::string output;
  bool no_mmap = false;
  bool optimize = false;
};

Status convert_model(const ConvertOptions& options) {
  std::string extension =
      std::filesystem::path(options.output).extension().string();
  if (extension != ".seqrt") {
    return unsupported("'{}': convert writes .seqrt files only",
                       options.output);
  }
  ProgressDisplay progress;
  SEQRT_ASSIGN_OR_RETURN(Graph graph,
                         load_model(options.input, progress.callback(),
                                    file_access(options.no_mmap)));
  Status verified = verify_graph(graph);
  if (!verified.is_ok()) {
    return verified.with_context(fmt::format("'{}'", options.input));
  }
  if (options.optimize && !is_optimized(graph)) {
    report_progress(progress.callback(), "optimising");
    Status typed = infer_graph(graph);
    if (typed.is_ok()) typed = optimize_graph(graph).status();
    if (!typed.is_ok()) {
      return typed.with_context(fmt::format("optimising '{}'", options.input));
    }
  }
  // The writer renames a finished temporary file into place, so writing
  // over the input, whose constants are mapped, is safe.
  report_progress(progress.callback(), "writing " + options.output);
  SEQRT_RETURN_IF_ERROR(write_seqrt_file(graph, options.output));
  progress.finish();
  fmt::print("wrote {}: graph '{}', {} nodes, {} constants\n", options.output,
             graph.name, graph.nodes.size(), graph.constants.size());
  return Status::ok();
}

}  // namespace

Command add_convert_command(CLI::App& app) {
  auto options = std::make_shared<ConvertOptions>();
  CLI::App* sub = app.add_subcommand(
      "convert", "Read a model, verify it and write it as a .seqrt file");
  sub->add_option("IN", options->input, "Model to read (.seqrt or .onnx)")
      ->required();
  sub->add_option("OUT", options->output, "File to write (.seqrt)")->required();
  sub->add_flag("--optimize", options->optimize,
                "Store the graph as the optimisation passes leave it (folded, "
                "fused), marked as such, so that loading it skips the passes; "
                "it is still verified and typed on load");
  add_no_mmap_flag(*sub, options->no_mmap);
  return {sub, [options] { return convert_model(*options); }};
}

}  // namespace seqrt
