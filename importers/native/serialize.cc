#include "importers/native/serialize.h"

#include <map>
#include <utility>

#include "importers/native/format.h"
#include "importers/native/schema_enums.h"

namespace seqrt {
namespace {

using flatbuffers::Offset;

// Upper bounds of the FlatBuffer bytes each item takes (with alignment
// padding and vtables), to refuse graphs past the 2 GiB limit before
// FlatBufferBuilder would overflow.
constexpr uint64_t kTableBytes = 160;
constexpr uint64_t kVectorBytes = 16;

uint64_t string_bytes(const std::string& text) { return text.size() + 8; }

uint64_t attribute_bytes(const Attribute& attr) {
  switch (attr.type()) {
    case AttrType::kString:
      return string_bytes(attr.as_string());
    case AttrType::kInts:
      return kVectorBytes + 8 * attr.as_ints().size();
    case AttrType::kFloats:
      return kVectorBytes + 4 * attr.as_floats().size();
    case AttrType::kStrings: {
      uint64_t bytes = kVectorBytes;
      for (const std::string& text : attr.as_strings()) {
        bytes += 4 + string_bytes(text);
      }
      return bytes;
    }
    case AttrType::kTensor:
      return kTableBytes + kVectorBytes + 8 * attr.as_tensor().rank();
    default:
      return 0;  // scalars live in the attribute's table
  }
}

Status check_tensor(const Tensor& tensor, const std::string& what) {
  if (tensor.dtype() == DType::kUndefined) {
    return invalid_argument(
        "{} has no dtype; only tensors with a dtype can be written", what);
  }
  return Status::ok();
}

Status check_serializable(const Graph& graph, uint64_t& bytes);

Status check_nodes(const Graph& graph, uint64_t& bytes) {
  for (const Node& node : graph.nodes) {
    bytes += 4 + kTableBytes + string_bytes(node.name) + string_bytes(node.op) +
             string_bytes(node.domain) + 3 * kVectorBytes +
             4 * (node.inputs.size() + node.outputs.size());
    for (const auto& [name, attr] : node.attrs) {
      bytes += 4 + kTableBytes + string_bytes(name) + attribute_bytes(attr);
      std::string what = node.label() + " attribute '" + name + "'";
      if (attr.type() == AttrType::kTensor) {
        SEQRT_RETURN_IF_ERROR(check_tensor(attr.as_tensor(), what));
      } else if (attr.type() == AttrType::kGraph) {
        SEQRT_RETURN_IF_ERROR(
            check_serializable(*attr.as_graph(), bytes).with_context(what));
      }
    }
  }
  return Status::ok();
}

// Checks every tensor of `graph` (and its subgraphs) and adds the graph's
// FlatBuffer size bound to `bytes`.
Status check_serializable(const Graph& graph, uint64_t& bytes) {
  bytes +=
      kTableBytes + string_bytes(graph.name) + 5 * kVectorBytes +
      4 * (graph.inputs.size() + graph.outputs.size() + graph.captures.size());
  for (const Value& value : graph.values) {
    size_t rank = value.shape ? value.shape->rank() : 0;
    bytes +=
        4 + kTableBytes + string_bytes(value.name) + kVectorBytes + 16 * rank;
    for (size_t i = 0; i < rank; ++i) {
      bytes += 4 + string_bytes((*value.shape)[i].symbol_name());
    }
  }
  for (const auto& [id, tensor] : graph.constants) {
    SEQRT_RETURN_IF_ERROR(
        check_tensor(tensor, "constant '" + graph.value(id).name + "'"));
    bytes += 4 + 2 * kTableBytes + kVectorBytes + 8 * tensor.rank();
  }
  for (const StatePair& pair : graph.state_pairs) {
    bytes += 4 + 2 * kTableBytes + kVectorBytes;
    if (!pair.initial) continue;
    SEQRT_RETURN_IF_ERROR(check_tensor(
        *pair.initial,
        "the initial value of state '" + graph.value(pair.input).name + "'"));
    bytes += 8 * pair.initial->rank();
  }
  for (const auto& [key, text] : graph.metadata) {
    bytes += 4 + kTableBytes + string_bytes(key) + string_bytes(text);
  }
  return check_nodes(graph, bytes);
}

class Serializer {
 public:
  SerializedModel run(const Graph& graph);

 private:
  // Symbol names of one graph's dims, numbered in order of appearance.
  struct Symbols {
    std::map<std::string, int32_t> index;
    std::vector<std::string> names;
  };

  Offset<fb::Graph> graph(const Graph& graph);
  Offset<fb::Value> value(const Value& value, Symbols& symbols);
  Offset<fb::Node> node(const Node& node);
  Offset<fb::Attribute> attribute(const std::string& name,
                                  const Attribute& attr);
  Offset<fb::Tensor> tensor(const Tensor& tensor);
  uint32_t segment(const Tensor& tensor);

  // Empty strings and vectors are left out; readers treat absent as empty.
  Offset<flatbuffers::String> string(const std::string& text);
  Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> strings(
      const std::vector<std::string>& texts);
  template <typename T>
  Offset<flatbuffers::Vector<T>> scalars(const std::vector<T>& values);
  template <typename T>
  Offset<flatbuffers::Vector<Offset<T>>> tables(
      const std::vector<Offset<T>>& offsets);

  flatbuffers::FlatBufferBuilder fbb_;
  SerializedModel model_;
  std::map<std::pair<const void*, size_t>, uint32_t> segment_of_;
};

Offset<flatbuffers::String> Serializer::string(const std::string& text) {
  if (text.empty()) return 0;
  return fbb_.CreateString(text.data(), text.size());
}

Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> Serializer::strings(
    const std::vector<std::string>& texts) {
  if (texts.empty()) return 0;
  std::vector<Offset<flatbuffers::String>> offsets;
  offsets.reserve(texts.size());
  for (const std::string& text : texts) {
    offsets.push_back(fbb_.CreateString(text.data(), text.size()));
  }
  return fbb_.CreateVector(offsets);
}

template <typename T>
Offset<flatbuffers::Vector<T>> Serializer::scalars(
    const std::vector<T>& values) {
  if (values.empty()) return 0;
  return fbb_.CreateVector(values);
}

template <typename T>
Offset<flatbuffers::Vector<Offset<T>>> Serializer::tables(
    const std::vector<Offset<T>>& offsets) {
  if (offsets.empty()) return 0;
  return fbb_.CreateVector(offsets);
}

uint32_t Serializer::segment(const Tensor& tensor) {
  auto key = std::make_pair(tensor.data(), tensor.byte_size());
  auto found = segment_of_.find(key);
  if (found != segment_of_.end()) return found->second;
  auto index = static_cast<uint32_t>(model_.segment_tensors.size());
  uint64_t offset = align_to_segment(model_.segments_size);
  model_.segment_tensors.push_back(tensor);
  model_.segment_offsets.push_back(offset);
  model_.segments_size = offset + tensor.byte_size();
  segment_of_.emplace(key, index);
  return index;
}

Offset<fb::Tensor> Serializer::tensor(const Tensor& tensor) {
  uint32_t index = segment(tensor);
  auto dims = scalars(tensor.dims());
  return fb::CreateTensor(fbb_, to_fb(tensor.dtype()), dims, index,
                          /*offset=*/0, tensor.byte_size());
}

Offset<fb::Value> Serializer::value(const Value& value, Symbols& symbols) {
  std::vector<fb::Dim> dims;
  if (value.shape) {
    for (const Dim& dim : value.shape->dims()) {
      int32_t symbol = -1;
      if (dim.is_symbol()) {
        auto inserted = symbols.index.emplace(
            dim.symbol_name(), static_cast<int32_t>(symbols.names.size()));
        if (inserted.second) symbols.names.push_back(dim.symbol_name());
        symbol = inserted.first->second;
      }
      dims.emplace_back(dim.is_fixed() ? dim.value() : -1, symbol);
    }
  }
  auto name = string(value.name);
  auto dims_offset = dims.empty() ? 0 : fbb_.CreateVectorOfStructs(dims);
  return fb::CreateValue(fbb_, name, to_fb(value.dtype), dims_offset,
                         !value.shape.has_value());
}

Offset<fb::Attribute> Serializer::attribute(const std::string& name,
                                            const Attribute& attr) {
  auto name_offset = string(name);
  switch (attr.type()) {
    case AttrType::kInt:
      return fb::CreateAttribute(fbb_, name_offset, fb::AttrType::Int,
                                 attr.as_int());
    case AttrType::kFloat:
      return fb::CreateAttribute(fbb_, name_offset, fb::AttrType::Float, 0,
                                 attr.as_float());
    case AttrType::kString: {
      auto text = string(attr.as_string());
      return fb::CreateAttribute(fbb_, name_offset, fb::AttrType::String, 0,
                                 0.0f, text);
    }
    case AttrType::kInts: {
      auto ints = scalars(attr.as_ints());
      return fb::CreateAttribute(fbb_, name_offset, fb::AttrType::Ints, 0, 0.0f,
                                 0, ints);
    }
    case AttrType::kFloats: {
      auto floats = scalars(attr.as_floats());
      return fb::CreateAttribute(fbb_, name_offset, fb::AttrType::Floats, 0,
                                 0.0f, 0, 0, floats);
    }
    case AttrType::kStrings: {
      auto texts = strings(attr.as_strings());
      return fb::CreateAttribute(fbb_, name_offset, fb::AttrType::Strings, 0,
                                 0.0f, 0, 0, 0, texts);
    }
    case AttrType::kTensor: {
      auto t = tensor(attr.as_tensor());
      return fb::CreateAttribute(fbb_, name_offset, fb::AttrType::Tensor, 0,
                                 0.0f, 0, 0, 0, 0, t);
    }
    case AttrType::kGraph: {
      auto g = graph(*attr.as_graph());
      return fb::CreateAttribute(fbb_, name_offset, fb::AttrType::Graph, 0,
                                 0.0f, 0, 0, 0, 0, 0, g);
    }
  }
  return 0;
}

Offset<fb::Node> Serializer::node(const Node& node) {
  std::vector<Offset<fb::Attribute>> attrs;
  for (const auto& [name, attr] : node.attrs) {
    attrs.push_back(attribute(name, attr));
  }
  auto attrs_offset = tables(attrs);
  auto name = string(node.name);
  auto op = string(node.op);
  auto domain = string(node.domain);
  auto inputs = scalars(node.inputs);
  auto outputs = scalars(node.outputs);
  return fb::CreateNode(fbb_, name, op, domain, inputs, outputs, attrs_offset);
}

Offset<fb::Graph> Serializer::graph(const Graph& graph) {
  Symbols symbols;
  std::vector<Offset<fb::Value>> values;
  for (const Value& v : graph.values) values.push_back(value(v, symbols));
  std::vector<Offset<fb::Node>> nodes;
  for (const Node& n : graph.nodes) nodes.push_back(node(n));
  std::vector<Offset<fb::Constant>> constants;
  for (const auto& [id, t] : graph.constants) {
    auto data = tensor(t);
    constants.push_back(fb::CreateConstant(fbb_, id, data));
  }
  std::vector<Offset<fb::StatePair>> pairs;
  for (const StatePair& pair : graph.state_pairs) {
    auto initial = pair.initial ? tensor(*pair.initial) : 0;
    pairs.push_back(
        fb::CreateStatePair(fbb_, pair.input, pair.output, initial));
  }
  std::vector<Offset<fb::MetadataEntry>> metadata;
  for (const auto& [key, text] : graph.metadata) {
    auto key_offset = string(key);
    auto text_offset = string(text);
    metadata.push_back(fb::CreateMetadataEntry(fbb_, key_offset, text_offset));
  }
  auto name = string(graph.name);
  auto values_offset = tables(values);
  auto nodes_offset = tables(nodes);
  auto inputs = scalars(graph.inputs);
  auto outputs = scalars(graph.outputs);
  auto captures = scalars(graph.captures);
  auto constants_offset = tables(constants);
  auto pairs_offset = tables(pairs);
  auto metadata_offset = tables(metadata);
  auto symbols_offset = strings(symbols.names);
  return fb::CreateGraph(fbb_, name, values_offset, nodes_offset, inputs,
                         outputs, captures, constants_offset, pairs_offset,
                         metadata_offset, symbols_offset);
}

SerializedModel Serializer::run(const Graph& main) {
  auto root_graph = graph(main);
  std::vector<fb::Segment> segments;
  for (size_t i = 0; i < model_.segment_tensors.size(); ++i) {
    segments.emplace_back(model_.segment_offsets[i],
                          model_.segment_tensors[i].byte_size());
  }
  auto segments_offset =
      segments.empty() ? 0 : fbb_.CreateVectorOfStructs(segments);
  fb::FinishModelBuffer(fbb_,
                        fb::CreateModel(fbb_, root_graph, segments_offset));
  model_.flatbuffer = fbb_.Release();
  return std::move(model_);
}

}  // namespace

Result<SerializedModel> serialize_graph(const Graph& graph) {
  uint64_t bytes = 0;
  Status status = check_serializable(graph, bytes);
  if (!status.is_ok()) {
    return status.with_context("graph '" + graph.name + "'");
  }
  if (bytes >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return make_error(StatusCode::kLimitExceeded,
                      "graph '{}': its metadata (names, attributes, shapes) "
                      "may need up to {} bytes, past the FlatBuffers limit "
                      "of 2 GiB",
                      graph.name, bytes);
  }
  return Serializer().run(graph);
}

}  // namespace seqrt
