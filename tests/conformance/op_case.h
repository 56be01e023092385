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

// Each cases/*.cc file registers its entry function once, at its end:
//   SEQRT_CONFORMANCE_CASES(add_shape_cases);
// so adding an op's cases needs no central list. The files are compiled
// into conformance_test itself (no static library that could drop them),
// and ConformanceCoverage.EveryCasesFileRegisters checks each one did.
using OpCaseAdder = void (*)(std::vector<OpCase>& cases);
bool register_op_cases(const char* file, OpCaseAdder add);
#define SEQRT_CONFORMANCE_CASES(adder)                           \
  [[maybe_unused]] static const bool seqrt_op_cases_registered = \
      ::seqrt::register_op_cases(__FILE__, adder)

// The file names (no directory) that registered cases, sorted.
std::vector<std::string> registered_op_case_files();

// Every case of every op: each registered file's cases, files in name
// order (a stable order whatever the linker's static initialisation order).
const std::vector<OpCase>& all_op_cases();

}  // namespace seqrt
