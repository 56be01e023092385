#include "importers/onnx/op_table.h"

#include <algorithm>
#include <vector>

namespace seqrt {
namespace {

// Before opset 18, ReduceMean/Max/Min take `axes` as an attribute; now it
// is an optional input.
Status axes_attribute_to_input(Node& node, const AddConstantFn& add_constant) {
  auto it = node.attrs.find("axes");
  if (it == node.attrs.end()) return Status::ok();
  if (it->second.type() != AttrType::kInts) {
    return invalid_model("{}: attribute 'axes' is {}, expected ints",
                         node.label(), attr_type_name(it->second.type()));
  }
  const std::vector<int64_t>& axes = it->second.as_ints();
  Tensor tensor =
      Tensor::from_vector<int64_t>({static_cast<int64_t>(axes.size())}, axes);
  node.attrs.erase(it);
  if (node.inputs.size() > 1) {
    return invalid_model("{}: this opset takes 'axes' as an attribute only",
                         node.label());
  }
  node.inputs.push_back(add_constant(std::move(tensor), node.name + "_axes"));
  return Status::ok();
}

// Before opset 18, Split without a `split` input cuts into as many equal
// parts as it has outputs; now that count is the num_outputs attribute.
Status split_count_from_outputs(Node& node, const AddConstantFn&) {
  bool has_split = node.inputs.size() > 1 && node.inputs[1] != kNoValue;
  if (!has_split) {
    node.attrs["num_outputs"] = static_cast<int64_t>(node.outputs.size());
  }
  return Status::ok();
}

// Ops whose every version in opsets 13-27 has the latest semantics (later
// versions only added types or optional inputs and attributes with
// defaults that keep the old behaviour).
constexpr const char* kUnchangedSince13[] = {
    "Abs",
    "Add",
    "And",
    "ArgMax",
    "ArgMin",
    "Cast",
    "Ceil",
    "Concat",
    "Constant",
    "ConstantOfShape",
    "Conv",
    "Cos",
    "CumSum",
    "DequantizeLinear",  // block_size (21) and output_dtype (23) default off
    "Div",
    "DynamicQuantizeLinear",
    "Einsum",
    "Equal",
    "Erf",
    "Exp",
    "Expand",
    "Flatten",
    "Floor",
    "Gather",
    "GatherElements",
    "GatherND",  // batch_dims (12) defaults to the old behaviour
    "Gemm",
    "Greater",
    "GreaterOrEqual",
    "Identity",
    "If",
    "IsInf",
    "IsNaN",
    "Less",
    "LessOrEqual",
    "Log",
    "LogSoftmax",
    "Loop",
    "MatMul",
    "MatMulInteger",
    "Max",
    "Min",
    "Mod",
    "Mul",
    "Neg",
    "Not",
    "Or",
    "Pad",
    "Pow",
    "QLinearMatMul",
    "QuantizeLinear",  // saturate (19) defaults on, as before float8
    "Range",
    "Reciprocal",
    "ReduceSum",
    "Relu",
    "Reshape",
    "Scan",
    "ScatterElements",  // reduction (16, 18) defaults to the old "none"
    "ScatterND",
    "Shape",
    "Sigmoid",
    "Sign",
    "Sin",
    "Size",
    "Slice",
    "Softmax",
    "Softplus",
    "Sqrt",
    "Squeeze",
    "Sub",
    "Sum",
    "Tanh",
    "Tile",
    "Transpose",
    "Unsqueeze",
    "Where",
    "Xor",
};

std::vector<OnnxOpVersion> build_table() {
  std::vector<OnnxOpVersion> table;
  for (const char* op : kUnchangedSince13) {
    table.push_back({"", op, kMinOnnxOpset, nullptr});
  }
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin"}) {
    table.push_back({"", op, 13, axes_attribute_to_input});
    table.push_back({"", op, 18, nullptr});
  }
  table.push_back({"", "Split", 13, split_count_from_outputs});
  table.push_back({"", "Split", 18, nullptr});
  // Ops introduced within the range.
  table.push_back({"", "Trilu", 14, nullptr});
  table.push_back({"", "CastLike", 15, nullptr});
  table.push_back({"", "LayerNormalization", 17, nullptr});
  table.push_back({"", "Gelu", 20, nullptr});
  table.push_back({"", "RMSNormalization", 23, nullptr});
  table.push_back({"", "RotaryEmbedding", 23, nullptr});
  // Sequence ops (ops/sequence/). Attention 24 added nonpad_kv_seqlen, an
  // optional input; one schema serves both.
  table.push_back({"", "Attention", 23, nullptr});
  table.push_back({"", "TensorScatter", 24, nullptr});
  table.push_back({"", "LinearAttention", 27, nullptr});
  table.push_back({"", "CausalConvWithState", 27, nullptr});
  // Recurrent ops (ops/rnn/): versions 7 and 14 differ only by `layout`,
  // whose default (0) is version 7's behaviour.
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    table.push_back({"", op, kMinOnnxOpset, nullptr});
  }
  return table;
}

const std::vector<OnnxOpVersion>& op_table() {
  static const std::vector<OnnxOpVersion> table = build_table();
  return table;
}

}  // namespace

std::string normalize_domain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string(kOnnxDomain) : domain;
}

const OnnxOpVersion* find_onnx_op(const std::string& domain,
                                  const std::string& op, int opset) {
  const OnnxOpVersion* best = nullptr;
  for (const OnnxOpVersion& entry : op_table()) {
    if (entry.domain != domain || entry.op != op || entry.since_opset > opset) {
      continue;
    }
    if (best == nullptr || entry.since_opset > best->since_opset) best = &entry;
  }
  return best;
}

}  // namespace seqrt
