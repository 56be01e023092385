#version 450
// out[i] = f(in[i]) for the unary op chosen by constant 1 (kernels/
// elementwise.cc kUnaryOps lists the codes).
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint OP = 0;
layout(std430, binding = 0) readonly buffer In { float x[]; };
layout(std430, binding = 1) writeonly buffer Out { float y[]; };
layout(push_constant) uniform Push {
  uint count;
  float alpha;
  float beta;
} p;

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  float v = x[i];
  float r = v;
  switch (OP) {
    case 0: r = max(v, 0.0); break;                       // Relu
    case 1: r = 1.0 / (1.0 + exp(-v)); break;             // Sigmoid
    case 2: r = tanh(v); break;                           // Tanh
    case 3: r = exp(v); break;                            // Exp
    case 4: r = log(v); break;                            // Log
    case 5: r = -v; break;                                // Neg
    case 6: r = abs(v); break;                            // Abs
    case 7: r = sqrt(v); break;                           // Sqrt
    case 8: r = 1.0 / v; break;                           // Reciprocal
    case 9: r = erf_approx(v); break;                     // Erf
    case 10: r = v / (1.0 + exp(-v)); break;              // Silu (x*sigmoid)
    case 11: r = 0.5 * v * (1.0 + erf_approx(v * 0.70710678118)); break;  // Gelu
    case 12: r = v; break;                                // Identity copy
    case 13: r = v >= 0.0 ? v : p.alpha * v; break;       // LeakyRelu
    case 14: r = v > 0.0 ? v : p.alpha * (exp(v) - 1.0); break;  // Elu
    case 15: r = sin(v); break;                           // Sin
    case 16: r = cos(v); break;                           // Cos
    case 17: r = floor(v); break;                         // Floor
    case 18: r = ceil(v); break;                          // Ceil
    case 19: r = log(1.0 + exp(v)); break;                // Softplus
    case 20: r = clamp(v, p.alpha, p.beta); break;        // Clip
    case 21: r = sign(v); break;                          // Sign
    case 22: r = max(0.0, min(1.0, p.alpha * v + p.beta)); break;  // HardSigmoid
    case 23: r = 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v))); break;  // Gelu tanh
  }
  y[i] = r;
}
