#include <random>
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {

Tensor random_tensor(DType dtype, std::vector<int64_t> dims, uint64_t seed,
                     double lo, double hi) {
  Tensor tensor = Tensor::allocate(dtype, std::move(dims)).value();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    double x = uniform(rng);
    if (dtype == DType::kBool) {
      tensor.set_element_i64(i, x >= (lo + hi) / 2 ? 1 : 0);
    } else if (is_integer(dtype)) {
      tensor.set_element_i64(i, static_cast<int64_t>(std::floor(x)));
    } else {
      tensor.set_element_f64(i, x);
    }
  }
  return tensor;
}

OpCase make_case(const std::string& op, const std::string& name,
                 std::vector<Tensor> inputs, AttrMap attrs,
                 size_t num_outputs) {
  OpCase c;
  c.op = op;
  c.name = name;
  c.inputs = std::move(inputs);
  c.attrs = std::move(attrs);
  c.num_outputs = num_outputs;
  return c;
}

OpCase expect_failure(OpCase c) {
  c.expect_error = true;
  return c;
}

OpCase loosened(OpCase c, double tolerance) {
  c.rtol = tolerance;
  c.atol = tolerance;
  return c;
}

// The entry function of each cases file (case_files.inc: one
// SEQRT_CASES_FILE(adder) line per cases/*.cc, in file-name order).
#define SEQRT_CASES_FILE(adder) void adder(std::vector<OpCase>& cases);
#include "tests/conformance/case_files.inc"
#undef SEQRT_CASES_FILE

const std::vector<OpCase>& all_op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> all;
#define SEQRT_CASES_FILE(adder) adder(all);
#include "tests/conformance/case_files.inc"
#undef SEQRT_CASES_FILE
    return all;
  }();
  return cases;
}

}  // namespace seqrt
