#include "importers/onnx/quantized_import.h"

#include <cstring>

namespace seqrt {

Result<int64_t> contrib_int_attr(const Node& node, const char* name,
                                 std::optional<int64_t> fallback) {
  auto it = node.attrs.find(name);
  if (it == node.attrs.end()) {
    if (fallback) return *fallback;
    return invalid_model("{}: {} needs the attribute {}", node.label(), node.op,
                         name);
  }
  if (it->second.type() != AttrType::kInt) {
    return invalid_model("{}: {} attribute {} must be an int", node.label(),
                         node.op, name);
  }
  return it->second.as_int();
}

bool has_input(const Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != kNoValue;
}

Result<const Tensor*> constant_weight(const Node& node, const Graph& graph,
                                      size_t i, const char* what) {
  const Tensor* t = graph.constant(node.inputs[i]);
  if (t == nullptr) {
    return unsupported(
        "{}: {} {} '{}' must be a constant (an initializer); seqrt imports "
        "quantized weights only as constants",
        node.label(), node.op, what, graph.value(node.inputs[i]).name);
  }
  return t;
}

Result<Tensor> scales_as_f32(const Node& node, const Tensor& scales, int64_t n,
                             int64_t n_blocks) {
  if (scales.num_elements() != n * n_blocks) {
    return invalid_model(
        "{}: {} scales must hold N·n_blocks = {}·{} values, got {}",
        node.label(), node.op, n, n_blocks, dims_to_string(scales.dims()));
  }
  const DType dtype = scales.dtype();
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16) {
    return invalid_model("{}: {} scales must be float, got {}", node.label(),
                         node.op, dtype_name(dtype));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor out,
                         Tensor::allocate(DType::kF32, {n, n_blocks}));
  float* to = out.mutable_data_as<float>();
  for (int64_t i = 0; i < n * n_blocks; ++i) {
    to[i] = static_cast<float>(scales.element_f64(i));
  }
  return out;
}

Result<Tensor> u8_tensor(const std::vector<uint8_t>& bytes, int64_t rows,
                         int64_t cols) {
  SEQRT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kU8, {rows, cols}));
  if (!bytes.empty()) {
    std::memcpy(t.mutable_data_as<uint8_t>(), bytes.data(), bytes.size());
  }
  return t;
}

}  // namespace seqrt
