// Test helpers for op definitions: run one op's inference or reference
// kernel on a hand-built node, as infer_graph and the graph runner would,
// without building a graph. Header-only and used only by the ops' tests,
// so the ops library does not carry it.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "ops/registry.h"

namespace seqrt::op_testing {

inline const OpSchema& schema_of(const std::string& op) {
  const OpSchema* schema = OpRegistry::global().find(kOnnxDomain, op);
  EXPECT_NE(schema, nullptr) << op << " is not registered";
  if (schema == nullptr) std::abort();
  return *schema;
}

// A node named "test" with `num_inputs` inputs (empty tensors and
// ValueInfos with an undefined dtype are omitted optional inputs).
inline Node make_node(const std::string& op, const AttrMap& attrs,
                      const std::vector<bool>& present, size_t num_outputs) {
  Node node;
  node.name = "test";
  node.op = op;
  node.attrs = attrs;
  for (size_t i = 0; i < present.size(); ++i) {
    node.inputs.push_back(present[i] ? static_cast<ValueId>(i) : kNoValue);
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    node.outputs.push_back(static_cast<ValueId>(present.size() + i));
  }
  return node;
}

// Runs the reference kernel; the node is checked against the schema first.
inline Result<std::vector<Tensor>> run_op(const std::string& op,
                                          const std::vector<Tensor>& inputs,
                                          const AttrMap& attrs = {},
                                          size_t num_outputs = 1) {
  const OpSchema& schema = schema_of(op);
  std::vector<bool> present;
  std::vector<const Tensor*> args;
  for (const Tensor& tensor : inputs) {
    present.push_back(!tensor.empty());
    args.push_back(tensor.empty() ? nullptr : &tensor);
  }
  Node node = make_node(op, attrs, present, num_outputs);
  SEQRT_RETURN_IF_ERROR(check_node(node, schema));
  KernelContext ctx(node, schema, std::move(args));
  SEQRT_RETURN_IF_ERROR(schema.reference(ctx));
  return std::move(ctx.outputs());
}

struct Inferred {
  std::vector<ValueInfo> outputs;
  std::vector<Tensor> values;  // empty tensors where no value is known
};

inline Result<Inferred> infer_op(const std::string& op,
                                 const std::vector<ValueInfo>& inputs,
                                 const AttrMap& attrs = {},
                                 size_t num_outputs = 1) {
  const OpSchema& schema = schema_of(op);
  std::vector<bool> present;
  for (const ValueInfo& info : inputs) {
    present.push_back(info.dtype != DType::kUndefined);
  }
  Node node = make_node(op, attrs, present, num_outputs);
  SEQRT_RETURN_IF_ERROR(check_node(node, schema));
  InferContext ctx(node, schema, inputs);
  SEQRT_RETURN_IF_ERROR(schema.infer(ctx));
  Inferred out{ctx.outputs(), ctx.output_values()};
  out.values.resize(out.outputs.size());
  return out;
}

// Type of an input whose value is unknown at inference time.
inline ValueInfo typed(DType dtype, std::optional<Shape> shape) {
  return ValueInfo{dtype, std::move(shape), nullptr};
}
// Type and value of an input known at inference time; `tensor` must
// outlive the inference call.
inline ValueInfo known(const Tensor& tensor) {
  return ValueInfo{tensor.dtype(), tensor.shape(), &tensor};
}
// An omitted optional input.
inline ValueInfo omitted() { return ValueInfo{}; }

inline Dim sym(const std::string& name) { return Dim::symbol(name); }

// All elements as doubles, for EXPECT_EQ against hand-computed values.
inline std::vector<double> values_of(const Tensor& tensor) {
  std::vector<double> out;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    out.push_back(tensor.element_f64(i));
  }
  return out;
}

inline Tensor f32(std::vector<int64_t> dims, std::vector<float> values) {
  return Tensor::from_vector<float>(std::move(dims), values);
}
inline Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Tensor::from_vector<int64_t>(std::move(dims), values);
}
// A 1-D i64 tensor.
inline Tensor ints(std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}
// A tensor of `dims` holding 0, 1, 2, ... in `dtype`.
inline Tensor iota(DType dtype, std::vector<int64_t> dims) {
  Tensor tensor = Tensor::allocate(dtype, std::move(dims)).value();
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    tensor.set_element_f64(i, static_cast<double>(i));
  }
  return tensor;
}

// The one output of a kernel that must succeed.
inline Tensor run_ok(const std::string& op, const std::vector<Tensor>& inputs,
                     const AttrMap& attrs = {}) {
  Result<std::vector<Tensor>> out = run_op(op, inputs, attrs);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? (*out)[0] : Tensor();
}

// The inferred output types only.
inline Result<std::vector<ValueInfo>> infer_types(
    const std::string& op, const std::vector<ValueInfo>& inputs,
    const AttrMap& attrs = {}, size_t num_outputs = 1) {
  SEQRT_ASSIGN_OR_RETURN(Inferred inferred,
                         infer_op(op, inputs, attrs, num_outputs));
  return inferred.outputs;
}

// A typed input for inference; kUndefined marks an omitted one.
inline ValueInfo info(DType dtype, std::optional<Shape> shape,
                      const Tensor* value = nullptr) {
  return ValueInfo{dtype, std::move(shape), value};
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

}  // namespace seqrt::op_testing
