#include "tools/inspect_kernels.h"

#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "runtime/session.h"
#include "tools/human_bytes.h"
#include "tools/input_files.h"

namespace seqrt {
namespace {

std::string shared_text(const KernelPlanEntry& entry) {
  if (entry.shared_limit == 0)
    return human_bytes(static_cast<int64_t>(entry.shared_bytes));
  return fmt::format("{} of {}",
                     human_bytes(static_cast<int64_t>(entry.shared_bytes)),
                     human_bytes(static_cast<int64_t>(entry.shared_limit)));
}

}  // namespace

Status print_kernel_plan(const Graph& graph, const std::string& backend,
                         const BackendOptions& backend_options,
                         const std::vector<std::string>& bindings) {
  SEQRT_ASSIGN_OR_RETURN(auto dims, parse_bindings(bindings));
  SessionOptions options;
  options.backend = backend;
  options.backend_options = backend_options;
  options.compile.dim_bindings = dims;
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                         Session::create(graph, options));
  const std::string placement = session->placement_report(dims);
  if (!placement.empty()) {
    fmt::print("\nplacement on {}: {}", backend, placement);
  }
  Result<std::vector<KernelPlanEntry>> plan = session->kernel_plan(dims);
  if (plan.status().code() == StatusCode::kUnsupported) {
    return plan.status().with_context("kernel plan on " + backend);
  }
  if (!plan.is_ok()) {
    return plan.status().with_context(fmt::format(
        "kernel plan on {} (bind symbolic dims with --bind NAME=SIZE)",
        backend));
  }
  fmt::print("\nkernel plan on {} ({}): {} node(s) with a tiling\n", backend,
             session->device_info().name, plan->size());
  if (plan->empty()) return Status::ok();
  size_t node_width = 4;
  size_t op_width = 2;
  for (const KernelPlanEntry& entry : *plan) {
    node_width = std::max(node_width, entry.node.size());
    op_width = std::max(op_width, entry.op.size());
  }
  fmt::print("{:<{}}  {:<{}}  {:<13}  {:<22}  {}\n", "node", node_width, "op",
             op_width, "state", "shared / limit", "tiling");
  for (const KernelPlanEntry& entry : *plan) {
    fmt::print("{:<{}}  {:<{}}  {:<13}  {:<22}  {}\n",
               entry.node.empty() ? "-" : entry.node, node_width, entry.op,
               op_width, entry.state_place.empty() ? "-" : entry.state_place,
               shared_text(entry), entry.tiling);
  }
  return Status::ok();
}

}  // namespace seqrt
