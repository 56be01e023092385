// seqrt::FusedElementwise: the body graph compiled into an instruction list
// that one generic interpreter (shaders/fused_elementwise.comp) runs per
// output element over a fixed register file, so every body shares one
// pipeline. The program (input strides, instructions, constants) goes into a
// small scratch buffer, written by fills recorded before the dispatch.
// fp32, like the other Vulkan elementwise kernels.
#include <algorithm>
#include <map>
#include <string>

#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/elementwise/fused_body.h"

namespace seqrt::vulkan {
namespace {

// Limits of shaders/fused_elementwise.comp (an operand byte holds a 6-bit
// index, so constants stay under 64).
constexpr size_t kMaxInputs = 16;
constexpr int kMaxRegisters = 16;
constexpr size_t kMaxInstructions = 64;
constexpr size_t kMaxConstants = 64;

// Op codes of the shader's apply(): unary below 16, binary from 16.
const std::map<std::string, uint32_t> kOps = {
    {"Sqrt", 0},       {"Exp", 1},   {"Log", 2},  {"Neg", 3},     {"Abs", 4},
    {"Reciprocal", 5}, {"Erf", 6},   {"Tanh", 7}, {"Sigmoid", 8}, {"Relu", 9},
    {"Softplus", 10},  {"Gelu", 11}, {"Add", 16}, {"Sub", 17},    {"Mul", 18},
    {"Div", 19},       {"Pow", 20},  {"Max", 21}, {"Min", 22},
};
constexpr uint32_t kGeluTanh = 12;
constexpr uint32_t kFirstBinary = 16;

enum OperandKind : uint32_t { kRegister = 0, kInput = 1, kConstant = 2 };
constexpr uint32_t kNoOperand = ~0u;

uint32_t operand(OperandKind kind, size_t index) {
  return static_cast<uint32_t>(kind) << 6 | static_cast<uint32_t>(index);
}

struct FusedProgram {
  size_t num_inputs = 0;
  std::vector<uint32_t> code;
  std::vector<float> constants;
  uint32_t result = 0;  // register of the output
  int num_registers = 0;
};

Status body_error(const Node& fused, const Node& node, const std::string& why) {
  return unsupported("{}: body node {} {}", fused.label(), node.label(), why);
}

Result<const Graph*> body_of(const Node& node) {
  const Attribute* attr = node.attr("body");
  if (attr == nullptr || attr->type() != AttrType::kGraph ||
      attr->as_graph() == nullptr) {
    return unsupported("{}: has no body graph", node.label());
  }
  return attr->as_graph().get();
}

// The op code of a body node, checking its arity and attributes.
Result<uint32_t> op_code(const Node& fused, const Node& node) {
  auto it = kOps.find(node.op);
  if (node.domain != kOnnxDomain || it == kOps.end()) {
    return body_error(fused, node, "is not an op the Vulkan program runs");
  }
  uint32_t code = it->second;
  size_t known_attrs = 0;
  if (const Attribute* approx = node.attr("approximate");
      approx != nullptr && node.op == "Gelu") {
    known_attrs = 1;
    std::string mode =
        approx->type() == AttrType::kString ? approx->as_string() : "";
    if (mode != "none" && mode != "tanh") {
      return body_error(fused, node, "has an approximate other than none/tanh");
    }
    if (mode == "tanh") code = kGeluTanh;
  }
  if (node.attrs.size() != known_attrs) {
    return body_error(fused, node, "has attributes the Vulkan program lacks");
  }
  size_t arity = code < kFirstBinary ? 1 : 2;
  if (node.inputs.size() != arity || node.outputs.size() != 1) {
    return body_error(
        fused, node,
        fmt::format("must have {} input(s) and one output", arity));
  }
  return code;
}

// The body nodes the output depends on, within the program's size.
Result<std::vector<int>> needed_nodes(const Node& fused, const Graph& body) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int> result,
                         fused_body_nodes(fused, body));
  if (result.size() > kMaxInstructions) {
    return unsupported(
        "{}: the body needs {} instructions, over the Vulkan program's {}",
        fused.label(), result.size(), kMaxInstructions);
  }
  return result;
}

// Operands of the node's inputs and the body's (one-element, f32)
// constants.
Result<std::vector<uint32_t>> source_operands(const Node& fused,
                                              const Graph& body,
                                              FusedProgram& program) {
  std::vector<uint32_t> slot(body.values.size(), kNoOperand);
  for (size_t i = 0; i < body.inputs.size(); ++i) {
    slot[body.inputs[i]] = operand(kInput, i);
  }
  for (const auto& [id, tensor] : body.constants) {
    if (slot[id] != kNoOperand) continue;
    if (tensor.dtype() != DType::kF32 || tensor.num_elements() != 1) {
      return unsupported(
          "{}: body constant '{}' is {}{}, the Vulkan program takes f32 "
          "scalars",
          fused.label(), body.value(id).name, dtype_name(tensor.dtype()),
          dims_to_string(tensor.dims()));
    }
    if (program.constants.size() == kMaxConstants) {
      return unsupported("{}: the body has over {} constants", fused.label(),
                         kMaxConstants);
    }
    slot[id] = operand(kConstant, program.constants.size());
    program.constants.push_back(static_cast<float>(tensor.element_f64(0)));
  }
  return slot;
}

// Compiles the body of `node`; an error names the node and what is over the
// shader's limits or outside the ops it runs.
Result<FusedProgram> compile_program(const Node& node) {
  SEQRT_ASSIGN_OR_RETURN(const Graph* body, body_of(node));
  if (!body->captures.empty() || body->outputs.size() != 1 ||
      body->inputs.size() != node.inputs.size()) {
    return unsupported(
        "{}: the body must take the node's {} inputs, capture nothing and "
        "give one output",
        node.label(), node.inputs.size());
  }
  if (node.inputs.size() > kMaxInputs) {
    return unsupported("{}: {} inputs, over the Vulkan program's {}",
                       node.label(), node.inputs.size(), kMaxInputs);
  }
  FusedProgram program;
  program.num_inputs = node.inputs.size();
  SEQRT_ASSIGN_OR_RETURN(std::vector<uint32_t> slot,
                         source_operands(node, *body, program));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int> order, needed_nodes(node, *body));
  std::vector<size_t> last_use(body->values.size(), 0);
  for (size_t pos = 0; pos < order.size(); ++pos) {
    for (ValueId in : body->nodes[order[pos]].inputs) last_use[in] = pos;
  }
  std::vector<int> free_registers;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const Node& body_node = body->nodes[order[pos]];
    SEQRT_ASSIGN_OR_RETURN(uint32_t code, op_code(node, body_node));
    for (ValueId in : body_node.inputs) {
      if (slot[in] == kNoOperand) {
        return body_error(node, body_node, "reads a value nothing defines");
      }
    }
    uint32_t a = slot[body_node.inputs[0]];
    uint32_t b = slot[body_node.inputs.back()];
    // The shader reads both operands before it writes, so registers dead
    // after this instruction may take its result.
    for (ValueId in : body_node.inputs) {
      bool dead = last_use[in] == pos && (slot[in] >> 6) == kRegister;
      int reg = static_cast<int>(slot[in] & 63u);
      if (dead && std::find(free_registers.begin(), free_registers.end(),
                            reg) == free_registers.end()) {
        free_registers.push_back(reg);
      }
    }
    int reg = program.num_registers;
    if (free_registers.empty()) {
      if (program.num_registers == kMaxRegisters) {
        return body_error(
            node, body_node,
            fmt::format("needs more than the Vulkan program's {} registers",
                        kMaxRegisters));
      }
      ++program.num_registers;
    } else {
      reg = free_registers.back();
      free_registers.pop_back();
    }
    slot[body_node.outputs[0]] = operand(kRegister, reg);
    program.code.push_back(code | a << 8 | b << 16 |
                           static_cast<uint32_t>(reg) << 24);
    program.result = static_cast<uint32_t>(reg);
  }
  return program;
}

// The program buffer's words (the shader's layout): strides, code,
// constants.
std::vector<uint32_t> program_words(const FusedProgram& program,
                                    const NodeArgs& args) {
  const std::vector<int64_t>& out = args.output_dims[0];
  std::vector<uint32_t> words;
  for (size_t k = 0; k < kMaxInputs; ++k) {
    if (k < program.num_inputs) {
      append_padded(words, broadcast_strides(args.input_dims[k], out), 0);
    } else {
      append_padded(words, {}, 0);
    }
  }
  words.insert(words.end(), program.code.begin(), program.code.end());
  for (float c : program.constants) words.push_back(float_word(c));
  return words;
}

// Writes `words` into `dst` with one fill per run of equal words.
Status fill_words(const std::vector<uint32_t>& words, const BufferSlice& dst,
                  Recorder& recorder) {
  for (size_t begin = 0; begin < words.size();) {
    size_t end = begin + 1;
    while (end < words.size() && words[end] == words[begin]) ++end;
    BufferSlice part = dst;
    part.offset += begin * 4;
    part.bytes = (end - begin) * 4;
    SEQRT_RETURN_IF_ERROR(recorder.fill(part, words[begin]));
    begin = end;
  }
  return Status::ok();
}

Status record_fused(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& out = args.output_dims[0];
  if (out.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       args.node->label(), out.size(), kMaxRank);
  }
  int64_t count = element_count(out);
  if (count == 0) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(FusedProgram program, compile_program(*args.node));
  std::vector<uint32_t> words = program_words(program, args);
  SEQRT_ASSIGN_OR_RETURN(BufferSlice code, recorder.scratch(words.size() * 4));
  SEQRT_RETURN_IF_ERROR(fill_words(words, code, recorder));
  std::vector<uint32_t> push = {
      static_cast<uint32_t>(count), static_cast<uint32_t>(out.size()),
      static_cast<uint32_t>(program.num_inputs),
      static_cast<uint32_t>(program.code.size()), program.result};
  append_padded(push, out, 1);
  Dispatch dispatch;
  dispatch.shader = "fused_elementwise";
  dispatch.specialization = {kLocalSize};
  dispatch.push_constants = words_to_bytes(push);
  // Every input binding is statically used; unused ones repeat input 0.
  for (size_t k = 0; k < kMaxInputs; ++k) {
    dispatch.reads.push_back(args.inputs[k < program.num_inputs ? k : 0]);
  }
  dispatch.reads.push_back(code);
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_fused(const Graph& graph, const Node& node,
                      const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_f32(graph, node));
  const Value& out = graph.value(node.outputs[0]);
  if (out.shape.has_value() && out.shape->rank() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       node.label(), out.shape->rank(), kMaxRank);
  }
  return compile_program(node).status();
}

}  // namespace

void register_fused_elementwise_kernels(KernelTable& table) {
  table.add({kSeqrtDomain, "FusedElementwise", supports_fused, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_fused(args, r);
             }});
}

}  // namespace seqrt::vulkan
