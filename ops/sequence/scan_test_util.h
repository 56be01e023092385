// Test helpers for the state-space ops: op_testing's run_op and infer_op
// look ops up in the ONNX domain only, these take the domain, and build
// the random inputs the scan tests share.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"

namespace seqrt::scan_testing {

inline const OpSchema* find_schema(const std::string& domain,
                                   const std::string& op) {
  const OpSchema* schema = OpRegistry::global().find(domain, op);
  EXPECT_NE(schema, nullptr) << domain << "::" << op << " is not registered";
  return schema;
}

inline Result<std::vector<Tensor>> run_op(const std::string& domain,
                                          const std::string& op,
                                          const std::vector<Tensor>& inputs,
                                          const AttrMap& attrs = {},
                                          size_t num_outputs = 2) {
  const OpSchema* schema = find_schema(domain, op);
  if (schema == nullptr) return not_found("no op {}", op);
  std::vector<bool> present;
  std::vector<const Tensor*> args;
  for (const Tensor& tensor : inputs) {
    present.push_back(!tensor.empty());
    args.push_back(tensor.empty() ? nullptr : &tensor);
  }
  Node node = op_testing::make_node(op, attrs, present, num_outputs);
  node.domain = domain;
  SEQRT_RETURN_IF_ERROR(check_node(node, *schema));
  KernelContext ctx(node, *schema, std::move(args));
  SEQRT_RETURN_IF_ERROR(schema->reference(ctx));
  return std::move(ctx.outputs());
}

inline Result<std::vector<ValueInfo>> infer(
    const std::string& domain, const std::string& op,
    const std::vector<ValueInfo>& inputs, const AttrMap& attrs = {},
    size_t num_outputs = 2) {
  const OpSchema* schema = find_schema(domain, op);
  if (schema == nullptr) return not_found("no op {}", op);
  std::vector<bool> present;
  for (const ValueInfo& info : inputs) {
    present.push_back(info.dtype != DType::kUndefined);
  }
  Node node = op_testing::make_node(op, attrs, present, num_outputs);
  node.domain = domain;
  SEQRT_RETURN_IF_ERROR(check_node(node, *schema));
  InferContext ctx(node, *schema, inputs);
  SEQRT_RETURN_IF_ERROR(schema->infer(ctx));
  return ctx.outputs();
}

// Uniform values in [lo, hi), deterministic per seed.
inline Tensor uniform(std::vector<int64_t> dims, uint64_t seed, double lo,
                      double hi, DType dtype = DType::kF32) {
  Tensor tensor = Tensor::allocate(dtype, std::move(dims)).value();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    tensor.set_element_f64(i, dist(rng));
  }
  return tensor;
}

// Elementwise |got - want| <= tol * (1 + |want|).
inline void expect_close(const Tensor& got, const Tensor& want, double tol,
                         const std::string& what = "") {
  ASSERT_EQ(got.dims(), want.dims()) << what;
  int reported = 0;
  for (int64_t i = 0; i < want.num_elements() && reported < 5; ++i) {
    double g = got.element_f64(i);
    double w = want.element_f64(i);
    if (g != w && !(std::abs(g - w) <= tol * (1.0 + std::abs(w)))) {
      ADD_FAILURE() << what << " element " << i << ": got " << g << ", want "
                    << w;
      ++reported;
    }
  }
}

// Elements [begin, end) of axis `axis` of a tensor (a copy).
inline Tensor slice_axis(const Tensor& tensor, size_t axis, int64_t begin,
                         int64_t end) {
  std::vector<int64_t> dims = tensor.dims();
  int64_t outer = 1;
  int64_t inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t size = dims[axis];
  dims[axis] = end - begin;
  Tensor out = Tensor::allocate(tensor.dtype(), dims).value();
  int64_t j = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t a = begin; a < end; ++a) {
      for (int64_t i = 0; i < inner; ++i) {
        out.set_element_f64(j++,
                            tensor.element_f64((o * size + a) * inner + i));
      }
    }
  }
  return out;
}

}  // namespace seqrt::scan_testing
