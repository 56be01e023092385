// RNN, GRU and LSTM (ops/rnn/) on Vulkan: one dispatch of rnn_step per time
// step (two for GRU without linear_before_reset), each invocation one
// (hidden unit, batch row, direction). h ping-pongs between two scratch
// buffers laid out as the op's initial_h, so initial_h is copied in and Y_h
// copied out unchanged; c is updated in place. The attributes are read by
// the op's own rnn_config, so activations and their alpha/beta match the
// reference exactly. fp32, sequence_lens i32.
#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"
#include "ops/registry.h"
#include "ops/rnn/rnn_common.h"

namespace seqrt::vulkan {
namespace {

constexpr uint32_t kLayout1 = 1, kBidirectional = 2, kReverse = 4, kHasBias = 8,
                   kHasLens = 16, kHasPeep = 32, kHasClip = 64,
                   kInputForget = 128, kLinearBeforeReset = 256, kHasY = 512,
                   kTwoPhase = 1024;
constexpr uint32_t kGroupSize = 64;

RnnKind kind_of(const Node& node) {
  if (node.op == "LSTM") return RnnKind::kLstm;
  return node.op == "GRU" ? RnnKind::kGru : RnnKind::kRnn;
}

Result<RnnConfig> config_of(const Node& node) {
  const OpSchema* schema = OpRegistry::global().find(kOnnxDomain, node.op);
  if (schema == nullptr) return not_found("no op {}", node.op);
  OpContext ctx(node, *schema);
  return rnn_config(ctx, kind_of(node));
}

Status supports_recurrent(const Graph& graph, const Node& node,
                          const DeviceLimits&) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue) continue;
    const Value& value = graph.value(node.inputs[i]);
    const DType want = i == kRnnSequenceLens ? DType::kI32 : DType::kF32;
    if (value.dtype != want) {
      return unsupported(
          "{} (vulkan): input {} '{}' is {}; the kernel takes {}", node.op, i,
          value.name, dtype_name(value.dtype), dtype_name(want));
    }
  }
  for (ValueId id : node.outputs) {
    if (id != kNoValue && graph.value(id).dtype != DType::kF32) {
      return unsupported("{} (vulkan): only fp32 kernels, output '{}' is {}",
                         node.op, graph.value(id).name,
                         dtype_name(graph.value(id).dtype));
    }
  }
  return config_of(node).status();
}

struct StepDims {
  uint32_t seq, batch, input, hidden, dirs;
};

// The push constants of one step.
std::vector<uint8_t> step_constants(const StepDims& d, uint32_t step,
                                    uint32_t flags, const RnnConfig& c) {
  uint32_t acts = 0;
  std::vector<uint32_t> alpha(6, 0), beta(6, 0);
  for (int64_t dir = 0; dir < c.directions; ++dir) {
    for (int64_t slot = 0; slot < c.slots(); ++slot) {
      const RnnActivation& a = c.act(dir, slot);
      const uint32_t index = static_cast<uint32_t>(dir * 3 + slot);
      acts |= static_cast<uint32_t>(a.fn) << (4 * index);
      alpha[index] = float_word(a.alpha);
      beta[index] = float_word(a.beta);
    }
  }
  std::vector<uint8_t> bytes =
      push_bytes({d.seq, d.batch, d.input, d.hidden, step, flags, acts,
                  float_word(c.clip)});
  for (const std::vector<uint32_t>* words : {&alpha, &beta}) {
    std::vector<uint8_t> more =
        push_bytes({(*words)[0], (*words)[1], (*words)[2], (*words)[3],
                    (*words)[4], (*words)[5]});
    bytes.insert(bytes.end(), more.begin(), more.end());
  }
  return bytes;
}

uint32_t flags_of(const RnnConfig& c, const NodeArgs& args) {
  uint32_t flags = 0;
  if (c.layout == 1) flags |= kLayout1;
  if (c.directions == 2) flags |= kBidirectional;
  if (c.reverse) flags |= kReverse;
  if (!input_or_empty(args, kRnnB).empty()) flags |= kHasBias;
  if (!input_or_empty(args, kRnnSequenceLens).empty()) flags |= kHasLens;
  if (c.kind == RnnKind::kLstm && !input_or_empty(args, kRnnP).empty())
    flags |= kHasPeep;
  if (c.has_clip) flags |= kHasClip;
  if (c.input_forget) flags |= kInputForget;
  if (c.linear_before_reset) flags |= kLinearBeforeReset;
  if (!output_or_empty(args, kRnnY).empty()) flags |= kHasY;
  if (c.kind == RnnKind::kGru && !c.linear_before_reset) flags |= kTwoPhase;
  return flags;
}

// initial_h/initial_c into `state`, or zeros.
Status load_state(const NodeArgs& args, size_t input, const BufferSlice& state,
                  Recorder& recorder) {
  const BufferSlice given = input_or_empty(args, input);
  if (given.empty()) return recorder.fill(state, 0);
  return recorder.copy(given, state);
}

Status record_recurrent(const NodeArgs& args, const KernelTiling&,
                        Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(RnnConfig c, config_of(*args.node));
  const std::string& op = args.node->op;
  SEQRT_ASSIGN_OR_RETURN(auto x, dims_of(args, kRnnX, 3, op));
  SEQRT_ASSIGN_OR_RETURN(auto r, dims_of(args, kRnnR, 3, op));
  StepDims d{static_cast<uint32_t>(c.layout == 0 ? x[0] : x[1]),
             static_cast<uint32_t>(c.layout == 0 ? x[1] : x[0]),
             static_cast<uint32_t>(x[2]), static_cast<uint32_t>(r[2]),
             static_cast<uint32_t>(c.directions)};
  // An invocation's loops: the gates' dot products over x_t and h_{t-1}
  // (and GRU's second phase over r ⊙ h), within lavapipe's loop budget.
  const uint64_t loops = uint64_t{static_cast<uint32_t>(c.gates)} *
                             (uint64_t{d.input} + d.hidden) +
                         d.hidden;
  if (loops > kMaxLoopIterations) {
    return unsupported(
        "{} (vulkan): a step's dot products take {} loop iterations per "
        "invocation (input {} + hidden {}), over the budget of {}",
        op, loops, d.input, d.hidden, kMaxLoopIterations);
  }
  const VkDeviceSize state_bytes =
      VkDeviceSize{d.dirs} * d.batch * d.hidden * sizeof(float);
  const BufferSlice y = output_or_empty(args, kRnnY);
  const BufferSlice yh = output_or_empty(args, kRnnYh);
  const BufferSlice yc = output_or_empty(args, kRnnYc);
  if (!y.empty() && y.bytes > 0) SEQRT_RETURN_IF_ERROR(recorder.fill(y, 0));
  if (state_bytes == 0) return Status::ok();
  if (d.seq == 0) {  // every row has length 0: zero final states
    if (!yh.empty()) SEQRT_RETURN_IF_ERROR(recorder.fill(yh, 0));
    if (!yc.empty()) SEQRT_RETURN_IF_ERROR(recorder.fill(yc, 0));
    return Status::ok();
  }
  BufferSlice h[2];
  SEQRT_ASSIGN_OR_RETURN(h[0], recorder.scratch(state_bytes));
  SEQRT_ASSIGN_OR_RETURN(h[1], recorder.scratch(state_bytes));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice cell, recorder.scratch(state_bytes));
  const bool two_phase = c.kind == RnnKind::kGru && !c.linear_before_reset;
  // GRU's z and r ⊙ h between its two phases; one float where unused, as
  // every binding needs a buffer of its own to write.
  const VkDeviceSize saved_bytes = two_phase ? state_bytes : sizeof(float);
  SEQRT_ASSIGN_OR_RETURN(BufferSlice z, recorder.scratch(saved_bytes));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice rh, recorder.scratch(saved_bytes));
  SEQRT_RETURN_IF_ERROR(load_state(args, kRnnInitialH, h[0], recorder));
  if (c.kind == RnnKind::kLstm) {
    SEQRT_RETURN_IF_ERROR(load_state(args, kRnnInitialC, cell, recorder));
  }
  SEQRT_ASSIGN_OR_RETURN(BufferSlice dummy, recorder.scratch(sizeof(float)));
  const BufferSlice xs = input_or_empty(args, kRnnX);
  const uint32_t flags = flags_of(c, args);
  Dispatch step;
  step.shader = "rnn_step";
  step.groups = {(d.hidden + kGroupSize - 1) / kGroupSize, d.batch, d.dirs};
  SEQRT_RETURN_IF_ERROR(check_groups(step.groups, recorder.limits(), op));
  const uint32_t kind = static_cast<uint32_t>(c.kind);
  for (uint32_t s = 0; s < d.seq; ++s) {
    for (uint32_t phase = 0; phase < (two_phase ? 2u : 1u); ++phase) {
      step.specialization = {kGroupSize, kind, phase};
      step.push_constants = step_constants(d, s, flags, c);
      step.reads = {
          xs,
          input_or_empty(args, kRnnW),
          input_or_empty(args, kRnnR),
          or_stand_in(input_or_empty(args, kRnnB), xs),
          or_stand_in(input_or_empty(args, kRnnSequenceLens), xs),
          or_stand_in(c.kind == RnnKind::kLstm ? input_or_empty(args, kRnnP)
                                               : BufferSlice(),
                      xs),
          h[s % 2]};
      step.writes = {h[(s + 1) % 2], cell, y.empty() ? dummy : y, z, rh};
      SEQRT_RETURN_IF_ERROR(recorder.dispatch(step));
    }
  }
  if (!yh.empty()) SEQRT_RETURN_IF_ERROR(recorder.copy(h[d.seq % 2], yh));
  if (!yc.empty()) SEQRT_RETURN_IF_ERROR(recorder.copy(cell, yc));
  return Status::ok();
}

}  // namespace

void register_recurrent_kernels(KernelTable& table) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    VulkanKernel kernel;
    kernel.domain = kOnnxDomain;
    kernel.op = op;
    kernel.supports = supports_recurrent;
    kernel.record = record_recurrent;
    table.add(std::move(kernel));
  }
}

}  // namespace seqrt::vulkan
