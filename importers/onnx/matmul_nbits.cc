#include "importers/onnx/matmul_nbits.h"

#include <cstring>
#include <string>

#include "importers/onnx/quantized_import.h"
#include "ops/linalg/quantized_linear.h"

namespace seqrt {
namespace {

// MatMulNBits' input indices.
enum : size_t { kA = 0, kB, kScales, kZeroPoints, kGIdx, kBias };
// The accuracy_level that asks for int8 compute (activations quantized).
constexpr int64_t kInt8ComputeLevel = 4;

// g_idx: only the trivial order (element k in block k / block_size).
Status check_g_idx(const Node& node, const Graph& graph, int64_t k,
                   int64_t block_size) {
  SEQRT_ASSIGN_OR_RETURN(const Tensor* g,
                         constant_weight(node, graph, kGIdx, "g_idx"));
  bool trivial = g->num_elements() == k &&
                 (g->dtype() == DType::kI32 || g->dtype() == DType::kI64);
  for (int64_t i = 0; trivial && i < k; ++i) {
    trivial = g->element_f64(i) == static_cast<double>(i / block_size);
  }
  if (!trivial) {
    return unsupported(
        "{}: MatMulNBits g_idx (act-order) other than k / block_size is not "
        "supported",
        node.label());
  }
  return Status::ok();
}

}  // namespace

void drop_replaced_weights(Graph& graph, const std::set<ValueId>& replaced) {
  std::set<ValueId> read(graph.outputs.begin(), graph.outputs.end());
  for (const Node& node : graph.nodes) {
    read.insert(node.inputs.begin(), node.inputs.end());
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() != AttrType::kGraph) continue;
      const Graph& body = *attr.as_graph();
      for (ValueId capture : body.captures) {
        read.insert(graph.find_value(body.value(capture).name));
      }
    }
  }
  for (ValueId id : replaced) {
    if (read.count(id) == 0) graph.constants.erase(id);
  }
}

std::vector<uint8_t> unpack_zero_points(const uint8_t* packed, int64_t n,
                                        int64_t n_blocks, int64_t bits) {
  const int64_t row_bytes = quantized_row_bytes(n_blocks, bits);
  std::vector<uint8_t> out(static_cast<size_t>(n * n_blocks));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t b = 0; b < n_blocks; ++b) {
      out[j * n_blocks + b] = quantized_code(packed + j * row_bytes, b, bits);
    }
  }
  return out;
}

std::vector<uint8_t> crop_weight_rows(const uint8_t* blobs, int64_t n,
                                      int64_t blob_row_bytes,
                                      int64_t row_bytes) {
  std::vector<uint8_t> out(static_cast<size_t>(n * row_bytes));
  for (int64_t j = 0; j < n; ++j) {
    std::memcpy(out.data() + j * row_bytes, blobs + j * blob_row_bytes,
                static_cast<size_t>(row_bytes));
  }
  return out;
}

Status convert_matmul_nbits(Node& node, const Graph& graph,
                            const AddConstantFn& add_constant) {
  SEQRT_ASSIGN_OR_RETURN(int64_t k, contrib_int_attr(node, "K"));
  SEQRT_ASSIGN_OR_RETURN(int64_t n, contrib_int_attr(node, "N"));
  SEQRT_ASSIGN_OR_RETURN(int64_t bits, contrib_int_attr(node, "bits", 4));
  SEQRT_ASSIGN_OR_RETURN(int64_t block_size, contrib_int_attr(node, "block_size"));
  SEQRT_ASSIGN_OR_RETURN(int64_t accuracy_level,
                         contrib_int_attr(node, "accuracy_level", 0));
  if (bits != 4 && bits != 8) {
    return unsupported("{}: MatMulNBits with bits={} (seqrt imports 4 and 8)",
                       node.label(), bits);
  }
  if (k < 1 || n < 1) {
    return invalid_model("{}: MatMulNBits K and N must be >= 1, got {} and {}",
                         node.label(), k, n);
  }
  if (block_size < 16 || (block_size & (block_size - 1)) != 0) {
    return invalid_model(
        "{}: MatMulNBits block_size must be a power of 2 >= 16, got {}",
        node.label(), block_size);
  }
  if (!has_input(node, kA) || !has_input(node, kB) || !has_input(node, kScales)) {
    return invalid_model("{}: MatMulNBits needs inputs A, B and scales",
                         node.label());
  }
  if (node.inputs.size() > kBias + 1) {
    return invalid_model("{}: MatMulNBits takes at most 6 inputs, got {}",
                         node.label(), node.inputs.size());
  }
  const int64_t n_blocks = (k + block_size - 1) / block_size;
  const int64_t blob_size = block_size * bits / 8;
  const int64_t row_bytes = quantized_row_bytes(k, bits);

  SEQRT_ASSIGN_OR_RETURN(const Tensor* b,
                         constant_weight(node, graph, kB, "weight B"));
  if (b->dtype() != DType::kU8 || b->rank() != 3 || b->dim(0) != n ||
      b->dim(1) != n_blocks || b->dim(2) != blob_size) {
    return invalid_model(
        "{}: MatMulNBits B must be u8 (N, n_blocks, blob_size) = ({}, {}, "
        "{}), got {} {}",
        node.label(), n, n_blocks, blob_size, dtype_name(b->dtype()),
        dims_to_string(b->dims()));
  }
  SEQRT_ASSIGN_OR_RETURN(const Tensor* scales_in,
                         constant_weight(node, graph, kScales, "scales"));
  SEQRT_ASSIGN_OR_RETURN(Tensor scales,
                         scales_as_f32(node, *scales_in, n, n_blocks));

  std::optional<Tensor> zero_points;
  if (has_input(node, kZeroPoints)) {
    SEQRT_ASSIGN_OR_RETURN(
        const Tensor* zp,
        constant_weight(node, graph, kZeroPoints, "zero_points"));
    if (zp->dtype() != DType::kU8) {
      return unsupported(
          "{}: MatMulNBits zero_points of type {} (seqrt imports packed u8 "
          "zero points only)",
          node.label(), dtype_name(zp->dtype()));
    }
    const int64_t zp_row_bytes = quantized_row_bytes(n_blocks, bits);
    if (zp->num_elements() != n * zp_row_bytes) {
      return invalid_model(
          "{}: MatMulNBits zero_points must hold N·ceil(n_blocks·bits/8) = "
          "{}·{} bytes, got {}",
          node.label(), n, zp_row_bytes, dims_to_string(zp->dims()));
    }
    SEQRT_ASSIGN_OR_RETURN(
        zero_points,
        u8_tensor(unpack_zero_points(zp->data_as<uint8_t>(), n, n_blocks, bits),
                  n, n_blocks));
  }
  if (has_input(node, kGIdx)) {
    SEQRT_RETURN_IF_ERROR(check_g_idx(node, graph, k, block_size));
  }

  SEQRT_ASSIGN_OR_RETURN(
      Tensor w, u8_tensor(crop_weight_rows(b->data_as<uint8_t>(), n,
                                           n_blocks * blob_size, row_bytes),
                          n, row_bytes));
  const std::string base = graph.value(node.inputs[kB]).name;
  std::vector<ValueId> inputs(kLinearInputCount, kNoValue);
  inputs[kLinearX] = node.inputs[kA];
  inputs[kLinearW] = add_constant(std::move(w), base + "_w");
  if (has_input(node, kBias)) inputs[kLinearB] = node.inputs[kBias];
  inputs[kLinearWScale] = add_constant(std::move(scales), base + "_scale");
  if (zero_points) {
    inputs[kLinearWZeroPoint] =
        add_constant(std::move(*zero_points), base + "_zero_point");
  }
  while (inputs.back() == kNoValue) inputs.pop_back();

  node.domain = kSeqrtDomain;
  node.op = "Linear";
  node.inputs = std::move(inputs);
  node.attrs.clear();
  node.attrs["bits"] = Attribute(bits);
  node.attrs["block_size"] = Attribute(block_size);
  node.attrs["K"] = Attribute(k);
  if (accuracy_level == kInt8ComputeLevel) {
    node.attrs["activation_bits"] = Attribute(int64_t{8});
  }
  return Status::ok();
}

}  // namespace seqrt
