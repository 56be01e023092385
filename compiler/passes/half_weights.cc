#include "compiler/passes/half_weights.h"

namespace seqrt {

bool takes_half_weight(const Node& node) {
  if (node.domain == kSeqrtDomain) return node.op == "Linear";
  return node.domain == kOnnxDomain &&
         (node.op == "MatMul" || node.op == "Gemm");
}

std::set<ValueId> select_half_weights(const Graph& graph) {
  std::set<ValueId> weights;
  std::set<ValueId> other(graph.outputs.begin(), graph.outputs.end());
  for (const StatePair& pair : graph.state_pairs) other.insert(pair.input);
  for (const Node& node : graph.nodes) {
    // A subgraph's kernels (a Vulkan Scan run as a loop) read what it
    // captures as it stands.
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() != AttrType::kGraph) continue;
      const Graph& body = *attr.as_graph();
      for (ValueId capture : body.captures) {
        ValueId outer = graph.find_value(body.value(capture).name);
        if (outer != kNoValue) other.insert(outer);
      }
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ValueId id = node.inputs[i];
      const Tensor* tensor = graph.constant(id);
      bool weight = i == 1 && takes_half_weight(node) && tensor != nullptr &&
                    tensor->dtype() == DType::kF32;
      (weight ? weights : other).insert(id);
    }
  }
  for (ValueId id : other) weights.erase(id);
  return weights;
}

Result<Tensor> to_half(const Tensor& weight) {
  SEQRT_ASSIGN_OR_RETURN(Tensor half,
                         Tensor::allocate(DType::kF16, weight.dims()));
  const float* from = weight.data_as<float>();
  auto* to = static_cast<uint16_t*>(half.mutable_data());
  for (int64_t i = 0; i < weight.num_elements(); ++i) {
    to[i] = f32_to_f16(from[i]);
  }
  return half;
}

}  // namespace seqrt
