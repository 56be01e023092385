// seqrt::RungeKutta (OPS.md): one explicit Runge-Kutta step y + Σ b_i·F_i of
// a body graph F, as in ODE Transformer blocks. The checks live here so the
// reference kernel and the backends' kernels reject the same nodes.
#pragma once

#include <cstdint>

#include "graph/graph.h"
#include "ops/op_context.h"

namespace seqrt {

enum class RungeKuttaMethod { kEuler, kRk2, kRk2Gated, kRk4 };

// What a kernel needs once the node and its inputs have been checked.
struct RungeKuttaSetup {
  RungeKuttaMethod method = RungeKuttaMethod::kEuler;
  const Graph* body = nullptr;
  int64_t width = 0;      // d, the last dim of y (the gate reads rows of d)
  int64_t positions = 0;  // number of rows of d (1 for a scalar y)
};

// Number of times the method evaluates the body.
int runge_kutta_stages(RungeKuttaMethod method);

// Checks the method, the body (one input, one output) and the inputs: y is
// a float tensor; gate_weight (2d) and gate_bias (1) have y's dtype, are
// given exactly when the method is rk2_gated.
Result<RungeKuttaSetup> check_runge_kutta(const KernelContext& ctx);

// A stage F_i must have y's dtype and dims (a body that changes the shape
// cannot be integrated); `stage` counts from 1.
Status check_stage_output(const KernelContext& ctx, int stage, const Tensor& f,
                          const Tensor& y);

}  // namespace seqrt
