// The body of a seqrt::FusedElementwise node compiled into a small register
// program: one instruction per body node that the output depends on, each a
// vectorised pass over one block of elements. Operands are sources (the
// node's inputs, then the body's constants) or registers (block-sized
// scratch buffers, reused once their value is dead); the last instruction
// writes the output block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/cpu/kernels/elementwise_simd.h"
#include "graph/graph.h"

namespace seqrt::cpu {

// One element pointer with its step: 1 walks a block, 0 repeats element 0.
struct BlockOperand {
  const float* data = nullptr;
  size_t step = 1;
};

struct FusedInstruction {
  enum class Kind { kUnary, kBinary, kPow };
  Kind kind = Kind::kUnary;
  UnaryKind unary = UnaryKind::kRelu;
  BinaryKind binary = BinaryKind::kAdd;
  // Operand slots: [0, num_sources) are sources, the rest registers.
  int a = 0;
  int b = 0;          // binary and Pow only
  int out = kOutput;  // a register, or kOutput for the output block

  static constexpr int kOutput = -1;
};

struct FusedProgram {
  size_t num_inputs = 0;
  std::vector<Tensor> constants;  // f32, sources num_inputs onwards
  std::vector<FusedInstruction> code;
  int num_registers = 0;

  size_t num_sources() const { return num_inputs + constants.size(); }
};

// Compiles `body` of `node`; an error names the node and what it lacks (a
// capture, an op outside the fusable list, a non-float constant).
Result<FusedProgram> compile_fused_program(const Node& node, const Graph& body);

// Runs the program over one block of `n` elements: `sources` gives each
// source's operand for this block, `registers` num_registers buffers of at
// least n floats, `out` the output block. Each instruction reads element i
// of its operands before writing element i, so `out` may alias a source.
void run_fused_block(const FusedProgram& program,
                     const std::vector<BlockOperand>& sources, float* registers,
                     size_t register_stride, float* out, size_t n);

}  // namespace seqrt::cpu
