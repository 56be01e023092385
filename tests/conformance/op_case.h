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

// Each cases/<name>_cases.cc file defines
//   void add_<name>_cases(std::vector<OpCase>& cases);
// and the build lists every such file it finds (case_files.inc, written by
// tests/conformance/CMakeLists.txt), so adding an op's cases needs no
// central list to edit; a file whose function is missing or misnamed fails
// to link.

// Every case of every op: each cases file's cases, files in name order.
const std::vector<OpCase>& all_op_cases();

}  // namespace seqrt
