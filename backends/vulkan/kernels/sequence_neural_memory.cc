// seqrt::NeuralMemory (Titans long-term memory) on Vulkan, the token loop
// (shader seq_neural_memory): one workgroup per (batch, head), the memory's
// weights, momentum and anchor in device memory (the present_state output,
// or scratch), tokens in segments within the loop budget (tiling.h). The
// `position` input is read on the device: a negative one sets an error word
// that fails the run naming the node. Prompts with long enough chunks take
// the chunk-parallel form instead (sequence_neural_memory_chunked.cc).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "backends/vulkan/kernels/sequence_neural_memory.h"
#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"
#include "ops/sequence/neural_memory.h"

namespace seqrt::vulkan {
namespace {

constexpr uint32_t kMaxInvocations = 256;

bool given(const NodeArgs& args, size_t i) {
  return i < args.inputs.size() && !args.inputs[i].empty();
}

// `position` (B): its values on the device, except that a constant one is
// checked now so that the error comes at compile (its dims are the op's
// check).
Status check_positions(const NodeArgs& args, const MemoryCall& c) {
  if (!given(args, kNmPosition)) return Status::ok();
  const std::string label = args.node->label();
  const Tensor* position =
      args.graph == nullptr
          ? nullptr
          : args.graph->constant(args.node->inputs[kNmPosition]);
  for (int64_t b = 0; position != nullptr && b < c.batch; ++b) {
    if (position->element_i64(b) < 0) {
      return invalid_argument(
          "{}: input 'position' must be >= 0, got {} for batch {}", label,
          position->element_i64(b), b);
    }
  }
  return Status::ok();
}

}  // namespace

// The op's own check (ops/sequence/neural_memory.h) on the planned dims.
Result<MemoryCall> neural_memory_call(const NodeArgs& args) {
  SEQRT_ASSIGN_OR_RETURN(
      NeuralMemoryDims n,
      check_neural_memory(*args.node, input_types(args, kNmCount)));
  MemoryCall c{n.batch, n.heads,          n.seq, n.d, n.m, n.depth, n.chunk,
               n.gelu,  n.retrieve_before};
  // The shader takes positions modulo the chunk in 32-bit words.
  if (c.chunk > INT32_MAX) {
    return invalid_argument("{}: chunk_size must be in [1, 2^31), got {}",
                            args.node->label(), c.chunk);
  }
  SEQRT_RETURN_IF_ERROR(check_positions(args, c));
  return c;
}

Result<MemoryBindings> neural_memory_bindings(const NodeArgs& args,
                                              const MemoryCall& c,
                                              Recorder& recorder) {
  const BufferSlice q = input_or_empty(args, kNmQ);
  BufferSlice work = output_or_empty(args, kNmPresentState);
  if (work.empty()) {
    SEQRT_ASSIGN_OR_RETURN(
        work, recorder.scratch(4 * static_cast<VkDeviceSize>(c.batch) *
                               c.heads * 3 * c.params()));
  }
  const bool has_position = given(args, kNmPosition);
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  // A run-time `position` is checked by the device (a constant one was
  // checked by neural_memory_call); the shader sets the word on a negative
  // value.
  const bool runtime_position =
      has_position &&
      (args.graph == nullptr ||
       !args.graph->is_constant(args.node->inputs[kNmPosition]));
  Result<BufferSlice> error =
      runtime_position
          ? recorder.error_word("input 'position' has a negative value")
          : recorder.scratch(4);
  SEQRT_RETURN_IF_ERROR(error.status());
  MemoryBindings out;
  if (c.gelu) out.flags |= kNmGelu;
  if (c.before) out.flags |= kNmBefore;
  if (given(args, kNmPastState)) out.flags |= kNmHasPast;
  if (has_position) out.flags |= kNmHasPosition;
  for (size_t i = kNmQ; i <= kNmPastState; ++i) {
    out.dispatch.reads.push_back(or_stand_in(input_or_empty(args, i), q));
  }
  out.dispatch.reads.push_back(
      input_or_empty(args, has_position ? kNmPosition : kNmQ));
  out.dispatch.writes = {or_stand_in(output_or_empty(args, kNmY), spare), work,
                         *error};
  return out;
}

namespace {

Result<KernelTiling> plan_token_loop(const MemoryCall& c,
                                     const DeviceLimits& limits) {
  const uint32_t wg = std::min(limits.max_invocations, kMaxInvocations);
  const uint32_t widest = static_cast<uint32_t>(std::max(c.d, c.m));
  const uint32_t shared = 4 * 3 * widest;
  if (wg == 0 || shared > limits.shared_memory_bytes) {
    return unsupported(
        "NeuralMemory (vulkan): d = {}, m = {} need {} B of shared memory, "
        "the device allows {} B",
        c.d, c.m, shared, limits.shared_memory_bytes);
  }
  // Loop iterations per token (tiling.h, kMaxLoopIterations): two forward
  // passes, the residual, the backward vector, the update and the anchor.
  auto per = [&](int64_t n) {
    return static_cast<uint64_t>((n + wg - 1) / wg);
  };
  const int64_t width = c.depth == 2 ? c.m : c.d;
  const uint64_t forward =
      per(width) * (1 + c.d) + per(c.d) * (1 + (c.depth == 2 ? c.m : 0)) + 2;
  const uint64_t per_token =
      2 * forward + per(c.d) + per(c.m) * (1 + c.d) + 2 * per(c.params()) + 8;
  // The fixed part: the state's initialisation, and the position modulo the
  // chunk taken a bit at a time (64).
  const uint32_t segment =
      segment_tokens(per_token, 1, per(3 * c.params()) + 16 + 64);
  KernelTiling out;
  out.state_place = "device memory (weights, momentum, anchor)";
  out.summary = fmt::format(
      "token loop, one workgroup of {} invocations per (batch, head), "
      "{} tokens per dispatch",
      wg, segment);
  out.shared_bytes = shared;
  out.shared_limit = limits.shared_memory_bytes;
  out.constants = {wg, widest, segment};
  return out;
}

Result<KernelTiling> plan(const NodeArgs& args, const DeviceLimits& limits) {
  SEQRT_ASSIGN_OR_RETURN(MemoryCall c, neural_memory_call(args));
  if (auto chunked = plan_neural_memory_chunked(c, limits)) return *chunked;
  return plan_token_loop(c, limits);
}

Status record_token_loop(const NodeArgs& args, const MemoryCall& c,
                         const KernelTiling& tiling, Recorder& recorder) {
  const std::vector<uint32_t>& k = tiling.constants;
  if (k.size() != 3 || k[0] == 0 || k[2] == 0) {
    return internal_error("NeuralMemory (vulkan): not a NeuralMemory tiling");
  }
  SEQRT_ASSIGN_OR_RETURN(MemoryBindings bindings,
                         neural_memory_bindings(args, c, recorder));
  Dispatch& dispatch = bindings.dispatch;
  dispatch.shader = "seq_neural_memory";
  dispatch.specialization = {k[0], k[1]};
  dispatch.groups = {1, static_cast<uint32_t>(c.batch * c.heads), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(dispatch.groups, recorder.limits(), "NeuralMemory"));
  const int64_t segment = k[2];
  for (int64_t begin = 0; begin == 0 || begin < c.seq; begin += segment) {
    const uint32_t flags =
        begin == 0 ? bindings.flags | kNmInit : bindings.flags;
    dispatch.push_constants = push_bytes(
        {static_cast<uint32_t>(c.batch), static_cast<uint32_t>(c.heads),
         static_cast<uint32_t>(c.seq), static_cast<uint32_t>(c.d),
         static_cast<uint32_t>(c.m), static_cast<uint32_t>(c.depth), flags,
         static_cast<uint32_t>(c.chunk), static_cast<uint32_t>(begin),
         static_cast<uint32_t>(std::min(c.seq, begin + segment))});
    SEQRT_RETURN_IF_ERROR(recorder.dispatch(dispatch));
  }
  return Status::ok();
}

Status record(const NodeArgs& args, const KernelTiling& tiling,
              Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(MemoryCall c, neural_memory_call(args));
  if (c.batch * c.heads == 0) return Status::ok();
  if (is_chunked_neural_memory(tiling)) {
    return record_neural_memory_chunked(args, c, tiling, recorder);
  }
  return record_token_loop(args, c, tiling, recorder);
}

}  // namespace

void register_sequence_neural_memory_kernels(KernelTable& table) {
  VulkanKernel kernel;
  kernel.domain = kSeqrtDomain;
  kernel.op = "NeuralMemory";
  kernel.supports = [](const Graph& graph, const Node& node,
                       const DeviceLimits&) -> Status {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] == kNoValue) continue;
      const Value& value = graph.value(node.inputs[i]);
      const DType want = i == kNmPosition ? DType::kI64 : DType::kF32;
      if (value.dtype != want) {
        return unsupported(
            "NeuralMemory (vulkan): input {} '{}' is {}, the kernel takes {}",
            i, value.name, dtype_name(value.dtype), dtype_name(want));
      }
    }
    for (ValueId id : node.outputs) {
      if (id != kNoValue && graph.value(id).dtype != DType::kF32) {
        return unsupported(
            "NeuralMemory (vulkan): only fp32 outputs, '{}' is {}",
            graph.value(id).name, dtype_name(graph.value(id).dtype));
      }
    }
    return Status::ok();
  };
  kernel.plan = plan;
  kernel.record = record;
  table.add(std::move(kernel));
}

}  // namespace seqrt::vulkan
