#version 450
// seqrt::FusedElementwise: one invocation per output element runs the body
// compiled by kernels/fused_elementwise.cc, an instruction list read from
// the program buffer, over a fixed register file. One shader serves every
// body, so a new body costs no pipeline compile.
//
// Program buffer (32-bit words): the strides of input k at
// k * MAX_RANK + d (MAX_INPUTS * MAX_RANK words), then num_code
// instructions, then the constants (float bits). An instruction is
// op | a << 8 | b << 16 | out << 24; an operand byte is kind << 6 | index
// with kind 0 a register, 1 an input, 2 a constant. Op codes:
// kernels/fused_elementwise.cc kOps.
#include "common.glsl"
#define MAX_INPUTS 16
#define MAX_REGISTERS 16
#include "flat_index.glsl"
layout(std430, binding = 0) readonly buffer X0 { float x0[]; };
layout(std430, binding = 1) readonly buffer X1 { float x1[]; };
layout(std430, binding = 2) readonly buffer X2 { float x2[]; };
layout(std430, binding = 3) readonly buffer X3 { float x3[]; };
layout(std430, binding = 4) readonly buffer X4 { float x4[]; };
layout(std430, binding = 5) readonly buffer X5 { float x5[]; };
layout(std430, binding = 6) readonly buffer X6 { float x6[]; };
layout(std430, binding = 7) readonly buffer X7 { float x7[]; };
layout(std430, binding = 8) readonly buffer X8 { float x8[]; };
layout(std430, binding = 9) readonly buffer X9 { float x9[]; };
layout(std430, binding = 10) readonly buffer X10 { float x10[]; };
layout(std430, binding = 11) readonly buffer X11 { float x11[]; };
layout(std430, binding = 12) readonly buffer X12 { float x12[]; };
layout(std430, binding = 13) readonly buffer X13 { float x13[]; };
layout(std430, binding = 14) readonly buffer X14 { float x14[]; };
layout(std430, binding = 15) readonly buffer X15 { float x15[]; };
layout(std430, binding = 16) readonly buffer Program { uint prog[]; };
layout(std430, binding = 17) writeonly buffer Out { float y[]; };
layout(push_constant) uniform Push {
  uint count;
  uint rank;
  uint num_inputs;
  uint num_code;
  uint result;  // the register holding the output after the last instruction
  uint dims[MAX_RANK];
} p;

float reg[MAX_REGISTERS];
float x[MAX_INPUTS];

// Bindings cannot be indexed by a variable without descriptor indexing.
float load(uint k, uint index) {
  switch (k) {
    case 0: return x0[index];
    case 1: return x1[index];
    case 2: return x2[index];
    case 3: return x3[index];
    case 4: return x4[index];
    case 5: return x5[index];
    case 6: return x6[index];
    case 7: return x7[index];
    case 8: return x8[index];
    case 9: return x9[index];
    case 10: return x10[index];
    case 11: return x11[index];
    case 12: return x12[index];
    case 13: return x13[index];
    case 14: return x14[index];
    default: return x15[index];
  }
}

float operand(uint slot) {
  uint i = slot & 63u;
  uint kind = slot >> 6;
  if (kind == 0u) return reg[i];
  if (kind == 1u) return x[i];
  return uintBitsToFloat(prog[MAX_INPUTS * MAX_RANK + p.num_code + i]);
}

// Pow as shaders/binary.comp: a negative base with a whole exponent keeps
// its sign; x² is one multiply, exact like the reference's double pow.
float power(float u, float v) {
  if (v == 2.0) return u * u;
  if (u < 0.0 && v == floor(v)) {
    return mod(v, 2.0) == 0.0 ? pow(-u, v) : -pow(-u, v);
  }
  return pow(u, v);
}

float apply(uint op, float u, float v) {
  switch (op) {
    case 0u: return sqrt(u);
    case 1u: return exp(u);
    case 2u: return log(u);
    case 3u: return -u;
    case 4u: return abs(u);
    case 5u: return 1.0 / u;
    case 6u: return erf_approx(u);
    case 7u: return tanh(u);
    case 8u: return 1.0 / (1.0 + exp(-u));
    case 9u: return max(u, 0.0);
    // Softplus without overflow for large u.
    case 10u: return max(u, 0.0) + log(1.0 + exp(-abs(u)));
    case 11u: return 0.5 * u * (1.0 + erf_approx(u * 0.70710678118));
    case 12u:
      return 0.5 * u * (1.0 + tanh(0.7978845608 * (u + 0.044715 * u * u * u)));
    case 16u: return u + v;
    case 17u: return u - v;
    case 18u: return u * v;
    case 19u: return u / v;
    case 20u: return power(u, v);
    case 21u: return max(u, v);
    default: return min(u, v);
  }
}

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  uint index[MAX_INPUTS];
  for (uint k = 0u; k < MAX_INPUTS; ++k) index[k] = 0u;
  uint rest = i;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = rest % p.dims[d];
    rest /= p.dims[d];
    for (uint k = 0u; k < p.num_inputs; ++k) {
      index[k] += c * prog[k * MAX_RANK + uint(d)];
    }
  }
  for (uint k = 0u; k < p.num_inputs; ++k) x[k] = load(k, index[k]);
  for (uint n = 0u; n < p.num_code; ++n) {
    uint word = prog[MAX_INPUTS * MAX_RANK + n];
    float u = operand((word >> 8) & 255u);
    float v = operand((word >> 16) & 255u);
    reg[word >> 24] = apply(word & 255u, u, v);
  }
  y[i] = reg[p.result];
}
