// Elementwise ops: fp32 unary ops through one shader with the op as a
// specialisation constant, binary ops with numpy broadcasting likewise
// (fp32, and i32/i64 through shaders/binary_int.comp).
#include <map>

#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

// Op codes of shaders/unary.comp and shaders/binary.comp.
const std::map<std::string, uint32_t> kUnaryOps = {
    {"Relu", 0},       {"Sigmoid", 1}, {"Tanh", 2},  {"Exp", 3},
    {"Log", 4},        {"Neg", 5},     {"Abs", 6},   {"Sqrt", 7},
    {"Reciprocal", 8}, {"Erf", 9},     {"Gelu", 11}, {"Sin", 15},
    {"Cos", 16},       {"Floor", 17},  {"Ceil", 18}, {"Softplus", 19},
    {"Sign", 21},
};
const std::map<std::string, uint32_t> kBinaryOps = {
    {"Add", 0}, {"Sub", 1}, {"Mul", 2}, {"Div", 3},
    {"Pow", 7}, {"Max", 5}, {"Min", 6},
};

// Neg of i32 or i64: shaders/binary_int.comp's code 8, input 0 as both.
Status record_int_neg(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& out = args.output_dims[0];
  int64_t count = element_count(out);
  std::vector<uint32_t> words = {static_cast<uint32_t>(count), 1};
  append_padded(words, {count}, 1);
  append_padded(words, {1}, 0);
  append_padded(words, {1}, 0);
  Dispatch dispatch;
  dispatch.shader = "binary_int";
  dispatch.specialization = {
      kLocalSize, 8, static_cast<uint32_t>(dtype_code(args.output_dtypes[0]))};
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0], args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status record_unary(uint32_t code, const NodeArgs& args, Recorder& recorder) {
  const Node& node = *args.node;
  if (node.op == "Neg" && args.output_dtypes[0] != DType::kF32) {
    return record_int_neg(args, recorder);
  }
  // Gelu's tanh approximation has its own code (23).
  if (node.op == "Gelu" && node_attr_string(node, "approximate") == "tanh") {
    code = 23;
  }
  int64_t count = element_count(args.output_dims[0]);
  Dispatch dispatch;
  dispatch.shader = "unary";
  dispatch.specialization = {kLocalSize, code};
  dispatch.push_constants = push_bytes(
      // alpha, beta: read only by unary.comp codes of unregistered ops.
      {static_cast<uint32_t>(count), float_word(0.0f), float_word(0.0f)});
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status record_binary(uint32_t code, const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& out = args.output_dims[0];
  if (out.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       args.node->label(), out.size(), kMaxRank);
  }
  int64_t count = element_count(out);
  std::vector<uint32_t> words = {static_cast<uint32_t>(count),
                                 static_cast<uint32_t>(out.size())};
  append_padded(words, out, 1);
  append_padded(words, broadcast_strides(args.input_dims[0], out), 0);
  append_padded(words, broadcast_strides(args.input_dims[1], out), 0);
  Dispatch dispatch;
  int type = dtype_code(args.output_dtypes[0]);
  dispatch.shader = type == 0 ? "binary" : "binary_int";
  dispatch.specialization = {kLocalSize, code};
  if (type != 0) dispatch.specialization.push_back(type);
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0], args.inputs[1]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_f32(const Graph& graph, const Node& node, const DeviceLimits&) {
  DType dtype = graph.value(node.inputs[0]).dtype;
  if (node.op == "Neg" && (dtype == DType::kI32 || dtype == DType::kI64)) {
    return require_outputs(graph, node, dtype);
  }
  return require_f32(graph, node);
}

Status require_nonzero_divisor(const Graph& graph, const Node& node) {
  if (const Tensor* divisor = graph.constant(node.inputs[1])) {
    for (int64_t i = 0; i < divisor->num_elements(); ++i) {
      if (divisor->element_i64(i) == 0) {
        return invalid_argument("{}: integer division by zero", node.label());
      }
    }
    return Status::ok();
  }
  if (require_shape_derived(graph, node, 1).is_ok()) return Status::ok();
  return unsupported(
      "{}: the integer divisor '{}' comes from input data; a zero divisor is "
      "an error the device cannot report, so the Vulkan Div takes constant "
      "or dim-derived integer divisors",
      node.label(), graph.value(node.inputs[1]).name);
}

Status supports_binary(const Graph& graph, const Node& node,
                       const DeviceLimits&) {
  if (node.inputs.size() != 2) {
    return unsupported("{}: the Vulkan kernel takes exactly 2 inputs, not {}",
                       node.label(), node.inputs.size());
  }
  // i32 and i64 (shape arithmetic) for every op but Pow.
  DType dtype = graph.value(node.inputs[0]).dtype;
  if ((dtype == DType::kI32 || dtype == DType::kI64) && node.op != "Pow") {
    SEQRT_RETURN_IF_ERROR(require_input(graph, node, 1, dtype));
    SEQRT_RETURN_IF_ERROR(require_outputs(graph, node, dtype));
    // A zero divisor is an error the device cannot report: divisors must be
    // non-zero constants or made from dims.
    if (node.op == "Div" || node.op == "Mod") {
      return require_nonzero_divisor(graph, node);
    }
    return Status::ok();
  }
  return require_f32(graph, node);
}

}  // namespace

void register_elementwise_kernels(KernelTable& table) {
  for (const auto& [op, code] : kUnaryOps) {
    uint32_t c = code;
    table.add({kOnnxDomain, op, supports_f32, nullptr,
               [c](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_unary(c, args, r);
               }});
  }
  // Mod: C's fmod for f32 (binary.comp code 8); for integers the sign of
  // the divisor (fmod=0, binary_int.comp code 9) or of the dividend (10).
  table.add({kOnnxDomain, "Mod", supports_binary, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               bool c_style = node_attr_int(*args.node, "fmod") != 0;
               uint32_t code = args.output_dtypes[0] == DType::kF32 ? 8
                               : c_style                            ? 10
                                                                    : 9;
               return record_binary(code, args, r);
             }});
  for (const auto& [op, code] : kBinaryOps) {
    uint32_t c = code;
    table.add({kOnnxDomain, op, supports_binary, nullptr,
               [c](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_binary(c, args, r);
               }});
  }
}

}  // namespace seqrt::vulkan
