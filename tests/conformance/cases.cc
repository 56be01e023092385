#include <cassert>
#include <map>
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

namespace {

// file name -> entry function; built on first use, so registrations from
// other files' static initialisers always find it constructed.
std::map<std::string, OpCaseAdder>& case_registry() {
  static std::map<std::string, OpCaseAdder> registry;
  return registry;
}

}  // namespace

bool register_op_cases(const char* file, OpCaseAdder add) {
  std::string name = file;
  size_t slash = name.find_last_of("/\\");
  if (slash != std::string::npos) name = name.substr(slash + 1);
  // A second registration under one name would silently replace the
  // first's cases; the file-scope variable of SEQRT_CONFORMANCE_CASES
  // already makes that a compile error within a file.
  assert(case_registry().count(name) == 0 && "cases file registered twice");
  case_registry().emplace(std::move(name), add);
  return true;
}

std::vector<std::string> registered_op_case_files() {
  std::vector<std::string> files;
  for (const auto& [file, add] : case_registry()) files.push_back(file);
  return files;
}

const std::vector<OpCase>& all_op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> all;
    for (const auto& [file, add] : case_registry()) add(all);
    return all;
  }();
  return cases;
}

}  // namespace seqrt
