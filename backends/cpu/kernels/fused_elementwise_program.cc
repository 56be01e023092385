#include "backends/cpu/kernels/fused_elementwise_program.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernels/float_support.h"
#include "ops/elementwise/fused_body.h"

namespace seqrt::cpu {
namespace {

constexpr int kNoSlot = -2;

const std::map<std::string, UnaryKind>& unary_kinds() {
  static const std::map<std::string, UnaryKind> kinds = {
      {"Sqrt", UnaryKind::kSqrt},
      {"Exp", UnaryKind::kExp},
      {"Log", UnaryKind::kLog},
      {"Neg", UnaryKind::kNeg},
      {"Abs", UnaryKind::kAbs},
      {"Reciprocal", UnaryKind::kReciprocal},
      {"Erf", UnaryKind::kErf},
      {"Tanh", UnaryKind::kTanh},
      {"Sigmoid", UnaryKind::kSigmoid},
      {"Relu", UnaryKind::kRelu},
      {"Softplus", UnaryKind::kSoftplus},
  };
  return kinds;
}

const std::map<std::string, BinaryKind>& binary_kinds() {
  static const std::map<std::string, BinaryKind> kinds = {
      {"Add", BinaryKind::kAdd}, {"Sub", BinaryKind::kSub},
      {"Mul", BinaryKind::kMul}, {"Div", BinaryKind::kDiv},
      {"Max", BinaryKind::kMax}, {"Min", BinaryKind::kMin},
  };
  return kinds;
}

Status body_error(const Node& fused, const Node& node, const std::string& why) {
  return unsupported("{}: body node {} {}", fused.label(), node.label(), why);
}

// The instruction's kind from a body node; operands are filled in later.
Result<FusedInstruction> decode(const Node& fused, const Node& node) {
  FusedInstruction ins;
  size_t arity = 2;
  std::string approximate = "none";
  if (const Attribute* attr = node.attr("approximate");
      attr != nullptr && node.op == "Gelu" &&
      attr->type() == AttrType::kString) {
    approximate = attr->as_string();
  }
  size_t known_attrs = node.op == "Gelu" && node.attr("approximate") ? 1 : 0;
  if (node.domain != kOnnxDomain || node.attrs.size() != known_attrs) {
    return body_error(fused, node, "has attributes the CPU program lacks");
  }
  if (auto u = unary_kinds().find(node.op); u != unary_kinds().end()) {
    ins.unary = u->second;
    arity = 1;
  } else if (node.op == "Gelu" &&
             (approximate == "none" || approximate == "tanh")) {
    ins.unary =
        approximate == "tanh" ? UnaryKind::kGeluTanh : UnaryKind::kGeluExact;
    arity = 1;
  } else if (auto b = binary_kinds().find(node.op); b != binary_kinds().end()) {
    ins.kind = FusedInstruction::Kind::kBinary;
    ins.binary = b->second;
  } else if (node.op == "Pow") {
    ins.kind = FusedInstruction::Kind::kPow;
  } else {
    return body_error(fused, node, "is not an op the CPU program runs");
  }
  if (node.inputs.size() != arity || node.outputs.size() != 1) {
    return body_error(
        fused, node,
        fmt::format("must have {} input(s) and one output", arity));
  }
  return ins;
}

// Slots of the node's inputs and the body's constants.
Result<std::vector<int>> source_slots(const Node& fused, const Graph& body,
                                      FusedProgram& program) {
  std::vector<int> slot(body.values.size(), kNoSlot);
  for (size_t i = 0; i < body.inputs.size(); ++i) {
    slot[body.inputs[i]] = static_cast<int>(i);
  }
  for (const auto& [id, tensor] : body.constants) {
    if (slot[id] != kNoSlot) continue;
    if (!is_f32_family(tensor.dtype())) {
      return unsupported("{}: body constant '{}' is {}, not f32/f16/bf16",
                         fused.label(), body.value(id).name,
                         dtype_name(tensor.dtype()));
    }
    SEQRT_ASSIGN_OR_RETURN(Tensor value, load_f32(tensor));
    slot[id] = static_cast<int>(program.num_sources());
    program.constants.push_back(std::move(value));
  }
  return slot;
}

void pow_block(BlockOperand a, BlockOperand b, float* out, size_t n) {
  // x² is one f32 multiply, which rounds the exact square as the reference's
  // double pow does; other exponents go through double.
  if (b.step == 0 && b.data[0] == 2.0f) {
    binary_f32(BinaryKind::kMul, a.data, a.step, a.data, a.step, out, n);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    out[i] =
        static_cast<float>(std::pow(static_cast<double>(a.data[i * a.step]),
                                    static_cast<double>(b.data[i * b.step])));
  }
}

}  // namespace

Result<FusedProgram> compile_fused_program(const Node& node,
                                           const Graph& body) {
  if (!body.captures.empty()) {
    return unsupported("{}: the body captures '{}'", node.label(),
                       body.value(body.captures[0]).name);
  }
  if (body.outputs.size() != 1 || body.inputs.size() != node.inputs.size()) {
    return unsupported("{}: the body must take {} inputs and give one output",
                       node.label(), node.inputs.size());
  }
  FusedProgram program;
  program.num_inputs = body.inputs.size();
  SEQRT_ASSIGN_OR_RETURN(std::vector<int> slot,
                         source_slots(node, body, program));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int> order, fused_body_nodes(node, body));
  std::vector<size_t> last_use(body.values.size(), 0);
  for (size_t pos = 0; pos < order.size(); ++pos) {
    for (ValueId in : body.nodes[order[pos]].inputs) last_use[in] = pos;
  }
  const int num_sources = static_cast<int>(program.num_sources());
  std::vector<int> free_registers;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const Node& body_node = body.nodes[order[pos]];
    SEQRT_ASSIGN_OR_RETURN(FusedInstruction ins, decode(node, body_node));
    for (ValueId in : body_node.inputs) {
      if (slot[in] == kNoSlot) {
        return body_error(node, body_node, "reads a value nothing defines");
      }
    }
    ins.a = slot[body_node.inputs[0]];
    ins.b = slot[body_node.inputs.back()];
    ValueId out = body_node.outputs[0];
    // The output is computed last: everything needed feeds it.
    if (out != body.outputs[0]) {
      int reg = program.num_registers;
      if (free_registers.empty()) {
        ++program.num_registers;
      } else {
        reg = free_registers.back();
        free_registers.pop_back();
      }
      ins.out = reg;
      slot[out] = num_sources + reg;
    }
    // Registers free only after the output is taken, so no instruction
    // writes a buffer it reads.
    for (ValueId in : body_node.inputs) {
      int s = slot[in];
      bool dead = last_use[in] == pos && s >= num_sources;
      if (dead && std::find(free_registers.begin(), free_registers.end(),
                            s - num_sources) == free_registers.end()) {
        free_registers.push_back(s - num_sources);
      }
    }
    program.code.push_back(ins);
  }
  return program;
}

void run_fused_block(const FusedProgram& program,
                     const std::vector<BlockOperand>& sources, float* registers,
                     size_t register_stride, float* out, size_t n) {
  const int num_sources = static_cast<int>(sources.size());
  auto operand = [&](int slot) {
    if (slot < num_sources) return sources[slot];
    return BlockOperand{registers + (slot - num_sources) * register_stride, 1};
  };
  for (const FusedInstruction& ins : program.code) {
    float* dst = ins.out == FusedInstruction::kOutput
                     ? out
                     : registers + ins.out * register_stride;
    BlockOperand a = operand(ins.a);
    switch (ins.kind) {
      case FusedInstruction::Kind::kUnary:
        if (a.step == 0) {
          float value = 0;
          unary_f32(ins.unary, a.data, &value, 1);
          std::fill(dst, dst + n, value);
        } else {
          unary_f32(ins.unary, a.data, dst, n);
        }
        break;
      case FusedInstruction::Kind::kBinary: {
        BlockOperand b = operand(ins.b);
        binary_f32(ins.binary, a.data, a.step, b.data, b.step, dst, n);
        break;
      }
      case FusedInstruction::Kind::kPow:
        pow_block(a, operand(ins.b), dst, n);
        break;
    }
  }
}

}  // namespace seqrt::cpu
