#include "compiler/passes/compute_f16_in_f32.h"

#include <set>
#include <string>
#include <vector>

#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

constexpr int64_t kOnnxFloat = 1;
constexpr int64_t kOnnxFloat16 = 10;

Result<Tensor> widened(const Tensor& half) {
  SEQRT_ASSIGN_OR_RETURN(Tensor wide,
                         Tensor::allocate(DType::kF32, half.dims()));
  const auto* from = static_cast<const uint16_t*>(half.data());
  float* to = wide.mutable_data_as<float>();
  for (int64_t i = 0; i < half.num_elements(); ++i) to[i] = f16_to_f32(from[i]);
  return wide;
}

Node cast_node(const std::string& name, ValueId from, ValueId to,
               int64_t onnx_type) {
  Node node;
  node.name = name;
  node.op = "Cast";
  node.domain = kOnnxDomain;
  node.inputs = {from};
  node.outputs = {to};
  node.attrs["to"] = Attribute(onnx_type);
  return node;
}

// A new f32 value beside `id`, with its shape.
ValueId f32_twin(Graph& graph, ValueId id) {
  ValueId twin = add_fresh_value(graph, graph.value(id).name + "_f32");
  graph.value(twin).dtype = DType::kF32;
  graph.value(twin).shape = graph.value(id).shape;
  return twin;
}

void replace_reads(Graph& graph, ValueId from, ValueId to) {
  for (Node& node : graph.nodes) {
    for (ValueId& id : node.inputs) {
      if (id == from) id = to;
    }
  }
}

// The attributes of `node` that name f16 as a result type, asked for f32.
Status widen_attributes(Node& node) {
  if (node.domain != kOnnxDomain) return Status::ok();
  if (node.op == "Cast") {
    const Attribute* to = node.attr("to");
    if (to != nullptr && to->type() == AttrType::kInt &&
        to->as_int() == kOnnxFloat16) {
      node.attrs["to"] = Attribute(kOnnxFloat);
    }
    return Status::ok();
  }
  if (node.op == "Constant" || node.op == "ConstantOfShape") {
    auto value = node.attrs.find("value");
    if (value != node.attrs.end() && value->second.type() == AttrType::kTensor &&
        value->second.as_tensor().dtype() == DType::kF16) {
      SEQRT_ASSIGN_OR_RETURN(Tensor wide, widened(value->second.as_tensor()));
      value->second = Attribute(std::move(wide));
    }
  }
  return Status::ok();
}

}  // namespace

bool has_f16_values(const Graph& graph) {
  for (const Value& value : graph.values) {
    if (value.dtype == DType::kF16) return true;
  }
  return false;
}

Result<bool> compute_f16_in_f32(Graph& graph) {
  if (!has_f16_values(graph)) return false;
  for (const Node& node : graph.nodes) {
    bool f16_node = false;
    for (const auto* ids : {&node.inputs, &node.outputs}) {
      for (ValueId id : *ids) {
        f16_node |= id != kNoValue && graph.value(id).dtype == DType::kF16;
      }
    }
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() == AttrType::kGraph &&
          (f16_node || has_f16_values(*attr.as_graph()))) {
        return unsupported(
            "{}: a graph with f16 tensors runs in f32 on this backend, and "
            "the subgraph of attribute '{}' cannot be rewritten so",
            node.label(), name);
      }
    }
  }
  for (Node& node : graph.nodes) SEQRT_RETURN_IF_ERROR(widen_attributes(node));
  std::vector<Node> edges;  // the Casts at the graph's inputs and outputs
  const std::set<ValueId> inputs(graph.inputs.begin(), graph.inputs.end());
  std::set<ValueId> kept;  // f16 values that stay f16: the edges
  for (ValueId input : graph.inputs) {
    if (graph.value(input).dtype != DType::kF16) continue;
    ValueId wide = f32_twin(graph, input);
    replace_reads(graph, input, wide);
    edges.push_back(
        cast_node(graph.value(wide).name, input, wide, kOnnxFloat));
    kept.insert(input);
  }
  for (ValueId output : graph.outputs) {
    if (graph.value(output).dtype != DType::kF16 || inputs.count(output) ||
        kept.count(output)) {
      continue;
    }
    ValueId wide = f32_twin(graph, output);
    for (Node& node : graph.nodes) {
      for (ValueId& id : node.outputs) {
        if (id == output) id = wide;
      }
    }
    replace_reads(graph, output, wide);
    edges.push_back(cast_node(graph.value(output).name + "_to_f16", wide,
                              output, kOnnxFloat16));
    kept.insert(output);
  }
  for (auto& [id, tensor] : graph.constants) {
    if (tensor.dtype() != DType::kF16) continue;
    SEQRT_ASSIGN_OR_RETURN(tensor, widened(tensor));
  }
  for (size_t id = 0; id < graph.values.size(); ++id) {
    Value& value = graph.values[id];
    if (value.dtype == DType::kF16 && !kept.count(static_cast<ValueId>(id))) {
      value.dtype = DType::kF32;
    }
  }
  graph.nodes.insert(graph.nodes.end(), edges.begin(), edges.end());
  SEQRT_RETURN_IF_ERROR(sort_nodes(graph));
  return true;
}

}  // namespace seqrt
