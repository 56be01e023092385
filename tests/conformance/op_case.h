// A conformance case: one op with attributes and concrete inputs. The
// harness runs it on every compiled backend and compares with the op's
// reference kernel called directly.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

struct OpCase {
  std::string name;  // unique within its op: "broadcast_rank3"
  std::string op;
  std::string domain = kOnnxDomain;
  AttrMap attrs;
  // Empty Tensor = omitted optional input.
  std::vector<Tensor> inputs;
  // Inputs the graph holds as constants rather than graph inputs (for
  // example Reshape's shape, which inference needs to know).
  std::vector<bool> constant_inputs;
  // Further graph inputs that are not inputs of the node, for subgraphs
  // (If branches, Scan and Loop bodies) to capture by name.
  std::vector<std::pair<std::string, Tensor>> outer_values;
  size_t num_outputs = 1;
  // |got - want| <= atol + rtol * |want| elementwise.
  double rtol = 1e-5;
  double atol = 1e-6;
  // The reference kernel must fail on this case (bad shapes, bad
  // attributes); the harness checks every backend fails too.
  bool expect_error = false;
};

// Case builders shared by the cases files.
OpCase make_case(const std::string& op, const std::string& name,
                 std::vector<Tensor> inputs, AttrMap attrs = {},
                 size_t num_outputs = 1);
OpCase expect_failure(OpCase c);  // the case must fail on every backend
OpCase loosened(OpCase c, double tolerance);  // rtol = atol = tolerance

// Deterministic pseudo-random tensors for cases (uniform in [lo, hi);
// integer dtypes get integers in that range, bool gets lo/hi coin flips).
Tensor random_tensor(DType dtype, std::vector<int64_t> dims, uint64_t seed,
                     double lo = -1.0, double hi = 1.0);

// Each ops/ folder has a cases file; tests/conformance/cases.cc calls all.
void add_elementwise_cases(std::vector<OpCase>& cases);
void add_nn_cases(std::vector<OpCase>& cases);
void add_reduce_cases(std::vector<OpCase>& cases);
void add_linalg_cases(std::vector<OpCase>& cases);
void add_seqrt_linear_cases(std::vector<OpCase>& cases);  // + constant weights
void add_shape_cases(std::vector<OpCase>& cases);
void add_scatter_cases(std::vector<OpCase>& cases);  // Scatter*, GatherND
// Shapes that cross a GPU kernel's tile edges (MatMul, norms, Slice...).
void add_tiled_shape_cases(std::vector<OpCase>& cases);
// Sizes past a GPU dispatch limit (65,535 workgroups in x).
void add_dispatch_limit_cases(std::vector<OpCase>& cases);
void add_control_cases(std::vector<OpCase>& cases);
// Sequence ops (ops/sequence/, OPS.md), one file per op.
void add_attention_cases(std::vector<OpCase>& cases);
void add_onnx_attention_cases(std::vector<OpCase>& cases);
void add_linear_attention_cases(std::vector<OpCase>& cases);
void add_retention_cases(std::vector<OpCase>& cases);
void add_selective_scan_cases(std::vector<OpCase>& cases);
void add_causal_conv_cases(std::vector<OpCase>& cases);
void add_ssd_cases(std::vector<OpCase>& cases);
void add_runge_kutta_cases(std::vector<OpCase>& cases);
void add_neural_memory_cases(std::vector<OpCase>& cases);
void add_fused_elementwise_cases(std::vector<OpCase>& cases);
// Recurrent ops (ops/rnn/): RNN, GRU, LSTM.
void add_rnn_cases(std::vector<OpCase>& cases);

// Every case of every op.
const std::vector<OpCase>& all_op_cases();

}  // namespace seqrt
