#include "compiler/quantize/quantize_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "compiler/passes/rewrite.h"
#include "ops/linalg/quantized_linear.h"
#include "ops/node_attrs.h"

namespace seqrt {
namespace {

// A weight read as W[k, n], whatever its stored orientation.
struct Weight {
  const float* data = nullptr;
  int64_t k = 0, n = 0;
  bool transposed = false;  // stored (N, K), as Gemm's transB=1
  float at(int64_t row, int64_t col) const {
    return transposed ? data[col * k + row] : data[row * n + col];
  }
};

// The node as X·W (+ B) with a constant f32 weight, or why not.
struct Candidate {
  Weight weight;
  ValueId x = kNoValue, w = kNoValue, bias = kNoValue;
  std::string activation = "none";
};

Result<Candidate> as_candidate(const Graph& graph, const Node& node) {
  Candidate c;
  const bool linear = node.domain == kSeqrtDomain && node.op == "Linear";
  const bool gemm = node.domain == kOnnxDomain && node.op == "Gemm";
  if (!(linear || gemm ||
        (node.domain == kOnnxDomain && node.op == "MatMul"))) {
    return unsupported("not a matmul");
  }
  if (node.inputs.size() < 2) return unsupported("no weight input");
  c.x = node.inputs[0];
  c.w = node.inputs[1];
  const Tensor* w = graph.constant(c.w);
  if (w == nullptr) return unsupported("not a matmul");  // of two activations
  if (w->dtype() != DType::kF32 || w->rank() != 2) {
    return unsupported("its weight is not a constant f32 matrix");
  }
  if (graph.value(c.x).dtype != DType::kF32) {
    return unsupported("its input is not f32");
  }
  c.weight.data = w->data_as<float>();
  c.weight.k = w->dim(0);
  c.weight.n = w->dim(1);
  if (linear) {
    if (node_attr_int(node, "bits") != 0)
      return unsupported("already quantized");
    c.activation = node_attr_string(node, "activation");
    if (node.inputs.size() > 2) c.bias = node.inputs[2];
  }
  if (gemm) {
    if (node_attr_int(node, "transA") != 0 ||
        node_attr_float(node, "alpha") != 1.0f ||
        node_attr_float(node, "beta") != 1.0f) {
      return unsupported("a Gemm with transA, alpha or beta");
    }
    if (node_attr_int(node, "transB") != 0) {
      c.weight.transposed = true;
      std::swap(c.weight.k, c.weight.n);
    }
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
      const Value& bias = graph.value(node.inputs[2]);
      if (!bias.shape || bias.shape->rank() != 1 ||
          !(*bias.shape)[0].is_fixed() ||
          (*bias.shape)[0].value() != c.weight.n) {
        return unsupported("its bias is not one value per output channel");
      }
      c.bias = node.inputs[2];
    }
  }
  return c;
}

// A Gather of rows (axis 0) of a constant f32 matrix: the table read as
// W[k, n] = table[n, k], so that pack() lays entry n out as row n.
Result<Weight> as_embedding(const Graph& graph, const Node& node) {
  if (node.domain != kOnnxDomain || node.op != "Gather" ||
      node.inputs.size() != 2) {
    return unsupported("not an embedding");
  }
  const Tensor* table = graph.constant(node.inputs[0]);
  if (table == nullptr) return unsupported("not an embedding");
  if (table->dtype() != DType::kF32 || table->rank() != 2 ||
      node_attr_int(node, "axis") != 0) {
    return unsupported("a Gather that is not of rows of an f32 matrix");
  }
  Weight w;
  w.data = table->data_as<float>();
  w.k = table->dim(1);
  w.n = table->dim(0);
  w.transposed = true;
  return w;
}

struct Packed {
  Tensor codes, scales, zero_points;  // zero_points empty when symmetric
};

// Codes, scales and zero points of `weight` in the quantized Linear layout.
Packed pack(const Weight& weight, int bits, int64_t block, bool symmetric) {
  const int64_t k = weight.k, n = weight.n;
  const int64_t blocks = (k + block - 1) / block;
  const int64_t row_bytes = quantized_row_bytes(k, bits);
  const int levels = (1 << bits) - 1;
  const int middle = default_zero_point(bits);
  Packed p;
  p.codes = Tensor::allocate(DType::kU8, {n, row_bytes}).value();
  p.scales = Tensor::allocate(DType::kF32, {n, blocks}).value();
  if (!symmetric) {
    p.zero_points = Tensor::allocate(DType::kU8, {n, blocks}).value();
  }
  uint8_t* codes = p.codes.mutable_data_as<uint8_t>();
  float* scales = p.scales.mutable_data_as<float>();
  for (int64_t col = 0; col < n; ++col) {
    uint8_t* row = codes + col * row_bytes;
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t from = b * block, to = std::min(k, from + block);
      float lo = 0, hi = 0;  // the range always holds 0, so 0 is exact
      for (int64_t i = from; i < to; ++i) {
        lo = std::min(lo, weight.at(i, col));
        hi = std::max(hi, weight.at(i, col));
      }
      float scale;
      int zero;
      if (symmetric) {
        scale = std::max(-lo, hi) / static_cast<float>(middle - 1);
        zero = middle;
      } else {
        scale = (hi - lo) / static_cast<float>(levels);
        zero = scale > 0 ? static_cast<int>(std::lround(-lo / scale)) : 0;
        zero = std::clamp(zero, 0, levels);
        p.zero_points.mutable_data_as<uint8_t>()[col * blocks + b] =
            static_cast<uint8_t>(zero);
      }
      if (!(scale > 0)) scale = 1;  // an all-zero block
      scales[col * blocks + b] = scale;
      for (int64_t i = from; i < to; ++i) {
        const long q = std::lround(weight.at(i, col) / scale) + zero;
        const uint8_t code =
            static_cast<uint8_t>(std::clamp<long>(q, 0, levels));
        if (bits == 8) {
          row[i] = code;
        } else {
          row[i / 2] |= (i % 2 == 0) ? code : static_cast<uint8_t>(code << 4);
        }
      }
    }
  }
  return p;
}

// The report's line for `node`, whose f32 weight `before` became `p`.
QuantizedWeight report_entry(const Node& node, const Weight& w, int bits,
                             const Tensor& before, const Packed& p) {
  return {
      node.name.empty() ? node.label() : node.name,
      w.k,
      w.n,
      bits,
      before.byte_size(),
      p.codes.byte_size() + p.scales.byte_size() + p.zero_points.byte_size()};
}

// The embedding `node` as seqrt::QuantizedGather; the report's entry.
QuantizedWeight quantize_embedding(Graph& graph, Node& node, const Weight& w,
                                   int bits, int64_t block, bool symmetric) {
  const std::string table = graph.value(node.inputs[0]).name;
  Packed packed = pack(w, bits, block, symmetric);
  QuantizedWeight q =
      report_entry(node, w, bits, *graph.constant(node.inputs[0]), packed);
  Node gather;
  gather.name = node.name;
  gather.op = "QuantizedGather";
  gather.domain = kSeqrtDomain;
  gather.outputs = node.outputs;
  gather.inputs = {add_tensor_constant(graph, table + "/q", packed.codes),
                   node.inputs[1],
                   add_tensor_constant(graph, table + "/scale", packed.scales),
                   symmetric ? kNoValue
                             : add_tensor_constant(graph, table + "/zero_point",
                                                   packed.zero_points)};
  if (symmetric) gather.inputs.pop_back();
  gather.attrs["bits"] = Attribute(int64_t{bits});
  gather.attrs["block_size"] = Attribute(block);
  gather.attrs["K"] = Attribute(w.k);
  node = std::move(gather);
  return q;
}

uint64_t parameter_bytes(const Graph& graph) {
  uint64_t total = 0;
  for (const auto& [id, tensor] : graph.constants) total += tensor.byte_size();
  return total;
}

// Whether `node`'s output reaches a graph output through ops that only
// reshape or cast it: the output layer (the vocabulary projection before a
// `logits.float()`).
bool writes_graph_output(const Graph& graph, const Node& node,
                         const std::vector<std::vector<int>>& readers) {
  static const std::set<std::string> kViews = {
      "Cast",      "Identity", "Reshape",  "Squeeze",
      "Unsqueeze", "Flatten",  "Transpose"};
  std::vector<ValueId> values = node.outputs;
  const std::set<ValueId> outputs(graph.outputs.begin(), graph.outputs.end());
  while (!values.empty()) {
    const ValueId id = values.back();
    values.pop_back();
    if (id == kNoValue) continue;
    if (outputs.count(id)) return true;
    for (int r : readers[id]) {
      const Node& reader = graph.nodes[r];
      if (kViews.count(reader.op) && reader.domain == kOnnxDomain &&
          reader.inputs[0] == id) {
        values.insert(values.end(), reader.outputs.begin(),
                      reader.outputs.end());
      }
    }
  }
  return false;
}

}  // namespace

Result<QuantizeReport> quantize_weights(Graph& graph,
                                        const QuantizeOptions& options) {
  if (options.bits != 4 && options.bits != 8) {
    return invalid_argument(
        "quantize: {}-bit weights are not supported (4 or 8)", options.bits);
  }
  if (options.output_layer_bits != 0 && options.output_layer_bits != 4 &&
      options.output_layer_bits != 8) {
    return invalid_argument(
        "quantize: the output layer takes 4 or 8 bits, or 0 to stay f32; got "
        "{}",
        options.output_layer_bits);
  }
  if (options.embedding_bits != 0 && options.embedding_bits != 4 &&
      options.embedding_bits != 8) {
    return invalid_argument(
        "quantize: embeddings take 4 or 8 bits, or 0 to stay f32; got {}",
        options.embedding_bits);
  }
  if (options.activation_bits != 0 && options.activation_bits != 8) {
    return invalid_argument(
        "quantize: activations take 8 bits, or 0 to stay f32; got {}",
        options.activation_bits);
  }
  const int64_t block = options.block_size;
  if (block < 16 || (block & (block - 1)) != 0) {
    return invalid_argument(
        "quantize: block size {} must be a power of two of at least 16", block);
  }
  QuantizeReport report;
  report.parameter_bytes_before = parameter_bytes(graph);
  const std::vector<std::vector<int>> readers = compute_uses(graph).consumers;
  for (Node& node : graph.nodes) {
    if (Result<Weight> table = as_embedding(graph, node); table.is_ok()) {
      const std::string& table_name = graph.value(node.inputs[0]).name;
      if (options.embedding_bits == 0) {
        report.kept.push_back(
            fmt::format("{}: an embedding, kept in f32", node.label()));
      } else if (options.skip.count(node.name) ||
                 options.skip.count(table_name)) {
        report.kept.push_back(
            fmt::format("{}: skipped as asked", node.label()));
      } else {
        report.quantized.push_back(
            quantize_embedding(graph, node, *table, options.embedding_bits,
                               block, options.symmetric));
      }
      continue;
    }
    Result<Candidate> found = as_candidate(graph, node);
    if (!found.is_ok()) {
      if (found.status().message() != "not a matmul") {
        report.kept.push_back(
            fmt::format("{}: {}", node.label(), found.status().message()));
      }
      continue;
    }
    const Candidate& c = *found;
    // A copy: adding constants below may move graph.values.
    const std::string weight_name = graph.value(c.w).name;
    if (options.skip.count(node.name) || options.skip.count(weight_name)) {
      report.kept.push_back(fmt::format("{}: skipped as asked", node.label()));
      continue;
    }
    const bool output_layer = writes_graph_output(graph, node, readers);
    const int bits = output_layer ? options.output_layer_bits : options.bits;
    if (bits == 0) {
      report.kept.push_back(
          fmt::format("{}: the output layer, kept in f32", node.label()));
      continue;
    }
    Packed packed = pack(c.weight, bits, block, options.symmetric);
    QuantizedWeight q =
        report_entry(node, c.weight, bits, *graph.constant(c.w), packed);
    Node linear;
    linear.name = node.name;
    linear.op = "Linear";
    linear.domain = kSeqrtDomain;
    linear.outputs = node.outputs;
    linear.inputs = {
        c.x, add_tensor_constant(graph, weight_name + "/q", packed.codes),
        c.bias,
        add_tensor_constant(graph, weight_name + "/scale", packed.scales),
        options.symmetric
            ? kNoValue
            : add_tensor_constant(graph, weight_name + "/zero_point",
                                  packed.zero_points)};
    linear.attrs["activation"] = Attribute(c.activation);
    linear.attrs["bits"] = Attribute(int64_t{bits});
    linear.attrs["block_size"] = Attribute(block);
    linear.attrs["K"] = Attribute(c.weight.k);
    if (options.activation_bits != 0) {
      linear.attrs["activation_bits"] = Attribute(int64_t{options.activation_bits});
    }
    node = std::move(linear);
    report.quantized.push_back(q);
  }
  // The f32 weights nothing reads now.
  const ValueUses uses = compute_uses(graph);
  for (auto it = graph.constants.begin(); it != graph.constants.end();) {
    it = uses.use_count(it->first) == 0 ? graph.constants.erase(it)
                                        : std::next(it);
  }
  compact_values(graph);
  report.parameter_bytes_after = parameter_bytes(graph);
  return report;
}

}  // namespace seqrt
