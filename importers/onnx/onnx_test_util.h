// Building small ONNX models with the protobuf API, for the importer's
// tests and the end-to-end tests (no Python needed).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

// onnx_pb.h defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1).
#include <onnx/onnx_pb.h>

#include "graph/graph.h"
#include "graph/status.h"
#include "importers/onnx/importer.h"

namespace seqrt::onnx_test {

// A dim: a number, or a symbol name ("batch"); "?" leaves it unknown.
struct TestDim {
  TestDim(int64_t value) : value(value) {}     // NOLINT
  TestDim(const char* name) : symbol(name) {}  // NOLINT
  int64_t value = -1;
  std::string symbol;
};

inline void set_type(onnx::ValueInfoProto& info, const std::string& name,
                     int32_t elem_type, std::vector<TestDim> dims) {
  info.set_name(name);
  auto* tensor_type = info.mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(elem_type);
  auto* shape = tensor_type->mutable_shape();
  for (const TestDim& dim : dims) {
    auto* out = shape->add_dim();
    if (dim.value >= 0) {
      out->set_dim_value(dim.value);
    } else if (dim.symbol != "?") {
      out->set_dim_param(dim.symbol);
    }
  }
}

inline void add_input(onnx::GraphProto& graph, const std::string& name,
                      int32_t elem_type, std::vector<TestDim> dims) {
  set_type(*graph.add_input(), name, elem_type, std::move(dims));
}

inline void add_output(onnx::GraphProto& graph, const std::string& name,
                       int32_t elem_type, std::vector<TestDim> dims) {
  set_type(*graph.add_output(), name, elem_type, std::move(dims));
}

inline onnx::NodeProto& add_node(onnx::GraphProto& graph, const std::string& op,
                                 std::vector<std::string> inputs,
                                 std::vector<std::string> outputs,
                                 const std::string& name = "") {
  onnx::NodeProto& node = *graph.add_node();
  node.set_op_type(op);
  node.set_name(name);
  for (const auto& input : inputs) node.add_input(input);
  for (const auto& output : outputs) node.add_output(output);
  return node;
}

inline void set_int_attr(onnx::NodeProto& node, const std::string& name,
                         int64_t value) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

inline void set_ints_attr(onnx::NodeProto& node, const std::string& name,
                          std::vector<int64_t> values) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

// A float initializer in raw_data form.
inline void add_float_initializer(onnx::GraphProto& graph,
                                  const std::string& name,
                                  std::vector<int64_t> dims,
                                  const std::vector<float>& values) {
  auto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->add_dims(d);
  tensor->set_raw_data(values.data(), values.size() * sizeof(float));
}

// A model at `opset` of ai.onnx with an empty graph named "g".
inline onnx::ModelProto make_model(int opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* entry = model.add_opset_import();
  entry->set_domain("");
  entry->set_version(opset);
  model.mutable_graph()->set_name("g");
  return model;
}

// y = -x through `depth` nested Ifs (inputs cond: bool scalar, x: f32 (2)):
// each then_branch holds the next If, each else_branch y = x; the deepest
// then_branch is y = -x, so cond = true gives -x, false gives x. The
// deepest branch is subgraph level `depth`.
inline onnx::ModelProto nested_if_model(int depth) {
  onnx::ModelProto model = make_model(17);
  onnx::GraphProto* graph = model.mutable_graph();
  add_input(*graph, "cond", onnx::TensorProto::BOOL, {});
  add_input(*graph, "x", onnx::TensorProto::FLOAT, {2});
  add_output(*graph, "y", onnx::TensorProto::FLOAT, {2});
  std::string out = "y";
  for (int level = 1; level <= depth; ++level) {
    onnx::NodeProto& node =
        add_node(*graph, "If", {"cond"}, {out}, "if" + std::to_string(level));
    std::string result = "r" + std::to_string(level);
    onnx::GraphProto* then_branch = nullptr;
    for (const char* name : {"then_branch", "else_branch"}) {
      auto* attr = node.add_attribute();
      attr->set_name(name);
      attr->set_type(onnx::AttributeProto::GRAPH);
      onnx::GraphProto& body = *attr->mutable_g();
      body.set_name(std::string(name) + std::to_string(level));
      add_output(body, result, onnx::TensorProto::FLOAT, {2});
      if (std::string(name) == "then_branch") {
        then_branch = &body;
      } else {
        add_node(body, "Identity", {"x"}, {result});
      }
    }
    graph = then_branch;
    out = result;
  }
  add_node(*graph, "Neg", {"x"}, {out});
  return model;
}

inline std::string serialize(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

inline Result<Graph> import_model(const onnx::ModelProto& model,
                                  const std::string& model_dir = "") {
  std::string bytes = serialize(model);
  return import_onnx_buffer(reinterpret_cast<const uint8_t*>(bytes.data()),
                            bytes.size(), model_dir);
}

}  // namespace seqrt::onnx_test
