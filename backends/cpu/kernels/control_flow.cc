// CPU kernels of If, Loop and Scan. These ops only route: the work is in
// their bodies, whose nodes run on the CPU kernels because the subgraph
// runner the interpreter hands each kernel (KernelContext::run_subgraph)
// interprets bodies with the CPU backend's kernel chooser. So the kernel is
// the op's own control-flow implementation in ops/control/ (choosing the
// branch, carrying loop state, slicing and stacking scan inputs and
// outputs); the CPU backend's compile() has already checked that every
// body node has a CPU kernel.
#include "backends/cpu/kernel_table.h"
#include "ops/op_schema.h"

namespace seqrt::cpu {
namespace {

Status run_control_flow(KernelContext& ctx) {
  if (!ctx.run_subgraph()) {
    return internal_error("{}: no subgraph runner", ctx.node().label());
  }
  return ctx.schema().reference(ctx);
}

}  // namespace

void register_control_flow_kernels(KernelTable& table) {
  for (const char* op : {"If", "Loop", "Scan"}) {
    table.add(CpuKernel{kOnnxDomain, op, run_control_flow, nullptr});
  }
}

}  // namespace seqrt::cpu
