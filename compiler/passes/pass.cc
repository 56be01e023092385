#include "compiler/passes/pass.h"

#include <fmt/format.h>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/passes.h"
#include "graph/verifier.h"

namespace seqrt {
namespace {

// A pass must leave a graph that verifies and type-checks.
Status check_after(const std::string& pass, Graph& graph) {
  Status status = verify_graph(graph);
  if (status.is_ok()) status = infer_graph(graph);
  if (status.is_ok()) return status;
  return internal_error("pass '{}' left an invalid graph: {}", pass,
                        status.message());
}

}  // namespace

Result<std::vector<PassStats>> run_passes(Graph& graph,
                                          const std::vector<Pass>& passes) {
  std::vector<PassStats> all_stats;
  for (const Pass& pass : passes) {
    PassStats stats;
    stats.name = pass.name;
    stats.nodes_before = graph.nodes.size();
    const int max_runs = pass.repeat ? kMaxPassRepeats : 1;
    for (int run = 0; run < max_runs; ++run) {
      ++stats.runs;
      Result<bool> changed = pass.run_noting
                                 ? pass.run_noting(graph, stats.notes)
                                 : pass.run(graph);
      if (!changed.is_ok()) {
        return changed.status().with_context(
            fmt::format("in pass '{}'", pass.name));
      }
      if (!*changed) break;
      stats.changed = true;
      SEQRT_RETURN_IF_ERROR(check_after(pass.name, graph));
    }
    stats.nodes_after = graph.nodes.size();
    all_stats.push_back(stats);
  }
  return all_stats;
}

std::vector<Pass> default_passes() {
  return {infer_shapes_pass(), fuse_dequantize_linear_pass(),
          fold_constants_pass(),
          infer_symbolic_shapes_pass(), eliminate_dead_code_pass(),
          fuse_attention_pass(),
          // Then attentions whose K was pinned by a read of its shape.
          rebase_shape_reads_pass(), fuse_attention_pass(),
          fold_unrolled_loops_pass(), loop_to_scan_pass(),
          lift_scan_recurrences_pass(), fuse_layer_norm_pass(),
          fuse_rms_norm_pass(), fuse_gelu_pass(), fuse_retention_pass(),
          fuse_linear_pass(), fuse_sibling_linears_pass(), fuse_gemm_pass(),
          fuse_elementwise_pass(), fold_constants_pass(),
          eliminate_dead_code_pass()};
}

Result<std::vector<PassStats>> optimize_graph(Graph& graph) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<PassStats> stats,
                         run_passes(graph, default_passes()));
  graph.metadata[kOptimizedByKey] = default_pipeline_id();
  return stats;
}

std::string default_pipeline_id() {
  std::vector<std::string> names;
  for (const Pass& pass : default_passes()) names.push_back(pass.name);
  return fmt::format("{}:{}", kPipelineRevision, fmt::join(names, ","));
}

bool is_optimized(const Graph& graph) {
  auto mark = graph.metadata.find(kOptimizedByKey);
  return mark != graph.metadata.end() && mark->second == default_pipeline_id();
}

std::string format_pass_stats(const std::vector<PassStats>& stats) {
  std::string text;
  for (const PassStats& s : stats) {
    text += fmt::format("  {:<22} {} run{}  {} -> {} nodes{}\n", s.name, s.runs,
                        s.runs == 1 ? " " : "s", s.nodes_before, s.nodes_after,
                        s.changed ? "" : "  (unchanged)");
    for (const std::string& note : s.notes)
      text += fmt::format("      {}\n", note);
  }
  return text;
}

}  // namespace seqrt
