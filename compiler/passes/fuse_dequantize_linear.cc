// MatMul(X, DequantizeLinear(W, scale, zero_point)) on a constant 2-D
// weight of int8, uint8, int4 or uint4 codes (a QDQ export, or
// onnxruntime's MatMulNBitsQuantizer with quant_format=QDQ) becomes one
// weight-only quantized seqrt::Linear (ops/linalg/quantized_linear.h), so
// the f32 weight is never made: before fold_constants, which would
// dequantise it into a constant. Per-tensor, per-output-channel (axis 1)
// and block-wise along K (axis 0, a block of 16 or more that is a power of
// two) scales map onto the Linear's block-wise ones; signed codes are
// shifted into the unsigned codes the Linear reads, which is exact.
#include <algorithm>

#include "compiler/passes/match.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/rewrite.h"
#include "ops/linalg/quantized_linear.h"

namespace seqrt {
namespace {

struct Dequantized {
  const Tensor* codes = nullptr;  // (K, N)
  const Tensor* scale = nullptr;
  const Tensor* zero_point = nullptr;  // null: 0
  int64_t bits = 0, block = 0;         // block 0: one block over all of K
  bool is_signed = false;
};

// The DequantizeLinear producing `id` when it maps onto a quantized
// Linear's weight.
std::optional<Dequantized> dequantized_weight(const Matcher& m, ValueId id,
                                              int& producer) {
  producer = m.producer(id, "DequantizeLinear");
  if (producer < 0) return std::nullopt;
  const Node& dq = m.node(producer);
  const Graph& g = m.graph();
  Dequantized d;
  d.codes = g.constant(dq.inputs[0]);
  d.scale = dq.inputs.size() > 1 ? g.constant(dq.inputs[1]) : nullptr;
  if (dq.inputs.size() > 2 && dq.inputs[2] != kNoValue) {
    d.zero_point = g.constant(dq.inputs[2]);
    if (d.zero_point == nullptr) return std::nullopt;
  }
  if (d.codes == nullptr || d.scale == nullptr || d.codes->rank() != 2 ||
      d.scale->dtype() != DType::kF32 || m.dtype(id) != DType::kF32) {
    return std::nullopt;
  }
  const DType type = d.codes->dtype();
  if (type != DType::kI8 && type != DType::kU8 && type != DType::kI4 &&
      type != DType::kU4) {
    return std::nullopt;
  }
  d.bits = (type == DType::kI8 || type == DType::kU8) ? 8 : 4;
  d.is_signed = type == DType::kI8 || type == DType::kI4;
  const int64_t k = d.codes->dim(0), n = d.codes->dim(1);
  const int64_t axis = int_attr(dq, "axis", 1);
  const int64_t block = int_attr(dq, "block_size", 0);
  if (d.scale->num_elements() == 1) return d;  // per tensor
  if (block == 0 && (axis == 1 || axis == -1) && d.scale->rank() == 1 &&
      d.scale->dim(0) == n) {
    return d;  // per output channel
  }
  if (block >= 16 && (block & (block - 1)) == 0 && axis == 0 &&
      d.scale->rank() == 2 && d.scale->dim(0) == (k + block - 1) / block &&
      d.scale->dim(1) == n) {
    d.block = block;
    return d;
  }
  return std::nullopt;
}

// The scale (or zero point) for block b of output channel c.
double at(const Tensor& t, int64_t b, int64_t c) {
  if (t.num_elements() == 1) return t.element_f64(0);
  if (t.rank() == 1) return t.element_f64(c);
  return t.element_f64(b * t.dim(1) + c);
}

struct Weights {
  Tensor codes, scale, zero_point;  // zero_point empty when the default
  int64_t block = 0;
};

Weights repack(const Dequantized& d) {
  const int64_t k = d.codes->dim(0), n = d.codes->dim(1);
  // One block over all of K: the smallest power of two covering it.
  int64_t block = d.block;
  if (block == 0) {
    block = 16;
    while (block < k) block *= 2;
  }
  const int64_t blocks = (k + block - 1) / block;
  const int64_t shift = d.is_signed ? int64_t{1} << (d.bits - 1) : 0;
  const int64_t row_bytes = quantized_row_bytes(k, d.bits);
  Weights w;
  w.block = block;
  w.codes = Tensor::allocate(DType::kU8, {n, row_bytes}).value();
  w.scale = Tensor::allocate(DType::kF32, {n, blocks}).value();
  // A signed weight without zero point is the Linear's default 2^(bits-1).
  const bool default_zero = d.zero_point == nullptr && d.is_signed;
  if (!default_zero) {
    w.zero_point = Tensor::allocate(DType::kU8, {n, blocks}).value();
  }
  uint8_t* codes = w.codes.mutable_data_as<uint8_t>();
  for (int64_t c = 0; c < n; ++c) {
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t scale_block = d.block == 0 ? 0 : b;
      w.scale.mutable_data_as<float>()[c * blocks + b] =
          static_cast<float>(at(*d.scale, scale_block, c));
      if (!default_zero) {
        const int64_t zero =
            d.zero_point
                ? static_cast<int64_t>(at(*d.zero_point, scale_block, c))
                : 0;
        w.zero_point.mutable_data_as<uint8_t>()[c * blocks + b] =
            static_cast<uint8_t>(zero + shift);
      }
    }
    uint8_t* row = codes + c * row_bytes;
    for (int64_t i = 0; i < k; ++i) {
      const auto code =
          static_cast<uint8_t>(d.codes->element_i64(i * n + c) + shift);
      if (d.bits == 8) {
        row[i] = code;
      } else {
        row[i / 2] |= (i % 2 == 0) ? code : static_cast<uint8_t>(code << 4);
      }
    }
  }
  return w;
}

std::optional<Fusion> match_dequantized_matmul(const Matcher& m, int n) {
  const Node& matmul = m.node(n);
  if (matmul.op != "MatMul" || !matmul.domain.empty() ||
      m.dtype(matmul.inputs[0]) != DType::kF32) {
    return std::nullopt;
  }
  int dq = -1;
  std::optional<Dequantized> d = dequantized_weight(m, matmul.inputs[1], dq);
  if (!d) return std::nullopt;
  Fusion fusion;
  fusion.remove = {n, dq};
  if (!m.is_private(fusion.remove, {matmul.outputs[0]})) return std::nullopt;
  Node linear;
  linear.name = matmul.name;
  linear.op = "Linear";
  linear.domain = kSeqrtDomain;
  linear.inputs = {matmul.inputs[0]};
  linear.outputs = matmul.outputs;
  linear.attrs["bits"] = Attribute(d->bits);
  linear.attrs["K"] = Attribute(d->codes->dim(0));
  const std::string base = m.graph().value(m.node(dq).inputs[0]).name;
  const Dequantized weight = *d;
  fusion.create_values = [weight, base](Graph& graph, std::vector<Node>& add) {
    Weights w = repack(weight);
    auto constant = [&](const std::string& suffix, Tensor value) {
      return add_tensor_constant(graph, base + suffix, std::move(value));
    };
    Node& linear = add[0];
    linear.attrs["block_size"] = Attribute(w.block);
    linear.inputs.push_back(constant("/codes", std::move(w.codes)));
    linear.inputs.push_back(kNoValue);  // no bias
    linear.inputs.push_back(constant("/scale", std::move(w.scale)));
    linear.inputs.push_back(
        w.zero_point.dtype() == DType::kUndefined
            ? kNoValue
            : constant("/zero_point", std::move(w.zero_point)));
  };
  fusion.add.push_back(std::move(linear));
  return fusion;
}

}  // namespace

Pass fuse_dequantize_linear_pass() {
  return {"fuse_dequantize_linear", [](Graph& graph) {
            return apply_fusions(graph, match_dequantized_matmul);
          }};
}

}  // namespace seqrt
