// Helpers for the recurrent ops' tests: f64 tensors, random weights, and
// running a node with chosen outputs left out.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"

namespace seqrt::rnn_testing {

inline Tensor f64(std::vector<int64_t> dims, std::vector<double> values) {
  return Tensor::from_vector<double>(std::move(dims), values);
}

inline Tensor uniform(std::vector<int64_t> dims, unsigned seed,
                      double scale = 0.5) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-scale, scale);
  Tensor t = Tensor::allocate(DType::kF64, std::move(dims)).value();
  for (int64_t i = 0; i < t.num_elements(); ++i)
    t.set_element_f64(i, dist(gen));
  return t;
}

// Runs `op` with outputs `present` (false: left out, kNoValue).
inline Result<std::vector<Tensor>> run_with_outputs(
    const std::string& op, const std::vector<Tensor>& inputs,
    const AttrMap& attrs, const std::vector<bool>& present) {
  const OpSchema& schema = op_testing::schema_of(op);
  std::vector<bool> in_present;
  std::vector<const Tensor*> args;
  for (const Tensor& t : inputs) {
    in_present.push_back(!t.empty());
    args.push_back(t.empty() ? nullptr : &t);
  }
  Node node = op_testing::make_node(op, attrs, in_present, present.size());
  for (size_t i = 0; i < present.size(); ++i) {
    if (!present[i]) node.outputs[i] = kNoValue;
  }
  SEQRT_RETURN_IF_ERROR(check_node(node, schema));
  KernelContext ctx(node, schema, std::move(args));
  SEQRT_RETURN_IF_ERROR(schema.reference(ctx));
  return std::move(ctx.outputs());
}

// Rows [begin, end) of axis 0 (the time axis in layout 0).
inline Tensor time_slice(const Tensor& t, int64_t begin, int64_t end) {
  std::vector<int64_t> dims = t.dims();
  const int64_t row = t.num_elements() / dims[0];
  dims[0] = end - begin;
  Tensor out = Tensor::allocate(t.dtype(), dims).value();
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    out.set_element_f64(i, t.element_f64(begin * row + i));
  }
  return out;
}

}  // namespace seqrt::rnn_testing
