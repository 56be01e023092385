// CPU kernel of seqrt::FusedElementwise. The body is compiled once per node
// (CpuKernel::prepare) into a register program (fused_elementwise_program.h)
// and run block by block: each instruction is one vectorised pass over a
// block of kBlock elements, so intermediates stay in L1 and memory sees each
// input once and the output once. Blocks run in parallel. Inputs of the
// output's shape are read in place, one-element inputs as splats, and other
// broadcasts are gathered per block into a scratch buffer. f16/bf16 are
// converted at the edges; the program computes in f32.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/fused_elementwise_program.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

// Elements per block: a few registers of this size fit in L1.
constexpr int64_t kBlock = 1024;
// Blocks per parallel task: below this, threads cost more than they save.
constexpr int64_t kGrainBlocks = 16;

// How one source is read for a block of the output.
struct SourcePlan {
  enum class Mode { kFull, kScalar, kGather };
  Mode mode = Mode::kFull;
  const float* data = nullptr;
  // kGather: the output dims with the source's strides (0 on broadcast
  // axes), neighbouring axes merged where the source steps through them as
  // through one.
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
};

SourcePlan plan_source(const Tensor& x, const std::vector<int64_t>& out_dims,
                       int64_t n) {
  SourcePlan plan;
  plan.data = x.data_as<float>();
  if (x.num_elements() == n) return plan;
  if (x.num_elements() == 1) {
    plan.mode = SourcePlan::Mode::kScalar;
    return plan;
  }
  plan.mode = SourcePlan::Mode::kGather;
  std::vector<int64_t> strides = broadcast_strides(x.dims(), out_dims);
  for (size_t i = 0; i < out_dims.size(); ++i) {
    int64_t d = out_dims[i];
    if (d == 1) continue;
    if (!plan.dims.empty() && plan.strides.back() == strides[i] * d) {
      plan.dims.back() *= d;
      plan.strides.back() = strides[i];
      continue;
    }
    plan.dims.push_back(d);
    plan.strides.push_back(strides[i]);
  }
  return plan;
}

// dst[0, n) = the source's elements for output elements [begin, begin + n),
// copied or splatted one run of the innermost axis at a time. `index` is
// scratch for the position.
void gather_block(const SourcePlan& s, int64_t begin, int64_t n, float* dst,
                  std::vector<int64_t>& index) {
  const size_t rank = s.dims.size();
  index.assign(rank, 0);
  int64_t offset = 0;
  for (size_t i = rank, rest = static_cast<size_t>(begin); i-- > 0;) {
    index[i] = static_cast<int64_t>(rest) % s.dims[i];
    rest /= static_cast<size_t>(s.dims[i]);
    offset += index[i] * s.strides[i];
  }
  const int64_t inner = s.dims.back();
  const int64_t step = s.strides.back();
  for (int64_t done = 0; done < n;) {
    int64_t run = std::min(inner - index.back(), n - done);
    if (step == 1) {
      std::memcpy(dst + done, s.data + offset, sizeof(float) * run);
    } else {
      std::fill(dst + done, dst + done + run, s.data[offset]);
    }
    done += run;
    index.back() += run;
    offset += run * step;
    // Carry into the outer axes when the innermost one wraps.
    for (size_t i = rank - 1; index[i] == s.dims[i] && i > 0; --i) {
      offset -= s.dims[i] * s.strides[i];
      index[i] = 0;
      ++index[i - 1];
      offset += s.strides[i - 1];
    }
  }
}

Status check_inputs(const KernelContext& ctx, const FusedProgram& program) {
  if (ctx.num_inputs() != program.num_inputs) {
    return ctx.error("has {} inputs, its body takes {}", ctx.num_inputs(),
                     program.num_inputs);
  }
  return require_same_float_inputs(ctx);
}

// Runs the blocks [first, last) of the output on one thread.
void run_blocks(const FusedProgram& program,
                const std::vector<SourcePlan>& plans, int64_t n, float* out,
                int64_t first, int64_t last) {
  size_t gathers = 0;
  for (const SourcePlan& s : plans) {
    gathers += s.mode == SourcePlan::Mode::kGather ? 1 : 0;
  }
  size_t buffers = static_cast<size_t>(program.num_registers) + gathers;
  std::vector<float> scratch(buffers * kBlock);
  std::vector<BlockOperand> operands(plans.size());
  std::vector<int64_t> index;
  for (int64_t block = first; block < last; ++block) {
    int64_t begin = block * kBlock;
    int64_t count = std::min(kBlock, n - begin);
    float* gather_buffer = scratch.data() + program.num_registers * kBlock;
    for (size_t k = 0; k < plans.size(); ++k) {
      const SourcePlan& s = plans[k];
      switch (s.mode) {
        case SourcePlan::Mode::kFull:
          operands[k] = {s.data + begin, 1};
          break;
        case SourcePlan::Mode::kScalar:
          operands[k] = {s.data, 0};
          break;
        case SourcePlan::Mode::kGather:
          gather_block(s, begin, count, gather_buffer, index);
          operands[k] = {gather_buffer, 1};
          gather_buffer += kBlock;
          break;
      }
    }
    run_fused_block(program, operands, scratch.data(), kBlock, out + begin,
                    static_cast<size_t>(count));
  }
}

Status run_program(KernelContext& ctx, const FusedProgram& program) {
  SEQRT_RETURN_IF_ERROR(check_inputs(ctx, program));
  DType dtype = ctx.input(0)->dtype();
  std::vector<Tensor> inputs;
  std::vector<int64_t> out_dims;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(*ctx.input(i)));
    SEQRT_ASSIGN_OR_RETURN(out_dims, broadcast_dims(ctx, out_dims, x.dims()));
    inputs.push_back(std::move(x));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor y, f32_output(ctx, 0, dtype, out_dims));
  const int64_t n = y.num_elements();
  std::vector<SourcePlan> plans;
  for (const Tensor& x : inputs) plans.push_back(plan_source(x, out_dims, n));
  for (const Tensor& c : program.constants) {
    plans.push_back(plan_source(c, out_dims, n));
  }
  float* out = y.mutable_data_as<float>();
  int64_t blocks = (n + kBlock - 1) / kBlock;
  parallel_chunks(blocks, kGrainBlocks, [&](int64_t first, int64_t last) {
    run_blocks(program, plans, n, out, first, last);
  });
  return set_output_as(ctx, 0, y, dtype);
}

Result<FusedProgram> compile_node(const Node& node) {
  const Attribute* body = node.attr("body");
  if (body == nullptr || body->type() != AttrType::kGraph ||
      body->as_graph() == nullptr) {
    return unsupported("{}: has no graph attribute 'body'", node.label());
  }
  return compile_fused_program(node, *body->as_graph());
}

Status supports_fused_elementwise(const Graph& graph, const Node& node) {
  SEQRT_RETURN_IF_ERROR(require_all_f32_family(graph, node));
  return compile_node(node).status();
}

// Without prepare (a graph run node by node), the body is compiled per run.
Status run_fused_elementwise(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(FusedProgram program, compile_node(ctx.node()));
  return run_program(ctx, program);
}

Result<KernelFn> prepare_fused_elementwise(const Graph&, const Node& node) {
  SEQRT_ASSIGN_OR_RETURN(FusedProgram program, compile_node(node));
  auto shared = std::make_shared<const FusedProgram>(std::move(program));
  return KernelFn(
      [shared](KernelContext& ctx) { return run_program(ctx, *shared); });
}

}  // namespace

void register_fused_elementwise_kernels(KernelTable& table) {
  table.add(CpuKernel{kSeqrtDomain, "FusedElementwise", run_fused_elementwise,
                      supports_fused_elementwise, prepare_fused_elementwise});
}

}  // namespace seqrt::cpu
