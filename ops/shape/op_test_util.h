// Test helpers for op definitions (used by the *_test.cc files of
// ops/shape/ and ops/linalg/): run an op's reference kernel or its
// inference on a hand-built node, without building a graph.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "ops/registry.h"

namespace seqrt::testing {

inline const OpSchema& schema_of(const std::string& op) {
  const OpSchema* schema = OpRegistry::global().find(kOnnxDomain, op);
  assert(schema != nullptr && "op not registered");
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

}  // namespace seqrt::testing
