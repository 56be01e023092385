// Test helpers for op definitions: run one op's inference or reference
// kernel by hand, as infer_graph and the graph runner would. Used by the
// tests of ops/elementwise, ops/nn and ops/reduce; header-only, so the ops
// library does not carry it.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ops/registry.h"

namespace seqrt {
namespace testing_util {

inline const OpSchema& schema_of(const std::string& op) {
  const OpSchema* schema = OpRegistry::global().find(kOnnxDomain, op);
  EXPECT_NE(schema, nullptr) << op << " is not registered";
  if (schema == nullptr) std::abort();
  return *schema;
}

// A node named "n" with `num_inputs` inputs (kNoValue where `present` says
// so) and `num_outputs` outputs.
inline Node make_node(const std::string& op, const std::vector<bool>& present,
                      size_t num_outputs, AttrMap attrs) {
  Node node;
  node.name = "n";
  node.op = op;
  node.attrs = std::move(attrs);
  for (size_t i = 0; i < present.size(); ++i) {
    node.inputs.push_back(present[i] ? static_cast<ValueId>(i) : kNoValue);
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    node.outputs.push_back(static_cast<ValueId>(present.size() + i));
  }
  return node;
}

// Runs the reference kernel; an empty Tensor in `inputs` is an omitted
// optional input.
inline Result<std::vector<Tensor>> run_op(const std::string& op,
                                          const std::vector<Tensor>& inputs,
                                          AttrMap attrs = {},
                                          size_t num_outputs = 1) {
  const OpSchema& schema = schema_of(op);
  std::vector<bool> present;
  std::vector<const Tensor*> args;
  for (const Tensor& tensor : inputs) {
    present.push_back(!tensor.empty());
    args.push_back(tensor.empty() ? nullptr : &tensor);
  }
  Node node = make_node(op, present, num_outputs, std::move(attrs));
  SEQRT_RETURN_IF_ERROR(check_node(node, schema));
  KernelContext ctx(node, schema, std::move(args));
  SEQRT_RETURN_IF_ERROR(schema.reference(ctx));
  return std::move(ctx.outputs());
}

// The one output of a kernel that must succeed.
inline Tensor run_ok(const std::string& op, const std::vector<Tensor>& inputs,
                     AttrMap attrs = {}) {
  Result<std::vector<Tensor>> out = run_op(op, inputs, std::move(attrs));
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? (*out)[0] : Tensor();
}

// A typed input for inference; kUndefined marks an omitted one.
inline ValueInfo info(DType dtype, std::optional<Shape> shape,
                      const Tensor* value = nullptr) {
  return ValueInfo{dtype, std::move(shape), value};
}

inline Result<std::vector<ValueInfo>> infer_op(
    const std::string& op, const std::vector<ValueInfo>& inputs,
    AttrMap attrs = {}, size_t num_outputs = 1) {
  const OpSchema& schema = schema_of(op);
  std::vector<bool> present;
  for (const ValueInfo& input : inputs) {
    present.push_back(input.dtype != DType::kUndefined);
  }
  Node node = make_node(op, present, num_outputs, std::move(attrs));
  SEQRT_RETURN_IF_ERROR(check_node(node, schema));
  InferContext ctx(node, schema, inputs);
  SEQRT_RETURN_IF_ERROR(schema.infer(ctx));
  return ctx.outputs();
}

inline void expect_values(const Tensor& got, const std::vector<double>& want,
                          double tolerance = 1e-6) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got.element_f64(static_cast<int64_t>(i));
    if (g == want[i] || (std::isnan(g) && std::isnan(want[i]))) continue;
    EXPECT_NEAR(g, want[i], tolerance) << "element " << i;
  }
}

// The error must exist and its message contain every fragment (the op's
// bracketed name, and what was wrong).
inline void expect_error(const Status& status,
                         const std::vector<std::string>& fragments) {
  ASSERT_FALSE(status.is_ok()) << "expected an error";
  for (const std::string& fragment : fragments) {
    EXPECT_NE(status.message().find(fragment), std::string::npos)
        << "message \"" << status.message() << "\" lacks \"" << fragment
        << "\"";
  }
}

}  // namespace testing_util
}  // namespace seqrt
