#include "importers/onnx/gather_block_quantized.h"

#include <string>
#include <vector>

#include "importers/onnx/matmul_nbits.h"
#include "importers/onnx/quantized_import.h"
#include "ops/linalg/quantized_gather.h"
#include "ops/linalg/quantized_linear.h"

namespace seqrt {
namespace {

enum : size_t { kData = 0, kIndices, kScales, kZeroPoints };

// The ONNX type code of the rows GatherBlockQuantized gives: its scales'.
int64_t onnx_code(DType dtype) {
  if (dtype == DType::kF16) return 10;
  if (dtype == DType::kBF16) return 16;
  return 1;
}

struct Table {
  int64_t n = 0, k = 0, bits = 0;
  bool is_signed = false;  // int4: codes and zero points shift by 8
  bool packed_u8 = false;  // u8 data: codes (and zero points) packed
};

Result<Table> table_of(const Node& node, const Tensor& data) {
  Table t;
  if (data.rank() != 2) {
    return unsupported(
        "{}: GatherBlockQuantized of a {}-D table (seqrt imports 2-D tables)",
        node.label(), data.rank());
  }
  t.n = data.dim(0);
  if (data.dtype() == DType::kI4 || data.dtype() == DType::kU4) {
    t.bits = 4;
    t.k = data.dim(1);
    t.is_signed = data.dtype() == DType::kI4;
    return t;
  }
  if (data.dtype() != DType::kU8) {
    return unsupported(
        "{}: GatherBlockQuantized data of type {} (seqrt imports int4, uint4 "
        "and packed uint8)",
        node.label(), dtype_name(data.dtype()));
  }
  SEQRT_ASSIGN_OR_RETURN(t.bits, contrib_int_attr(node, "bits", 4));
  if (t.bits != 4 && t.bits != 8) {
    return unsupported(
        "{}: GatherBlockQuantized with bits={} (seqrt imports 4 and 8)",
        node.label(), t.bits);
  }
  t.k = data.dim(1) * 8 / t.bits;
  t.packed_u8 = true;
  return t;
}

// The codes as W (N, ceil(K·bits/8)) u8, unsigned.
Result<Tensor> codes_of(const Tensor& data, const Table& t) {
  const int64_t row_bytes = quantized_row_bytes(t.k, t.bits);
  if (t.packed_u8) {  // already the layout, byte for byte
    const uint8_t* bytes = data.data_as<uint8_t>();
    return u8_tensor(std::vector<uint8_t>(bytes, bytes + t.n * row_bytes), t.n,
                     row_bytes);
  }
  std::vector<uint8_t> codes(static_cast<size_t>(t.n * row_bytes), 0);
  const int64_t shift = t.is_signed ? 8 : 0;
  for (int64_t r = 0; r < t.n; ++r) {
    for (int64_t i = 0; i < t.k; ++i) {
      const auto code =
          static_cast<uint8_t>(data.element_i64(r * t.k + i) + shift);
      codes[r * row_bytes + i / 2] |=
          (i % 2 == 0) ? code : static_cast<uint8_t>(code << 4);
    }
  }
  return u8_tensor(codes, t.n, row_bytes);
}

// W_zero_point (N, n_blocks), or nullopt for the Linear's default
// 2^(bits-1).
Result<std::optional<Tensor>> zero_points_of(const Node& node,
                                             const Graph& graph, const Table& t,
                                             int64_t blocks) {
  if (!has_input(node, kZeroPoints)) {
    if (t.packed_u8 || t.is_signed) return std::optional<Tensor>();
    // uint4 without zero points: 0, which is not the default.
    SEQRT_ASSIGN_OR_RETURN(
        Tensor zeros,
        u8_tensor(std::vector<uint8_t>(static_cast<size_t>(t.n * blocks), 0),
                  t.n, blocks));
    return std::optional<Tensor>(std::move(zeros));
  }
  SEQRT_ASSIGN_OR_RETURN(
      const Tensor* zp,
      constant_weight(node, graph, kZeroPoints, "zero_points"));
  if (t.packed_u8) {
    const int64_t row_bytes = quantized_row_bytes(blocks, t.bits);
    if (zp->dtype() != DType::kU8 || zp->num_elements() != t.n * row_bytes) {
      return invalid_model(
          "{}: GatherBlockQuantized zero_points must be u8 packed as the data, "
          "N·ceil(n_blocks·bits/8) = {}·{} bytes, got {} {}",
          node.label(), t.n, row_bytes, dtype_name(zp->dtype()),
          dims_to_string(zp->dims()));
    }
    SEQRT_ASSIGN_OR_RETURN(Tensor unpacked,
                           u8_tensor(unpack_zero_points(zp->data_as<uint8_t>(),
                                                        t.n, blocks, t.bits),
                                     t.n, blocks));
    return std::optional<Tensor>(std::move(unpacked));
  }
  if (zp->dtype() != (t.is_signed ? DType::kI4 : DType::kU4) ||
      zp->num_elements() != t.n * blocks) {
    return invalid_model(
        "{}: GatherBlockQuantized zero_points must share the data's type and "
        "be (N, n_blocks) = ({}, {}), got {} {}",
        node.label(), t.n, blocks, dtype_name(zp->dtype()),
        dims_to_string(zp->dims()));
  }
  std::vector<uint8_t> codes(static_cast<size_t>(t.n * blocks));
  for (int64_t i = 0; i < t.n * blocks; ++i) {
    codes[i] = static_cast<uint8_t>(zp->element_i64(i) + (t.is_signed ? 8 : 0));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor out, u8_tensor(codes, t.n, blocks));
  return std::optional<Tensor>(std::move(out));
}

}  // namespace

Status convert_gather_block_quantized(Node& node, const Graph& graph,
                                      const AddConstantFn& add_constant) {
  if (!has_input(node, kData) || !has_input(node, kIndices) ||
      !has_input(node, kScales) || node.inputs.size() > kZeroPoints + 1) {
    return invalid_model(
        "{}: GatherBlockQuantized takes data, indices, scales and optional "
        "zero_points",
        node.label());
  }
  SEQRT_ASSIGN_OR_RETURN(const Tensor* data,
                         constant_weight(node, graph, kData, "data"));
  SEQRT_ASSIGN_OR_RETURN(Table t, table_of(node, *data));
  SEQRT_ASSIGN_OR_RETURN(int64_t gather_axis,
                         contrib_int_attr(node, "gather_axis", 0));
  SEQRT_ASSIGN_OR_RETURN(int64_t quantize_axis,
                         contrib_int_attr(node, "quantize_axis", 1));
  if (gather_axis != 0 || (quantize_axis != 1 && quantize_axis != -1)) {
    return unsupported(
        "{}: GatherBlockQuantized with gather_axis {} and quantize_axis {} "
        "(seqrt imports rows gathered along axis 0, quantized along axis 1)",
        node.label(), gather_axis, quantize_axis);
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t block_size,
                         contrib_int_attr(node, "block_size", 128));
  if (block_size < 16 || (block_size & (block_size - 1)) != 0) {
    return invalid_model(
        "{}: GatherBlockQuantized block_size must be a power of 2 >= 16, got "
        "{}",
        node.label(), block_size);
  }
  const int64_t blocks = (t.k + block_size - 1) / block_size;
  SEQRT_ASSIGN_OR_RETURN(const Tensor* scales_in,
                         constant_weight(node, graph, kScales, "scales"));
  SEQRT_ASSIGN_OR_RETURN(Tensor scales,
                         scales_as_f32(node, *scales_in, t.n, blocks));
  SEQRT_ASSIGN_OR_RETURN(Tensor codes, codes_of(*data, t));
  SEQRT_ASSIGN_OR_RETURN(std::optional<Tensor> zero_points,
                         zero_points_of(node, graph, t, blocks));

  const std::string base = graph.value(node.inputs[kData]).name;
  std::vector<ValueId> inputs(kQuantizedGatherInputCount, kNoValue);
  inputs[kQuantizedGatherW] = add_constant(std::move(codes), base + "_w");
  inputs[kQuantizedGatherIndices] = node.inputs[kIndices];
  inputs[kQuantizedGatherWScale] =
      add_constant(std::move(scales), base + "_scale");
  if (zero_points) {
    inputs[kQuantizedGatherWZeroPoint] =
        add_constant(std::move(*zero_points), base + "_zero_point");
  } else {
    inputs.pop_back();
  }
  node.domain = kSeqrtDomain;
  node.op = "QuantizedGather";
  node.inputs = std::move(inputs);
  node.attrs.clear();
  node.attrs["bits"] = Attribute(t.bits);
  node.attrs["block_size"] = Attribute(block_size);
  node.attrs["K"] = Attribute(t.k);
  node.attrs["output_dtype"] = Attribute(onnx_code(scales_in->dtype()));
  return Status::ok();
}

}  // namespace seqrt
